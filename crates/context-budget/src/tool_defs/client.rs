//! Tool definitions as Codex CLI, Gemini CLI and GitHub Copilot CLI send them to their models, rule by
//! rule as [`crate::clients`] states them, each checked byte for byte against the
//! requests the clients sent for this server's own tools
//! (`crates/test-support/fixtures/clients/`). Claude Code's shape is
//! [`super::anthropic_entry`].

use serde_json::{Map, Value, json};

use super::ToolDefinition;

/// Keys Codex 0.169.0 drops anywhere in a schema (and every `x-*`).
pub const CODEX_DROPPED_KEYS: [&str; 10] = [
    "$schema", "$id", "title", "$comment", "default", "format", "minimum", "maximum", "pattern",
    "examples",
];

/// The order Codex writes the keys of a schema in; others follow as listed.
const CODEX_KEY_ORDER: [&str; 8] = [
    "type",
    "description",
    "enum",
    "items",
    "properties",
    "required",
    "additionalProperties",
    "anyOf",
];

/// A name as Codex gives it to the model: every character outside `A-Za-z0-9_` as
/// `_` (recorded: `count-tokens` → `count_tokens`, `context-loader` →
/// `context_loader`).
pub fn codex_name(name: &str) -> String {
    name.chars()
        .map(|c| match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '_' => c,
            _ => '_',
        })
        .collect()
}

/// The namespace of a server's tools: `mcp__<server>`.
pub fn codex_namespace_name(server: &str) -> String {
    format!("mcp__{}", codex_name(server))
}

/// `schema` as Codex rewrites it (see [`crate::clients::ToolShape::Codex`]).
pub fn codex_schema(schema: &Value) -> Value {
    let Value::Object(listed) = schema else {
        return schema.clone();
    };
    let mut kept = Map::with_capacity(listed.len());
    for (key, value) in listed {
        if CODEX_DROPPED_KEYS.contains(&key.as_str()) || key.starts_with("x-") {
            continue;
        }
        match key.as_str() {
            "const" => {
                kept.insert("enum".into(), json!([value]));
                if !listed.contains_key("type")
                    && let Some(kind) = json_type(value)
                {
                    kept.insert("type".into(), json!(kind));
                }
            }
            "properties" => {
                let Value::Object(properties) = value else {
                    kept.insert(key.clone(), value.clone());
                    continue;
                };
                let mut names: Vec<&String> = properties.keys().collect();
                names.sort();
                let sorted: Map<String, Value> = names
                    .into_iter()
                    .map(|name| (name.clone(), codex_schema(&properties[name])))
                    .collect();
                kept.insert(key.clone(), Value::Object(sorted));
            }
            "items" | "additionalProperties" | "not" => {
                kept.insert(key.clone(), codex_schema(value));
            }
            "anyOf" | "oneOf" | "allOf" | "prefixItems" => {
                let value = match value {
                    Value::Array(list) => Value::Array(list.iter().map(codex_schema).collect()),
                    other => other.clone(),
                };
                kept.insert(key.clone(), value);
            }
            _ => {
                kept.insert(key.clone(), value.clone());
            }
        }
    }
    if kept.get("type").and_then(Value::as_str) == Some("array") && !kept.contains_key("items") {
        kept.insert("items".into(), json!({"type": "string"}));
    }
    let mut ordered = Map::with_capacity(kept.len());
    for key in CODEX_KEY_ORDER {
        if let Some(value) = kept.remove(key) {
            ordered.insert(key.to_string(), value);
        }
    }
    ordered.extend(kept);
    Value::Object(ordered)
}

fn json_type(value: &Value) -> Option<&'static str> {
    match value {
        Value::String(_) => Some("string"),
        Value::Bool(_) => Some("boolean"),
        Value::Number(n) if n.is_i64() || n.is_u64() => Some("integer"),
        Value::Number(_) => Some("number"),
        _ => None,
    }
}

