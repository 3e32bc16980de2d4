//! What a tool's answer costs the client that receives it, and the bound every answer
//! stays under.
//!
//! The answer a model receives is one string: a client that reads structuredContent
//! passes the model `JSON.stringify(structuredContent)` (Claude Code does, and drops
//! `content`); every other client passes the text content, which the server makes the
//! same compact JSON. The two differ only in how floats are written, so
//! [`answer_text`] is that string with each float at its widest: what is bounded
//! and reported here is never under what the model reads, whichever way its client
//! reads.
//!
//! Clients keep an answer inline only up to a size, each measured its own way:
//! Claude Code saves a result over about 50,000 characters to a file (the model gets
//! a preview) and refuses one over 25,000 tokens; Gemini CLI saves a text block over
//! 40,000 characters; Codex cuts the middle out of one over 48,000 bytes (12,000 for
//! a model it does not know). [`AnswerLimit`] bounds all three units: characters as
//! JavaScript counts them (UTF-16 code units), UTF-8 bytes, and tokens by our highest
//! estimate ([`HIGHEST_ESTIMATE`]), never a low one. Which limit a call gets comes
//! from its client (`crate::clients`).

use schemars::JsonSchema;
use serde::Serialize;

use crate::Tokenizer;
use crate::read::{count_both, escape_growth};

/// The estimate an answer's tokens are bounded with: the Claude Opus 4.7 estimate,
/// the highest of the local families on the JSON, code and prose answers hold (it is
/// the Claude 4.6 estimate scaled up by the newer tokenizer's largest measured
/// ratios, and that estimate is calibrated to land at or above Anthropic's counts).
pub const HIGHEST_ESTIMATE: Tokenizer = Tokenizer::Claude47Estimate;

/// Default most tokens of one answer ([`HIGHEST_ESTIMATE`]): under Claude Code's
/// 25,000-token refusal with a fifth to spare for its own way of counting.
pub const DEFAULT_MAX_ANSWER_TOKENS: u64 = 20_000;

/// Default most characters (UTF-16 code units) of one answer: under the ~50,000 past
/// which Claude Code stops passing an answer inline and saves it to a file.
pub const DEFAULT_MAX_ANSWER_CHARS: usize = 45_000;

/// The bound every answer of one call stays under: its client's (`crate::clients`),
/// or what `--max-answer-tokens`, `--max-answer-chars` and `--max-answer-bytes` say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AnswerLimit {
    /// Most tokens by [`HIGHEST_ESTIMATE`].
    pub tokens: u64,
    /// Most characters, as JavaScript counts a string's length (UTF-16 code units).
    pub chars: usize,
    /// Most UTF-8 bytes (`usize::MAX`: no bound of its own).
    pub bytes: usize,
    /// Whose limit this is, for answers and errors to say.
    pub source: LimitSource,
}

/// Where an [`AnswerLimit`] came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimitSource {
    /// The command line's defaults: the output goes to a terminal or a pipe.
    CommandLine,
    /// The row of a client of the table (`crate::clients::Client::id`).
    Client(&'static str),
    /// A client the table does not hold (or none named itself): the strictest row.
    UnknownClient,
    /// The server's `--max-answer-*` flags (a unit no flag names: the client's).
    Flags,
}

impl Default for AnswerLimit {
    /// The command line's limit: Claude Code's, the widest of the table's limits
    /// under which an answer piped into an agent still reaches its model whole.
    fn default() -> Self {
        AnswerLimit {
            tokens: DEFAULT_MAX_ANSWER_TOKENS,
            chars: DEFAULT_MAX_ANSWER_CHARS,
            bytes: usize::MAX,
            source: LimitSource::CommandLine,
        }
    }
}

