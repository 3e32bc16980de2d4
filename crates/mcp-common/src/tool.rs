//! Declaring tools: schemas from types, and arguments parsed into a structured
//! INVALID_INPUT error instead of a JSON-RPC error.
//!
//! rmcp's `Parameters<T>` turns a missing or mistyped argument into JSON-RPC
//! `-32602`, which clients show as "tool result missing". Tools here take the raw
//! argument object, declare `T`'s schema explicitly, and call [`parse_params`], so
//! the model reads which field was wrong and what to send instead.

use std::sync::Arc;

use rmcp::model::JsonObject;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;

use crate::{ErrorCode, ToolError};

/// The input schema of `T`, for `#[tool(input_schema = …)]`, made lean (see [`lean`]):
/// clients send it to the model on every request, so every word in it is paid for
/// on every turn.
pub fn input_schema<T: JsonSchema + 'static>() -> Arc<JsonObject> {
    // Our parameter types are fixed at compile time; an invalid one is a build
    // defect that the tools/list tests catch, not something a request can cause.
    let schema = rmcp::handler::server::common::schema_for_input::<T>().unwrap_or_else(|e| {
        panic!(
            "invalid input schema for {}: {e}",
            std::any::type_name::<T>()
        )
    });
    Arc::new(lean(&schema))
}

/// An input schema as a model needs to read it, accepting the same arguments or fewer
/// spellings of them (never a value the tool refuses):
/// - no `$schema` (a URL a model has no use for; Claude Code strips it too);
/// - `$ref`s to `$defs` replaced by the definition (our parameter types are not
///   recursive), and `$defs` dropped; the field's description stays, the type's
///   own doc (which describes a Rust type, not an argument) goes;
/// - an optional field is its type, not "that type or null" (`anyOf [X, null]`,
///   `type: [X, "null"]`): leaving the field out is how a default is asked for;
/// - a choice of string constants (`oneOf` of `const`s) is an `enum` of them; the
///   field's description says what they mean;
/// - no `format` on numbers (`uint64`, `double`: Rust's types, not the model's), and
///   no `default` that is merely empty (`[]`, `false`, `""`, `null`);
/// - a one-branch `anyOf`/`oneOf` is that branch, and a `const` needs no `type`.
///
/// A schema whose `$ref` cannot be resolved, or that refers to itself, is left whole
/// rather than guessed at.
pub fn lean(schema: &JsonObject) -> JsonObject {
    let defs = schema
        .get("$defs")
        .and_then(serde_json::Value::as_object)
        .cloned()
        .unwrap_or_default();
    let mut out = schema.clone();
    out.remove("$schema");
    out.remove("$defs");
    let mut value = serde_json::Value::Object(out);
    if !simplify(&mut value, &defs, 0) {
        let mut whole = schema.clone();
        whole.remove("$schema");
        return whole;
    }
    match value {
        serde_json::Value::Object(object) => object,
        _ => unreachable!("an object stays an object"),
    }
}

/// For `#[schemars(schema_with = "mcp_common::tool::shape_only::<T>")]` on a field whose
/// own description says what its parts mean (`{role, content, ...}`): `T`'s schema,
/// inlined, with every description and title removed. The types and the required
/// fields stay; only words the field's description already says are left out.
pub fn shape_only<T: JsonSchema>(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
    let mut settings = generator.settings().clone();
    settings.inline_subschemas = true;
    let mut schema = settings.into_generator().into_root_schema_for::<T>();
    schema.remove("$schema");
    let mut value = schema.to_value();
    strip_words(&mut value);
    match value {
        serde_json::Value::Object(object) => object.into(),
        // A root schema is an object (or `true`/`false`, which have no words).
        other => schemars::Schema::try_from(other).unwrap_or_default(),
    }
}

/// Remove `description` and `title` keywords (not properties of those names).
fn strip_words(node: &mut serde_json::Value) {
    use serde_json::Value;
    let Value::Object(object) = node else {
        return;
    };
    object.remove("description");
    object.remove("title");
    if let Some(Value::Object(children)) = object.get_mut("properties") {
        children.values_mut().for_each(strip_words);
    }
    for key in ["items", "additionalProperties"] {
        if let Some(child) = object.get_mut(key) {
            strip_words(child);
        }
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(Value::Array(children)) = object.get_mut(key) {
            children.iter_mut().for_each(strip_words);
        }
    }
}

