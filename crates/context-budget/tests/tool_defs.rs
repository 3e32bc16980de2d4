//! `tool_defs` against an independent reading of the same rules: the Claude Code
//! rendering built here by hand, `$ref`s resolved back to the original schema, and
//! every saving recounted from the rewritten text.

use context_budget::Tokenizer;
use context_budget::tool_defs::savings::{hoist_repeated, strip_unneeded};
use context_budget::tool_defs::{Rendering, ServerDefinitions, measure, tool_definitions};
use serde_json::{Value, json};

/// A tools/list result like a generated API server's: 60 tools whose arguments repeat
/// the same nested filter and paging objects, with pydantic titles.
fn fleet_like() -> Value {
    let filter = json!({"type": "object", "title": "Filter", "description": "Which records to match",
        "properties": {
            "field": {"type": "string", "title": "Field", "description": "Field name"},
            "op": {"type": "string", "enum": ["eq", "ne", "lt", "gt", "in"], "title": "Op"},
            "value": {"type": "object", "properties": {"text": {"type": "string"}, "number": {"type": "number"}}}}});
    let tools: Vec<Value> = (0..60)
        .map(|i| json!({
            "name": format!("records_query_{i}"),
            "description": format!("Query the records of collection {i}. Filters combine with AND."),
            "inputSchema": {"$schema": "https://json-schema.org/draft/2020-12/schema",
                "title": format!("records_query_{i}Arguments"), "type": "object",
                "properties": {
                    "where": {"type": "array", "items": filter},
                    "or_where": {"type": "array", "items": filter},
                    "not": filter,
                    "limit": {"type": "integer", "title": "Limit"}},
                "required": ["where"]}}))
        .collect();
    json!({ "tools": tools })
}

/// Replace every `{"$ref": "#/$defs/x"}` by its definition, and drop `$defs`.
fn inline(value: &Value, defs: &serde_json::Map<String, Value>) -> Value {
    match value {
        Value::Object(map) => {
            if let Some(Value::String(r)) = map.get("$ref")
                && map.len() == 1
                && let Some(name) = r.strip_prefix("#/$defs/")
            {
                return inline(&defs[name], defs);
            }
            Value::Object(
                map.iter()
                    .filter(|(k, _)| *k != "$defs")
                    .map(|(k, v)| (k.clone(), inline(v, defs)))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(|v| inline(v, defs)).collect()),
        other => other.clone(),
    }
}

fn claude_code_entry(server: &str, tool: &Value, schema: &Value) -> String {
    let schema = schema.clone();
    serde_json::to_string(&json!({
        "name": format!("mcp__{server}__{}", tool["name"].as_str().unwrap()),
        "description": tool["description"],
        "input_schema": schema,
    }))
    .unwrap()
}

#[test]
fn hoisting_keeps_the_meaning_and_its_saving_is_the_recounted_difference() {
    let list = fleet_like();
    let o200k = Tokenizer::O200kBase;
    let mut expected_saving = 0;
    for tool in list["tools"].as_array().unwrap() {
        let schema = &tool["inputSchema"];
        let (hoisted, count) = hoist_repeated(schema);
        assert!(count >= 1, "{hoisted}");
        let defs = hoisted["$defs"].as_object().unwrap().clone();
        assert_eq!(
            &inline(&hoisted, &defs),
            schema,
            "the same schema once the refs resolve"
        );
        let before = o200k.count(&claude_code_entry("big", tool, schema));
        let after = o200k.count(&claude_code_entry("big", tool, &hoisted));
        assert!(after < before, "{before} -> {after}");
        expected_saving += before - after;
    }
    let servers = [ServerDefinitions {
        name: Some("big".into()),
        tools: tool_definitions(list.clone()).unwrap(),
        instructions: None,
    }];
    let (costs, summary) = measure(
        &servers,
        "gpt-4o",
        o200k,
        Some(128_000),
        Rendering::Anthropic,
        context_budget::limits::DEFAULT_HOIST_WORK_FACTOR,
    );
    let total: usize = list["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| o200k.count(&claude_code_entry("big", t, &t["inputSchema"])))
        .sum();
    assert_eq!(costs[0].total_tokens, total);
    assert_eq!(summary.total_tokens, total);
    assert_eq!(summary.savings.tokens_before, total);
    assert_eq!(summary.savings.hoisting.tokens_saved, expected_saving);
    assert_eq!(summary.savings.hoisting.tools.len(), 60);
    assert!(
        summary.savings.tokens_after < total - expected_saving,
        "titles go too"
    );
    assert_eq!(summary.savings.heaviest_tools.len(), 10);
    // where, or_where and limit have no description in any of the 60 tools.
    assert_eq!(summary.savings.undescribed_parameter_count, 180);
    assert_eq!(summary.layer_budget, 4_000);
    assert_eq!(
        summary.layer_percent,
        (total as f64 * 10_000.0 / 4_000.0).round() / 100.0
    );
}

#[test]
fn stripping_recounts_to_its_reported_saving() {
    let list = fleet_like();
    let tool = &list["tools"][0];
    let (stripped, removed) = strip_unneeded(&tool["inputSchema"]);
    // $schema, the root title, Limit, and the Field and Op titles of three filters;
    // `Filter` names a type, not the property it sits in: it stays.
    assert_eq!(removed, 1 + 1 + 1 + 3 * 2, "{stripped}");
    let text = serde_json::to_string(&stripped).unwrap();
    assert_eq!(text.matches("\"title\"").count(), 3, "{text}");
    assert!(!text.contains("$schema"), "{text}");
    assert!(
        text.starts_with(r#"{"type":"object","properties":{"where""#),
        "key order kept: {text}"
    );
}
