//! Structured tool errors.
//!
//! MCP clients show a JSON-RPC error as "tool result missing", hiding our message from
//! the model; a tool result with `isError: true` is shown to it. So user-facing
//! failures are always results, built here, and carry the same JSON object twice: as
//! text (for clients that only read text) and as `structuredContent`.

use rmcp::handler::server::tool::IntoCallToolResult;
use rmcp::model::{CallToolResponse, CallToolResult, ContentBlock};
use serde::Serialize;
use serde_json::{Map, Value};

/// Every error code a tool of this workspace can return. Serialized
/// SCREAMING_SNAKE_CASE, so clients can match on `error_code` without parsing prose.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ErrorCode {
    /// The requested model is not in the catalog.
    UnsupportedModel,
    /// A parameter is missing, malformed, or out of range.
    InvalidInput,
    /// The input is larger than the server accepts in one call.
    InputTooLarge,
    /// A bug or an environment failure on our side; the input may be fine.
    InternalError,
    /// The specs root does not exist or is not a directory.
    SpecsDirNotFound,
    /// No spec matches the requested path, number or name.
    SpecNotFound,
    /// More than one spec matches; the candidates are listed.
    AmbiguousSpec,
    /// The spec exists but has no file of that name.
    SpecFileNotFound,
    /// A path points outside the specs root or every file root (`..`, absolute, or a symlink).
    PathOutsideRoot,
    /// A file tool was called but no root folder is configured (or the client's roots
    /// share none with the server's).
    RootsNotConfigured,
    /// A requested file or folder does not exist under any root.
    PathNotFound,
    /// A per-call bound on files (count, bytes read, walk size or time) was reached.
    FileLimitExceeded,
    /// A file that must be measured is missing or not readable text (binary, not
    /// UTF-8, too large, unreadable). LeanSpec's code for the same failure.
    FileAccessError,
    /// The client cancelled the request.
    Cancelled,
    /// What must be kept (e.g. the system message) does not fit the token budget.
    ContextOverflow,
    /// The answer would be larger than the server sends in one result (its answer
    /// limit); a smaller request (a page, a smaller budget) gets it.
    AnswerTooLarge,
}

impl ErrorCode {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::UnsupportedModel => "UNSUPPORTED_MODEL",
            ErrorCode::InvalidInput => "INVALID_INPUT",
            ErrorCode::InputTooLarge => "INPUT_TOO_LARGE",
            ErrorCode::InternalError => "INTERNAL_ERROR",
            ErrorCode::SpecsDirNotFound => "SPECS_DIR_NOT_FOUND",
            ErrorCode::SpecNotFound => "SPEC_NOT_FOUND",
            ErrorCode::AmbiguousSpec => "AMBIGUOUS_SPEC",
            ErrorCode::SpecFileNotFound => "SPEC_FILE_NOT_FOUND",
            ErrorCode::PathOutsideRoot => "PATH_OUTSIDE_ROOT",
            ErrorCode::RootsNotConfigured => "ROOTS_NOT_CONFIGURED",
            ErrorCode::PathNotFound => "PATH_NOT_FOUND",
            ErrorCode::FileLimitExceeded => "FILE_LIMIT_EXCEEDED",
            ErrorCode::FileAccessError => "FILE_ACCESS_ERROR",
            ErrorCode::Cancelled => "CANCELLED",
            ErrorCode::ContextOverflow => "CONTEXT_OVERFLOW",
            ErrorCode::AnswerTooLarge => "ANSWER_TOO_LARGE",
        }
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Build the `isError` result for a failed tool call.
///
/// The payload is `{"error_code", "message", "suggestion", ...details}`: `details`
/// (e.g. `available_options`) are merged at the top level; they cannot replace the
/// three fixed keys.
pub fn create_mcp_error(
    code: ErrorCode,
    message: impl Into<String>,
    suggestion: impl Into<String>,
    details: Option<Map<String, Value>>,
) -> CallToolResult {
    let mut payload = Map::new();
    payload.insert("error_code".into(), Value::String(code.as_str().into()));
    payload.insert("message".into(), Value::String(message.into()));
    payload.insert("suggestion".into(), Value::String(suggestion.into()));
    for (key, value) in details.unwrap_or_default() {
        payload.entry(key).or_insert(value);
    }
    let mut payload = Value::Object(payload);
    // The same compact string as a success answer's text.
    let mut text = crate::answer::answer_text(&payload);
    if text.chars().count() > MAX_ERROR_CHARS {
        shorten(&mut payload);
        text = crate::answer::answer_text(&payload);
    }
    let mut result = CallToolResult::error(vec![ContentBlock::text(text)]);
    result.structured_content = Some(payload);
    result
}