/// Deeper than any of our parameter types: a `$ref` chain this long is a cycle.
const MAX_SCHEMA_DEPTH: usize = 32;

/// [`lean`] on one schema node, in place; `false` when a `$ref` cannot be inlined.
fn simplify(
    node: &mut serde_json::Value,
    defs: &serde_json::Map<String, serde_json::Value>,
    depth: usize,
) -> bool {
    use serde_json::Value;
    if depth > MAX_SCHEMA_DEPTH {
        return false;
    }
    let Value::Object(object) = node else {
        return true;
    };
    // `$ref`: the definition, with this node's own keys (its description) on top.
    if let Some(Value::String(reference)) = object.remove("$ref") {
        let Some(definition) = reference
            .strip_prefix("#/$defs/")
            .and_then(|name| defs.get(name))
            .and_then(Value::as_object)
        else {
            return false;
        };
        let mut merged = definition.clone();
        // A type's doc describes the Rust type; the field's says what to send.
        merged.remove("description");
        for (key, value) in std::mem::take(object) {
            merged.insert(key, value);
        }
        *object = merged;
        return simplify(node, defs, depth + 1);
    }
    // `anyOf: [X, {type: null}]`: X, keeping this node's description.
    if let Some(Value::Array(branches)) = object.get("anyOf")
        && branches.len() == 2
        && let Some(nulls) = branches.iter().position(is_null_schema)
    {
        let Some(Value::Array(mut branches)) = object.remove("anyOf") else {
            unreachable!("just matched");
        };
        let Value::Object(kept) = branches.swap_remove(1 - nulls) else {
            return false;
        };
        let own = std::mem::take(object);
        *object = kept;
        for (key, value) in own {
            object.insert(key, value);
        }
        return simplify(node, defs, depth + 1);
    }
    // One branch of `anyOf`/`oneOf`: that branch.
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = object.get(key)
            && branches.len() == 1
            && branches[0].is_object()
        {
            let Some(Value::Array(mut branches)) = object.remove(key) else {
                unreachable!("just matched");
            };
            let Value::Object(kept) = branches.remove(0) else {
                unreachable!("just matched");
            };
            for (key, value) in kept {
                object.entry(key).or_insert(value);
            }
            return simplify(node, defs, depth + 1);
        }
    }
    // A `const` says its type.
    if object.contains_key("const") {
        object.remove("type");
    }
    // `type: [X, "null"]`: X.
    if let Some(Value::Array(types)) = object.get("type")
        && types.len() == 2
        && let Some(nulls) = types.iter().position(|t| t == "null")
    {
        let kept = types[1 - nulls].clone();
        object.insert("type".into(), kept);
    }
    // `oneOf` of string constants: an `enum`.
    if let Some(Value::Array(branches)) = object.get("oneOf")
        && let Some(names) = branches
            .iter()
            .map(|b| b.get("const").and_then(Value::as_str).map(str::to_string))
            .collect::<Option<Vec<_>>>()
        && branches
            .iter()
            .all(|b| b.get("type") == Some(&Value::from("string")))
    {
        object.remove("oneOf");
        object.insert("type".into(), "string".into());
        object.insert("enum".into(), names.into());
    }
    if matches!(object.get("type"), Some(Value::String(t)) if t == "integer" || t == "number") {
        object.remove("format");
    }
    if matches!(
        object.get("default"),
        Some(Value::Bool(false) | Value::Null)
    ) || matches!(object.get("default"), Some(Value::Array(a)) if a.is_empty())
        || matches!(object.get("default"), Some(Value::String(s)) if s.is_empty())
    {
        object.remove("default");
    }
    for key in ["properties"] {
        if let Some(Value::Object(children)) = object.get_mut(key) {
            for child in children.values_mut() {
                if !simplify(child, defs, depth + 1) {
                    return false;
                }
            }
        }
    }
    for key in ["items", "additionalProperties"] {
        if let Some(child) = object.get_mut(key)
            && !simplify(child, defs, depth + 1)
        {
            return false;
        }
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(Value::Array(children)) = object.get_mut(key) {
            for child in children {
                if !simplify(child, defs, depth + 1) {
                    return false;
                }
            }
        }
    }
    true
}

