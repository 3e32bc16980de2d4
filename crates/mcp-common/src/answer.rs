//! The one string a model receives of a tool's answer. Success results
//! ([`crate::result`]) and error results ([`crate::error`]) both carry it as their
//! text, so it sits below both: neither has to import the other for it.

use serde_json::Value;

/// The string a client hands the model for a result whose structuredContent is
/// `value`: compact JSON, keys in their order, as `JSON.stringify` writes it (both
/// escape `"`, `\` and control characters alike and nothing else). Also the
/// result's text, so clients that read only `content` receive the same string.
pub fn answer_text(value: &Value) -> String {
    // Serializing a Value cannot fail (its keys are strings).
    serde_json::to_string(value).unwrap_or_default()
}