/// One function of a Codex namespace; `deferred`: as `tool_search` returns it
/// (`"defer_loading": true`), else as sent in `tools` for a model Codex does not know.
pub fn codex_function(tool: &ToolDefinition, name: &str, deferred: bool) -> Value {
    let mut function = Map::new();
    function.insert("type".into(), json!("function"));
    function.insert("name".into(), json!(name));
    function.insert(
        "description".into(),
        json!(tool.description.as_deref().unwrap_or_default()),
    );
    function.insert("strict".into(), json!(false));
    if deferred {
        function.insert("defer_loading".into(), json!(true));
    }
    function.insert("parameters".into(), codex_schema(&tool.input_schema));
    Value::Object(function)
}

/// A server's namespace: `{"type":"namespace","name":"mcp__<server>","description":
/// <instructions>,"tools":[…]}`.
pub fn codex_namespace(server: &str, instructions: Option<&str>, functions: Vec<Value>) -> Value {
    json!({
        "type": "namespace",
        "name": codex_namespace_name(server),
        "description": instructions.unwrap_or_default(),
        "tools": functions,
    })
}

/// The `tool_search_output` item that brings a namespace in once the model searched
/// (its `id` as recorded: `tso_` and a UUID).
pub fn codex_search_output(namespace: Value) -> Value {
    json!({
        "type": "tool_search_output",
        "id": "tso_01a2239e-39be-71f0-a961-3a83bf9b14a7",
        "call_id": "search_1",
        "status": "completed",
        "execution": "client",
        "tools": [namespace],
    })
}

/// The line a deferred server keeps in every request: `- mcp__<server>: ` and its
/// instructions, cut to `line_chars` characters (the last three `...`) when longer.
/// Recorded: our 281-character instructions became their first 247 and `...`.
pub fn codex_server_line(server: &str, instructions: Option<&str>, line_chars: usize) -> String {
    let text = instructions.unwrap_or_default();
    let text = if text.chars().count() > line_chars {
        let kept: String = text.chars().take(line_chars.saturating_sub(3)).collect();
        format!("{kept}...")
    } else {
        text.to_string()
    };
    format!("- {}: {text}", codex_namespace_name(server))
}

/// Gemini CLI's description of the parameter it adds to every tool.
pub const GEMINI_WAIT_DESCRIPTION: &str = "Set to true to wait for all previously requested \
tools in this turn to complete before starting. Set to false (or omit) to run in parallel. Use \
true when this tool depends on the output of previous tools.";

/// Gemini CLI's longest function name, and how it shortens a longer one.
const GEMINI_MAX_NAME_CHARS: usize = 63;

/// A tool's name as Gemini CLI gives it (`generateValidName`): `mcp_<server>_<tool>`,
/// characters outside `A-Za-z0-9_-.:` as `_`, over 63 characters its first 30, `...`
/// and its last 30.
pub fn gemini_name(server: &str, tool: &str) -> String {
    let joined = format!("{server}_{tool}");
    let prefixed = match joined.starts_with("mcp_") {
        true => joined,
        false => format!("mcp_{joined}"),
    };
    let valid: Vec<char> = prefixed
        .chars()
        .map(|c| match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '_' | '-' | '.' | ':' => c,
            _ => '_',
        })
        .collect();
    if valid.len() > GEMINI_MAX_NAME_CHARS {
        let head: String = valid[..30].iter().collect();
        let tail: String = valid[valid.len() - 30..].iter().collect();
        return format!("{head}...{tail}");
    }
    valid.into_iter().collect()
}

/// `schema` as Gemini CLI sends it: `type`, `properties`, `required` first (its MCP
/// client rebuilds the object), a `["X","null"]` type as `X` with `nullable: true`,
/// and for an object schema a `wait_for_previous` boolean after its properties.
pub fn gemini_schema(schema: &Value) -> Value {
    let Value::Object(listed) = super::key_order::legacy_client_key_order(schema) else {
        return schema.clone();
    };
    let mut schema = listed;
    nullable_types(&mut schema);
    if schema.get("type").and_then(Value::as_str) == Some("object")
        && schema.get("properties").is_none_or(Value::is_object)
    {
        let properties = schema
            .entry("properties")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(properties) = properties {
            properties.insert(
                "wait_for_previous".into(),
                json!({"type": "boolean", "description": GEMINI_WAIT_DESCRIPTION}),
            );
        }
    }
    Value::Object(schema)
}