fn is_null_schema(schema: &serde_json::Value) -> bool {
    schema.get("type").and_then(serde_json::Value::as_str) == Some("null")
        && schema.as_object().is_some_and(|o| o.len() == 1)
}

/// The output schema of a tool answering `T` on success: `T`'s schema, widened so
/// that the tool's structured error object (`{error_code, message, suggestion, ...}`)
/// conforms too. MCP says structured results must match the output schema, and
/// clients such as the MCP Inspector check error results against it as well.
///
/// - A struct keeps its `properties` at the root (clients read field docs there);
///   its `required` moves into `anyOf[0]`, the error object is `anyOf[1]`.
/// - A union (`anyOf` of object shapes, e.g. an untagged enum) gets the error
///   object as one more branch, and `"type": "object"` at the root as MCP requires.
pub fn output_schema<T: JsonSchema + 'static>() -> Arc<JsonObject> {
    let mut schema = (*rmcp::handler::server::common::schema_for_output::<T>()).clone();
    let error = error_schema();
    match schema.remove("anyOf") {
        Some(serde_json::Value::Array(mut branches)) => {
            branches.push(error);
            schema.insert("anyOf".into(), serde_json::Value::Array(branches));
        }
        _ => {
            let required = schema
                .remove("required")
                .unwrap_or_else(|| serde_json::json!([]));
            schema.insert(
                "anyOf".into(),
                serde_json::json!([{ "required": required }, error]),
            );
        }
    }
    schema.insert("type".into(), serde_json::Value::String("object".into()));
    Arc::new(schema)
}

/// The shape of every `isError` result's structured content.
fn error_schema() -> serde_json::Value {
    serde_json::json!({
        "type": "object",
        "description": "The tool failed: a structured error (isError: true).",
        "required": ["error_code", "message", "suggestion"],
        "properties": {
            "error_code": { "type": "string", "description": "SCREAMING_SNAKE_CASE code, e.g. UNSUPPORTED_MODEL" },
            "message": { "type": "string" },
            "suggestion": { "type": "string", "description": "What to send instead." }
        }
    })
}

/// Parse a tool's arguments, naming the offending field on failure.
///
/// An argument name `T` does not accept is refused (INVALID_INPUT, with the closest
/// accepted name as "did you mean"), whether or not `T` denies unknown fields itself:
/// a misspelt optional argument (`modle`) silently falling back to its default is a
/// wrong answer the caller cannot see. The accepted names are the ones serde accepts,
/// aliases included, read from `T`'s `Deserialize` (see [`accepted_names`]).
pub fn parse_params<T: DeserializeOwned>(
    tool: &str,
    args: Option<JsonObject>,
) -> Result<T, ToolError> {
    let args = args.unwrap_or_default();
    if let Some(accepted) = accepted_names::<T>()
        && let Some(unknown) = args.keys().find(|key| !accepted.contains(&key.as_str()))
    {
        return Err(unknown_argument(tool, unknown, accepted));
    }
    // serde_json names a missing field but not the field whose value has the wrong
    // type (`invalid type: integer `-5`, expected u64`); the path says which one.
    serde_path_to_error::deserialize(serde_json::Value::Object(args)).map_err(|e| {
        let path = e.path().to_string();
        let error = e.into_inner();
        let message = if path == "." {
            format!("invalid arguments for {tool}: {error}")
        } else {
            format!("invalid arguments for {tool}: `{path}`: {error}")
        };
        let tool_error = ToolError::new(
            ErrorCode::InvalidInput,
            message,
            format!("Check the arguments against the inputSchema of `{tool}` in tools/list."),
        );
        if path == "." {
            tool_error
        } else {
            tool_error.with_detail("field", &path)
        }
    })
}

/// Longest argument name an error message repeats; the name comes from the caller and
/// may be any length.
const MAX_ECHOED_NAME_CHARS: usize = 64;

/// Farthest (in edits) a name may be from an accepted one to be suggested: enough for
/// a typo or a case/separator slip (`modle`, `spec_Path`), not for a different word.
fn max_suggestion_distance(name: &str) -> usize {
    (name.chars().count() / 3).clamp(1, 3)
}