impl std::fmt::Display for AnswerLimit {
    /// `40,000 characters, 20,000 tokens (gemini-cli)`: the bounds that bind, and whose.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut parts = Vec::with_capacity(3);
        if self.bytes < usize::MAX {
            parts.push(format!("{} bytes", thousands(self.bytes as u64)));
        }
        // A byte bound at or under the characters' makes them moot (a character is at
        // least one byte).
        if self.chars < usize::MAX && self.chars < self.bytes {
            parts.push(format!("{} characters", thousands(self.chars as u64)));
        }
        parts.push(format!("{} tokens", thousands(self.tokens)));
        let whose = match self.source {
            LimitSource::CommandLine => "command line",
            LimitSource::Client(id) => id,
            LimitSource::UnknownClient => "unknown client: the strictest",
            LimitSource::Flags => "set by --max-answer-* flags",
        };
        write!(f, "{} ({whose})", parts.join(", "))
    }
}

/// `12345678` as `12,345,678`.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// An answer's size as the limit measures it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AnswerSize {
    pub chars: usize,
    pub bytes: usize,
    /// By [`HIGHEST_ESTIMATE`].
    pub tokens: u64,
}

impl AnswerLimit {
    /// The size of `answer` (an [`answer_text`]); characters and bytes first, so an answer
    /// far over the limit is not tokenized at all (`tokens` is then 0), and one whose
    /// bytes alone bound its tokens under the limit is not tokenized either (`tokens`
    /// is then that bound: a raised limit costs a huge listing no count).
    pub fn measure(&self, answer: &str) -> AnswerSize {
        let chars = js_length(answer);
        // The 4.7 estimate weighs each o200k token (at most one per byte) by at most
        // its heaviest weight.
        let bound = (answer.len() as u64 * crate::claude::CLAUDE47_RUN_TENTHS).div_ceil(10);
        let bytes = answer.len();
        let tokens = if chars > self.chars || bytes > self.bytes {
            0
        } else if bound <= self.tokens {
            bound
        } else {
            HIGHEST_ESTIMATE.count(answer) as u64
        };
        AnswerSize {
            chars,
            bytes,
            tokens,
        }
    }

    /// Whether an answer of `size` is within the limit.
    pub fn admits(&self, size: AnswerSize) -> bool {
        size.chars <= self.chars && size.bytes <= self.bytes && size.tokens <= self.tokens
    }
}

/// `text`'s length as JavaScript counts it: UTF-16 code units (a character outside the
/// Basic Multilingual Plane, such as most emoji, is two).
///
/// Counted over the bytes: each byte that is not a continuation byte starts a
/// character (one unit), and a four-byte character's first byte adds the second.
/// Decoding character by character took ~3 ms of one core for a 2 MB answer.
pub fn js_length(text: &str) -> usize {
    let (starts, fours) = count_both(text.as_bytes(), |b| (b & 0xC0 != 0x80, b >= 0xF0));
    (starts + fours) as usize
}

/// The string a client hands the model for an answer `value`, as long as any client
/// makes it: compact JSON with the fields in their declared order, each float in the
/// a form as long as the longer of the two forms clients write ([`WidestFloats`]).
///
/// The server sends serde_json's text (mcp-common's `answer_text`), and clients that
/// read `content` pass that on. Claude Code passes `JSON.stringify(structuredContent)`
/// instead: the same bytes (both escape `"`, `\` and control characters the same way
/// and nothing else) except floats, which JavaScript writes `0.000005` where
/// serde_json writes `5e-6`, and `2` for `2.0`. The sent text cannot follow
/// JavaScript (Copilot CLI gives its model both forms once they differ), so the
/// measure writes each float at least as long as both: never under either client's
/// string, by three characters per small float at most.
///
/// Written straight from `value`: the same bytes as going through the
/// `serde_json::Value` the server sends (fields and map entries in serialization
/// order, with `preserve_order`), without building that tree, which took ~8× as
/// long for a listing of 11,651 files (10 against 1.3 ms), paid at every step of a
/// listing's search for the most rows that fit.
pub fn answer_text<T: Serialize>(value: &T) -> String {
    let mut out = Vec::with_capacity(256);
    let mut writer = serde_json::Serializer::with_formatter(&mut out, WidestFloats);
    match value.serialize(&mut writer) {
        // serde_json writes UTF-8 only.
        Ok(()) => String::from_utf8(out).unwrap_or_default(),
        Err(_) => String::new(),
    }
}

