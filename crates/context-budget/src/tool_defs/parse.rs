//! Reading tool lists in the shapes clients and servers write them.

use serde_json::{Map, Value};

use super::ToolDefinition;

/// Deepest schema nesting accepted: real schemas are under 20 levels; the walks over a
/// schema recurse, so the bound keeps them far from the stack's end.
pub const MAX_SCHEMA_DEPTH: usize = 64;

/// A tool list that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolDefsError {
    #[error(
        "expected a list of tools (an array, or an object with a `tools` array such as a tools/list result)"
    )]
    NotAList,
    #[error("tools[{index}]: {reason}")]
    BadTool { index: usize, reason: String },
    #[error("tools[{index}] (`{name}`): its schema nests deeper than {MAX_SCHEMA_DEPTH} levels")]
    TooDeep { index: usize, name: String },
}

/// The tools of `value`: an array of tools, or an object with a `tools` array (an MCP
/// tools/list result, an Anthropic or OpenAI request body). Each tool may be
/// - MCP: `{name, description, inputSchema}`;
/// - Anthropic: `{name, description, input_schema}`;
/// - OpenAI Chat Completions: `{type: "function", function: {name, description, parameters}}`;
/// - OpenAI Responses: `{type: "function", name, description, parameters}`.
///
/// Takes the list by value and moves each schema out of it: a 6 MB `tools` argument
/// is never held twice (M1).
pub fn tool_definitions(value: Value) -> Result<Vec<ToolDefinition>, ToolDefsError> {
    let list = match value {
        Value::Array(list) => list,
        Value::Object(mut object) => match object.remove("tools") {
            Some(Value::Array(list)) => list,
            _ => return Err(ToolDefsError::NotAList),
        },
        _ => return Err(ToolDefsError::NotAList),
    };
    list.into_iter()
        .enumerate()
        .map(|(index, tool)| definition(index, tool))
        .collect()
}

fn definition(index: usize, tool: Value) -> Result<ToolDefinition, ToolDefsError> {
    let bad = |reason: &str| ToolDefsError::BadTool {
        index,
        reason: reason.to_string(),
    };
    let Value::Object(mut object) = tool else {
        return Err(bad("not an object"));
    };
    // OpenAI Chat Completions nests the function.
    let mut fields: Map<String, Value> = match object.remove("function") {
        Some(Value::Object(function)) => function,
        Some(_) => return Err(bad("`function` is not an object")),
        None => object,
    };
    let name = match fields.remove("name") {
        Some(Value::String(name)) if !name.is_empty() => name,
        _ => return Err(bad("no `name` string")),
    };
    let description = match fields.remove("description") {
        None | Some(Value::Null) => None,
        Some(Value::String(text)) => Some(text),
        Some(_) => return Err(bad("`description` is not a string")),
    };
    let schema = ["inputSchema", "input_schema", "parameters"]
        .iter()
        .find_map(|key| fields.remove(*key));
    let input_schema = match schema {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(schema @ Value::Object(_)) => schema,
        Some(_) => return Err(bad("its input schema is not an object")),
    };
    if depth(&input_schema) > MAX_SCHEMA_DEPTH {
        return Err(ToolDefsError::TooDeep { index, name });
    }
    Ok(ToolDefinition {
        name,
        description,
        input_schema,
    })
}

/// Nesting depth of a JSON value, stopping one past the bound.
fn depth(value: &Value) -> usize {
    fn walk(value: &Value, level: usize) -> usize {
        if level > MAX_SCHEMA_DEPTH {
            return level;
        }
        match value {
            Value::Array(items) => items
                .iter()
                .map(|v| walk(v, level + 1))
                .max()
                .unwrap_or(level),
            Value::Object(map) => map
                .values()
                .map(|v| walk(v, level + 1))
                .max()
                .unwrap_or(level),
            _ => level,
        }
    }
    walk(value, 0)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn every_shape_reads_to_the_same_definition() {
        let schema = json!({"type": "object", "properties": {"q": {"type": "string"}}});
        let shapes = [
            json!({"tools": [{"name": "search", "description": "Find", "inputSchema": schema}], "nextCursor": null}),
            json!([{"name": "search", "description": "Find", "input_schema": schema}]),
            json!([{"type": "function", "function": {"name": "search", "description": "Find", "parameters": schema}}]),
            json!([{"type": "function", "name": "search", "description": "Find", "parameters": schema}]),
        ];
        for shape in shapes {
            let tools = tool_definitions(shape.clone()).expect("reads");
            assert_eq!(
                tools,
                [ToolDefinition {
                    name: "search".into(),
                    description: Some("Find".into()),
                    input_schema: schema.clone(),
                }],
                "{shape}"
            );
        }
    }

    #[test]
    fn bad_lists_name_the_tool_and_the_reason() {
        assert_eq!(tool_definitions(json!("x")), Err(ToolDefsError::NotAList));
        assert_eq!(
            tool_definitions(json!([{"name": "a"}, {"description": "b"}]))
                .unwrap_err()
                .to_string(),
            "tools[1]: no `name` string"
        );
        let mut deep = json!({"type": "string"});
        for _ in 0..70 {
            deep = json!({"type": "object", "properties": {"x": deep}});
        }
        let error = tool_definitions(json!([{"name": "deep", "inputSchema": deep}])).unwrap_err();
        assert!(
            matches!(error, ToolDefsError::TooDeep { index: 0, .. }),
            "{error}"
        );
    }
}
