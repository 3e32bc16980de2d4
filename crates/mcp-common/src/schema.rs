//! Tool schemas from Rust types: input schemas trimmed to what a model reads, output
//! schemas widened to admit the structured error object.
//!
//! Tools declare `T`'s schema explicitly (not through rmcp's `Parameters<T>`, see
//! [`crate::params`]), so the schema a client sends the model is made here.

use std::sync::Arc;

use rmcp::model::JsonObject;
use schemars::JsonSchema;

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

/// For `#[schemars(schema_with = "mcp_common::schema::shape_only::<T>")]` on a field whose
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
    let mut schema = serde_json::Value::Object(schema);
    keep_known_formats(&mut schema);
    match schema {
        serde_json::Value::Object(schema) => Arc::new(schema),
        _ => unreachable!("an object stays an object"),
    }
}

/// String formats of JSON Schema 2020-12 that validators know.
const KNOWN_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// Drops every `format` a client's validator may not know: schemars writes Rust's
/// types (`uint`, `uint64`, `double`) as formats, and Gemini CLI, which validates
/// results against output schemas, printed a warning for each on every run (244).
/// `minimum` keeps what `uint` said.
fn keep_known_formats(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::Object(object) => {
            if object
                .get("format")
                .is_some_and(|f| !f.as_str().is_some_and(|f| KNOWN_FORMATS.contains(&f)))
            {
                object.remove("format");
            }
            object.values_mut().for_each(keep_known_formats);
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(keep_known_formats),
        _ => {}
    }
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

#[cfg(test)]
mod format_tests {
    use super::*;

    #[derive(schemars::JsonSchema, serde::Serialize)]
    #[allow(dead_code)]
    struct Out {
        count: u64,
        share: f64,
        when: String,
        nested: Vec<Inner>,
    }

    #[derive(schemars::JsonSchema, serde::Serialize)]
    #[allow(dead_code)]
    struct Inner {
        size: usize,
    }

    #[test]
    fn output_schemas_keep_only_formats_validators_know() {
        let schema = serde_json::Value::Object((*output_schema::<Out>()).clone());
        let text = schema.to_string();
        for unknown in ["uint", "uint64", "double"] {
            assert!(!text.contains(&format!("\"{unknown}\"")), "{text}");
        }
        let mut with_date = serde_json::json!({"type": "string", "format": "date-time",
            "items": [{"format": "uint8"}]});
        keep_known_formats(&mut with_date);
        assert_eq!(
            with_date,
            serde_json::json!({"type": "string", "format": "date-time",
            "items": [{}]})
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    use crate::parse_params;

    #[derive(JsonSchema)]
    #[allow(dead_code)]
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
}