/// `"type": ["integer", "null"]` as `"type": "integer", "nullable": true`, at every
/// level of properties and items.
fn nullable_types(schema: &mut Map<String, Value>) {
    if let Some(Value::Array(types)) = schema.get("type") {
        let others: Vec<&Value> = types
            .iter()
            .filter(|t| t.as_str() != Some("null"))
            .collect();
        if others.len() == 1 && others.len() < types.len() {
            let only = others[0].clone();
            schema.insert("type".into(), only);
            schema.insert("nullable".into(), json!(true));
        }
    }
    if let Some(Value::Object(properties)) = schema.get_mut("properties") {
        for property in properties.values_mut() {
            if let Value::Object(property) = property {
                nullable_types(property);
            }
        }
    }
    if let Some(Value::Object(items)) = schema.get_mut("items") {
        nullable_types(items);
    }
}

/// One function declaration as Gemini CLI sends it.
pub fn gemini_declaration(tool: &ToolDefinition, name: &str) -> Value {
    json!({
        "name": name,
        "description": tool.description.as_deref().unwrap_or_default(),
        "parametersJsonSchema": gemini_schema(&tool.input_schema),
    })
}

/// A server's instructions as Gemini CLI puts them in the first user message: in the
/// project's part of its loaded context, which exists for them alone when the project
/// has no other (no GEMINI.md): recorded, with our server, as this whole block (113
/// o200k tokens; 97 without the two envelopes). With other project context the
/// envelopes are shared, and counted here anyway: a few tokens high, never low.
pub fn gemini_instructions(server: &str, instructions: &str) -> String {
    format!(
        "<loaded_context>\n<project_context>\n\
         The following are instructions provided by the tool server '{server}':\n\
         ---[start of server instructions]---\n{instructions}\n---[end of server instructions]---\n\
         </project_context>\n</loaded_context>"
    )
}

/// Copilot CLI's longest function name.
const COPILOT_MAX_NAME_CHARS: usize = 64;

/// A tool's name as GitHub Copilot CLI 1.0.102 gives it: `<server>-<tool>` (recorded:
/// `context-loader-count-tokens`), ASCII characters outside `A-Za-z0-9_-` as `-`
/// (probed: `probe_tool.With Long-Name` → `probe_tool-With-Long-Name`), cut to its
/// first 64 characters. A non-ASCII name it turns into punycode (`xn--…`), which is
/// not modelled: such characters are kept here.
pub fn copilot_name(server: &str, tool: &str) -> String {
    format!("{server}-{tool}")
        .chars()
        .map(|c| match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '_' | '-' => c,
            c if c.is_ascii() => '-',
            c => c,
        })
        .take(COPILOT_MAX_NAME_CHARS)
        .collect()
}

/// The keywords Copilot CLI 1.0.102 moves from a schema into its description, in the
/// order it writes them there: `{minimum: 0}` recorded with our tools (`budget`), the
/// rest probed with a schema holding every JSON Schema keyword (`maximum`, `pattern`,
/// `format` and the like; `$schema`, `title`, `default`, `examples`, `const`, `enum`,
/// `anyOf`, `$ref`/`$defs`, `x-*` and unknown keys are kept).
pub const COPILOT_MOVED_KEYS: [&str; 29] = [
    "contentEncoding",
    "contentMediaType",
    "not",
    "minLength",
    "maxLength",
    "pattern",
    "format",
    "minimum",
    "maximum",
    "multipleOf",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "patternProperties",
    "minItems",
    "maxItems",
    "uniqueItems",
    "unevaluatedProperties",
    "propertyNames",
    "minProperties",
    "maxProperties",
    "unevaluatedItems",
    "contains",
    "minContains",
    "maxContains",
    "if",
    "then",
    "else",
    "dependentRequired",
    "dependentSchemas",
];

/// Keys whose value is a schema, and keys whose value is a map or a list of schemas:
/// where Copilot CLI's rewrite goes on (probed inside `properties`, `$defs`, `items`
/// and `allOf`).
const COPILOT_SCHEMA_KEYS: [&str; 2] = ["items", "additionalProperties"];
const COPILOT_SCHEMA_MAPS: [&str; 3] = ["properties", "$defs", "definitions"];
const COPILOT_SCHEMA_LISTS: [&str; 4] = ["allOf", "anyOf", "oneOf", "prefixItems"];