/// A tool failure as a value: what tool code returns in its `Err` branch. Converts
/// into the [`create_mcp_error`] result, and is also what the CLI prints.
/// Most characters of an error answer (its JSON, as `content` and
/// `structuredContent` carry it). A model pays for an error as for any answer, and
/// some clients pass it twice (Gemini CLI wraps the raw JSON in its own message): a
/// typo must not cost thousands of tokens.
pub const MAX_ERROR_CHARS: usize = 1_000;

/// Fits an error payload under [`MAX_ERROR_CHARS`]: lists in its details keep their
/// first items and say how many were left out (`<key>_omitted`), then long strings
/// are cut in the middle; `error_code` is never touched.
fn shorten(payload: &mut Value) {
    let fits = |p: &Map<String, Value>| {
        crate::answer::answer_text(&Value::Object(p.clone()))
            .chars()
            .count()
            <= MAX_ERROR_CHARS
    };
    let Value::Object(object) = payload else {
        return;
    };
    let lists: Vec<String> = object
        .iter()
        .filter(|(_, v)| v.as_array().is_some_and(|a| a.len() > 1))
        .map(|(k, _)| k.clone())
        .collect();
    for keep in [5, 3, 1] {
        for key in &lists {
            let Some(Value::Array(items)) = object.get_mut(key) else {
                continue;
            };
            if items.len() > keep {
                let omitted = (items.len() - keep) as u64;
                items.truncate(keep);
                let counted = format!("{key}_omitted");
                let before = object.get(&counted).and_then(Value::as_u64).unwrap_or(0);
                object.insert(counted, Value::from(before + omitted));
            }
        }
        if fits(object) {
            return;
        }
    }
    for limit in [400, 200, 100, 40] {
        for (key, value) in object.iter_mut() {
            if key != "error_code" {
                cut_strings(value, limit);
            }
        }
        if fits(object) {
            return;
        }
    }
}

