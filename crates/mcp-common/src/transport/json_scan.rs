//! A cheap look at a JSON-RPC message before anything builds it.
//!
//! rmcp turns a whole request body (or stdio line) into `serde_json` values before any
//! handler runs, at ~200 bytes per value: 8 M zeros in a 15 MiB body cost 1.8 GB. This
//! scan reads the bytes once, allocates nothing per value, and refuses what is not
//! JSON, a batch, deeper than [`MAX_DEPTH`], or more values than [`JsonLimits::max_values`],
//! so what reaches rmcp is bounded by the limit, not by the body.
//! It also notes the top-level `id` and `method`, so a refusal can carry the id and a
//! transport can tell an `initialize` apart without parsing.

use std::ops::Range;

use serde_json::Value;

/// Nesting deeper than this is refused (serde_json's own recursion limit, which rmcp
/// would otherwise hit as an opaque parse error).
pub const MAX_DEPTH: usize = 128;

/// What one message may contain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JsonLimits {
    /// JSON values in one message, counting every scalar, array and object (member
    /// names are not counted: each comes with its value).
    pub max_values: usize,
}

impl JsonLimits {
    /// 500 k values. Honest calls stay well below it: a chat message with a tool call
    /// is ~10 values, so 20,000 of them (a server's whole fit-messages allowance, e.g.
    /// context-loader's `--max-messages`) are ~200 k. The tree rmcp builds from what
    /// passes stays near 100 MB, instead of ~230 bytes per value for any body up to
    /// `--max-body-bytes` (16 MiB of `0,` is 8 M values, 1.8 GB).
    pub const DEFAULT_MAX_VALUES: usize = 500_000;
}

impl Default for JsonLimits {
    fn default() -> Self {
        JsonLimits {
            max_values: Self::DEFAULT_MAX_VALUES,
        }
    }
}

/// Why a message was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("not valid UTF-8 at byte {0}")]
    Utf8(usize),
    #[error("{what} at byte {at}")]
    Syntax { what: &'static str, at: usize },
    #[error(
        "JSON-RPC batches are not supported (MCP 2025-06-18 removed them); send one message at a time"
    )]
    Batch,
    #[error("nested deeper than {MAX_DEPTH} levels")]
    TooDeep,
    #[error("more than {limit} JSON values in one message")]
    TooManyValues { limit: usize },
}

impl Refusal {
    /// The JSON-RPC error message; `flag` is what sets the value limit.
    pub fn message(&self, flag: &str) -> String {
        match self {
            Refusal::Utf8(_) | Refusal::Syntax { .. } => format!("Parse error: {self}"),
            Refusal::TooManyValues { .. } => {
                format!("Invalid Request: {self} (limit set by {flag})")
            }
            _ => format!("Invalid Request: {self}"),
        }
    }

    /// The id an error reply carries: null for a parse error (JSON-RPC: the id could
    /// not be detected), else the message's top-level id when it came early.
    pub fn reply_id(&self, input: &[u8]) -> Value {
        match self {
            Refusal::Utf8(_) | Refusal::Syntax { .. } => Value::Null,
            _ => id_of(input),
        }
    }

    /// JSON-RPC's code for it: -32700 when it is not JSON at all, else -32600.
    pub fn json_rpc_code(&self) -> i64 {
        match self {
            Refusal::Utf8(_) | Refusal::Syntax { .. } => PARSE_ERROR,
            _ => INVALID_REQUEST,
        }
    }
}

pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;

/// What the scan learned about an acceptable message.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Scanned {
    pub values: usize,
    id: Option<Range<usize>>,
    method: Option<Range<usize>>,
}

impl Scanned {
    /// The top-level `id` when it is a string or number (what a reply must echo).
    pub fn id(&self, input: &[u8]) -> Value {
        self.id
            .clone()
            .and_then(|r| serde_json::from_slice::<Value>(&input[r]).ok())
            .filter(|v| v.is_string() || v.is_number())
            .unwrap_or(Value::Null)
    }

    /// The top-level `method` string, if any (escapes left as written).
    pub fn method<'a>(&self, input: &'a [u8]) -> Option<&'a str> {
        let r = self.method.clone()?;
        std::str::from_utf8(&input[r.start + 1..r.end - 1]).ok()
    }
}

/// The top-level `id` of a message that may have been refused: a best effort so an
/// error can still be matched by the client (scans at most the first 64 KiB).
pub fn id_of(input: &[u8]) -> Value {
    let head = &input[..input.len().min(64 * 1024)];
    let mut scanner = Scanner::new(head, usize::MAX);
    let _ = scanner.run();
    scanner.found.id(head)
}

/// Check `input` is one JSON object or scalar within `limits`, without building it.
pub fn scan(input: &[u8], limits: JsonLimits) -> Result<Scanned, Refusal> {
    if let Err(e) = std::str::from_utf8(input) {
        return Err(Refusal::Utf8(e.valid_up_to()));
    }
    let mut scanner = Scanner::new(input, limits.max_values);
    scanner.run()?;
    Ok(scanner.found)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Container {
    Object,
    Array,
}

/// Which top-level member the next value belongs to.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Member {
    Other,
    Id,
    Method,
}