/// `schema` as Copilot CLI sends it (see [`crate::clients::ToolShape::CopilotCli`]):
/// every object's keys sorted (as its Rust runtime's JSON maps write them); in each
/// schema the [`COPILOT_MOVED_KEYS`] present taken out and written into the
/// description as `{minimum: 0, pattern: "^a"}` (after the text and a blank line; an
/// empty or missing description becomes the note, a new one going last), an array
/// without `items` given `"items":{}`, `additionalItems: false` as
/// `{"description":"{schema: false}"}`; the top level given `"type":"object"` and
/// `"properties":{}` when it has none.
pub fn copilot_schema(schema: &Value) -> Value {
    let mut sent = copilot_subschema(&sorted(schema));
    if let Value::Object(top) = &mut sent {
        if !top.contains_key("type") {
            top.insert("type".into(), json!("object"));
        }
        if !top.contains_key("properties") {
            top.insert("properties".into(), json!({}));
        }
    }
    sent
}

/// `value` with every object's keys sorted.
fn sorted(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            Value::Object(
                keys.into_iter()
                    .map(|k| (k.clone(), sorted(&map[k])))
                    .collect(),
            )
        }
        Value::Array(list) => Value::Array(list.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

/// One (sorted) schema as Copilot CLI rewrites it.
fn copilot_subschema(schema: &Value) -> Value {
    let Value::Object(listed) = schema else {
        return schema.clone();
    };
    let mut sent = Map::with_capacity(listed.len());
    for (key, value) in listed {
        if COPILOT_MOVED_KEYS.contains(&key.as_str()) {
            continue;
        }
        let value = match (key.as_str(), value) {
            ("additionalItems", Value::Bool(false)) => json!({"description": "{schema: false}"}),
            (key, value) if COPILOT_SCHEMA_KEYS.contains(&key) => copilot_subschema(value),
            (key, Value::Object(map)) if COPILOT_SCHEMA_MAPS.contains(&key) => Value::Object(
                map.iter()
                    .map(|(k, v)| (k.clone(), copilot_subschema(v)))
                    .collect(),
            ),
            (key, Value::Array(list)) if COPILOT_SCHEMA_LISTS.contains(&key) => {
                Value::Array(list.iter().map(copilot_subschema).collect())
            }
            (_, value) => value.clone(),
        };
        sent.insert(key.clone(), value);
    }
    if sent.get("type").and_then(Value::as_str) == Some("array") && !sent.contains_key("items") {
        sent.insert("items".into(), json!({}));
    }
    let moved: Vec<String> = COPILOT_MOVED_KEYS
        .iter()
        .filter_map(|key| {
            listed
                .get(*key)
                .map(|value| format!("{key}: {}", copilot_value(value)))
        })
        .collect();
    if !moved.is_empty() {
        let note = format!("{{{}}}", moved.join(", "));
        let text = match sent.get("description").and_then(Value::as_str) {
            Some(text) if !text.is_empty() => format!("{text}\n\n{note}"),
            _ => note,
        };
        sent.insert("description".into(), json!(text));
    }
    Value::Object(sent)
}

/// A moved keyword's value as Copilot CLI writes it: compact JSON, a non-integer
/// number as JavaScript prints it (probed: `1e+21`, `1e-7`, `-2.25`; an integer whole,
/// 9007199254740993 included).
fn copilot_value(value: &Value) -> String {
    match value {
        Value::Number(n) if n.is_f64() => {
            let x = n.as_f64().unwrap_or_default();
            let magnitude = x.abs();
            if magnitude >= 1e21 || (magnitude != 0.0 && magnitude < 1e-6) {
                let text = format!("{x:e}");
                match text.split_once('e') {
                    Some((mantissa, exponent)) if !exponent.starts_with('-') => {
                        format!("{mantissa}e+{exponent}")
                    }
                    _ => text,
                }
            } else {
                format!("{x}")
            }
        }
        other => other.to_string(),
    }
}

/// One function as Copilot CLI sends it in `tools`.
pub fn copilot_function(tool: &ToolDefinition, name: &str) -> Value {
    json!({
        "name": name,
        "description": tool.description.as_deref().unwrap_or_default(),
        "parameters": copilot_schema(&tool.input_schema),
        "strict": false,
        "type": "function",
    })
}

/// What Claude Code keeps in every request for a deferred server: its tools' names,
/// one a line, under a header shared by every server (not counted here).
pub fn claude_code_deferred_names<'a>(names: impl Iterator<Item = &'a str>) -> String {
    names.map(|n| format!("{n}\n")).collect()
}

