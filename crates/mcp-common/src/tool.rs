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

/// The input schema of `T`, for `#[tool(input_schema = …)]`.
pub fn input_schema<T: JsonSchema + 'static>() -> Arc<JsonObject> {
    // Our parameter types are fixed at compile time; an invalid one is a build
    // defect that the tools/list tests catch, not something a request can cause.
    rmcp::handler::server::common::schema_for_input::<T>().unwrap_or_else(|e| {
        panic!(
            "invalid input schema for {}: {e}",
            std::any::type_name::<T>()
        )
    })
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
pub fn parse_params<T: DeserializeOwned>(
    tool: &str,
    args: Option<JsonObject>,
) -> Result<T, ToolError> {
    let value = serde_json::Value::Object(args.unwrap_or_default());
    serde_json::from_value(value).map_err(|e| {
        ToolError::new(
            ErrorCode::InvalidInput,
            format!("invalid arguments for {tool}: {e}"),
            format!("Check the arguments against the inputSchema of `{tool}` in tools/list."),
        )
    })
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