struct Scanner<'a> {
    input: &'a [u8],
    at: usize,
    max_values: usize,
    stack: Vec<Container>,
    found: Scanned,
}

impl<'a> Scanner<'a> {
    fn new(input: &'a [u8], max_values: usize) -> Self {
        Scanner {
            input,
            at: 0,
            max_values,
            stack: Vec::new(),
            found: Scanned::default(),
        }
    }

    fn error(&self, what: &'static str) -> Refusal {
        Refusal::Syntax { what, at: self.at }
    }

    fn skip_whitespace(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.input.get(self.at) {
            self.at += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.input.get(self.at).copied()
    }

    fn run(&mut self) -> Result<(), Refusal> {
        self.skip_whitespace();
        match self.peek() {
            None => return Err(self.error("empty message")),
            Some(b'[') => return Err(Refusal::Batch),
            _ => {}
        }
        let mut member = Member::Other;
        'value: loop {
            // A value starts here.
            self.skip_whitespace();
            self.found.values += 1;
            if self.found.values > self.max_values {
                return Err(Refusal::TooManyValues {
                    limit: self.max_values,
                });
            }
            let start = self.at;
            match self.peek() {
                Some(b'{') | Some(b'[') => {
                    let container = if self.peek() == Some(b'{') {
                        Container::Object
                    } else {
                        Container::Array
                    };
                    self.at += 1;
                    self.stack.push(container);
                    if self.stack.len() > MAX_DEPTH {
                        return Err(Refusal::TooDeep);
                    }
                    self.skip_whitespace();
                    let close = if container == Container::Object {
                        b'}'
                    } else {
                        b']'
                    };
                    if self.peek() == Some(close) {
                        self.at += 1;
                        self.stack.pop();
                    } else if container == Container::Object {
                        member = self.key()?;
                        continue 'value;
                    } else {
                        member = Member::Other;
                        continue 'value;
                    }
                }
                Some(b'"') => {
                    self.string()?;
                    self.note(member, start);
                }
                Some(b'-' | b'0'..=b'9') => {
                    self.number()?;
                    self.note(member, start);
                }
                Some(b't') => self.literal(b"true")?,
                Some(b'f') => self.literal(b"false")?,
                Some(b'n') => self.literal(b"null")?,
                Some(_) => return Err(self.error("unexpected character")),
                None => return Err(self.error("unexpected end")),
            }
            // A value ended: what follows it in its container?
            loop {
                self.skip_whitespace();
                let Some(&container) = self.stack.last() else {
                    return match self.peek() {
                        None => Ok(()),
                        Some(_) => Err(self.error("trailing characters")),
                    };
                };
                match (self.peek(), container) {
                    (Some(b','), Container::Object) => {
                        self.at += 1;
                        member = self.key()?;
                        continue 'value;
                    }
                    (Some(b','), Container::Array) => {
                        self.at += 1;
                        member = Member::Other;
                        continue 'value;
                    }
                    (Some(b'}'), Container::Object) | (Some(b']'), Container::Array) => {
                        self.at += 1;
                        self.stack.pop();
                    }
                    (None, _) => return Err(self.error("unexpected end")),
                    _ => return Err(self.error("expected ',' or a closing bracket")),
                }
            }
        }
    }

    fn note(&mut self, member: Member, start: usize) {
        let range = Some(start..self.at);
        match member {
            Member::Id => self.found.id = range,
            Member::Method => self.found.method = range,
            Member::Other => {}
        }
    }

    /// A member name and its colon; which top-level member it is.
    fn key(&mut self) -> Result<Member, Refusal> {
        self.skip_whitespace();
        if self.peek() != Some(b'"') {
            return Err(self.error("expected a member name"));
        }
        let start = self.at;
        self.string()?;
        let name = &self.input[start + 1..self.at - 1];
        self.skip_whitespace();
        if self.peek() != Some(b':') {
            return Err(self.error("expected ':'"));
        }
        self.at += 1;
        Ok(match (self.stack.len(), name) {
            (1, b"id") => Member::Id,
            (1, b"method") => Member::Method,
            _ => Member::Other,
        })
    }