#[cfg(test)]
mod tests {
    use test_support::fixtures::clients as recorded;

    use super::super::{Rendering, ServerDefinitions, measure_server, tool_definitions};
    use super::*;
    use crate::Tokenizer;

    fn json(text: &str) -> Value {
        serde_json::from_str(text).expect("a recorded fixture is JSON")
    }

    /// The listing the recordings were made from.
    fn listed() -> ServerDefinitions {
        listed_from(recorded::CONTEXT_LOADER_TOOLS_LIST)
    }

    fn listed_from(listing: &str) -> ServerDefinitions {
        let mut listing = json(listing);
        let instructions = listing["instructions"].as_str().map(str::to_string);
        ServerDefinitions {
            name: Some("context-loader".into()),
            tools: tool_definitions(listing["tools"].take()).expect("our listing reads"),
            instructions,
        }
    }

    fn text(value: &Value) -> String {
        serde_json::to_string(value).unwrap()
    }

    #[test]
    fn codex_sends_our_tools_as_recorded_directly_and_after_a_search() {
        let server = listed();
        let direct = json(recorded::CODEX_DIRECT);
        let functions: Vec<Value> = server
            .tools
            .iter()
            .map(|t| codex_function(t, &codex_name(&t.name), false))
            .collect();
        for function in &functions {
            let name = function["name"].as_str().unwrap();
            let sent = direct["tools"]
                .as_array()
                .unwrap()
                .iter()
                .find(|t| t["name"] == name)
                .unwrap_or_else(|| panic!("{name} was not sent"));
            assert_eq!(text(function), text(sent), "{name}");
        }
        assert_eq!(functions.len(), direct["tools"].as_array().unwrap().len());
        // The namespace, in the order Codex sends it (by name).
        let mut sorted = functions.clone();
        sorted.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
        let namespace = codex_namespace("context-loader", server.instructions.as_deref(), sorted);
        assert_eq!(text(&namespace), text(&direct));
        // After a search: the same functions with `defer_loading`, in the search's order.
        let searched = json(recorded::CODEX_SEARCHED);
        let found: Vec<Value> = searched["tools"][0]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|sent| {
                let tool = server
                    .tools
                    .iter()
                    .find(|t| codex_name(&t.name) == sent["name"].as_str().unwrap())
                    .expect("a tool of ours");
                let rendered = codex_function(tool, &codex_name(&tool.name), true);
                assert_eq!(text(&rendered), text(sent));
                rendered
            })
            .collect();
        let item = codex_search_output(codex_namespace(
            "context-loader",
            server.instructions.as_deref(),
            found,
        ));
        assert_eq!(text(&item), text(&searched));
        // 2,151 o200k, the issue's figure; 2,042 sent directly.
        assert_eq!(Tokenizer::O200kBase.count(&text(&item)), 2_151);
        assert_eq!(Tokenizer::O200kBase.count(&text(&direct)), 2_042);
    }

    #[test]
    fn codex_keeps_one_line_per_server_up_front() {
        let server = listed();
        let first = json(recorded::CODEX_FIRST_REQUEST);
        let line = codex_server_line("context-loader", server.instructions.as_deref(), 250);
        assert_eq!(line, first["server_lines"][0].as_str().unwrap());
        assert_eq!(Tokenizer::O200kBase.count(&line), 67);
    }

    #[test]
    fn gemini_sends_our_tools_as_recorded() {
        let server = listed();
        let sent = json(recorded::GEMINI_TOOLS);
        let sent = sent.as_array().unwrap();
        assert_eq!(sent.len(), server.tools.len());
        for (tool, sent) in server.tools.iter().zip(sent) {
            let declaration = gemini_declaration(tool, &gemini_name("context-loader", &tool.name));
            assert_eq!(text(&declaration), text(sent), "{}", tool.name);
        }
        // The issue's 2,480 is o200k; the instructions 68 bare, 97 in Gemini's
        // wrapper (the issue's figure), 113 in its loaded-context block as `cargo
        // xtask clients` recorded the whole of it.
        let o200k = measure_server(&server, Tokenizer::O200kBase, Rendering::GeminiCli);
        assert_eq!(o200k.tool_tokens, 2_480);
        assert_eq!(o200k.instructions_tokens, 113);
        let instructions = server.instructions.as_deref().unwrap();
        assert_eq!(Tokenizer::O200kBase.count(instructions), 68);
    }

    #[test]
    fn a_namespace_costs_what_its_json_costs() {
        let server = listed();
        let cost = measure_server(&server, Tokenizer::O200kBase, Rendering::Codex);
        // Tools counted one by one, the namespace around them as the rest: within a
        // few tokens of the whole namespace counted at once (2,042).
        assert!(
            cost.total_tokens.abs_diff(2_042) <= 20,
            "{}",
            cost.total_tokens
        );
    }

    #[test]
    fn codex_rewrites_a_schema_as_recorded() {
        let listed = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "Args",
            "additionalProperties": false,
            "type": "object",
            "properties": {
                "z": {"type": "integer", "minimum": 0, "default": 3, "description": "Z"},
                "a": {"const": "text"},
                "list": {"type": "array", "x-order": 1},
                "when": {"type": "string", "format": "date-time", "pattern": "^2"}
            },
            "required": ["z"]
        });
        assert_eq!(
            serde_json::to_string(&codex_schema(&listed)).unwrap(),
            r#"{"type":"object","properties":{"a":{"type":"string","enum":["text"]},"list":{"type":"array","items":{"type":"string"}},"when":{"type":"string"},"z":{"type":"integer","description":"Z"}},"required":["z"],"additionalProperties":false}"#
        );
    }

    #[test]
    fn names_follow_each_client() {
        assert_eq!(codex_name("count-tokens"), "count_tokens");
        assert_eq!(
            codex_namespace_name("context-loader"),
            "mcp__context_loader"
        );
        assert_eq!(
            gemini_name("context-loader", "count-tokens"),
            "mcp_context-loader_count-tokens"
        );
        assert_eq!(gemini_name("my server", "a/b"), "mcp_my_server_a_b");
        let long = gemini_name("s", &"x".repeat(80));
        assert_eq!(long.chars().count(), 63);
        assert!(long.starts_with("mcp_s_") && long.contains("..."));
    }

    #[test]
    fn the_server_line_cuts_long_instructions_to_250_characters() {
        let long = "a".repeat(281);
        let line = codex_server_line("context-loader", Some(&long), 250);
        assert_eq!(
            line,
            format!("- mcp__context_loader: {}...", "a".repeat(247))
        );
        assert_eq!(
            codex_server_line("s", Some("Short."), 250),
            "- mcp__s: Short."
        );
    }

    #[test]
    fn gemini_adds_its_parameter_and_marks_nullable_types() {
        let listed = json!({"properties": {"n": {"type": ["integer", "null"]}}, "type": "object"});
        let sent = gemini_schema(&listed);
        assert_eq!(
            sent["properties"]["n"],
            json!({"type": "integer", "nullable": true})
        );
        assert_eq!(sent["properties"]["wait_for_previous"]["type"], "boolean");
        assert_eq!(
            sent.as_object().unwrap().keys().next().map(String::as_str),
            Some("type")
        );
        // Not an object schema: nothing added.
        assert_eq!(
            gemini_schema(&json!({"type": "string"})),
            json!({"type": "string"})
        );
        // 38 words (the issue said 35).
        assert_eq!(GEMINI_WAIT_DESCRIPTION.split_whitespace().count(), 38);
    }

    #[test]
    fn copilot_sends_our_tools_as_recorded() {
        let server = listed_from(recorded::CONTEXT_LOADER_TOOLS_LIST_39569B8);
        let sent = json(recorded::COPILOT_TOOLS);
        let sent = sent.as_array().unwrap();
        assert_eq!(sent.len(), server.tools.len());
        for (tool, sent) in server.tools.iter().zip(sent) {
            let function = copilot_function(tool, &copilot_name("context-loader", &tool.name));
            assert_eq!(text(&function), text(sent), "{}", tool.name);
        }
        // What `cargo xtask clients` counted as sent (o200k), our instructions in no
        // request.
        let sent_tokens: usize = sent
            .iter()
            .map(|f| Tokenizer::O200kBase.count(&text(f)))
            .sum();
        assert_eq!(sent_tokens, 2_147);
        let o200k = measure_server(&server, Tokenizer::O200kBase, Rendering::CopilotCli);
        assert_eq!(o200k.tool_tokens, 2_147);
        assert_eq!(o200k.instructions_tokens, 0);
        assert_eq!(o200k.total_tokens, 2_147);
    }

    #[test]
    fn copilot_sorts_keys_and_moves_keywords_into_the_description_as_probed() {
        let listed = json!({
            "type": "object",
            "required": ["z", "a"],
            "properties": {
                "z": {"type": "integer", "minimum": 0, "description": "Z", "maximum": 9},
                "a": {"minimum": 1.5, "type": "number", "default": 2, "format": "double"},
                "list": {"type": "array"},
                "minimum": {"type": "string", "description": "", "pattern": "^a"},
                "n": {"type": "number", "minimum": 1e21, "maximum": 1e-7, "allOf": [{"minimum": 3}]},
                "c": {"type": "array", "additionalItems": false, "contains": {"type": "string", "a": 1}}
            }
        });
        assert_eq!(
            serde_json::to_string(&copilot_schema(&listed)).unwrap(),
            concat!(
                r#"{"properties":{"a":{"default":2,"type":"number","description":"{format: \"double\", minimum: 1.5}"},"#,
                r#""c":{"additionalItems":{"description":"{schema: false}"},"type":"array","items":{},"description":"{contains: {\"a\":1,\"type\":\"string\"}}"},"#,
                r#""list":{"type":"array","items":{}},"minimum":{"description":"{pattern: \"^a\"}","type":"string"},"#,
                r#""n":{"allOf":[{"description":"{minimum: 3}"}],"type":"number","description":"{minimum: 1e+21, maximum: 1e-7}"},"#,
                r#""z":{"description":"Z\n\n{minimum: 0, maximum: 9}","type":"integer"}},"required":["z","a"],"type":"object"}"#
            )
        );
        // The top level is always an object with properties.
        assert_eq!(
            serde_json::to_string(&copilot_schema(&json!({}))).unwrap(),
            r#"{"type":"object","properties":{}}"#
        );
        assert_eq!(
            serde_json::to_string(&copilot_schema(
                &json!({"required": ["a"], "properties": {}})
            ))
            .unwrap(),
            r#"{"properties":{},"required":["a"],"type":"object"}"#
        );
        assert_eq!(
            copilot_name("context-loader", "count-tokens"),
            "context-loader-count-tokens"
        );
        let long = copilot_name(
            "probe",
            &format!("probe_tool.With Long-Name{}", "x".repeat(60)),
        );
        assert_eq!(
            long,
            format!("probe-probe_tool-With-Long-Name{}", "x".repeat(33))
        );
    }

    #[test]
    fn copilot_sends_a_probes_keywords_and_names_as_probed() {
        let listing = json(recorded::COPILOT_PROBE_TOOLS_LIST);
        let sent = json(recorded::COPILOT_PROBE_SENT);
        let tools = tool_definitions(listing["tools"].clone()).unwrap();
        let sent = sent.as_array().unwrap();
        assert_eq!(sent.len(), tools.len());
        let mut checked = 0;
        for tool in &tools {
            // Punycode for a non-ASCII name is not modelled.
            if !tool.name.is_ascii() {
                continue;
            }
            let name = copilot_name("probe", &tool.name);
            let recorded = sent
                .iter()
                .find(|f| f["name"] == name.as_str())
                .unwrap_or_else(|| panic!("{name} was not sent"));
            assert_eq!(
                text(&copilot_function(tool, &name)),
                text(recorded),
                "{name}"
            );
            checked += 1;
        }
        assert_eq!(checked, 6);
    }
}