fn unknown_argument(tool: &str, unknown: &str, accepted: &[&str]) -> ToolError {
    let shown: String = if unknown.chars().count() > MAX_ECHOED_NAME_CHARS {
        let head: String = unknown.chars().take(MAX_ECHOED_NAME_CHARS).collect();
        format!("{head}…")
    } else {
        unknown.to_string()
    };
    let closest = (unknown.chars().count() <= MAX_ECHOED_NAME_CHARS)
        .then(|| {
            accepted
                .iter()
                .map(|name| {
                    (
                        edit_distance(&unknown.to_lowercase(), &name.to_lowercase()),
                        *name,
                    )
                })
                .filter(|(distance, name)| *distance <= max_suggestion_distance(name))
                .min()
                .map(|(_, name)| name)
        })
        .flatten();
    let list = accepted
        .iter()
        .map(|name| format!("`{name}`"))
        .collect::<Vec<_>>()
        .join(", ");
    let suggestion = match closest {
        Some(name) => format!("Did you mean `{name}`? `{tool}` accepts: {list}."),
        None => format!("`{tool}` accepts: {list}."),
    };
    let error = ToolError::new(
        ErrorCode::InvalidInput,
        format!("unknown argument `{shown}` for {tool}"),
        suggestion,
    )
    .with_detail("unknown_argument", &shown)
    .with_detail("available_options", accepted);
    match closest {
        Some(name) => error.with_detail("did_you_mean", name),
        None => error,
    }
}

/// Edit distance over chars where swapping two neighbours is one edit (optimal string
/// alignment), so `modle` is one slip from `model`. Names here are short: the
/// caller's is bounded by [`MAX_ECHOED_NAME_CHARS`] before this runs.
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut before: Vec<usize> = vec![0; b.len() + 1];
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut current = vec![0; b.len() + 1];
    for i in 0..a.len() {
        current[0] = i + 1;
        for j in 0..b.len() {
            let substitution = previous[j] + usize::from(a[i] != b[j]);
            let mut best = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
            if i > 0 && j > 0 && a[i] == b[j - 1] && a[i - 1] == b[j] {
                best = best.min(before[j - 1] + 1);
            }
            current[j + 1] = best;
        }
        std::mem::swap(&mut before, &mut previous);
        std::mem::swap(&mut previous, &mut current);
    }
    previous[b.len()]
}

/// The field names (aliases included) `T`'s derived `Deserialize` accepts, or `None`
/// when `T` is not a plain struct (a map, or a struct with `#[serde(flatten)]`, which
/// serde reads as a map: any name may be meant for the flattened part).
///
/// serde has no reflection, but a derived struct hands its complete name list to
/// `Deserializer::deserialize_struct`; this deserializer records it and stops.
pub fn accepted_names<T: DeserializeOwned>() -> Option<&'static [&'static str]> {
    let mut names = None;
    let _ = T::deserialize(FieldNames(&mut names));
    names
}

/// A deserializer that only records the field list of `deserialize_struct`.
struct FieldNames<'a>(&'a mut Option<&'static [&'static str]>);

#[derive(Debug)]
struct Recorded;

impl std::fmt::Display for Recorded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("field names recorded")
    }
}

impl std::error::Error for Recorded {}

impl serde::de::Error for Recorded {
    fn custom<M: std::fmt::Display>(_: M) -> Self {
        Recorded
    }
}

impl<'de> serde::Deserializer<'de> for FieldNames<'_> {
    type Error = Recorded;

    fn deserialize_any<V: serde::de::Visitor<'de>>(self, _: V) -> Result<V::Value, Recorded> {
        Err(Recorded)
    }

    fn deserialize_struct<V: serde::de::Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        _visitor: V,
    ) -> Result<V::Value, Recorded> {
        *self.0 = Some(fields);
        Err(Recorded)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map enum identifier ignored_any
    }
}