    fn string(&mut self) -> Result<(), Refusal> {
        self.at += 1; // the opening quote
        loop {
            // Plain bytes are most of any string: skip them in one go.
            let rest = &self.input[self.at..];
            let Some(stop) = rest
                .iter()
                .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
            else {
                self.at = self.input.len();
                return Err(self.error("unterminated string"));
            };
            self.at += stop;
            match self.input[self.at] {
                b'"' => {
                    self.at += 1;
                    return Ok(());
                }
                b'\\' => {
                    self.at += 1;
                    match self.peek() {
                        Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => {
                            self.at += 1
                        }
                        Some(b'u') => {
                            let hex = self.input.get(self.at + 1..self.at + 5);
                            if !hex.is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit)) {
                                return Err(self.error("bad \\u escape"));
                            }
                            self.at += 5;
                        }
                        _ => return Err(self.error("bad escape")),
                    }
                }
                _ => return Err(self.error("control character in string")),
            }
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.at;
        while let Some(b'0'..=b'9') = self.peek() {
            self.at += 1;
        }
        self.at - start
    }

    fn number(&mut self) -> Result<(), Refusal> {
        if self.peek() == Some(b'-') {
            self.at += 1;
        }
        match self.peek() {
            Some(b'0') => self.at += 1,
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return Err(self.error("bad number")),
        }
        if self.peek() == Some(b'.') {
            self.at += 1;
            if self.digits() == 0 {
                return Err(self.error("bad number"));
            }
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.at += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.at += 1;
            }
            if self.digits() == 0 {
                return Err(self.error("bad number"));
            }
        }
        Ok(())
    }

    fn literal(&mut self, word: &'static [u8]) -> Result<(), Refusal> {
        if self.input[self.at..].starts_with(word) {
            self.at += word.len();
            Ok(())
        } else {
            Err(self.error("unexpected character"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(max_values: usize) -> JsonLimits {
        JsonLimits { max_values }
    }

    #[test]
    fn agrees_with_serde_json_on_what_is_json() {
        let cases: &[&str] = &[
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
            r#" { "a" : [1, -2.5e+3, 0, true, false, null, "x\"\\\/\b\f\n\r\t\u00e9"], "b": {} } "#,
            r#""just a string""#,
            "0",
            "-0.0e0",
            "{}",
            "{\"a\":[[],[{}]]}",
            "{",
            "{\"a\"}",
            "{\"a\":}",
            "{\"a\":1,}",
            "{\"a\":1 \"b\":2}",
            "{'a':1}",
            "01",
            "1.",
            "1e",
            "-",
            "tru",
            "nul",
            "\"unterminated",
            "\"bad \\x escape\"",
            "\"bad \\u12g4\"",
            "\"tab\there\"",
            "{} {}",
            "",
            "   ",
            "{\"a\":1}x",
            "[1,2",
        ];
        for case in cases {
            let ours = scan(case.as_bytes(), limits(1000));
            let theirs = serde_json::from_str::<Value>(case);
            if case.trim_start().starts_with('[') {
                assert_eq!(ours, Err(Refusal::Batch), "{case}");
                continue;
            }
            assert_eq!(
                ours.is_ok(),
                theirs.is_ok(),
                "{case}: {ours:?} vs {theirs:?}"
            );
        }
    }

    #[test]
    fn counts_values_and_stops_at_the_limit() {
        let scanned = scan(br#"{"a":[1,2,{"b":null}],"c":"d"}"#, limits(100)).expect("ok");
        // object, array, 1, 2, object, null, "d"
        assert_eq!(scanned.values, 7);
        assert_eq!(
            scan(br#"{"a":[1,2,{"b":null}],"c":"d"}"#, limits(6)),
            Err(Refusal::TooManyValues { limit: 6 })
        );
        let many = format!("{{\"extra\":[{}0]}}", "0,".repeat(10_000));
        assert_eq!(
            scan(many.as_bytes(), limits(5_000)),
            Err(Refusal::TooManyValues { limit: 5_000 })
        );
    }

    #[test]
    fn refuses_batches_depth_and_bad_utf8_with_their_codes() {
        assert_eq!(scan(b" [{}]", limits(10)), Err(Refusal::Batch));
        assert_eq!(Refusal::Batch.json_rpc_code(), INVALID_REQUEST);
        let deep = format!("{{\"a\":{}1{}}}", "[".repeat(200), "]".repeat(200));
        assert_eq!(scan(deep.as_bytes(), limits(10_000)), Err(Refusal::TooDeep));
        let ok_depth = format!("{{\"a\":{}1{}}}", "[".repeat(120), "]".repeat(120));
        assert!(scan(ok_depth.as_bytes(), limits(10_000)).is_ok());
        let utf8 = scan(b"{\"a\":\"\xff\"}", limits(10));
        assert_eq!(utf8, Err(Refusal::Utf8(6)));
        assert_eq!(Refusal::Utf8(6).json_rpc_code(), PARSE_ERROR);
    }

    #[test]
    fn notes_the_top_level_id_and_method_only() {
        let input = br#"{"params":{"id":9,"method":"inner"},"id":"req-7","method":"initialize"}"#;
        let scanned = scan(input, limits(100)).expect("ok");
        assert_eq!(scanned.id(input), Value::from("req-7"));
        assert_eq!(scanned.method(input), Some("initialize"));
        let numeric = br#"{"id":42,"method":"ping"}"#;
        assert_eq!(
            scan(numeric, limits(10)).expect("ok").id(numeric),
            Value::from(42)
        );
        let object_id = br#"{"id":{"x":1}}"#;
        assert_eq!(
            scan(object_id, limits(10)).expect("ok").id(object_id),
            Value::Null
        );
        // A refused message still yields its id when it came early.
        let refused = format!("{{\"id\":5,\"extra\":[{}0]}}", "0,".repeat(100));
        assert_eq!(id_of(refused.as_bytes()), Value::from(5));
    }
}
