//! The one string a model receives of a tool's answer. Success results
//! ([`crate::result`]) and error results ([`crate::error`]) both carry it as their
//! text, so it sits below both: neither has to import the other for it.

use serde::Serialize;
use serde_json::Value;

/// The string a client hands the model for a result whose structuredContent is
/// `value`: compact JSON, keys in their order, as `JSON.stringify` writes it (both
/// escape `"`, `\` and control characters alike and nothing else), floats included
/// (`0.000005` where serde_json writes `5e-6`). Also the result's text, so clients
/// that read only `content` receive the same string.
///
/// The engine's `context_budget::answer::answer_text` measures answers by the same
/// rule; the two crates may not know each other, so the server's tests keep them
/// equal.
pub fn answer_text(value: &Value) -> String {
    let mut out = Vec::with_capacity(256);
    let mut writer = serde_json::Serializer::with_formatter(&mut out, JsNumbers);
    // Serializing a Value cannot fail (its keys are strings); the output is UTF-8.
    match value.serialize(&mut writer) {
        Ok(()) => String::from_utf8(out).unwrap_or_default(),
        Err(_) => String::new(),
    }
}

/// serde_json's compact output with floats written by [`js_number`].
struct JsNumbers;

impl serde_json::ser::Formatter for JsNumbers {
    fn write_f64<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
        value: f64,
    ) -> std::io::Result<()> {
        writer.write_all(js_number(&format!("{value:e}")).as_bytes())
    }

    fn write_f32<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
        value: f32,
    ) -> std::io::Result<()> {
        writer.write_all(js_number(&format!("{value:e}")).as_bytes())
    }
}

/// A finite number, given as Rust's shortest round-trip `{:e}` (`1.5e-7`), written
/// as ECMAScript's Number::toString writes the same digits: positional from 1e-6 up
/// to 1e21, exponential (`1.5e-7`, `1e+21`) outside.
fn js_number(scientific: &str) -> String {
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((scientific, "0"));
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    if digits.bytes().all(|d| d == b'0') {
        return "0".to_string(); // JavaScript writes -0 as 0 too.
    }
    let k = digits.len() as i64;
    let n = exponent.parse::<i64>().unwrap_or(0) + 1;
    let body = if k <= n && n <= 21 {
        format!("{digits}{}", "0".repeat((n - k) as usize))
    } else if 0 < n && n <= 21 {
        format!("{}.{}", &digits[..n as usize], &digits[n as usize..])
    } else if -6 < n && n <= 0 {
        format!("0.{}{digits}", "0".repeat((-n) as usize))
    } else {
        let e = n - 1;
        let sign = if e < 0 { '-' } else { '+' };
        match k {
            1 => format!("{digits}e{sign}{}", e.abs()),
            _ => format!("{}.{}e{sign}{}", &digits[..1], &digits[1..], e.abs()),
        }
    };
    format!("{sign}{body}")
}
