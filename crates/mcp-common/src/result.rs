//! Success results.
//!
//! A tool with an output schema answers with [`Structured`]: the value as
//! `structuredContent` (what schema-aware clients read) and as JSON text (what every
//! other client shows the model). The text is the compact serialization of exactly
//! that value, the string `JSON.stringify(structuredContent)` gives (Claude Code passes
//! the model that string and drops `content`): whichever a client reads, the model
//! receives the same string, so a server can bound and report one answer. [`normalize_result`] turns the plain values a
//! simple handler returns into a result, by the same rules as airmcp's normalizeResult.

use rmcp::handler::server::tool::IntoCallToolResult;
use rmcp::model::{CallToolResponse, CallToolResult, ContentBlock};
use serde::Serialize;
use serde_json::Value;

use crate::answer::answer_text;

/// A success result from any `Serialize` value: structuredContent, and as text the
/// same value in compact JSON ([`answer_text`]).
pub fn success_result<T: Serialize>(value: &T) -> Result<CallToolResult, serde_json::Error> {
    let value = serde_json::to_value(value)?;
    let text = answer_text(&value);
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    result.structured_content = Some(value);
    Ok(result)
}

/// Return type of a tool with an output schema: `Result<Structured<Output>, ToolError>`.
#[derive(Debug, Clone, PartialEq)]
pub struct Structured<T>(pub T);

impl<T: Serialize> IntoCallToolResult for Structured<T> {
    fn into_call_tool_result(self) -> Result<CallToolResponse, rmcp::ErrorData> {
        success_result(&self.0).map(Into::into).map_err(|e| {
            rmcp::ErrorData::internal_error(format!("cannot serialize tool output: {e}"), None)
        })
    }
}

/// Largest image [`normalize_result`] passes on, in decoded bytes (5 MiB, what
/// Anthropic's API accepts per image): a bigger one would be refused by the model
/// anyway, after costing the transport megabytes.
pub const MAX_IMAGE_BYTES: usize = 5 * 1024 * 1024;

/// The mime type of an `{image}` return without `mimeType`.
pub const DEFAULT_IMAGE_MIME_TYPE: &str = "image/png";

/// Turn a plain handler return into a tool result, by airmcp's normalizeResult rules:
///
/// | handler returned                                 | result content              |
/// |--------------------------------------------------|-----------------------------|
/// | nothing (`null`)                                 | one empty text              |
/// | a string                                         | that text                   |
/// | a number or boolean                              | its JSON text (`42`, `true`)|
/// | `{"type":"text","text":…}` or `{"text":…}`       | that text                   |
/// | `{"type":"image","data":…,"mimeType":…}` or `{data, mimeType}` | an image      |
/// | `{"image":<base64>}` or `{"image":…,"mimeType":…}` | an image (default mime `image/png`) |
/// | a built result (`{"content":[…], …}`) or a list of content blocks | passed through |
/// | any other array or object                        | pretty JSON text            |
///
/// The shorthand forms match only objects with exactly those keys: `{"text": …,
/// "score": 3}` is data and stays JSON. Image data must be standard base64 of at most
/// [`MAX_IMAGE_BYTES`]; otherwise the result is an INTERNAL_ERROR naming the problem
/// (the handler's output is wrong, not the caller's input), never a broken image.
pub fn normalize_result(value: Value) -> CallToolResult {
    match value {
        Value::Null => text_result(String::new()),
        Value::String(s) => text_result(s),
        Value::Bool(_) | Value::Number(_) => text_result(value.to_string()),
        Value::Object(ref map) => {
            let str_field = |key| map.get(key).and_then(Value::as_str);
            let only_keys = |allowed: &[&str]| map.keys().all(|k| allowed.contains(&k.as_str()));
            match (
                str_field("type"),
                str_field("text"),
                str_field("data"),
                str_field("mimeType"),
                str_field("image"),
            ) {
                (Some("text"), Some(text), ..) => text_result(text.to_string()),
                (None, Some(text), ..) if only_keys(&["text"]) => text_result(text.to_string()),
                (Some("image") | None, _, Some(data), Some(mime), _) => image_result(data, mime),
                (None, _, _, mime, Some(data)) if only_keys(&["image", "mimeType"]) => {
                    let explicit = map.contains_key("mimeType");
                    match mime {
                        Some(mime) => image_result(data, mime),
                        None if !explicit => image_result(data, DEFAULT_IMAGE_MIME_TYPE),
                        None => pretty_json_result(&value),
                    }
                }
                _ if map.get("content").is_some_and(Value::is_array) => {
                    serde_json::from_value::<CallToolResult>(value.clone())
                        .unwrap_or_else(|_| pretty_json_result(&value))
                }
                _ => pretty_json_result(&value),
            }
        }
        Value::Array(ref items) => {
            let all_blocks = !items.is_empty() && items.iter().all(|i| i.get("type").is_some());
            match all_blocks.then(|| serde_json::from_value::<Vec<ContentBlock>>(value.clone())) {
                Some(Ok(blocks)) => CallToolResult::success(blocks),
                _ => pretty_json_result(&value),
            }
        }
    }
}

