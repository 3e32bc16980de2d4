//! What a tool's answer costs the client that receives it, and the bound every answer
//! stays under.
//!
//! The answer a model receives is one string: a client that reads structuredContent
//! passes the model `JSON.stringify(structuredContent)` (Claude Code does, and drops
//! `content`); every other client passes the text content, which the server makes the
//! very same compact JSON. [`answer_text`] is that string, so what is bounded and
//! reported here is exactly what the model reads, whichever way its client reads.
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

/// The string a client hands the model for an answer `value`: compact JSON with the
/// fields in their declared order, as `JSON.stringify` writes the structuredContent
/// (both escape `"`, `\` and control characters the same way and nothing else; a
/// whole float is `2.0` here and `2` there, so ours is never the shorter).
///
/// Written straight from `value`: the same bytes as going through the
/// `serde_json::Value` the server sends (fields and map entries in serialization
/// order, with `preserve_order`), without building that tree, which took ~8× as
/// long for a listing of 11,651 files (10 against 1.3 ms), paid at every step of a
/// listing's search for the most rows that fit.
pub fn answer_text<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_default()
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
pub fn json_escaped(text: &str) -> String {
    // Serializing a `str` cannot fail; the quotes are the first and last byte.
    let quoted = serde_json::to_string(text).unwrap_or_else(|_| "\"\"".into());
    quoted[1..quoted.len() - 1].to_string()
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
        let via_value =
            serde_json::to_string(&serde_json::to_value(&answer).expect("value")).expect("string");
        assert_eq!(answer_text(&answer), via_value);
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
