//! Where a command's input comes from: an argument, a file or stdin — bounded by the
//! input limit before it is read into memory, and UTF-8.

use std::io::Read;
use std::path::Path;

use context_budget::TokenCounter;
use context_budget::limits::LimitError;
use mcp_common::{ErrorCode, ToolError};
use serde::de::DeserializeOwned;

use crate::errors::tool_error;

/// The text of an argument, unless it is absent or `-`; then the file or stdin.
pub fn text(
    counter: &TokenCounter,
    text: Option<&str>,
    file: Option<&Path>,
) -> Result<String, ToolError> {
    match text {
        Some(text) if text != "-" => Ok(text.to_string()),
        _ => source(counter, file),
    }
}

/// A file (or stdin for none or `-`), refusing oversize input before reading it all.
pub fn source(counter: &TokenCounter, file: Option<&Path>) -> Result<String, ToolError> {
    let limit = counter.max_input_bytes();
    let file = file.filter(|path| path.as_os_str() != "-");
    let (bytes, source, measured) = match file {
        Some(path) => {
            let name = path.display().to_string();
            let file = std::fs::File::open(path).map_err(|e| io_error(&name, e))?;
            // A regular file's size is known: an oversize one is reported as it is.
            let size = file
                .metadata()
                .ok()
                .filter(|m| m.is_file())
                .map(|m| m.len());
            (
                read_limited(file, limit).map_err(|e| io_error(&name, e))?,
                name,
                size,
            )
        }
        None => (
            read_limited(std::io::stdin().lock(), limit).map_err(|e| io_error("stdin", e))?,
            "stdin".to_string(),
            None,
        ),
    };
    if bytes.len() > limit {
        // The reader stopped one byte past the limit: that count is not the input's.
        let error = match measured.filter(|&size| size > limit as u64) {
            Some(size) => LimitError::TextTooLarge {
                bytes: usize::try_from(size).unwrap_or(usize::MAX),
                limit,
            },
            None => LimitError::TextOverLimit { limit },
        };
        return Err(tool_error(error));
    }
    counter.check_input(bytes.len()).map_err(tool_error)?;
    String::from_utf8(bytes).map_err(|e| {
        ToolError::new(
            ErrorCode::InvalidInput,
            format!(
                "{source} is not UTF-8 text (invalid byte at offset {})",
                e.utf8_error().valid_up_to()
            ),
            "Token counts are defined for text; convert the file to UTF-8 first.",
        )
    })
}

/// A JSON list of `T` read from a file or stdin (see [`source`] and [`list`]).
pub fn json_list<T: DeserializeOwned>(
    counter: &TokenCounter,
    file: Option<&Path>,
    key: &str,
) -> Result<Vec<T>, ToolError> {
    list(&source(counter, file)?, key)
}

/// A JSON array of `T`, or an object holding it under `key`.
pub fn list<T: DeserializeOwned>(json: &str, key: &str) -> Result<Vec<T>, ToolError> {
    let invalid = |detail: String| {
        ToolError::new(
            ErrorCode::InvalidInput,
            format!("the input is not a JSON list of {key}: {detail}"),
            format!("Send a JSON array of {key}, or an object {{\"{key}\": [...]}}."),
        )
    };
    let value: serde_json::Value =
        serde_json::from_str(json).map_err(|e| invalid(e.to_string()))?;
    let list = match value {
        serde_json::Value::Object(mut object) => object
            .remove(key)
            .ok_or_else(|| invalid(format!("no `{key}` key")))?,
        other => other,
    };
    serde_json::from_value(list).map_err(|e| invalid(e.to_string()))
}

/// Read at most `limit + 1` bytes: enough to know the input is too large.
fn read_limited(reader: impl Read, limit: usize) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    reader.take(limit as u64 + 1).read_to_end(&mut bytes)?;
    Ok(bytes)
}

fn io_error(source: &str, error: std::io::Error) -> ToolError {
    ToolError::new(
        ErrorCode::InvalidInput,
        format!("cannot read {source}: {error}"),
        "Check the path and its permissions, or pipe the input in (`-` or no file reads stdin).",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_is_an_array_or_an_object_holding_one() {
        let bare: Vec<u32> = list("[1, 2]", "numbers").expect("array");
        let wrapped: Vec<u32> = list(r#"{"numbers": [1, 2]}"#, "numbers").expect("object");
        assert_eq!(bare, wrapped);
        let missing = list::<u32>(r#"{"other": []}"#, "numbers").expect_err("no key");
        assert!(
            missing.to_string().contains("no `numbers` key"),
            "{missing}"
        );
    }

    #[test]
    fn oversize_input_is_refused_after_reading_one_byte_past_the_limit() {
        assert_eq!(read_limited(&b"hello"[..], 3).expect("read").len(), 4);
    }
}