/// An image block, or the error saying why `data` cannot be one.
fn image_result(data: &str, mime_type: &str) -> CallToolResult {
    match check_base64_image(data) {
        Ok(()) => CallToolResult::success(vec![ContentBlock::image(data, mime_type)]),
        Err(problem) => crate::create_mcp_error(
            crate::ErrorCode::InternalError,
            format!("the tool returned an image that cannot be sent: {problem}"),
            "This is a fault of the tool, not of the arguments; report it.",
            None,
        ),
    }
}

/// Standard base64 (RFC 4648 alphabet, `=` padding to a multiple of 4) of at most
/// [`MAX_IMAGE_BYTES`] decoded bytes. Checked without decoding: the data is passed on
/// as it came.
fn check_base64_image(data: &str) -> Result<(), String> {
    let max_len = MAX_IMAGE_BYTES.div_ceil(3) * 4;
    if data.len() > max_len {
        return Err(format!(
            "{} bytes of base64 is over the limit of {MAX_IMAGE_BYTES} bytes of image",
            data.len()
        ));
    }
    let bytes = data.as_bytes();
    if bytes.is_empty() || !bytes.len().is_multiple_of(4) {
        return Err("image data is not base64 (length is not a positive multiple of 4)".into());
    }
    let padding = bytes.iter().rev().take_while(|&&b| b == b'=').count();
    let body = &bytes[..bytes.len() - padding];
    let valid = padding <= 2
        && body
            .iter()
            .all(|&b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/');
    if !valid {
        return Err("image data is not base64 (RFC 4648 standard alphabet, `=` padding)".into());
    }
    Ok(())
}

fn text_result(text: String) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(text)])
}