/// Compact JSON whose floats are written in a form at least as long, in characters
/// and in tokens, as both forms a model may be given them in: serde_json's (`5e-6`,
/// `2.0`, `1e+20`), which the text content holds, and JavaScript's (`0.000005`,
/// `2`, `100000000000000000000`), which Claude Code passes on ([`widest_float`]).
/// Only finite floats reach it (serde_json writes NaN and infinities as `null`).
struct WidestFloats;

impl serde_json::ser::Formatter for WidestFloats {
    fn write_f64<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
        value: f64,
    ) -> std::io::Result<()> {
        let mut ryu = Vec::with_capacity(24);
        serde_json::ser::CompactFormatter.write_f64(&mut ryu, value)?;
        let ryu = String::from_utf8_lossy(&ryu);
        let js = js_number(&format!("{value:e}"));
        writer.write_all(widest_float(&ryu, &js).as_bytes())
    }

    fn write_f32<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
        value: f32,
    ) -> std::io::Result<()> {
        let mut ryu = Vec::with_capacity(16);
        serde_json::ser::CompactFormatter.write_f32(&mut ryu, value)?;
        let ryu = String::from_utf8_lossy(&ryu);
        let js = js_number(&format!("{value:e}"));
        writer.write_all(widest_float(&ryu, &js).as_bytes())
    }
}

