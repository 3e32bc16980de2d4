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

/// The output schema of `T`, for `#[tool(output_schema = …)]`. MCP requires an
/// object at the root; an output that is one of several object shapes (an untagged
/// enum: `anyOf` without a `type`) gets `"type": "object"` added.
pub fn output_schema<T: JsonSchema + 'static>() -> Arc<JsonObject> {
    let schema = rmcp::handler::server::common::schema_for_output::<T>();
    if schema.contains_key("type") {
        return schema;
    }
    let mut schema = (*schema).clone();
    schema.insert("type".into(), serde_json::Value::String("object".into()));
    Arc::new(schema)
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