fn pretty_json_result(value: &Value) -> CallToolResult {
    text_result(serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn only_text(result: &CallToolResult) -> Option<&str> {
        match result.content.as_slice() {
            [block] => block.as_text().map(|t| t.text.as_str()),
            _ => None,
        }
    }

    #[test]
    fn success_result_is_structured_content_and_the_same_compact_json_as_text() {
        #[derive(Serialize)]
        struct Out {
            token_count: usize,
        }
        let result = success_result(&Out { token_count: 7 }).expect("serializes");
        assert_eq!(result.is_error, Some(false));
        assert_eq!(result.structured_content, Some(json!({"token_count": 7})));
        assert_eq!(only_text(&result), Some("{\"token_count\":7}"));
    }

    #[test]
    fn strings_become_text() {
        assert_eq!(only_text(&normalize_result(json!("hello"))), Some("hello"));
    }

    #[test]
    fn numbers_and_booleans_become_their_text() {
        assert_eq!(only_text(&normalize_result(json!(42))), Some("42"));
        assert_eq!(only_text(&normalize_result(json!(2.5))), Some("2.5"));
        assert_eq!(only_text(&normalize_result(json!(true))), Some("true"));
    }

    #[test]
    fn nothing_becomes_one_empty_text() {
        assert_eq!(only_text(&normalize_result(Value::Null)), Some(""));
    }

    #[test]
    fn plain_arrays_and_objects_become_pretty_json() {
        assert_eq!(
            only_text(&normalize_result(json!({"a": 1}))),
            Some("{\n  \"a\": 1\n}")
        );
        assert_eq!(
            only_text(&normalize_result(json!([1, 2]))),
            Some("[\n  1,\n  2\n]")
        );
        assert_eq!(only_text(&normalize_result(json!([]))), Some("[]"));
    }

    #[test]
    fn explicit_text_is_unwrapped() {
        let result = normalize_result(json!({"type": "text", "text": "hi"}));
        assert_eq!(only_text(&result), Some("hi"));
    }

    #[test]
    fn images_become_image_content() {
        for value in [
            json!({"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}),
            json!({"data": "iVBORw0KGgo=", "mimeType": "image/png"}),
        ] {
            let result = normalize_result(value);
            let image = result
                .content
                .first()
                .and_then(|c| c.as_image())
                .expect("an image");
            assert_eq!(
                (image.data.as_str(), image.mime_type.as_str()),
                ("iVBORw0KGgo=", "image/png")
            );
        }
    }

    #[test]
    fn a_bare_text_object_becomes_text() {
        assert_eq!(
            only_text(&normalize_result(json!({"text": "hi"}))),
            Some("hi")
        );
        // With other keys it is data, not content.
        assert_eq!(
            only_text(&normalize_result(json!({"text": "hi", "score": 3}))),
            Some("{\n  \"text\": \"hi\",\n  \"score\": 3\n}")
        );
    }

    #[test]
    fn a_bare_image_object_becomes_an_image_png_unless_told() {
        let image = |value| {
            let result = normalize_result(value);
            let block = result.content.first().and_then(|c| c.as_image()).cloned();
            block.map(|i| (i.data, i.mime_type))
        };
        assert_eq!(
            image(json!({"image": "iVBORw0KGgo="})),
            Some(("iVBORw0KGgo=".into(), "image/png".into()))
        );
        assert_eq!(
            image(json!({"image": "/9j/4AAQ", "mimeType": "image/jpeg"})),
            Some(("/9j/4AAQ".into(), "image/jpeg".into()))
        );
        assert_eq!(image(json!({"image": "AA==", "caption": "x"})), None);
    }

    #[test]
    fn image_data_that_is_not_base64_or_too_large_is_an_internal_error() {
        let too_large = "A".repeat(MAX_IMAGE_BYTES.div_ceil(3) * 4 + 4);
        for (data, why) in [
            ("not base64!", "not base64"),
            ("AAA", "multiple of 4"),
            ("A===", "not base64"),
            ("", "multiple of 4"),
            (too_large.as_str(), "over the limit"),
        ] {
            for value in [
                json!({"image": data}),
                json!({"type": "image", "data": data, "mimeType": "image/png"}),
            ] {
                let result = normalize_result(value);
                assert_eq!(result.is_error, Some(true), "{why}");
                let error = result.structured_content.expect("structured error");
                assert_eq!(error["error_code"], "INTERNAL_ERROR");
                let message = error["message"].as_str().unwrap_or_default();
                assert!(message.contains(why), "{message}");
                assert!(message.len() < 200, "the data is not echoed");
            }
        }
        let at_limit = "A".repeat(MAX_IMAGE_BYTES.div_ceil(3) * 4);
        assert_eq!(
            normalize_result(json!({"image": at_limit})).is_error,
            Some(false)
        );
    }

    #[test]
    fn built_results_and_content_lists_pass_through() {
        let built = json!({"content": [{"type": "text", "text": "done"}], "isError": true});
        let result = normalize_result(built);
        assert_eq!(
            (only_text(&result), result.is_error),
            (Some("done"), Some(true))
        );

        let blocks = json!([
            {"type": "text", "text": "a"},
            {"type": "image", "data": "AA==", "mimeType": "image/gif"}
        ]);
        let result = normalize_result(blocks);
        assert_eq!(result.content.len(), 2);
        assert!(result.content[1].as_image().is_some());
    }

    #[test]
    fn look_alikes_that_are_not_content_stay_json() {
        // `type` without the fields it needs is just data.
        let result = normalize_result(json!({"type": "text", "body": "x"}));
        assert_eq!(
            only_text(&result),
            Some("{\n  \"type\": \"text\",\n  \"body\": \"x\"\n}")
        );
        let result = normalize_result(json!([{"type": "unknown-kind"}]));
        assert_eq!(
            only_text(&result),
            Some("[\n  {\n    \"type\": \"unknown-kind\"\n  }\n]")
        );
    }

    #[test]
    fn structured_wrapper_converts_to_a_success_response() {
        let response = Structured(json!({"x": 1}))
            .into_call_tool_result()
            .expect("result");
        let CallToolResponse::Complete(result) = response else {
            panic!("complete result expected")
        };
        assert_eq!(result.structured_content, Some(json!({"x": 1})));
    }
}