/// One float as measured, from serde_json's form `ryu` and JavaScript's `js`: a
/// string with at least the characters and the tokens of either. BPE pre-tokenizers
/// cut numbers into runs of at most three digits, and letters, signs and the point
/// into pieces of their own, so:
/// - a whole float (`2.0` against `2`): serde_json's form holds JavaScript's pieces
///   and more;
/// - under 1e-5 (`7.5e-6` against `0.0000075`): JavaScript's digits make at least as
///   many pieces as the mantissa's, so JavaScript's form followed by the exponent
///   (`0.0000075e-6`) dominates both, three characters over the longer;
/// - otherwise (1e16 to 1e21, where JavaScript writes every digit): both, a space
///   apart, a space being a piece of its own.
fn widest_float(ryu: &str, js: &str) -> String {
    if ryu == js {
        return js.to_string();
    }
    let whole = ryu.strip_suffix(".0").is_some_and(|digits| {
        // `-0.0` is `0` in JavaScript.
        digits == js || (digits == "-0" && js == "0")
    });
    match (whole, ryu.find('e')) {
        (true, _) => ryu.to_string(),
        (false, Some(e)) if !js.contains('e') && js.trim_start_matches('-').starts_with("0.") => {
            format!("{js}{}", &ryu[e..])
        }
        _ => format!("{ryu} {js}"),
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

/// Serialize `answer` as the model receives it ([`answer_text`]) and set the count it
/// states of itself (`own`, e.g. `answer_tokens`) to that string's count by
/// `tokenizer`, until the count of the string is the number it states. Returns the
/// string.
///
/// Only the number's own digits move the count, by a token or so, so a few rounds
/// settle it; should two counts alternate, the higher is stated, so the number is
/// never under the answer's count.
pub fn count_itself<T: Serialize>(
    answer: &mut T,
    tokenizer: Tokenizer,
    own: fn(&mut T) -> &mut u64,
) -> String {
    let never = || false;
    count_itself_until(answer, tokenizer, own, &never)
        .unwrap_or_else(|| unreachable!("never cancelled"))
}

/// [`count_itself`], giving up (`None`) soon after `cancelled` turns true: a
/// long answer (a `load` of a whole tree) is counted in parts that check it.
pub(crate) fn count_itself_until<T: Serialize>(
    answer: &mut T,
    tokenizer: Tokenizer,
    own: fn(&mut T) -> &mut u64,
    cancelled: &dyn Fn() -> bool,
) -> Option<String> {
    let mut serialized = answer_text(answer);
    let mut highest = 0;
    for round in 0..8 {
        let count = tokenizer.count_until(&serialized, cancelled)? as u64;
        let stated = *own(answer);
        if count == stated || (round > 4 && count < stated) {
            break;
        }
        highest = highest.max(count);
        *own(answer) = if round < 4 { count } else { highest };
        serialized = answer_text(answer);
    }
    Some(serialized)
}

/// `text` as it appears inside a JSON string: what a model reads of a text field.
/// serde_json's escapes byte for byte (`\"`, `\\`, `\b \f \n \r \t`, `\u00xx` for
/// the other control characters, nothing else escaped), written here: `load-files`
/// escapes its whole packed text (hundreds of megabytes over a tree) in parts, and
/// serde_json's serializer went a byte per step into a buffer it grew, then copied.
pub fn json_escaped(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(bytes.len() + 16);
    // `text[copied..at]` needs no escape and is not yet in `out`.
    let (mut copied, mut at) = (0, 0);
    while at < bytes.len() {
        // Eight bytes per step while none of them is escaped.
        if let Some(eight) = bytes.get(at..at + 8)
            && !any_escaped(u64::from_le_bytes(eight.try_into().expect("8 bytes")))
        {
            at += 8;
            continue;
        }
        let b = bytes[at];
        if b < 0x20 || b == b'"' || b == b'\\' {
            // Escaped bytes are ASCII: `copied` and `at` are character boundaries.
            out.push_str(&text[copied..at]);
            push_escape(&mut out, b);
            copied = at + 1;
        }
        at += 1;
    }
    out.push_str(&text[copied..]);
    out
}

/// Whether any of the eight bytes of `word` is escaped in a JSON string: below 0x20,
/// `"` or `\` (the classic tests for a zero byte and a byte below n, exact as "any").
#[inline(always)]
fn any_escaped(word: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let zero_in = |v: u64| v.wrapping_sub(ONES) & !v & HIGHS;
    let below_space = word.wrapping_sub(ONES * 0x20) & !word & HIGHS;
    (below_space
        | zero_in(word ^ (ONES * u64::from(b'"')))
        | zero_in(word ^ (ONES * u64::from(b'\\'))))
        != 0
}

/// The escape of byte `b` (below 0x20, `"` or `\`), as serde_json writes it.
fn push_escape(out: &mut String, b: u8) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    match b {
        b'"' => out.push_str("\\\""),
        b'\\' => out.push_str("\\\\"),
        0x08 => out.push_str("\\b"),
        0x0c => out.push_str("\\f"),
        b'\n' => out.push_str("\\n"),
        b'\r' => out.push_str("\\r"),
        b'\t' => out.push_str("\\t"),
        _ => {
            out.push_str("\\u00");
            out.push(char::from(HEX[usize::from(b >> 4)]));
            out.push(char::from(HEX[usize::from(b & 0xf)]));
        }
    }
}

/// The length of [`json_escaped`]`(text)` without building it: two bytes for `"`, `\`
/// and the control characters with a short escape (\b \f \n \r \t), six (`\u001f`)
/// for the other control characters, one for every other byte.
pub fn json_escaped_len(text: &str) -> u64 {
    // Escaping adds one byte to `"`, `\` and every control character, and four more
    // to a control character without a short escape (`\u001f` against `\n`).
    let (one_more, four_more) = count_both(text.as_bytes(), escape_growth);
    text.len() as u64 + one_more + 4 * four_more
}

/// Where a page of a listing stands: rows are cut by the caller's `limit` and, past
/// that, by the answer limit; `next` is the `offset` that gets the rows after them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Page {
    /// Rows skipped before this page (the `offset` asked for).
    pub offset: usize,
    /// True when rows follow this page: ask again with `offset` = `next`.
    pub truncated: bool,
    /// The `offset` of the next page; null on the last page.
    pub next: Option<usize>,
    /// When the answer limit for this client, not `limit`, ended this page: that
    /// limit (e.g. `47,000 bytes, 20,000 tokens (codex)`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answer_limit: Option<String>,
}

impl Page {
    /// The page of `shown` rows from `offset` out of `total`.
    pub fn of(offset: usize, shown: usize, total: usize) -> Page {
        let end = offset.saturating_add(shown);
        Page {
            offset,
            truncated: end < total,
            next: (end < total).then_some(end),
            answer_limit: None,
        }
    }