/// Run CPU-heavy work (counting megabytes) off the async executor, so one large
/// request does not stall every other connection on that worker thread.
pub async fn run_blocking<T, F>(work: F) -> Result<T, ToolError>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T, ToolError> + Send + 'static,
{
    tokio::task::spawn_blocking(work).await.unwrap_or_else(|e| {
        Err(ToolError::new(
            ErrorCode::InternalError,
            format!("the tool's worker failed: {e}"),
            "Retry the call; if it fails again, report it with the input that caused it.",
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Debug, Deserialize, JsonSchema, PartialEq)]
    struct Params {
        /// The text.
        text: String,
        model: Option<String>,
    }

    fn object(value: serde_json::Value) -> Option<JsonObject> {
        value.as_object().cloned()
    }

    /// How files are wrapped.
    #[derive(Debug, Deserialize, JsonSchema)]
    #[serde(rename_all = "lowercase")]
    #[allow(dead_code)]
    enum Format {
        /// XML elements.
        Xml,
        /// Plain text.
        Plain,
    }

    /// One part.
    #[derive(Debug, Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Part {
        /// The part's name.
        name: String,
        tokens: Option<u64>,
    }

    #[derive(Debug, Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Rich {
        /// Wrapping; default `xml`.
        format: Option<Format>,
        #[serde(default)]
        hidden: bool,
        #[serde(default)]
        globs: Vec<String>,
        /// Parts, described here.
        #[schemars(schema_with = "shape_only::<Vec<Part>>")]
        parts: Vec<Part>,
        share: Option<f64>,
    }

    #[test]
    fn lean_schemas_keep_the_contract_and_drop_what_a_model_does_not_read() {
        let schema = serde_json::Value::Object((*input_schema::<Rich>()).clone());
        assert_eq!(
            schema,
            json!({
                "type": "object",
                "required": ["parts"],
                "properties": {
                    "format": {
                        "description": "Wrapping; default `xml`.",
                        "type": "string",
                        "enum": ["xml", "plain"]
                    },
                    "hidden": {"type": "boolean"},
                    "globs": {"type": "array", "items": {"type": "string"}},
                    "parts": {
                        "description": "Parts, described here.",
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {
                                "name": {"type": "string"},
                                "tokens": {"type": "integer", "minimum": 0}
                            },
                            "required": ["name"]
                        }
                    },
                    "share": {"type": "number"}
                }
            })
        );
        // What it accepts is what the tool accepts.
        let parsed: Rich = parse_params(
            "t",
            object(json!({"format": "plain", "parts": [{"name": "a", "tokens": 3}]})),
        )
        .expect("valid");
        assert!(matches!(parsed.format, Some(Format::Plain)));
    }

    #[test]
    fn a_schema_that_cannot_be_inlined_is_left_whole() {
        let schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {"a": {"$ref": "#/$defs/Missing"}},
            "$defs": {}
        });
        let lean = lean(schema.as_object().expect("object"));
        assert_eq!(lean.get("$schema"), None);
        assert_eq!(lean["properties"]["a"]["$ref"], "#/$defs/Missing");
        assert!(lean.contains_key("$defs"));
    }

    #[test]
    fn valid_arguments_parse() {
        let params: Params = parse_params("t", object(json!({"text": "hi"}))).expect("valid");
        assert_eq!(
            params,
            Params {
                text: "hi".into(),
                model: None
            }
        );
    }

    #[test]
    fn missing_or_mistyped_fields_are_invalid_input_naming_the_field() {
        let missing = parse_params::<Params>("count-tokens", None).expect_err("text is required");
        assert_eq!(missing.code, ErrorCode::InvalidInput);
        assert!(
            missing.message.contains("missing field `text`"),
            "{}",
            missing.message
        );
        assert!(missing.suggestion.contains("count-tokens"));
        let mistyped =
            parse_params::<Params>("t", object(json!({"text": 5}))).expect_err("wrong type");
        assert!(
            mistyped.message.contains("invalid type"),
            "{}",
            mistyped.message
        );
    }

    #[test]
    fn a_mistyped_value_names_its_field_and_path() {
        #[derive(Debug, Deserialize)]
        #[allow(dead_code)]
        struct Budgeted {
            budget: Option<u64>,
            sections: Option<Vec<Section>>,
        }
        #[derive(Debug, Deserialize)]
        #[allow(dead_code)]
        struct Section {
            name: String,
            budget: Option<u64>,
        }
        let negative = parse_params::<Budgeted>("assemble-context", object(json!({"budget": -5})))
            .expect_err("negative budget");
        assert_eq!(
            negative.message,
            "invalid arguments for assemble-context: `budget`: invalid value: integer `-5`, \
             expected u64"
        );
        assert_eq!(negative.details["field"], "budget");
        let nested = parse_params::<Budgeted>(
            "t",
            object(json!({"sections": [{"name": "a"}, {"name": "b", "budget": "x"}]})),
        )
        .expect_err("nested");
        assert!(
            nested
                .message
                .contains("`sections[1].budget`: invalid type"),
            "{}",
            nested.message
        );
    }

    #[test]
    fn unknown_argument_names_are_refused_with_the_closest_name() {
        // Params does not deny unknown fields itself: parse_params does, for every tool.
        let typo = parse_params::<Params>(
            "count-tokens",
            object(json!({"text": "hi", "modle": "gpt-4o"})),
        )
        .expect_err("a misspelt argument is not ignored");
        assert_eq!(typo.code, ErrorCode::InvalidInput);
        assert_eq!(typo.message, "unknown argument `modle` for count-tokens");
        assert!(
            typo.suggestion.starts_with("Did you mean `model`?"),
            "{}",
            typo.suggestion
        );
        assert_eq!(typo.details["did_you_mean"], "model");
        assert_eq!(typo.details["available_options"], json!(["text", "model"]));

        let unrelated =
            parse_params::<Params>("t", object(json!({"text": "hi", "temperature": 1})))
                .expect_err("unknown");
        assert_eq!(unrelated.details.get("did_you_mean"), None);
        assert_eq!(unrelated.suggestion, "`t` accepts: `text`, `model`.");
    }

    #[test]
    fn transpositions_are_one_edit() {
        assert_eq!(edit_distance("modle", "model"), 1);
        assert_eq!(edit_distance("model", "model"), 0);
        assert_eq!(edit_distance("", "text"), 4);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }

    #[test]
    fn aliases_are_accepted_names() {
        #[derive(Debug, Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Aliased {
            #[serde(rename = "specPath", alias = "spec_path")]
            spec_path: Option<String>,
        }
        assert_eq!(
            accepted_names::<Aliased>(),
            Some(&["specPath", "spec_path"][..])
        );
        let parsed: Aliased = parse_params("t", object(json!({"spec_path": "59"}))).expect("alias");
        assert_eq!(parsed.spec_path.as_deref(), Some("59"));
        let typo =
            parse_params::<Aliased>("t", object(json!({"specpath": "59"}))).expect_err("typo");
        assert_eq!(typo.details["did_you_mean"], "specPath");
    }

    #[test]
    fn a_huge_unknown_name_is_not_echoed_whole() {
        let name = "x".repeat(100_000);
        let error = parse_params::<Params>("t", object(json!({ name.clone(): 1, "text": "hi" })))
            .expect_err("unknown");
        assert!(error.message.len() < 200, "{}", error.message.len());
        assert!(
            error
                .message
                .contains(&format!("`{}…`", "x".repeat(MAX_ECHOED_NAME_CHARS)))
        );
        assert_eq!(error.details.get("did_you_mean"), None);
    }

    #[test]
    fn output_schemas_admit_the_success_value_and_the_error_object() {
        let schema = serde_json::Value::Object((*output_schema::<Params>()).clone());
        assert_eq!(schema["type"], "object");
        // Field docs stay at the root; what is required (in output schemas: every
        // field, options as nullable) moves into the success branch.
        assert!(schema["properties"]["text"].is_object());
        assert_eq!(schema.get("required"), None);
        assert_eq!(schema["anyOf"][0]["required"], json!(["text", "model"]));
        assert_eq!(
            schema["anyOf"][1]["required"],
            json!(["error_code", "message", "suggestion"])
        );

        #[derive(JsonSchema, serde::Serialize)]
        #[serde(untagged)]
        #[allow(dead_code)]
        enum OneOrOther {
            One { a: u8 },
            Other { b: u8 },
        }
        let union = serde_json::Value::Object((*output_schema::<OneOrOther>()).clone());
        assert_eq!(union["type"], "object");
        let branches = union["anyOf"].as_array().expect("anyOf");
        assert_eq!(branches.len(), 3, "both shapes and the error object");
        assert_eq!(branches[2]["required"][0], "error_code");
    }

    #[test]
    fn schemas_describe_the_fields() {
        let schema = serde_json::Value::Object((*input_schema::<Params>()).clone());
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["required"], json!(["text"]));
        assert_eq!(schema["properties"]["text"]["description"], "The text.");
    }

    #[tokio::test]
    async fn blocking_work_returns_its_result() {
        assert_eq!(run_blocking(|| Ok(2 + 2)).await, Ok(4));
        let failed = run_blocking::<(), _>(|| panic!("boom"))
            .await
            .expect_err("panic is an error");
        assert_eq!(failed.code, ErrorCode::InternalError);
    }
}