/// Every string in `value` (in lists and objects too) cut to about `limit`
/// characters, start and end kept.
fn cut_strings(value: &mut Value, limit: usize) {
    match value {
        Value::String(text) if text.chars().count() > limit => {
            let chars: Vec<char> = text.chars().collect();
            let head: String = chars[..limit / 2].iter().collect();
            let tail: String = chars[chars.len() - limit / 2..].iter().collect();
            *text = format!("{head}…{tail}");
        }
        Value::Array(items) => items.iter_mut().for_each(|v| cut_strings(v, limit)),
        Value::Object(map) => map.values_mut().for_each(|v| cut_strings(v, limit)),
        _ => {}
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct ToolError {
    pub code: ErrorCode,
    pub message: String,
    pub suggestion: String,
    /// Extra keys for the payload, in order. Boxed to keep `Result<_, ToolError>`
    /// small on the success path.
    pub details: Box<Map<String, Value>>,
}

impl ToolError {
    pub fn new(code: ErrorCode, message: impl Into<String>, suggestion: impl Into<String>) -> Self {
        ToolError {
            code,
            message: message.into(),
            suggestion: suggestion.into(),
            details: Box::default(),
        }
    }

    /// Attach a detail such as `available_options`. Values that cannot be
    /// serialized are recorded as their error text rather than dropped silently.
    pub fn with_detail(mut self, key: &str, value: impl Serialize) -> Self {
        let value = serde_json::to_value(value).unwrap_or_else(|e| Value::String(e.to_string()));
        self.details.insert(key.to_string(), value);
        self
    }

    pub fn into_result(self) -> CallToolResult {
        create_mcp_error(
            self.code,
            self.message,
            self.suggestion,
            Some(*self.details),
        )
    }

    /// The same JSON object the MCP result carries.
    pub fn to_json(&self) -> Value {
        self.clone()
            .into_result()
            .structured_content
            .unwrap_or(Value::Null)
    }
}

impl std::fmt::Display for ToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for ToolError {}

impl IntoCallToolResult for ToolError {
    fn into_call_tool_result(self) -> Result<CallToolResponse, rmcp::ErrorData> {
        Ok(self.into_result().into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Issue 39: an error answer is at most 1,000 characters, whatever its details
    /// hold; what was left out is counted, and the code stays whole.
    #[test]
    fn an_error_answer_stays_under_a_thousand_characters() {
        let names: Vec<String> = (0..500).map(|i| format!("model-name-{i}")).collect();
        let error = ToolError::new(ErrorCode::SpecFileNotFound, "x".repeat(5_000), "do y")
            .with_detail("available_options", &names)
            .with_detail("nested", json!({"deep": "z".repeat(3_000)}));
        let result = error.into_result();
        let payload = result.structured_content.clone().unwrap();
        let text = crate::answer::answer_text(&payload);
        assert!(text.chars().count() <= MAX_ERROR_CHARS, "{}", text.len());
        assert_eq!(
            serde_json::to_value(&result.content[0]).unwrap()["text"],
            text,
            "the same string as content and structuredContent"
        );
        assert_eq!(payload["error_code"], "SPEC_FILE_NOT_FOUND");
        assert_eq!(payload["available_options"][0], "model-name-0");
        assert!(payload["available_options_omitted"].as_u64().unwrap() >= 495);
        // Small errors are untouched.
        let small = ToolError::new(ErrorCode::InvalidInput, "bad", "fix it")
            .with_detail("available_options", ["a", "b"])
            .to_json();
        assert_eq!(small["available_options"], json!(["a", "b"]));
    }

    #[test]
    fn error_codes_serialize_screaming_snake_case() {
        for code in [
            ErrorCode::UnsupportedModel,
            ErrorCode::InvalidInput,
            ErrorCode::InputTooLarge,
            ErrorCode::InternalError,
            ErrorCode::SpecsDirNotFound,
            ErrorCode::SpecNotFound,
            ErrorCode::AmbiguousSpec,
            ErrorCode::SpecFileNotFound,
            ErrorCode::PathOutsideRoot,
            ErrorCode::FileAccessError,
            ErrorCode::Cancelled,
            ErrorCode::ContextOverflow,
            ErrorCode::AnswerTooLarge,
        ] {
            assert_eq!(serde_json::to_value(code).ok(), Some(json!(code.as_str())));
        }
        assert_eq!(ErrorCode::UnsupportedModel.as_str(), "UNSUPPORTED_MODEL");
    }

    #[test]
    fn error_result_carries_the_payload_as_text_and_structured_content() {
        let mut details = Map::new();
        details.insert("available_options".into(), json!(["gpt-4", "gpt-4o"]));
        let result = create_mcp_error(
            ErrorCode::UnsupportedModel,
            "model `x` is not supported",
            "Use gpt-4 (the default)",
            Some(details),
        );
        assert_eq!(result.is_error, Some(true));
        let expected = json!({
            "error_code": "UNSUPPORTED_MODEL",
            "message": "model `x` is not supported",
            "suggestion": "Use gpt-4 (the default)",
            "available_options": ["gpt-4", "gpt-4o"],
        });
        assert_eq!(result.structured_content.as_ref(), Some(&expected));
        let keys: Vec<&String> = expected
            .as_object()
            .map(|o| o.keys().collect())
            .unwrap_or_default();
        let actual_keys: Vec<&String> = result
            .structured_content
            .as_ref()
            .and_then(|v| v.as_object())
            .map(|o| o.keys().collect())
            .unwrap_or_default();
        assert_eq!(actual_keys, keys, "the fixed keys lead, details follow");
        let text = result
            .content
            .first()
            .and_then(|c| c.as_text())
            .map(|t| t.text.clone());
        let parsed: Value = serde_json::from_str(&text.unwrap_or_default()).unwrap_or_default();
        assert_eq!(parsed, expected);
    }

    #[test]
    fn details_cannot_override_the_fixed_keys() {
        let mut details = Map::new();
        details.insert("error_code".into(), json!("SPOOFED"));
        let result = create_mcp_error(ErrorCode::InvalidInput, "m", "s", Some(details));
        assert_eq!(
            result
                .structured_content
                .and_then(|v| v.get("error_code").cloned()),
            Some(json!("INVALID_INPUT"))
        );
    }

    #[test]
    fn tool_error_converts_to_an_is_error_result() {
        let error = ToolError::new(ErrorCode::InputTooLarge, "too big", "send less")
            .with_detail("limit_bytes", 10);
        let response = error
            .clone()
            .into_call_tool_result()
            .expect("a result, not a JSON-RPC error");
        let CallToolResponse::Complete(result) = response else {
            panic!("complete result expected")
        };
        assert_eq!(result.is_error, Some(true));
        assert_eq!(result.structured_content, Some(error.to_json()));
        assert_eq!(error.to_json()["limit_bytes"], json!(10));
        assert_eq!(error.to_string(), "INPUT_TOO_LARGE: too big");
    }
}