    /// This page, cut short by `limit`.
    pub fn held_to(self, limit: &AnswerLimit) -> Page {
        Page {
            answer_limit: Some(limit.to_string()),
            ..self
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_escaped_length_is_the_length_of_the_escaped_text() {
        let every_ascii: String = (0u8..=0x7f).map(char::from).collect();
        let texts = [
            String::new(),
            every_ascii.clone(),
            every_ascii.repeat(100), // over one 4 KB chunk
            "fn main() {\n\t\"caf\u{e9}\" \\ \u{1F600}\r\n}\u{7f}\u{85}\u{2028}".into(),
        ];
        for text in texts {
            assert_eq!(
                json_escaped_len(&text),
                json_escaped(&text).len() as u64,
                "{text:?}"
            );
        }
    }

    proptest::proptest! {
        #[test]
        fn any_text_escapes_to_the_length_said(text in "(\\PC|[\\x00-\\x1f\"\\\\])*") {
            proptest::prop_assert_eq!(json_escaped_len(&text), json_escaped(&text).len() as u64);
        }

        /// The escaping is serde_json's (what a client's JSON parser undoes), for any
        /// text, and for long runs that need no escape around those that do (the
        /// eight-byte steps, and their ends at every offset).
        #[test]
        fn any_text_escapes_as_serde_json_escapes_it(
            text in "(\\PC|[\\x00-\\x1f\"\\\\\\x7f]|[a-z ]{0,19}|é|🦊)*"
        ) {
            let quoted = serde_json::to_string(&text).expect("a str serializes");
            proptest::prop_assert_eq!(json_escaped(&text), &quoted[1..quoted.len() - 1]);
        }
    }

    #[test]
    fn every_byte_escapes_as_serde_json_escapes_it_at_every_offset() {
        for b in 0u8..=0x7f {
            for offset in 0..17 {
                let text = format!("{}{}{}", "a".repeat(offset), char::from(b), "é".repeat(5));
                let quoted = serde_json::to_string(&text).expect("a str serializes");
                assert_eq!(
                    json_escaped(&text),
                    quoted[1..quoted.len() - 1],
                    "{b:#x} at {offset}"
                );
            }
        }
    }

    #[test]
    fn answer_text_is_compact_json_in_field_order() {
        #[derive(Serialize)]
        struct Answer {
            z: u32,
            a: &'static str,
        }
        assert_eq!(
            answer_text(&Answer {
                z: 1,
                a: "x\n\"y\""
            }),
            r#"{"z":1,"a":"x\n\"y\""}"#
        );
    }

    #[test]
    fn answer_text_is_the_string_of_the_value_the_server_sends() {
        #[derive(Serialize)]
        #[serde(rename_all = "snake_case")]
        enum Kind {
            ReadmeOnly,
            Code { lines: u64 },
        }
        #[derive(Serialize)]
        struct Inner {
            share: f64,
            whole: f64,
            none: Option<u8>,
            #[serde(skip_serializing_if = "Option::is_none")]
            skipped: Option<u8>,
        }
        #[derive(Serialize)]
        struct Answer {
            z: i64,
            text: &'static str,
            kinds: Vec<Kind>,
            #[serde(flatten)]
            inner: Inner,
            counts: std::collections::BTreeMap<&'static str, u64>,
            by_name: indexmap_like::Ordered,
        }
        // A map serialized in its own (non-sorted) order.
        mod indexmap_like {
            pub struct Ordered;
            impl serde::Serialize for Ordered {
                fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                    use serde::ser::SerializeMap;
                    let mut map = s.serialize_map(Some(3))?;
                    for (k, v) in [("zeta", 1), ("alpha", 2), ("10", 3)] {
                        map.serialize_entry(k, &v)?;
                    }
                    map.end()
                }
            }
        }
        let answer = Answer {
            z: -3,
            text: "é🦊 \"q\" \\ \n\t\u{1}\u{7f}",
            kinds: vec![Kind::ReadmeOnly, Kind::Code { lines: 7 }],
            inner: Inner {
                share: 39868.2,
                whole: 2.0,
                none: None,
                skipped: None,
            },
            counts: [("binary", 2), ("secret", 1)].into_iter().collect(),
            by_name: indexmap_like::Ordered,
        };
        // The Value the server sends, measured the same way: the same string.
        let value = serde_json::to_value(&answer).expect("value");
        assert_eq!(answer_text(&answer), answer_text(&value));
        // Byte for byte the text sent, but for the floats' wider forms (`2.0` is
        // already serde_json's wider one).
        let sent = serde_json::to_string(&value).expect("string");
        assert_eq!(answer_text(&answer), sent);
        assert!(sent.contains(r#""share":39868.2,"whole":2.0,"#), "{sent}");
    }

    /// (value, serde_json's text, JavaScript's: node -e 'console.log(String(x))')
    const FORMS: [(f64, &str, &str); 14] = [
        (5e-6, "5e-6", "0.000005"),
        (0.000001, "1e-6", "0.000001"),
        (-7.5e-6, "-7.5e-6", "-0.0000075"),
        (1e-7, "1e-7", "1e-7"),
        (1.5e-7, "1.5e-7", "1.5e-7"),
        (2.0, "2.0", "2"),
        (-2.5, "-2.5", "-2.5"),
        (-0.0, "-0.0", "0"),
        (123.456, "123.456", "123.456"),
        (0.1, "0.1", "0.1"),
        (1e21, "1e+21", "1e+21"),
        (1.2345e22, "1.2345e+22", "1.2345e+22"),
        (1e20, "1e+20", "100000000000000000000"),
        (
            0.30000000000000004,
            "0.30000000000000004",
            "0.30000000000000004",
        ),
    ];

    #[test]
    fn floats_are_measured_at_least_as_wide_as_either_form_clients_write() {
        for (value, ryu, js) in FORMS {
            assert_eq!(
                serde_json::to_string(&value).expect("ryu"),
                ryu,
                "{value:?}"
            );
            assert_eq!(js_number(&format!("{value:e}")), js, "{value:?}");
        }
        let measured: Vec<String> = FORMS.iter().map(|(v, ..)| answer_text(v)).collect();
        assert_eq!(
            measured,
            [
                "0.000005e-6",
                "0.000001e-6",
                "-0.0000075e-6",
                "1e-7",
                "1.5e-7",
                "2.0",
                "-2.5",
                "-0.0",
                "123.456",
                "0.1",
                "1e+21",
                "1.2345e+22",
                "1e+20 100000000000000000000",
                "0.30000000000000004",
            ]
        );
        assert_eq!(
            answer_text(&serde_json::json!({"usd": 5e-6, "n": 3, "r": 0.5, "w": 2.0})),
            r#"{"usd":0.000005e-6,"n":3,"r":0.5,"w":2.0}"#
        );
    }

    /// A float's measured form has at least the characters and the tokens of both
    /// forms, in an answer's context, by every local family.
    fn dominates(value: f64) -> Result<(), proptest::test_runner::TestCaseError> {
        let ryu = serde_json::to_string(&value).expect("ryu");
        let js = js_number(&format!("{value:e}"));
        let measured = answer_text(&value);
        let in_context = |n: &str| format!(r#"{{"usd":{n},"rows":[{n}]}}"#);
        for form in [&ryu, &js] {
            proptest::prop_assert!(js_length(&measured) >= js_length(form), "{value:?}");
            for tokenizer in [
                Tokenizer::O200kBase,
                Tokenizer::Cl100kBase,
                Tokenizer::Claude47Estimate,
            ] {
                let (wide, this) = (in_context(&measured), in_context(form));
                proptest::prop_assert!(
                    tokenizer.count(&wide) >= tokenizer.count(&this),
                    "{tokenizer:?}: {wide} < {this}"
                );
            }
        }
        Ok(())
    }

    proptest::proptest! {
        #[test]
        fn a_small_float_is_measured_at_least_as_wide(v in 1e-6f64..1e-5, neg: bool) {
            dominates(if neg { -v } else { v })?;
        }

        #[test]
        fn a_whole_float_is_measured_at_least_as_wide(v in -1e16f64..1e16) {
            dominates(v.trunc())?;
        }

        #[test]
        fn a_large_float_is_measured_at_least_as_wide(v in 1e16f64..1e21, neg: bool) {
            dominates(if neg { -v } else { v })?;
        }

        #[test]
        fn any_float_is_measured_at_least_as_wide(bits: u64) {
            let v = f64::from_bits(bits);
            if v.is_finite() {
                dominates(v)?;
            }
        }
    }

    #[test]
    fn an_answer_states_its_own_count() {
        #[derive(Serialize)]
        struct Answer {
            answer_tokens: u64,
            text: String,
        }
        for text in ["", "hello", "a longer text\nwith \"quotes\"\n"] {
            let mut answer = Answer {
                answer_tokens: 0,
                text: text.repeat(50),
            };
            let sent = count_itself(&mut answer, Tokenizer::O200kBase, |a| &mut a.answer_tokens);
            assert_eq!(sent, answer_text(&answer));
            assert_eq!(
                answer.answer_tokens,
                Tokenizer::O200kBase.count(&sent) as u64
            );
        }
    }

    #[test]
    fn escaping_is_per_character_so_pieces_add_up() {
        let (a, b) = ("line\n\t\"q\" \\ \u{1}", "é🦊\r\n");
        assert_eq!(
            json_escaped(&format!("{a}{b}")),
            json_escaped(a) + &json_escaped(b)
        );
        assert_eq!(json_escaped(""), "");
        assert_eq!(json_escaped("a\nb"), "a\\nb");
    }

    #[test]
    fn a_page_says_where_the_next_starts() {
        assert_eq!(
            Page::of(0, 10, 25),
            Page {
                offset: 0,
                truncated: true,
                next: Some(10),
                answer_limit: None,
            }
        );
        assert_eq!(Page::of(20, 5, 25).next, None);
        assert!(!Page::of(20, 5, 25).truncated);
    }

    #[test]
    fn characters_are_counted_as_javascript_does() {
        assert_eq!(js_length("abc"), 3);
        assert_eq!(js_length("é"), 1);
        assert_eq!(js_length("🦊"), 2);
        // Every width of character, across the byte counter's blocks.
        let mixed = "aé€🦊\n\u{7f}\u{80}\u{7ff}\u{800}\u{ffff}\u{10000}\u{10ffff}".repeat(97);
        assert_eq!(
            js_length(&mixed),
            mixed.chars().map(char::len_utf16).sum::<usize>()
        );
    }

    #[test]
    fn the_limit_measures_characters_before_tokens() {
        let limit = AnswerLimit {
            tokens: 5,
            chars: 10,
            ..AnswerLimit::default()
        };
        let long = limit.measure(&"a".repeat(11));
        assert_eq!((long.chars, long.tokens), (11, 0));
        assert!(!limit.admits(long));
        let short = limit.measure("hi");
        assert!(short.tokens >= 1 && limit.admits(short));
        assert!(short.tokens >= HIGHEST_ESTIMATE.count("hi") as u64);
        // Over the bound of its bytes: counted.
        let limit = AnswerLimit {
            tokens: 5,
            chars: 100,
            ..AnswerLimit::default()
        };
        let counted = limit.measure("hello world");
        assert_eq!(counted.tokens, HIGHEST_ESTIMATE.count("hello world") as u64);
    }

    #[test]
    fn bytes_bound_an_answer_of_few_characters() {
        // 10 Cyrillic letters: 10 characters as JavaScript counts, 20 UTF-8 bytes,
        // which is what Codex cuts by.
        let limit = AnswerLimit {
            bytes: 19,
            ..AnswerLimit::default()
        };
        let size = limit.measure(&"я".repeat(10));
        assert_eq!((size.chars, size.bytes, size.tokens), (10, 20, 0));
        assert!(!limit.admits(size));
        assert!(AnswerLimit::default().admits(AnswerLimit::default().measure(&"я".repeat(10))));
    }

    #[test]
    fn a_limit_says_what_binds_and_whose() {
        assert_eq!(
            AnswerLimit::default().to_string(),
            "45,000 characters, 20,000 tokens (command line)"
        );
        let codex = AnswerLimit {
            bytes: 47_000,
            chars: usize::MAX,
            source: LimitSource::Client("codex"),
            ..AnswerLimit::default()
        };
        assert_eq!(codex.to_string(), "47,000 bytes, 20,000 tokens (codex)");
    }
}
