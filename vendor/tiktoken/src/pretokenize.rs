//! Pre-tokenization: split text into pieces before BPE encoding.
//!
//! The [`PreTokenizer`] trait defines a regex-based splitter that partitions
//! input text into byte-range pieces. [`RegexPreTokenizer`] implements this
//! using the `regex` crate (DFA-based), with a custom whitespace lookahead
//! emulation (`adjust_whitespace_end`) that avoids `fancy-regex` entirely.

use std::sync::OnceLock;

use regex_automata::{Anchored, Input, meta};

/// Trait for splitting text into pieces before BPE encoding.
pub trait PreTokenizer: Send + Sync {
    /// Find the next match starting at or after `pos`.
    /// Returns `(start, end)` byte offsets into `text`.
    /// The `end` is already adjusted for whitespace lookahead emulation.
    fn next_match(&self, text: &str, pos: usize) -> Option<(usize, usize)>;
}

/// Selects which ASCII fast-path scanner (if any) a [`RegexPreTokenizer`] tries
/// before falling back to the regex. Chosen by the caller in `encoding.rs`,
/// which owns the pattern definitions — the pre-tokenizer itself stays unaware
/// of any specific encoding's pattern string.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum FastPath {
    /// No fast path: always use the regex (for patterns without a scanner).
    None,
    /// cl100k_base / llama3 pattern.
    Cl100k,
    /// o200k_base / o200k_harmony pattern.
    O200k,
    /// qwen2 pattern: identical to cl100k except `\p{N}` matches a single digit
    /// (not 1-3), so it reuses the cl100k scanner with a max-digit cap of 1.
    Qwen2,
    /// deepseek_v3 pattern (digits, CJK, punct+letters, letters, punct runs).
    Deepseek,
    /// mistral_v3 (Tekken) pattern: o200k-style case splitting, but with no
    /// contraction rule, single-digit `\p{N}`, and a `[\r\n/]*` punctuation tail.
    Tekken,
    /// minimax_m2 pattern: o200k's letter/digit rules (contractions included)
    /// with Tekken's `[\r\n/]*` punctuation tail.
    MiniMax,
    /// kimi_k2 / kimi_k3 pattern: o200k's ASCII behaviour but with the plain
    /// `[\r\n]*` punctuation tail — Moonshot's pat_str does not admit `/`
    /// there. (Its `[\p{Han}]+` branch and Han-excluded letter classes only
    /// matter for non-ASCII input, where this scanner defers to the regex.)
    Kimi,
}

/// Which whitespace rules a pattern uses, deciding whether the `\s+(?!\S)`
/// lookahead emulation may trim a match. Like [`FastPath`], this is chosen by
/// the caller in `encoding.rs`, which owns the pattern definitions.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum WhitespaceRules {
    /// The pattern's only whitespace handling is the generic `\s+(?!\S)|\s+`
    /// (p50k_base / r50k_base). Every all-whitespace match carries the
    /// lookahead, so all of them are subject to the trim.
    Generic,
    /// The pattern has a dedicated `\s*[\r\n]+` branch ordered *before* the
    /// generic `\s+(?!\S)|\s+` (cl100k, o200k, qwen2, deepseek_v3).
    ///
    /// Under leftmost-first alternation an all-whitespace run that contains a
    /// newline is always claimed by that branch, which has no lookahead — so a
    /// match ending in `\r`/`\n` must never be trimmed. Trimming it would split
    /// canonical multi-newline tokens (`"\n\n"`, `"\r\n"`) into single ones.
    NewlineFirst,
    /// deepseek_v3: as [`Self::NewlineFirst`], but the pattern is the last stage
    /// of a sequential HuggingFace `Split` pipeline whose earlier stages isolate
    /// `\p{N}{1,3}` runs and CJK/kana runs. This crate folds those stages into
    /// one alternation, so the lookahead — which upstream only ever sees a
    /// single stage-boundary-delimited slice — would otherwise peek past a
    /// boundary. A digit or CJK/kana char after a whitespace run starts a new
    /// upstream slice and so acts as end-of-input: no trim.
    NewlineFirstSplitOnNumCjk,
}

/// Rule 2 of `DEEPSEEK_V3_PATTERN`, by codepoint: `[一-龥\x{3040}-\x{309F}\x{30A0}-\x{30FF}]`.
#[inline]
fn is_deepseek_cjk(c: u32) -> bool {
    matches!(c, 0x4E00..=0x9FA5 | 0x3040..=0x30FF)
}

/// Whether `c` would have been isolated by an earlier stage of the deepseek_v3
/// split pipeline: `\p{N}{1,3}` (stage 1) or `[一-龥\u{3040}-\u{309F}\u{30A0}-\u{30FF}]+`
/// (stage 2). Kept in sync with `DEEPSEEK_V3_PATTERN`'s first two alternatives.
#[inline]
fn is_deepseek_split_boundary(c: char) -> bool {
    c.is_numeric() || matches!(c, '一'..='龥' | '\u{3040}'..='\u{309F}' | '\u{30A0}'..='\u{30FF}')
}

/// Regex-based pre-tokenizer wrapping the existing regex + whitespace adjustment logic.
pub struct RegexPreTokenizer {
    // context-loader patch: the meta regex behind `regex::Regex` (same syntax and
    // defaults), for anchored searches; compiled on the first piece the fast paths
    // decline (the Unicode classes take milliseconds to compile, and ASCII text
    // may never need them).
    pattern: Box<str>,
    regex: OnceLock<meta::Regex>,
    /// Which ASCII fast-path scanner (if any) to try before the regex.
    fast: FastPath,
    /// Which whitespace rules the pattern uses (gates the lookahead trim).
    ws: WhitespaceRules,
}

impl RegexPreTokenizer {
    pub(crate) fn new(pattern: &str, fast: FastPath, ws: WhitespaceRules) -> Self {
        Self {
            pattern: pattern.into(),
            regex: OnceLock::new(),
            fast,
            ws,
        }
    }
}

impl PreTokenizer for RegexPreTokenizer {
    #[inline]
    fn next_match(&self, text: &str, pos: usize) -> Option<(usize, usize)> {
        with_fast_path!(self.fast, self.next_match_for(text, pos))
    }
}

/// context-loader patch: [`RegexPreTokenizer::next_match_for`] with the fast path
/// read from the pre-tokenizer at run time.
pub(crate) const ANY_FAST_PATH: u8 = u8::MAX;

/// context-loader patch: `with_fast_path!(fast, receiver.method(args))` calls
/// `method::<FAST>` with `FAST` fixed at compile time for cl100k's and o200k's
/// scanners (each call site gets its own loop, scanner inlined), and
/// [`ANY_FAST_PATH`] for every other vocabulary.
macro_rules! with_fast_path {
    ($fast:expr, $receiver:ident . $method:ident ( $($arg:expr),* )) => {
        match $fast {
            $crate::pretokenize::FastPath::Cl100k => $receiver
                .$method::<{ $crate::pretokenize::FastPath::Cl100k as u8 }>($($arg),*),
            $crate::pretokenize::FastPath::O200k => $receiver
                .$method::<{ $crate::pretokenize::FastPath::O200k as u8 }>($($arg),*),
            _ => $receiver.$method::<{ $crate::pretokenize::ANY_FAST_PATH }>($($arg),*),
        }
    };
}
pub(crate) use with_fast_path;

impl RegexPreTokenizer {
    /// Which ASCII scanner this pre-tokenizer tries first.
    pub(crate) fn fast_path(&self) -> FastPath {
        self.fast
    }

    /// context-loader patch: `next_match` with the fast path fixed at compile time
    /// (`FAST` is a [`FastPath`] as `u8`, or [`ANY_FAST_PATH`]), inlined whole into
    /// the loop that calls it, with only the regex out of line. One function
    /// holding every scanner was too big to inline: counting a source tree spent a
    /// third of its time calling it, and a count loop with its scanner inlined
    /// counts the same tree about a quarter faster (same pieces, same process).
    #[inline(always)]
    pub(crate) fn next_match_for<const FAST: u8>(
        &self,
        text: &str,
        pos: usize,
    ) -> Option<(usize, usize)> {
        const CL100K: u8 = FastPath::Cl100k as u8;
        const O200K: u8 = FastPath::O200k as u8;
        let bytes = text.as_bytes();
        // context-loader patch: no piece starts at the end (no pattern matches the
        // empty string; an empty match would never advance the callers' loops), so
        // the end of a text never compiles or runs the regex.
        if pos >= bytes.len() {
            return None;
        }
        let fast_path = match FAST {
            CL100K => FastPath::Cl100k,
            O200K => FastPath::O200k,
            _ => self.fast,
        };
        debug_assert!(fast_path == self.fast, "specialized for another fast path");
        let fast = match fast_path {
            FastPath::Cl100k => cl100k_ascii_next::<3>(bytes, pos),
            FastPath::Qwen2 => cl100k_ascii_next::<1>(bytes, pos),
            FastPath::O200k => o200k_like_ascii_next::<true, 3, true, false>(bytes, pos),
            FastPath::Tekken => o200k_like_ascii_next::<false, 1, true, false>(bytes, pos),
            FastPath::MiniMax => o200k_like_ascii_next::<true, 3, true, false>(bytes, pos),
            FastPath::Kimi => o200k_like_ascii_next::<true, 3, false, true>(bytes, pos),
            FastPath::Deepseek => deepseek_ascii_next(bytes, pos),
            FastPath::None => None,
        };
        if let Some(r) = fast {
            return Some(r);
        }
        // context-loader patch: whitespace pieces of the cl100k/o200k/qwen2 patterns
        // (the same whitespace rules) without the lazy DFA (it rebuilt states for
        // every indentation run).
        if matches!(
            fast_path,
            FastPath::Cl100k | FastPath::O200k | FastPath::Qwen2
        ) && let Some(r) = ascii_whitespace_next(bytes, pos)
        {
            return Some(r);
        }
        found(self.regex_next(text, pos))
    }

    /// The piece at `pos` by the regex: what the scanners decline (non-ASCII,
    /// mostly). Out of line, so the scanners' loops stay small; a register
    /// pair, `(0, 0)` for none (see [`found`]).
    #[inline(never)]
    fn regex_next(&self, text: &str, pos: usize) -> (usize, usize) {
        self.regex_found(text, pos).unwrap_or((0, 0))
    }

    #[inline(always)]
    fn regex_found(&self, text: &str, pos: usize) -> Option<(usize, usize)> {
        let bytes = text.as_bytes();
        // context-loader patch: every character starts a piece of these patterns
        // (letters, digits, whitespace, and `[^\s\p{L}\p{N}]` for everything else),
        // so the match starts at `pos` and the search is anchored there. An
        // unanchored search finds the same match, then runs a reverse DFA back
        // over it to find where it starts, which was most of the regex's cost.
        let regex = self
            .regex
            .get_or_init(|| meta::Regex::new(&self.pattern).expect("invalid regex pattern"));
        let anchored = Input::new(text).range(pos..).anchored(Anchored::Yes);
        let mat = match regex.search(&anchored) {
            Some(mat) => mat,
            None => regex.search(&Input::new(text).range(pos..))?,
        };
        let start = mat.start();
        let end = adjust_whitespace_end(bytes, start, mat.end(), self.ws);
        Some((start, end))
    }
}

/// context-loader patch: the pieces of a Hugging Face `Split` pre-tokenizer
/// (behaviour `Isolated`, not inverted) whose regex is one this crate has a
/// scanner for, so `tokenizer.json` files of those models are split without
/// `fancy-regex` (whose backtracking VM runs every piece, because of the
/// `\s+(?!\S)` lookahead). Only the exact regex strings below are recognised:
/// any other pattern, however close, is left to the caller's regex.
pub struct SplitScanner(RegexPreTokenizer);

/// (`tokenizer.json` regex, this crate's pattern for it, scanner): Llama 3's is
/// cl100k_base's, Qwen 2/3's the same with one digit per `\p{N}` piece. The
/// lookahead `\s+(?!\S)` is emulated (`WhitespaceRules::NewlineFirst`).
const HUGGING_FACE_SPLITS: [(&str, &str, FastPath); 2] = [
    (
        r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
        crate::encoding::CL100K_PATTERN,
        FastPath::Cl100k,
    ),
    (
        r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
        crate::encoding::QWEN2_PATTERN,
        FastPath::Qwen2,
    ),
];

impl SplitScanner {
    /// The scanner for a `Split` regex written exactly as `regex`, if there is one.
    pub fn for_regex(regex: &str) -> Option<SplitScanner> {
        HUGGING_FACE_SPLITS
            .iter()
            .find(|(hf, _, _)| *hf == regex)
            .map(|&(_, pattern, fast)| {
                SplitScanner(RegexPreTokenizer::new(
                    pattern,
                    fast,
                    WhitespaceRules::NewlineFirst,
                ))
            })
    }

    /// The first match at or after `pos`: `(start, end)` byte offsets in `text`.
    /// Every character of `text` is in some match of these patterns, so each
    /// match starts where the previous one ended.
    #[inline]
    pub fn next_match(&self, text: &str, pos: usize) -> Option<(usize, usize)> {
        self.0.next_match(text, pos)
    }
}

/// Character-class certainty for the CJK extension of the fast-path scanners.
///
/// Each variant is a *certainty claim* about how the patterns' Unicode classes
/// treat the char; `Other` means "this table cannot be certain" and always
/// defers the piece to the regex, so an omission here costs speed, never
/// correctness. The claims are pinned char-by-char against the regex crate's
/// own Unicode tables by `cjk_class_matches_regex_tables`, so the table cannot
/// drift from the engine that defines correctness.
#[derive(Clone, Copy, PartialEq, Eq)]
enum CjkClass {
    /// `\p{Han}` (and therefore `\p{L}`/`Lo`): CJK Unified Ideographs + Ext A.
    Han,
    /// `\p{L}` of category `Lo`/`Lm`, not Han: kana, Hangul syllables,
    /// halfwidth katakana. Caseless, so o200k's case-split classes contain it
    /// on both sides.
    Caseless,
    /// `\p{Lu}`: fullwidth Ａ-Ｚ.
    Upper,
    /// `\p{Ll}`: fullwidth ａ-ｚ.
    Lower,
    /// Matches `[^\s\p{L}\p{N}]`: CJK and fullwidth punctuation/symbols.
    Punct,
    /// `\p{N}`: fullwidth digits, ideographic numerals.
    Num,
    /// Whitespace (ideographic space).
    Ws,
    /// Unknown to this table — defer to the regex.
    Other,
}

#[inline]
fn cjk_class(c: u32) -> CjkClass {
    use CjkClass::*;
    match c {
        0x4E00..=0x9FFF | 0x3400..=0x4DBF => Han,
        0x3041..=0x3096 | 0x309D..=0x309F => Caseless, // hiragana + iteration marks
        0x30A1..=0x30FA | 0x30FC..=0x30FF => Caseless, // katakana + ー ヽ ヾ ヿ
        0xAC00..=0xD7A3 => Caseless,                   // hangul syllables
        0xFF66..=0xFF9F => Caseless,                   // halfwidth katakana (incl. ｰ ﾞ ﾟ, all Lo/Lm)
        0xFF21..=0xFF3A => Upper,                      // fullwidth Ａ-Ｚ
        0xFF41..=0xFF5A => Lower,                      // fullwidth ａ-ｚ
        // CJK punctuation. 3005 々 / 3006 〆 (letters), 3007 〇 (number) and the
        // mark/numeral stretches of the block are deliberately absent.
        0x3001..=0x3004 | 0x3008..=0x3020 | 0x3030 | 0x3036 | 0x303D => Punct,
        0x30A0 | 0x30FB => Punct, // ゠ ・ (the two non-letters inside katakana)
        0xFF01..=0xFF0F | 0xFF1A..=0xFF20 | 0xFF3B..=0xFF40 | 0xFF5B..=0xFF65 => Punct,
        0x2014 | 0x2018..=0x201D | 0x2025..=0x2026 => Punct, // — quotes ‥ …
        0xFF10..=0xFF19 | 0x3007 | 0x3021..=0x3029 | 0x3038..=0x303A => Num,
        0x3000 => Ws,
        _ => bmp_class(c),
    }
}

/// context-loader patch (PATCH.md section 27): the class of any other char of
/// the Basic Multilingual Plane, from a table of the regex crate's own
/// Unicode classes, made the first time one is asked for (~0.1 ms, 64 KiB).
///
/// Why: every piece the table above did not know went to the regex, ~90 ns a
/// character (Latin with accents, Greek, Cyrillic, Hebrew, symbols, box
/// drawing): 3 % of counting a tree of crate sources, and most of the time of
/// counting text in those scripts. The claims are the same kind as above, so
/// the scanners take these chars as they take fullwidth Latin and CJK
/// punctuation: `Lu` and `Lt` (o200k's upper class holds `Lt`, its lower one
/// not) as upper, `Ll` lower, `Lm` and `Lo` caseless, `\p{N}` a number,
/// `\s` whitespace, the rest `[^\s\p{L}\p{N}]`. Left to the regex (`Other`):
/// marks (`\p{M}`: in o200k's letter classes but not `\p{L}`, so both a
/// word's leading char and its letter), Han outside the ranges above (Kimi
/// keeps `\p{Han}` apart), chars that case-fold to an ASCII letter (`ſ` is
/// `s` to the contractions' `(?i:'s)`), and every char past the BMP.
#[cold]
#[inline(never)]
fn bmp_class(c: u32) -> CjkClass {
    static TABLE: OnceLock<Box<[CjkClass]>> = OnceLock::new();
    let table = TABLE.get_or_init(bmp_table);
    table.get(c as usize).copied().unwrap_or(CjkClass::Other)
}

/// [`bmp_class`]'s table: each class's ranges from the regex crate's parser,
/// later ones over earlier ones.
fn bmp_table() -> Box<[CjkClass]> {
    use CjkClass::*;
    use regex_syntax::hir::{Class, HirKind};
    let mut table = vec![Punct; 0x10000].into_boxed_slice();
    for (class, pattern) in [
        (Num, r"\p{N}"),
        (Ws, r"\s"),
        (Upper, r"[\p{Lu}\p{Lt}]"),
        (Lower, r"\p{Ll}"),
        (Caseless, r"[\p{Lm}\p{Lo}]"),
        (Other, r"\p{M}"),
        (Other, r"\p{Han}"),
        (Other, r"(?i:[a-z])"),
    ] {
        let hir = regex_syntax::parse(pattern).expect("a Unicode class the parser knows");
        let HirKind::Class(Class::Unicode(ranges)) = hir.kind() else {
            unreachable!("{pattern} is a class of Unicode chars");
        };
        for range in ranges.iter() {
            let (start, end) = (range.start() as usize, range.end() as usize);
            if start <= 0xFFFF {
                table[start..=end.min(0xFFFF)].fill(class);
            }
        }
    }
    // Surrogates are no chars; ASCII never reaches the table.
    table[0xD800..=0xDFFF].fill(Other);
    table
}

/// Decode one char at byte offset `i`. Input comes from `&str`, so the UTF-8
/// is valid by construction and no error path exists.
#[inline]
fn decode_char(b: &[u8], i: usize) -> (u32, usize) {
    let c0 = b[i];
    if c0 < 0x80 {
        (c0 as u32, 1)
    } else if c0 < 0xE0 {
        ((((c0 & 0x1F) as u32) << 6) | (b[i + 1] & 0x3F) as u32, 2)
    } else if c0 < 0xF0 {
        (
            (((c0 & 0x0F) as u32) << 12)
                | (((b[i + 1] & 0x3F) as u32) << 6)
                | (b[i + 2] & 0x3F) as u32,
            3,
        )
    } else {
        (
            (((c0 & 0x07) as u32) << 18)
                | (((b[i + 1] & 0x3F) as u32) << 12)
                | (((b[i + 2] & 0x3F) as u32) << 6)
                | (b[i + 3] & 0x3F) as u32,
            4,
        )
    }
}

/// context-loader patch: whether a Hangul syllable (U+AC00..=U+D7A3) starts
/// at `j`: a letter of every class the scanners ask about (`\p{Lo}`, so
/// `Caseless` in [`cjk_class`] and `Both` for the o200k family), tested without
/// the table's chain of ranges. Korean prose is mostly these; the mixed-script
/// loops take one here before calling [`cjk_class`] (PATCH.md section 9).
/// Caller guarantees `j < b.len()` and that `b` is valid UTF-8 (from a `&str`).
#[inline(always)]
fn hangul_syllable_at(b: &[u8], j: usize) -> bool {
    // U+AC00..=U+D7A3 is EA B0 80 ..= ED 9E A3: 3-byte sequences whose lead
    // byte is EA..=ED (U+A000..=U+DFFF, surrogates excluded by UTF-8). Decoded
    // here, not by `decode_char`, which the compiler left out of line.
    let c0 = b[j];
    if !(0xEA..=0xED).contains(&c0) {
        return false;
    }
    let c = (u32::from(c0 & 0x0F) << 12)
        | (u32::from(b[j + 1] & 0x3F) << 6)
        | u32::from(b[j + 2] & 0x3F);
    (0xAC00..=0xD7A3).contains(&c)
}

/// Scan a `\p{L}+` run (cl100k-family letter rule) from `j`, ASCII and CJK
/// alike. `Some(end)` when the run ends at a char that is *certainly* not a
/// letter; `None` (defer) on the first char the table cannot place.
///
/// Cold: the inlined scanners handle pure-ASCII runs with their own open-coded
/// loops and only branch here when a non-ASCII byte actually appears, so CJK
/// support costs the ASCII hot path nothing but a taken-once branch.
#[cold]
#[inline(never)]
fn scan_letter_run_mixed(b: &[u8], mut j: usize) -> Option<usize> {
    let n = b.len();
    while j < n {
        let c = b[j];
        if c < 0x80 {
            if c.is_ascii_alphabetic() {
                j += 1;
                continue;
            }
            return Some(j);
        }
        if hangul_syllable_at(b, j) {
            j += 3;
            continue;
        }
        let (ch, len) = decode_char(b, j);
        match cjk_class(ch) {
            CjkClass::Han | CjkClass::Caseless | CjkClass::Upper | CjkClass::Lower => j += len,
            CjkClass::Punct | CjkClass::Num | CjkClass::Ws => return Some(j),
            CjkClass::Other => return None,
        }
    }
    Some(j)
}

/// Scan a `[^\s\p{L}\p{N}]+` run from `j`, ASCII and CJK alike. Same
/// certainty contract and cold placement as [`scan_letter_run_mixed`].
#[cold]
#[inline(never)]
fn scan_punct_run_mixed(b: &[u8], mut j: usize) -> Option<usize> {
    let n = b.len();
    while j < n {
        let c = b[j];
        if c < 0x80 {
            if !is_ascii_ws(c) && !c.is_ascii_alphanumeric() {
                j += 1;
                continue;
            }
            return Some(j);
        }
        let (ch, len) = decode_char(b, j);
        match cjk_class(ch) {
            CjkClass::Punct => j += len,
            CjkClass::Han
            | CjkClass::Caseless
            | CjkClass::Upper
            | CjkClass::Lower
            | CjkClass::Num
            | CjkClass::Ws => return Some(j),
            CjkClass::Other => return None,
        }
    }
    Some(j)
}

/// An out-of-line scanner's register pair as the piece it found, if any.
/// context-loader patch (PATCH.md section 22): an `Option<(usize, usize)>`
/// returned from an out-of-line call goes through a stack slot, and the
/// inlined scanner that called it kept every piece it cut in that slot too: a
/// store and reloads on the path from one piece's end to the next one's start.
/// Returned as two registers, the hot path keeps its pieces in registers.
#[inline(always)]
fn found((start, end): (usize, usize)) -> Option<(usize, usize)> {
    (end != 0).then_some((start, end))
}

/// Consume the trailing line-tail class of the punctuation rule starting at `k`,
/// returning the new offset. Most patterns spell it `[\r\n]*`; Mistral's Tekken
/// pattern spells it `[\r\n/]*`, so `SLASH` admits `/` as well.
#[inline]
fn take_line_tail<const SLASH: bool>(b: &[u8], mut k: usize) -> usize {
    while k < b.len() && (b[k] == b'\r' || b[k] == b'\n' || (SLASH && b[k] == b'/')) {
        k += 1;
    }
    k
}

/// Shared ASCII handler for the digit and punctuation rules, parameterized at
/// compile time so every [`FastPath`] keeps fully specialized codegen: the
/// digit rule's repeat cap is `MAX_DIGITS` (`\p{N}{1,3}` → 3 for cl100k/o200k,
/// `\p{N}` → 1 for qwen2/Tekken), and the punctuation rule
/// (` ?[^\s\p{L}\p{N}]+[\r\n]*`) admits `/` in its trailing class when
/// `SLASH_TAIL` is set (Tekken's `[\r\n/]*`).
///
/// Returns `Some((i, end))` on a match, or `None` to defer to the regex (the
/// start is whitespace, or a non-ASCII byte could extend the run under Unicode
/// semantics). Caller guarantees `i < n` and `b[i] < 0x80`.
#[inline(always)]
fn ascii_num_punct<const MAX_DIGITS: usize, const SLASH_TAIL: bool>(
    b: &[u8],
    i: usize,
) -> Option<(usize, usize)> {
    let n = b.len();
    let c0 = b[i];

    // Rule: \p{N}{1,MAX_DIGITS}
    if c0.is_ascii_digit() {
        let mut j = i;
        let mut k = 0;
        while j < n && k < MAX_DIGITS && b[j] < 0x80 && b[j].is_ascii_digit() {
            j += 1;
            k += 1;
        }
        // Fewer than max digits and a non-ASCII byte next: it may be a Unicode
        // \p{N} (superscripts, other-number) the regex would fold in — defer.
        // At the cap the regex stops regardless, so it's safe to return.
        if k < MAX_DIGITS && j < n && b[j] >= 0x80 {
            return None;
        }
        return Some((i, j));
    }

    // Rule: ` ?[^\s\p{L}\p{N}]+[\r\n]*`
    let mut j = i;
    if c0 == b' ' {
        // optional single leading space, but only if a punct run follows
        match b.get(i + 1) {
            Some(&c1) if is_ascii_punct(c1) => {
                j = i + 1;
            }
            // space + CJK punctuation starts the run just as well (a CJK
            // letter would have been claimed by the word rules in the caller)
            Some(&c1) if c1 >= 0x80 => {
                return found(space_cjk_punct::<SLASH_TAIL>(b, i));
            }
            // space not followed by punct → whitespace rules → defer
            _ => return None,
        }
    }
    let cj = b[j];
    if is_ascii_punct(cj) {
        let mut k = j + 1;
        while k < n && is_ascii_punct(b[k]) {
            k += 1;
        }
        if k < n && b[k] >= 0x80 {
            let k = scan_punct_run_mixed(b, k)?;
            return Some((i, take_line_tail::<SLASH_TAIL>(b, k)));
        }
        k = take_line_tail::<SLASH_TAIL>(b, k);
        return Some((i, k));
    }

    // whitespace run (or other) → defer to regex
    None
}

/// A space at `i` followed by a non-ASCII char: the punct rule applies only
/// if that char is certainly punctuation. Out of line with the other CJK arms.
/// context-loader patch: the piece as a register pair, `(0, 0)` for none (see [`found`]).
#[cold]
#[inline(never)]
fn space_cjk_punct<const SLASH_TAIL: bool>(b: &[u8], i: usize) -> (usize, usize) {
    space_cjk_punct_found::<SLASH_TAIL>(b, i).unwrap_or((0, 0))
}

#[inline(always)]
fn space_cjk_punct_found<const SLASH_TAIL: bool>(b: &[u8], i: usize) -> Option<(usize, usize)> {
    if cjk_class(decode_char(b, i + 1).0) != CjkClass::Punct {
        return None;
    }
    let e = scan_punct_run_mixed(b, i + 1)?;
    Some((i, take_line_tail::<SLASH_TAIL>(b, e)))
}

/// cl100k-family piece starting on a non-ASCII char. Same leftmost-first rule
/// order as the ASCII path: rule 2 (optional leading char + letters), then
/// rule 4 (punct run). Out of line so CJK support does not bloat the inlined
/// ASCII scanner.
/// context-loader patch: the piece as a register pair, `(0, 0)` for none (see [`found`]).
#[cold]
#[inline(never)]
fn cl100k_cjk_next(b: &[u8], i: usize) -> (usize, usize) {
    cl100k_cjk_next_found(b, i).unwrap_or((0, 0))
}

#[inline(always)]
fn cl100k_cjk_next_found(b: &[u8], i: usize) -> Option<(usize, usize)> {
    let n = b.len();
    // context-loader patch: a Hangul syllable is a letter (rule 2, no leading
    // char), without the table (section 11 of PATCH.md).
    if hangul_syllable_at(b, i) {
        return scan_letter_run_mixed(b, i + 3).map(|e| (i, e));
    }
    let (ch, len) = decode_char(b, i);
    match cjk_class(ch) {
        // rule 2, no leading char
        CjkClass::Han | CjkClass::Caseless | CjkClass::Upper | CjkClass::Lower => {
            scan_letter_run_mixed(b, i + len).map(|e| (i, e))
        }
        // 、 or 　 can be rule 2's leading char `[^\r\n\p{L}\p{N}]` when
        // letters follow; a lone 、 falls to the punct rule, a lone 　 to the
        // whitespace rules (defer).
        CjkClass::Punct | CjkClass::Ws => {
            let j = i + len;
            let next_is_letter = j < n && {
                let c1 = b[j];
                if c1 < 0x80 {
                    c1.is_ascii_alphabetic()
                } else {
                    matches!(
                        cjk_class(decode_char(b, j).0),
                        CjkClass::Han | CjkClass::Caseless | CjkClass::Upper | CjkClass::Lower
                    )
                }
            };
            if next_is_letter {
                return scan_letter_run_mixed(b, j).map(|e| (i, e));
            }
            if cjk_class(ch) == CjkClass::Ws {
                return None; // whitespace rules → regex
            }
            let e = scan_punct_run_mixed(b, i + len)?;
            Some((i, take_line_tail::<false>(b, e)))
        }
        CjkClass::Num | CjkClass::Other => None,
    }
}

/// cl100k-family: an eligible ASCII leading char at `i` with a non-ASCII char
/// after it. Rule 2 if that char is a letter; otherwise the digit/punct rules
/// via [`ascii_num_punct`], whose own cold escapes finish any CJK punct run.
/// context-loader patch: the piece as a register pair, `(0, 0)` for none (see [`found`]).
#[cold]
#[inline(never)]
fn cl100k_cjk_after_lead<const MAX_DIGITS: usize>(b: &[u8], i: usize) -> (usize, usize) {
    cl100k_cjk_after_lead_found::<MAX_DIGITS>(b, i).unwrap_or((0, 0))
}

#[inline(always)]
fn cl100k_cjk_after_lead_found<const MAX_DIGITS: usize>(
    b: &[u8],
    i: usize,
) -> Option<(usize, usize)> {
    // context-loader patch: a Hangul syllable after the lead (a space, mostly),
    // without the table.
    if hangul_syllable_at(b, i + 1) {
        return scan_letter_run_mixed(b, i + 4).map(|e| (i, e));
    }
    if matches!(
        cjk_class(decode_char(b, i + 1).0),
        CjkClass::Han | CjkClass::Caseless | CjkClass::Upper | CjkClass::Lower
    ) {
        return scan_letter_run_mixed(b, i + 1).map(|e| (i, e));
    }
    ascii_num_punct::<MAX_DIGITS, false>(b, i)
}

/// ASCII fast-path pre-tokenizer for the cl100k pattern (and qwen2, which is
/// identical except `MAX_DIGITS = 1` instead of 3).
///
/// Returns `Some((pos, end))` for a piece it can resolve entirely within ASCII,
/// or `None` to defer to the regex (non-ASCII byte at a decision point, or a
/// whitespace-run start whose `\s*[\r\n]+|\s+` + lookahead semantics we don't
/// replicate here). Alternatives are tried in the regex's leftmost-first order.
#[inline(always)]
fn cl100k_ascii_next<const MAX_DIGITS: usize>(b: &[u8], i: usize) -> Option<(usize, usize)> {
    let n = b.len();
    if i >= n {
        return None;
    }
    let c0 = b[i];
    if c0 >= 0x80 {
        return found(cl100k_cjk_next(b, i));
    }

    // Rule 1: (?i:'s|'t|'re|'ve|'m|'ll|'d). On no contraction, fall through; the
    // quote may act as a rule-2 leading char or a rule-4 punctuation run.
    if c0 == b'\''
        && let Some(len) = match_contraction(b, i)
    {
        return Some((i, i + len));
    }

    // Rule 2: [^\r\n\p{L}\p{N}]?\p{L}+
    // case A: one leading non-CRLF non-alnum char, then letters
    if is_ascii_lead(c0)
        && let Some(&c1) = b.get(i + 1)
    {
        if c1 < 0x80 && c1.is_ascii_alphabetic() {
            let j = letter_run_end(b, i + 2);
            if j < n && b[j] >= 0x80 {
                return scan_letter_run_mixed(b, j).map(|e| (i, e));
            }
            return Some((i, j));
        }
        if c1 >= 0x80 {
            return found(cl100k_cjk_after_lead::<MAX_DIGITS>(b, i));
        }
    }
    // case B: no leading char, c0 is a letter
    if c0.is_ascii_alphabetic() {
        let j = letter_run_end(b, i + 1);
        if j < n && b[j] >= 0x80 {
            return scan_letter_run_mixed(b, j).map(|e| (i, e));
        }
        return Some((i, j));
    }

    // Rules 3 & 4: digits, punctuation. Rules 5/6 (whitespace) → defer.
    ascii_num_punct::<MAX_DIGITS, false>(b, i)
}

/// Membership of one char in the o200k-family case-split letter classes.
///
/// The "upper" class is `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]`, the "lower" class
/// `[\p{Ll}\p{Lm}\p{Lo}\p{M}]` — `Lo`/`Lm` (Han, kana, hangul) sit in *both*,
/// which is what `Both` encodes. With `HAN_APART` (kimi), Han is excluded from
/// both classes (`&&[^\p{Han}]`) and certainly ends a word run instead.
#[derive(Clone, Copy, PartialEq, Eq)]
enum LetterKind {
    Upper,
    Lower,
    Both,
    End,
    Defer,
}

#[inline(always)]
fn o200k_letter_kind<const HAN_APART: bool>(b: &[u8], j: usize) -> (LetterKind, usize) {
    let c = b[j];
    if c < 0x80 {
        if c.is_ascii_uppercase() {
            return (LetterKind::Upper, 1);
        }
        if c.is_ascii_lowercase() {
            return (LetterKind::Lower, 1);
        }
        return (LetterKind::End, 1);
    }
    o200k_letter_kind_cjk::<HAN_APART>(b, j)
}

/// [`o200k_letter_kind`] for the non-ASCII case, out of line.
#[cold]
#[inline(never)]
fn o200k_letter_kind_cjk<const HAN_APART: bool>(b: &[u8], j: usize) -> (LetterKind, usize) {
    let (ch, len) = decode_char(b, j);
    let kind = match cjk_class(ch) {
        CjkClass::Han => {
            if HAN_APART {
                LetterKind::End
            } else {
                LetterKind::Both
            }
        }
        CjkClass::Caseless => LetterKind::Both,
        CjkClass::Upper => LetterKind::Upper,
        CjkClass::Lower => LetterKind::Lower,
        CjkClass::Punct | CjkClass::Num | CjkClass::Ws => LetterKind::End,
        CjkClass::Other => LetterKind::Defer,
    };
    (kind, len)
}

/// How an o200k-family piece that starts on a non-ASCII char proceeds.
enum CjkStart {
    /// A complete piece (kimi's `[\p{Han}]+` branch).
    Piece(usize),
    /// Defer to the regex.
    Defer,
    /// Not a word start — try the digit/punct rules.
    Punct,
    /// The word rules apply; letters begin at this byte offset.
    Letters(usize),
}

/// Classify a non-ASCII piece start for [`o200k_like_ascii_next`], out of
/// line so CJK support does not bloat the inlined ASCII scanner.
#[cold]
#[inline(never)]
fn o200k_cjk_start<const HAN_APART: bool>(b: &[u8], i: usize) -> CjkStart {
    let n = b.len();
    // context-loader patch: a Hangul syllable starts a word (it is not Han, so
    // not kimi's Han branch either), without the table.
    if hangul_syllable_at(b, i) {
        return CjkStart::Letters(i);
    }
    let (ch, len) = decode_char(b, i);
    let cls = cjk_class(ch);
    // Kimi's `[\p{Han}]+` branch is ordered before the word rules: a Han run
    // is a piece of its own, with no leading char and no suffix.
    if HAN_APART && cls == CjkClass::Han {
        let mut j = i + len;
        while j < n {
            if b[j] < 0x80 {
                break;
            }
            let (c2, l2) = decode_char(b, j);
            match cjk_class(c2) {
                CjkClass::Han => j += l2,
                // Ext-B and friends are also \p{Han} but unknown to the
                // table — the run might continue, so defer.
                CjkClass::Other => return CjkStart::Defer,
                _ => break,
            }
        }
        return CjkStart::Piece(j);
    }
    match cls {
        // a letter with no leading char
        CjkClass::Han | CjkClass::Caseless | CjkClass::Upper | CjkClass::Lower => {
            CjkStart::Letters(i)
        }
        // 、 or 　 as the leading char `[^\r\n\p{L}\p{N}]` when a word
        // follows; otherwise 、 falls to the punct rule, 　 to whitespace.
        CjkClass::Punct | CjkClass::Ws => {
            let j = i + len;
            let follows_word = j < n && {
                let (k1, _) = o200k_letter_kind::<HAN_APART>(b, j);
                matches!(k1, LetterKind::Upper | LetterKind::Lower | LetterKind::Both)
            };
            if follows_word {
                CjkStart::Letters(j)
            } else if cls == CjkClass::Ws {
                CjkStart::Defer
            } else {
                CjkStart::Punct
            }
        }
        CjkClass::Num | CjkClass::Other => CjkStart::Defer,
    }
}

/// Fast-path pre-tokenizer for the case-splitting patterns: o200k, Mistral's
/// Tekken, MiniMax and Kimi.
///
/// The letter rules differ from cl100k: both split on case
/// (`[\p{Lu}…]*[\p{Ll}…]+` then `[\p{Lu}…]+[\p{Ll}…]*`, CamelCase-aware),
/// with the caseless `Lo`/`Lm` letters (Han, kana, hangul) a member of both
/// classes — see [`o200k_letter_kind`].
///
/// The variants differ in places passed in by the caller: o200k/MiniMax attach
/// an optional contraction suffix to the word and use `\p{N}{1,3}`; Tekken has
/// no contraction rule and uses `\p{N}`; Kimi (`HAN_APART`) tries a dedicated
/// `[\p{Han}]+` branch first and excludes Han from both letter classes.
#[inline(always)]
fn o200k_like_ascii_next<
    const CONTRACTIONS: bool,
    const MAX_DIGITS: usize,
    const SLASH_TAIL: bool,
    const HAN_APART: bool,
>(
    b: &[u8],
    i: usize,
) -> Option<(usize, usize)> {
    let n = b.len();
    if i >= n {
        return None;
    }
    let c0 = b[i];
    if c0 >= 0x80 {
        return found(o200k_cjk_next::<
            CONTRACTIONS,
            MAX_DIGITS,
            SLASH_TAIL,
            HAN_APART,
        >(b, i));
    }

    // Determine the letter start `p`: either c0 itself (a letter), or one
    // leading non-CRLF non-alnum char followed by an ASCII letter.
    let p = if c0.is_ascii_alphabetic() {
        i
    } else if is_ascii_lead(c0) {
        // eligible leading char (punct/space). The word rules apply only if a
        // letter follows; otherwise it's a digit/punct/ws piece.
        match b.get(i + 1) {
            Some(&c1) if c1 < 0x80 && c1.is_ascii_alphabetic() => i + 1,
            Some(&c1) if c1 >= 0x80 => {
                return found(o200k_cjk_after_lead::<
                    CONTRACTIONS,
                    MAX_DIGITS,
                    SLASH_TAIL,
                    HAN_APART,
                >(b, i));
            }
            _ => return ascii_num_punct::<MAX_DIGITS, SLASH_TAIL>(b, i),
        }
    } else {
        // digit, or \r\n
        return ascii_num_punct::<MAX_DIGITS, SLASH_TAIL>(b, i);
    };

    // context-loader patch: a word whose first letter is lowercase (most
    // words) is rule A's `[a-z]+` from there: no uppercase run to scan.
    let mut q = p;
    if b[p].is_ascii_lowercase() {
        let r = lowercase_run_end(b, p + 1);
        if r < n && b[r] >= 0x80 {
            return found(o200k_word_mixed::<CONTRACTIONS, HAN_APART>(b, i, p));
        }
        let mut end = r;
        if CONTRACTIONS
            && end < n
            && b[end] == b'\''
            && let Some(len) = match_contraction(b, end)
        {
            end += len;
        }
        return Some((i, end));
    }

    // context-loader patch: a word that starts uppercase and whose letters end
    // within 8 bytes of `p`, cut from one load without a branch per byte (PATCH.md section 17).
    if let Some(end) = short_cased_word_end(b, p) {
        let mut end = end;
        if CONTRACTIONS
            && b[end] == b'\''
            && let Some(len) = match_contraction(b, end)
        {
            end += len;
        }
        return Some((i, end));
    }

    // Scan the uppercase run from `p`; a non-ASCII byte at any decision point
    // hands the whole word over to the CJK-aware cold scanner.
    while q < n && b[q] < 0x80 && b[q].is_ascii_uppercase() {
        q += 1;
    }
    if q < n && b[q] >= 0x80 {
        return found(o200k_word_mixed::<CONTRACTIONS, HAN_APART>(b, i, p));
    }

    let letters_end = if q > p {
        // started with uppercase(s)
        if q < n && b[q].is_ascii_lowercase() {
            // Rule A: [A-Z]*[a-z]+  (greedy uppercase, then lowercase run)
            let r = lowercase_run_end(b, q);
            if r < n && b[r] >= 0x80 {
                return found(o200k_word_mixed::<CONTRACTIONS, HAN_APART>(b, i, p));
            }
            r
        } else {
            // Rule B: [A-Z]+  (no trailing lowercase)
            q
        }
    } else {
        // b[p] is lowercase (it's a letter but not uppercase): Rule A lowercase+
        let r = lowercase_run_end(b, p);
        if r < n && b[r] >= 0x80 {
            return found(o200k_word_mixed::<CONTRACTIONS, HAN_APART>(b, i, p));
        }
        r
    };

    // Optional contraction suffix attached to the word: (?i:'s|'t|…)?
    // Tekken has no contraction rule at all, so it never extends the word here.
    let mut end = letters_end;
    if CONTRACTIONS
        && end < n
        && b[end] == b'\''
        && let Some(len) = match_contraction(b, end)
    {
        end += len;
    }
    Some((i, end))
}

/// context-loader patch (PATCH.md section 17): the end of the letters of an
/// o200k-family word whose first letter is the ASCII letter at `p`, when the
/// 8 bytes from `p` decide it: `Some(e)` with `b[e]` an ASCII byte that is not
/// a letter of the run, or `None` (fewer than 8 bytes left, the run reaches
/// the 8th byte, or a non-ASCII byte ends it: the caller's scan decides).
///
/// Over ASCII the two word rules `[U]*[L]+` and `[U]+[L]*` end at the same
/// place: the uppercase run from `p`, then the lowercase run after it (empty
/// for rule B: an ASCII uppercase letter cannot be given back to `[L]+`). So
/// the end is the first byte after the uppercase prefix that is not
/// lowercase, found from two class masks and one trailing-zero count. The
/// byte scan it replaces branched on the first letter's case and on each
/// uppercase byte; in base64 (runs of random case) those exits mispredicted
/// about once per piece.
#[inline(always)]
fn short_cased_word_end(b: &[u8], p: usize) -> Option<usize> {
    let v = u64::from_le_bytes(b.get(p..p + 8)?.try_into().unwrap());
    let upper = bytes_in(v, b'A', b'Z') & !v;
    let not_lower = !(bytes_in(v, b'a', b'z') & !v) & HIGH;
    let not_upper = !upper & HIGH;
    // Every bit below the first byte that is not uppercase (all bits when the
    // 8 bytes are): those bytes are the uppercase prefix.
    let prefix = not_upper.wrapping_sub(1) & !not_upper;
    let stop = not_lower & !prefix;
    if stop == 0 {
        return None;
    }
    let e = (stop.trailing_zeros() / 8) as usize;
    // The stop byte's own high bit: a non-ASCII character may continue the
    // word (`\p{M}`, `\p{Lo}`…).
    if (v >> (8 * e)) & 0x80 != 0 {
        return None;
    }
    Some(p + e)
}

/// context-loader patch: the ends of runs of one ASCII class, 8 bytes per step.
/// A scanner's byte loop over a run mispredicted its exit once per run (each
/// word, each indentation): the costliest branches of counting code. Each
/// `*_run_end` returns the first byte at or after `from` outside its class.
/// Uppercase and punctuation runs stay byte loops: in code they are one or two
/// bytes long, and read this way they counted the bench tree ~10 % slower.
#[inline(always)]
fn lowercase_run_end(b: &[u8], from: usize) -> usize {
    run_end(
        b,
        from,
        |v| bytes_in(v, b'a', b'z') & !v,
        |c| c.is_ascii_lowercase(),
    )
}

/// ASCII letters of either case: cl100k's `\p{L}+` over ASCII.
#[inline(always)]
fn letter_run_end(b: &[u8], from: usize) -> usize {
    run_end(
        b,
        from,
        |v| bytes_in(v | CASE, b'a', b'z') & !v,
        |c| c.is_ascii_alphabetic(),
    )
}

/// Spaces only (b' '): the indentation that starts nearly every line of code.
#[inline(always)]
fn space_run_end(b: &[u8], from: usize) -> usize {
    run_end(b, from, |v| bytes_equal(v, b' '), |c| c == b' ')
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;
const LOW7: u64 = !HIGH;
/// The bit that tells an ASCII letter's cases apart.
const CASE: u64 = 0x2020_2020_2020_2020;

/// The end of the run from `from` of bytes in a class: `class` maps 8 bytes
/// (little-endian) to the high bit of each byte in it, `byte` decides one byte
/// (the last 7).
#[inline(always)]
fn run_end(b: &[u8], from: usize, class: impl Fn(u64) -> u64, byte: impl Fn(u8) -> bool) -> usize {
    let mut r = from;
    while let Some(chunk) = b.get(r..r + 8) {
        let other = !class(u64::from_le_bytes(chunk.try_into().unwrap())) & HIGH;
        if other != 0 {
            return r + (other.trailing_zeros() / 8) as usize;
        }
        r += 8;
    }
    while r < b.len() && byte(b[r]) {
        r += 1;
    }
    r
}

/// The high bit of each byte of `v` whose low 7 bits lie in `lo..=hi` (`hi` <
/// 0x7F): with each byte's high bit set, subtracting a bound borrows from no
/// other byte, and the high bit stays set iff the byte is at least the bound.
/// Callers mask out bytes with the high bit set.
#[inline(always)]
fn bytes_in(v: u64, lo: u8, hi: u8) -> u64 {
    let set = v | HIGH;
    let at_least_lo = set.wrapping_sub(ONES * lo as u64);
    let above_hi = set.wrapping_sub(ONES * (hi as u64 + 1));
    at_least_lo & !above_hi & HIGH
}

/// The high bit of each byte of `v` equal to `c` (the sum of two 7-bit values
/// carries into no other byte).
#[inline(always)]
fn bytes_equal(v: u64, c: u8) -> u64 {
    let x = v ^ (ONES * c as u64);
    !((x & LOW7).wrapping_add(LOW7) | x) & HIGH
}

/// o200k-family piece starting on a non-ASCII char, out of line.
/// context-loader patch: the piece as a register pair, `(0, 0)` for none (see [`found`]).
#[cold]
#[inline(never)]
fn o200k_cjk_next<
    const CONTRACTIONS: bool,
    const MAX_DIGITS: usize,
    const SLASH_TAIL: bool,
    const HAN_APART: bool,
>(
    b: &[u8],
    i: usize,
) -> (usize, usize) {
    o200k_cjk_next_found::<CONTRACTIONS, MAX_DIGITS, SLASH_TAIL, HAN_APART>(b, i).unwrap_or((0, 0))
}

#[inline(always)]
fn o200k_cjk_next_found<
    const CONTRACTIONS: bool,
    const MAX_DIGITS: usize,
    const SLASH_TAIL: bool,
    const HAN_APART: bool,
>(
    b: &[u8],
    i: usize,
) -> Option<(usize, usize)> {
    match o200k_cjk_start::<HAN_APART>(b, i) {
        CjkStart::Piece(e) => Some((i, e)),
        CjkStart::Defer => None,
        CjkStart::Punct => ascii_num_punct::<MAX_DIGITS, SLASH_TAIL>(b, i),
        CjkStart::Letters(p) => found(o200k_word_mixed::<CONTRACTIONS, HAN_APART>(b, i, p)),
    }
}

/// o200k-family: an eligible ASCII leading char at `i` with a non-ASCII char
/// after it. The word rules if that char is a word member; otherwise the
/// digit/punct rules via [`ascii_num_punct`].
/// context-loader patch: the piece as a register pair, `(0, 0)` for none (see [`found`]).
#[cold]
#[inline(never)]
fn o200k_cjk_after_lead<
    const CONTRACTIONS: bool,
    const MAX_DIGITS: usize,
    const SLASH_TAIL: bool,
    const HAN_APART: bool,
>(
    b: &[u8],
    i: usize,
) -> (usize, usize) {
    o200k_cjk_after_lead_found::<CONTRACTIONS, MAX_DIGITS, SLASH_TAIL, HAN_APART>(b, i)
        .unwrap_or((0, 0))
}

#[inline(always)]
fn o200k_cjk_after_lead_found<
    const CONTRACTIONS: bool,
    const MAX_DIGITS: usize,
    const SLASH_TAIL: bool,
    const HAN_APART: bool,
>(
    b: &[u8],
    i: usize,
) -> Option<(usize, usize)> {
    // context-loader patch: a Hangul syllable after the lead, without the table.
    if hangul_syllable_at(b, i + 1)
        || matches!(
            o200k_letter_kind::<HAN_APART>(b, i + 1).0,
            LetterKind::Upper | LetterKind::Lower | LetterKind::Both
        )
    {
        return found(o200k_word_mixed::<CONTRACTIONS, HAN_APART>(b, i, i + 1));
    }
    ascii_num_punct::<MAX_DIGITS, SLASH_TAIL>(b, i)
}

/// The o200k-family word scan over mixed ASCII/CJK letters, out of line. The
/// piece starts at `i`, its letters at `p`.
///
/// The upper-ish run `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*` takes Upper and Both
/// members. `last_both_end` emulates rule A's backtracking: when the run is
/// followed by a non-letter, `[U]*[L]+` hands characters back until `[L]+` can
/// take one — and the only run members `[L]+` can take are Both-class chars,
/// so the match ends exactly after the run's last Both-class char (or the rule
/// fails and rule B keeps the whole run).
/// context-loader patch: the piece as a register pair, `(0, 0)` for none (see [`found`]).
#[cold]
#[inline(never)]
fn o200k_word_mixed<const CONTRACTIONS: bool, const HAN_APART: bool>(
    b: &[u8],
    i: usize,
    p: usize,
) -> (usize, usize) {
    o200k_word_mixed_found::<CONTRACTIONS, HAN_APART>(b, i, p).unwrap_or((0, 0))
}

#[inline(always)]
fn o200k_word_mixed_found<const CONTRACTIONS: bool, const HAN_APART: bool>(
    b: &[u8],
    i: usize,
    p: usize,
) -> Option<(usize, usize)> {
    let n = b.len();
    let mut q = p;
    let mut last_both_end: Option<usize> = None;
    while q < n {
        if hangul_syllable_at(b, q) {
            q += 3;
            last_both_end = Some(q);
            continue;
        }
        let (kind, len) = o200k_letter_kind::<HAN_APART>(b, q);
        match kind {
            LetterKind::Upper => q += len,
            LetterKind::Both => {
                q += len;
                last_both_end = Some(q);
            }
            LetterKind::Lower | LetterKind::End => break,
            LetterKind::Defer => return None,
        }
    }

    let next_kind = if q < n {
        o200k_letter_kind::<HAN_APART>(b, q).0
    } else {
        LetterKind::End
    };
    let letters_end = if q > p {
        match next_kind {
            // Rule A: greedy upper part, then the lower-ish run
            LetterKind::Lower => scan_lower_run::<HAN_APART>(b, q)?,
            // Rule A via backtracking if the run holds a Both char, else rule B
            LetterKind::End => last_both_end.unwrap_or(q),
            _ => return None,
        }
    } else {
        // no upper part: p is lower-ish, rule A with `[U]*` empty
        scan_lower_run::<HAN_APART>(b, p)?
    };

    // Optional contraction suffix attached to the word: (?i:'s|'t|…)?
    let mut end = letters_end;
    if CONTRACTIONS
        && end < n
        && b[end] == b'\''
        && let Some(len) = match_contraction(b, end)
    {
        end += len;
    }
    Some((i, end))
}

/// The lower-ish run `[\p{Ll}\p{Lm}\p{Lo}\p{M}]+`: Lower and Both members.
/// Greedy with no backtracking (it is the branch's last letter element).
#[inline]
fn scan_lower_run<const HAN_APART: bool>(b: &[u8], mut r: usize) -> Option<usize> {
    let n = b.len();
    while r < n {
        if hangul_syllable_at(b, r) {
            r += 3;
            continue;
        }
        let (kind, len) = o200k_letter_kind::<HAN_APART>(b, r);
        match kind {
            LetterKind::Lower | LetterKind::Both => r += len,
            LetterKind::Upper | LetterKind::End => return Some(r),
            LetterKind::Defer => return None,
        }
    }
    Some(r)
}

/// ASCII fast-path pre-tokenizer for the deepseek_v3 pattern.
///
/// Pattern (leftmost-first): `\p{N}{1,3}` | CJK/kana+ | `[ascii-punct][A-Za-z]+`
/// | `[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+` | ` ?[\p{P}\p{S}]+[\r\n]*` | `\s*[\r\n]+`
/// | `\s+` | `[\s\S]`. ASCII `[\p{P}\p{S}]` is exactly `u8::is_ascii_punctuation()`.
///
/// Conservative: resolves digits, letters, punct+letters, punct runs, and the
/// common space-led letter/punct pieces; defers to the regex on any non-ASCII
/// byte, whitespace/control start, or catch-all case (deferral is always safe).
#[inline]
fn deepseek_ascii_next(b: &[u8], i: usize) -> Option<(usize, usize)> {
    let n = b.len();
    if i >= n {
        return None;
    }
    let c0 = b[i];
    if c0 >= 0x80 {
        // Rule 2: `[一-龥\x{3040}-\x{309F}\x{30A0}-\x{30FF}]+`. Unlike the
        // category-based rules, these are exact ranges, so membership is
        // certain in both directions and the run never needs to defer.
        let (ch, len) = decode_char(b, i);
        if is_deepseek_cjk(ch) {
            let mut j = i + len;
            while j < n && b[j] >= 0x80 {
                let (c2, l2) = decode_char(b, j);
                if is_deepseek_cjk(c2) {
                    j += l2;
                } else {
                    break;
                }
            }
            return Some((i, j));
        }
        return None; // other non-ASCII → defer
    }

    // Rule 1: \p{N}{1,3}
    if c0.is_ascii_digit() {
        let mut j = i;
        let mut k = 0;
        while j < n && k < 3 && b[j].is_ascii_digit() {
            j += 1;
            k += 1;
        }
        if k < 3 && j < n && b[j] >= 0x80 {
            return None; // a Unicode \p{N} could extend the run
        }
        return Some((i, j));
    }

    // Rule 3: [ascii-punct][A-Za-z]+ (one punct glued to a letter run).
    // Rule 5: ` ?[\p{P}\p{S}]+[\r\n]*` (here with no leading space — c0 is punct).
    if c0.is_ascii_punctuation() {
        if let Some(&c1) = b.get(i + 1)
            && c1 < 0x80
            && c1.is_ascii_alphabetic()
        {
            // Rule 3 — note its letters are [A-Za-z], so a non-ASCII byte simply
            // ends the run (no defer needed).
            let mut j = i + 1;
            while j < n && b[j].is_ascii_alphabetic() {
                j += 1;
            }
            return Some((i, j));
        }
        // Rule 5: punctuation/symbol run, then trailing newlines.
        let mut k = i;
        while k < n && b[k] < 0x80 && b[k].is_ascii_punctuation() {
            k += 1;
        }
        if k < n && b[k] >= 0x80 {
            return None; // a Unicode \p{P}/\p{S} could extend the run
        }
        k = take_line_tail::<false>(b, k);
        return Some((i, k));
    }

    // Rule 4 (no leading char): [\p{L}\p{M}]+ — for ASCII, a letter run.
    if c0.is_ascii_alphabetic() {
        let mut j = i;
        while j < n && b[j].is_ascii_alphabetic() {
            j += 1;
        }
        if j < n && b[j] >= 0x80 {
            return None; // a Unicode letter/mark could extend the run
        }
        return Some((i, j));
    }

    // Leading space: Rule 4 (space + letters) or Rule 5 (space + punct run).
    if c0 == b' ' {
        match b.get(i + 1) {
            Some(&c1) if c1 >= 0x80 => return None, // unicode letter/punct ambiguous
            Some(&c1) if c1.is_ascii_alphabetic() => {
                let mut j = i + 1;
                while j < n && b[j].is_ascii_alphabetic() {
                    j += 1;
                }
                if j < n && b[j] >= 0x80 {
                    return None;
                }
                return Some((i, j));
            }
            Some(&c1) if c1.is_ascii_punctuation() => {
                let mut k = i + 1;
                while k < n && b[k] < 0x80 && b[k].is_ascii_punctuation() {
                    k += 1;
                }
                if k < n && b[k] >= 0x80 {
                    return None;
                }
                k = take_line_tail::<false>(b, k);
                return Some((i, k));
            }
            // space followed by digit/space/eof → whitespace rules → defer
            _ => return None,
        }
    }

    // other whitespace, control chars, catch-all → defer to regex
    None
}

/// Match a contraction at `b[i] == '\''`, returning its byte length (2 or 3) or
/// `None`. Case-insensitive, matching `(?i:'s|'t|'re|'ve|'m|'ll|'d)`. Shared by
/// both patterns (standalone alternative in cl100k, word suffix in o200k).
/// context-loader patch (PATCH.md section 27): Unicode case folding makes `ſ`
/// (U+017F, bytes C5 BF) an `s`: `'ſ` is `'s` to the regex, and the o200k
/// scanner cut `the'ſ` as `the` `'ſ` where the regex keeps one piece.
#[inline]
fn match_contraction(b: &[u8], i: usize) -> Option<usize> {
    let c1 = b.get(i + 1).copied()?.to_ascii_lowercase();
    match c1 {
        b's' | b't' | b'm' | b'd' => Some(2),
        0xC5 if b.get(i + 2) == Some(&0xBF) => Some(3),
        b'r' if b.get(i + 2).map(|c| c.to_ascii_lowercase()) == Some(b'e') => Some(3),
        b'v' if b.get(i + 2).map(|c| c.to_ascii_lowercase()) == Some(b'e') => Some(3),
        b'l' if b.get(i + 2).map(|c| c.to_ascii_lowercase()) == Some(b'l') => Some(3),
        _ => None,
    }
}

/// Emulates `\s+(?!\S)|\s+` from original tiktoken patterns.
/// Pure byte-level fast path for ASCII whitespace, char-level fallback for Unicode.
///
/// `ws` gates the emulation: only the generic whitespace branch carries the
/// lookahead. For newline-branch patterns a match ending in `\r`/`\n` came from
/// a rule that has none (`\s*[\r\n]+`, or the `[\r\n]*` tail of the punctuation
/// rule) and is returned untouched. For
/// [`WhitespaceRules::NewlineFirstSplitOnNumCjk`] a following digit or CJK char
/// is an upstream split boundary and counts as end-of-input.
#[inline]
fn adjust_whitespace_end(bytes: &[u8], start: usize, end: usize, ws: WhitespaceRules) -> usize {
    if end - start <= 1 || end >= bytes.len() {
        return end;
    }

    // Newline-branch patterns: a match ending in \r/\n never carries the
    // lookahead, so it keeps its full extent (canonical "\n\n" / "\r\n" tokens).
    if ws != WhitespaceRules::Generic && matches!(bytes[end - 1], b'\r' | b'\n') {
        return end;
    }

    // fast reject: if first byte is printable ASCII (0x21..0x7E), not whitespace
    let first = bytes[start];
    if first > 0x20 && first < 0x7F {
        return end;
    }

    // deepseek_v3: an upstream split boundary right after the run terminates the
    // slice the lookahead would have seen, so the run keeps its full extent.
    if ws == WhitespaceRules::NewlineFirstSplitOnNumCjk
        && let Some(next) = bytes[end..].iter().next()
        && (next.is_ascii_digit() || *next >= 0x80)
        // context-loader patch: decode the one char after the run; validating the
        // whole rest of the text here was quadratic in the number of such runs.
        && let Some(c) = char::from_u32(decode_char(bytes, end).0)
        && is_deepseek_split_boundary(c)
    {
        return end;
    }

    // ASCII fast path
    // safety: end < bytes.len() is guaranteed by the early return above
    let piece = &bytes[start..end];
    if piece.iter().all(|&b| is_ascii_ws(b)) {
        let next = bytes[end];
        if is_ascii_ws(next) {
            return end;
        }
        return end - 1;
    }

    // unicode slow path
    // safety: regex::Match boundaries are always valid UTF-8 since input is &str
    let matched = std::str::from_utf8(&bytes[start..end]).unwrap();
    if !matched.chars().all(|c| c.is_whitespace()) {
        return end;
    }
    // context-loader patch: decode the one char after the run (`end` is a char
    // boundary before the end of the text); validating the whole rest of the text
    // here was quadratic in the number of Unicode whitespace runs.
    let Some(next_char) = char::from_u32(decode_char(bytes, end).0) else {
        return end;
    };
    if next_char.is_whitespace() {
        return end;
    }
    let last_len = matched.chars().next_back().unwrap().len_utf8();
    // don't trim if it would make the piece empty (single multi-byte whitespace char)
    if end - last_len <= start {
        return end;
    }
    end - last_len
}

/// context-loader patch: the piece starting at `i` when it is pure ASCII
/// whitespace, under the whitespace rules cl100k_base and o200k_base share
/// (`\s*[\r\n]+|\s+(?!\S)|\s+`, after the word and punctuation rules):
///
/// - a run holding a newline ends just after its last `\r` or `\n`;
/// - otherwise a run of two or more followed by a non-space leaves its last
///   character to the next piece (the lookahead), a single character or a run
///   that ends the text is whole.
///
/// `None` (the regex decides) when the whitespace starts a word or punctuation
/// piece instead (a space or tab before a letter, a space before punctuation),
/// or when a non-ASCII character follows the run: it may be Unicode whitespace
/// that continues it, or a letter a leading space attaches to.
// context-loader patch: always inlined (into each count loop); as a plain
// `#[inline]` hint, the Hangul tests of section 11 tipped it out of line, and
// Korean counted ~15 % slower for a call per whitespace piece.
#[inline(always)]
fn ascii_whitespace_next(b: &[u8], i: usize) -> Option<(usize, usize)> {
    let n = b.len();
    let c0 = *b.get(i)?;
    if !is_ascii_ws(c0) {
        return None;
    }
    if let Some(&c1) = b.get(i + 1) {
        let newline = c0 == b'\r' || c0 == b'\n';
        // context-loader patch: a Hangul syllable is a letter like an ASCII one
        // (neither whitespace nor punctuation): after a newline, the run ends as
        // before one (section 11 of PATCH.md).
        let letter = if c1 >= 0x80 {
            if !hangul_syllable_at(b, i + 1) {
                return None;
            }
            true
        } else {
            c1.is_ascii_alphabetic()
        };
        if (!newline && letter) || (c0 == b' ' && is_ascii_punct(c1)) {
            return None;
        }
    }
    let mut j = i;
    let mut last_newline = None;
    // context-loader patch: spaces (indentation, most of a whitespace run in
    // code) 8 bytes per step; the byte loop takes the rest of the run.
    while {
        j = space_run_end(b, j);
        j < n && is_ascii_ws(b[j])
    } {
        if b[j] == b'\r' || b[j] == b'\n' {
            last_newline = Some(j);
        }
        j += 1;
    }
    // context-loader patch: a Hangul syllable after the run is a non-space, as
    // an ASCII letter is; any other non-ASCII character may be Unicode
    // whitespace that continues the run, or punctuation.
    if j < n && b[j] >= 0x80 && !hangul_syllable_at(b, j) {
        return None;
    }
    if let Some(last) = last_newline {
        return Some((i, last + 1));
    }
    if j == n || j - i == 1 {
        return Some((i, j));
    }
    Some((i, j - 1))
}

#[inline(always)]
const fn is_ascii_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0B | 0x0C)
}

/// context-loader patch: for each byte, whether it is ASCII and in
/// `[^\s\p{L}\p{N}]` (the punctuation rule's class over ASCII): one load per
/// byte of a punctuation run instead of four tests (code is full of them).
static ASCII_PUNCT: [bool; 256] = {
    let mut table = [false; 256];
    let mut c = 0;
    while c < 0x80 {
        let b = c as u8;
        table[c] = !is_ascii_ws(b) && !b.is_ascii_alphabetic() && !b.is_ascii_digit();
        c += 1;
    }
    table
};

/// `b` is ASCII and neither whitespace, a letter nor a digit.
#[inline(always)]
fn is_ascii_punct(b: u8) -> bool {
    ASCII_PUNCT[b as usize]
}

/// context-loader patch: for each byte, whether it is ASCII and in
/// `[^\r\n\p{L}\p{N}]` (the class of the character a word may start with
/// before its letters): one load instead of four tests at most pieces' start.
static ASCII_LEAD: [bool; 256] = {
    let mut table = [false; 256];
    let mut c = 0;
    while c < 0x80 {
        let b = c as u8;
        table[c] = b != b'\r' && b != b'\n' && !b.is_ascii_alphabetic() && !b.is_ascii_digit();
        c += 1;
    }
    table
};

/// `b` is ASCII and neither `\r`, `\n`, a letter nor a digit.
#[inline(always)]
fn is_ascii_lead(b: u8) -> bool {
    ASCII_LEAD[b as usize]
}

#[cfg(test)]
mod tests {
    use super::*;
    use regex::Regex;

    #[test]
    fn hangul_syllable_at_is_the_syllable_block_and_the_table_agrees() {
        // Every scalar whose UTF-8 lead byte is E0..=EF (U+0800..=U+FFFF), alone,
        // at the end of a text and with bytes after it: the fast test says yes
        // exactly for U+AC00..=U+D7A3, and the table calls all of those letters.
        for c in (0x800u32..=0xFFFF).filter_map(char::from_u32) {
            let syllable = (0xAC00..=0xD7A3).contains(&(c as u32));
            for text in [
                format!("{c}"),
                format!("a{c}"),
                format!("{c}b"),
                format!("{c}{c}"),
            ] {
                let at = text.find(c).unwrap();
                assert_eq!(
                    hangul_syllable_at(text.as_bytes(), at),
                    syllable,
                    "{c:?} in {text:?}"
                );
            }
            if syllable {
                assert!(cjk_class(c as u32) == CjkClass::Caseless, "{c:?}");
            }
        }
        for text in [
            "a",
            "\u{7f}",
            "\u{80}",
            "\u{7ff}",
            "\u{10000}",
            "\u{10FFFF}",
        ] {
            assert!(!hangul_syllable_at(text.as_bytes(), 0), "{text:?}");
        }
    }

    #[test]
    fn every_run_end_matches_the_byte_loop() {
        type RunEnd = fn(&[u8], usize) -> usize;
        let classes: [(&str, RunEnd, fn(u8) -> bool); 3] = [
            ("lowercase", lowercase_run_end, |c| c.is_ascii_lowercase()),
            ("letter", letter_run_end, |c| c.is_ascii_alphabetic()),
            ("space", space_run_end, |c| c == b' '),
        ];
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for (name, run_end, in_class) in classes {
            let members: Vec<u8> = (0..=255).filter(|&c| in_class(c)).collect();
            for len in 0..40 {
                for _ in 0..200 {
                    // Mostly members, so runs cross the 8-byte steps; else any
                    // byte (each bound's neighbours, high-bit bytes).
                    let text: Vec<u8> = (0..len)
                        .map(|_| match next() {
                            r if r % 4 != 0 => members[(r >> 8) as usize % members.len()],
                            r => (r >> 8) as u8,
                        })
                        .collect();
                    for from in 0..=len {
                        let mut end = from;
                        while end < len && in_class(text[end]) {
                            end += 1;
                        }
                        assert_eq!(run_end(&text, from), end, "{name}: {text:?} from {from}");
                    }
                }
            }
        }
    }

    /// PATCH.md section 17: `short_cased_word_end` against the byte scan it
    /// stands for (the uppercase run, then the lowercase run, within 8 bytes,
    /// ended by an ASCII byte), for every sequence of 9 byte classes
    /// (uppercase, lowercase, an ASCII non-letter, a high-bit byte, the quote),
    /// each position's byte drawn from its class: half the time one of its
    /// edges (`A` `Z`, `a` `z`, the bounds' neighbours `@` `[` `` ` `` `{`,
    /// bytes whose low 7 bits are letters: 0xC1 0xDA 0xE1 0xFA), else any.
    #[test]
    fn short_cased_words_end_where_the_byte_scan_ends_them() {
        let upper: Vec<u8> = (b'A'..=b'Z').collect();
        let lower: Vec<u8> = (b'a'..=b'z').collect();
        let other: Vec<u8> = (0u8..0x80).filter(|c| !c.is_ascii_alphabetic()).collect();
        let high: Vec<u8> = (0x80u8..=0xFF).collect();
        let quote = vec![b'\''];
        let classes: [(&[u8], &[u8]); 5] = [
            (&upper, b"AZ"),
            (&lower, b"az"),
            (&other, b"@[`{"),
            (&high, &[0xC1, 0xDA, 0xE1, 0xFA]),
            (&quote, b"'"),
        ];
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut text = [0u8; 9];
        for code in 0..5usize.pow(9) {
            let mut c = code;
            for byte in text.iter_mut() {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                let (members, edges) = classes[c % 5];
                *byte = if state % 2 == 0 {
                    edges[(state >> 8) as usize % edges.len()]
                } else {
                    members[(state >> 8) as usize % members.len()]
                };
                c /= 5;
            }
            for len in [8, 9] {
                let t = &text[..len];
                if !t[0].is_ascii_alphabetic() {
                    continue;
                }
                let mut e = 0;
                while e < 8 && t[e].is_ascii_uppercase() {
                    e += 1;
                }
                while e < 8 && t[e].is_ascii_lowercase() {
                    e += 1;
                }
                let expected = (e < 8 && t[e] < 0x80).then_some(e);
                assert_eq!(short_cased_word_end(t, 0), expected, "{t:?}");
                assert_eq!(short_cased_word_end(&t[..7], 0), None, "{t:?}");
            }
        }
    }

    fn collect_matches(pt: &dyn PreTokenizer, text: &str) -> Vec<(usize, usize)> {
        let mut result = vec![];
        let mut pos = 0;
        while let Some((start, end)) = pt.next_match(text, pos) {
            result.push((start, end));
            pos = end;
        }
        result
    }

    // Single source of truth: the real production patterns. Importing them here
    // (rather than copying) guarantees the fast-path equivalence proptests below
    // validate against exactly the patterns used in production.
    use crate::encoding::{
        CL100K_PATTERN, DEEPSEEK_V3_PATTERN, KIMI_PATTERN, MISTRAL_V3_PATTERN, O200K_PATTERN,
        P50K_PATTERN, QWEN2_PATTERN,
    };

    /// A production pattern bundled with the [`FastPath`] and
    /// [`WhitespaceRules`] `encoding.rs` pairs it with. Keeping the three
    /// together stops tests from drifting to a combination that never ships.
    #[derive(Clone, Copy)]
    struct Spec {
        pattern: &'static str,
        fast: FastPath,
        ws: WhitespaceRules,
    }

    const CL100K: Spec = Spec {
        pattern: CL100K_PATTERN,
        fast: FastPath::Cl100k,
        ws: WhitespaceRules::NewlineFirst,
    };
    const O200K: Spec = Spec {
        pattern: O200K_PATTERN,
        fast: FastPath::O200k,
        ws: WhitespaceRules::NewlineFirst,
    };
    const QWEN2: Spec = Spec {
        pattern: QWEN2_PATTERN,
        fast: FastPath::Qwen2,
        ws: WhitespaceRules::NewlineFirst,
    };
    const DEEPSEEK: Spec = Spec {
        pattern: DEEPSEEK_V3_PATTERN,
        fast: FastPath::Deepseek,
        ws: WhitespaceRules::NewlineFirst,
    };
    const MISTRAL: Spec = Spec {
        pattern: MISTRAL_V3_PATTERN,
        fast: FastPath::Tekken,
        ws: WhitespaceRules::NewlineFirst,
    };
    const KIMI: Spec = Spec {
        pattern: KIMI_PATTERN,
        fast: FastPath::Kimi,
        ws: WhitespaceRules::NewlineFirst,
    };
    const P50K: Spec = Spec {
        pattern: P50K_PATTERN,
        fast: FastPath::None,
        ws: WhitespaceRules::Generic,
    };

    impl Spec {
        fn tokenizer(self) -> RegexPreTokenizer {
            RegexPreTokenizer::new(self.pattern, self.fast, self.ws)
        }
    }

    // Reference implementation: pure regex + whitespace adjustment, with no
    // ASCII fast path. The fast paths must be byte-for-byte equivalent to it.
    fn reference_matches(spec: Spec, text: &str) -> Vec<(usize, usize)> {
        let regex = Regex::new(spec.pattern).unwrap();
        let bytes = text.as_bytes();
        let mut result = vec![];
        let mut pos = 0;
        while pos < text.len() {
            let mat = match regex.find_at(text, pos) {
                Some(m) => m,
                None => break,
            };
            let start = mat.start();
            let end = adjust_whitespace_end(bytes, start, mat.end(), spec.ws);
            result.push((start, end));
            pos = end;
        }
        result
    }

    fn assert_fast_matches_reference(spec: Spec, text: &str) {
        let pt = spec.tokenizer();
        assert_eq!(
            reference_matches(spec, text),
            collect_matches(&pt, text),
            "fast/regex mismatch for {text:?}"
        );
    }

    #[test]
    fn test_cl100k_english() {
        assert_fast_matches_reference(CL100K, "Hello, world!");
    }

    #[test]
    fn test_cl100k_cjk() {
        assert_fast_matches_reference(CL100K, "你好世界");
    }

    #[test]
    fn test_cl100k_contractions() {
        assert_fast_matches_reference(CL100K, "I'm don't they're we've she'll it'd");
    }

    #[test]
    fn test_o200k_english() {
        assert_fast_matches_reference(O200K, "Hello, world! CamelCase mixedScript123");
    }

    #[test]
    fn test_p50k_english() {
        assert_fast_matches_reference(P50K, "Hello world, I'm testing!");
    }

    #[test]
    fn test_empty_input() {
        let pt = CL100K.tokenizer();
        assert_eq!(collect_matches(&pt, ""), vec![]);
    }

    #[test]
    fn test_only_whitespace() {
        assert_fast_matches_reference(CL100K, "   \n  \t  ");
    }

    #[test]
    fn test_emoji() {
        assert_fast_matches_reference(CL100K, "🎉🚀💡");
    }

    #[test]
    fn test_mixed_script() {
        assert_fast_matches_reference(CL100K, "Hello 你好 World 🌍");
    }

    // whitespace adjustment tests (migrated from v2 bpe.rs)

    use WhitespaceRules::{Generic, NewlineFirst};

    #[test]
    fn test_adjust_whitespace_single_byte() {
        assert_eq!(adjust_whitespace_end(b"a b", 0, 1, Generic), 1);
    }

    #[test]
    fn test_adjust_whitespace_at_end_of_input() {
        assert_eq!(adjust_whitespace_end(b"  ", 0, 2, Generic), 2);
    }

    #[test]
    fn test_adjust_whitespace_non_ws_piece() {
        assert_eq!(adjust_whitespace_end(b"hello world", 0, 5, Generic), 5);
    }

    #[test]
    fn test_adjust_whitespace_trim_before_nonws() {
        let bytes = b"  x";
        assert_eq!(adjust_whitespace_end(bytes, 0, 2, Generic), 1);
    }

    #[test]
    fn test_adjust_whitespace_no_trim_before_ws() {
        let bytes = b"   ";
        assert_eq!(adjust_whitespace_end(bytes, 0, 2, Generic), 2);
    }

    #[test]
    fn test_adjust_whitespace_unicode_slow_path() {
        let input = "\u{3000}\u{3000}x";
        let bytes = input.as_bytes();
        assert_eq!(adjust_whitespace_end(bytes, 0, 6, Generic), 3);
    }

    #[test]
    fn test_adjust_whitespace_unicode_followed_by_unicode_ws() {
        let input = "\u{3000}\u{3000}\u{3000}";
        let bytes = input.as_bytes();
        assert_eq!(adjust_whitespace_end(bytes, 0, 6, Generic), 6);
    }

    #[test]
    fn test_adjust_whitespace_single_multibyte_ws_before_nonws() {
        // U+3000 (ideographic space, 3 bytes) followed by 'x'
        // trimming the last char would make the piece empty, so it should NOT trim
        let input = "\u{3000}x";
        let bytes = input.as_bytes();
        // piece is bytes[0..3] (the ideographic space), next char is 'x' (non-ws)
        // without the protection, this would trim to bytes[0..0] which is empty
        assert_eq!(adjust_whitespace_end(bytes, 0, 3, Generic), 3);
    }

    // Newline-branch gating (issue #5): a match ending in \r/\n comes from
    // `\s*[\r\n]+`, which carries no lookahead, so it must keep its full extent.

    #[test]
    fn test_adjust_whitespace_newline_branch_keeps_double_newline() {
        let bytes = b"\n\nx";
        assert_eq!(adjust_whitespace_end(bytes, 0, 2, NewlineFirst), 2);
        // the generic-only patterns (p50k/r50k) still trim — canonical behavior
        assert_eq!(adjust_whitespace_end(bytes, 0, 2, Generic), 1);
    }

    #[test]
    fn test_adjust_whitespace_newline_branch_keeps_crlf() {
        let bytes = b"\r\n@";
        assert_eq!(adjust_whitespace_end(bytes, 0, 2, NewlineFirst), 2);
        assert_eq!(adjust_whitespace_end(bytes, 0, 2, Generic), 1);
    }

    #[test]
    fn test_adjust_whitespace_newline_branch_still_trims_spaces() {
        // no newline at the end → generic `\s+` branch → lookahead applies
        let bytes = b"  x";
        assert_eq!(adjust_whitespace_end(bytes, 0, 2, NewlineFirst), 1);
    }

    #[test]
    fn test_adjust_whitespace_newline_branch_trims_trailing_spaces_after_newline() {
        // "\n  " + "x": the `\s*[\r\n]+` branch stops after "\n", so the piece
        // under adjustment here is the following "  " run, which does trim.
        let bytes = b"\n  x";
        assert_eq!(adjust_whitespace_end(bytes, 1, 3, NewlineFirst), 2);
    }

    // comprehensive comparison: fast path vs pure-regex reference, all patterns
    #[test]
    fn test_all_patterns_match_reference() {
        let texts = vec![
            "Hello, world!",
            "你好世界",
            "fn main() { }",
            "  hello  ",
            "line1\nline2\n",
            "café résumé",
            "100% of $1,000",
            "a@b.com",
            "   \t\n   ",
            "",
            "a",
            "hello world! 你好 🚀 test 123",
            "word\n\nnext",
            "\r\n@rem",
            "a\n\n\nb",
            "a \n\n b",
        ];

        for spec in [CL100K, O200K, QWEN2, DEEPSEEK, MISTRAL, KIMI, P50K] {
            for text in &texts {
                assert_fast_matches_reference(spec, text);
            }
        }
    }

    /// The CJK table's claims, pinned char-by-char against the regex crate's
    /// own Unicode tables over the entire codepoint space. `Other` claims
    /// nothing and needs no check; every other variant is a certainty claim
    /// the fast paths rely on for both run membership *and* run termination.
    /// `ſ` case-folds to `s`, so `'ſ` is a contraction to every pattern with
    /// `(?i:'s|…)`: its own piece in cl100k's family, the end of the word
    /// before it in o200k's (the o200k scanner cut `the'ſ` in two, and the
    /// windows with it: PATCH.md section 27).
    #[test]
    fn long_s_completes_a_contraction_as_the_regex_says() {
        let texts = [
            "a'ſ",
            "the'ſ",
            "ǅ'ſ",
            "é'ſ",
            "x'ſa",
            "'ſ",
            "a'ſ's",
            "A'S",
            "a'\u{17F}",
        ];
        for text in texts {
            for spec in [CL100K, O200K, QWEN2, MISTRAL, KIMI, DEEPSEEK] {
                let pt = spec.tokenizer();
                assert_eq!(
                    collect_matches(&pt, text),
                    reference_matches(spec, text),
                    "{text:?} ({})",
                    spec.pattern
                );
            }
        }
        let o200k = O200K.tokenizer();
        assert_eq!(collect_matches(&o200k, "the'ſ"), [(0, 6)]);
    }

    #[test]
    fn cjk_class_matches_regex_tables() {
        let letter = Regex::new(r"^\p{L}$").unwrap();
        let han = Regex::new(r"^\p{Han}$").unwrap();
        let caseless = Regex::new(r"^[\p{Lo}\p{Lm}]$").unwrap();
        let upper = Regex::new(r"^[\p{Lu}\p{Lt}]$").unwrap();
        // A char that case-folds to an ASCII letter could complete a
        // contraction (`(?i:'s)` takes `'ſ`): never claimed.
        let folds_to_ascii = Regex::new(r"^(?i:[a-z])$").unwrap();
        let mark = Regex::new(r"^\p{M}$").unwrap();
        let lower = Regex::new(r"^\p{Ll}$").unwrap();
        let num = Regex::new(r"^\p{N}$").unwrap();
        let ws = Regex::new(r"^\s$").unwrap();
        let punct = Regex::new(r"^[^\s\p{L}\p{N}]$").unwrap();
        let mut buf = [0u8; 4];
        for cp in 0x80..=0x10FFFF_u32 {
            let Some(c) = char::from_u32(cp) else {
                continue;
            };
            let s: &str = c.encode_utf8(&mut buf);
            match cjk_class(cp) {
                CjkClass::Han => {
                    assert!(
                        han.is_match(s) && caseless.is_match(s),
                        "U+{cp:04X} claimed Han"
                    );
                }
                CjkClass::Caseless => {
                    assert!(
                        caseless.is_match(s) && !han.is_match(s),
                        "U+{cp:04X} claimed caseless letter"
                    );
                }
                CjkClass::Upper => assert!(upper.is_match(s), "U+{cp:04X} claimed Lu or Lt"),
                CjkClass::Lower => assert!(lower.is_match(s), "U+{cp:04X} claimed Ll"),
                CjkClass::Num => assert!(num.is_match(s), "U+{cp:04X} claimed N"),
                CjkClass::Ws => assert!(ws.is_match(s), "U+{cp:04X} claimed whitespace"),
                CjkClass::Punct => {
                    assert!(
                        punct.is_match(s),
                        "U+{cp:04X} claimed [^\\s\\p{{L}}\\p{{N}}]"
                    );
                }
                CjkClass::Other => {}
            }
            if cjk_class(cp) != CjkClass::Other {
                assert!(!folds_to_ascii.is_match(s), "U+{cp:04X} folds to ASCII");
                assert!(!mark.is_match(s), "U+{cp:04X} is a mark");
            }
            // the deepseek ranges are their own rule; letter-hood is irrelevant,
            // but they must at least stay valid chars (surrogates are skipped)
            let _ = is_deepseek_cjk(cp);
            // every claimed letter must also be \p{L}
            if matches!(
                cjk_class(cp),
                CjkClass::Han | CjkClass::Caseless | CjkClass::Upper | CjkClass::Lower
            ) {
                assert!(
                    letter.is_match(s),
                    "U+{cp:04X} claimed letter but is not \\p{{L}}"
                );
            }
        }
    }

    // Hand-picked CJK shapes, including the ones where o200k's case classes
    // interact with caseless letters (the `[U]*[L]+` backtracking cases) and
    // the chars sitting right outside every table range.
    #[test]
    fn test_cjk_pieces_match_reference() {
        let texts = [
            "世界",
            "你好，世界！",
            "、你好",
            "　世界",
            "ハロー・ワールド",
            "世A",
            "世AB",
            "A世",
            "ＡB世A",
            "abc世界",
            "世界abc",
            "カタカナー",
            "パーティー",
            "が",         // precomposed
            "か\u{3099}", // combining dakuten → Other → defer
            "안녕하세요 세계",
            "ｱｲｳｴｵﾞ",
            "ＡＢＣａｂｃ",
            "世's",
            "世界。。。",
            "……你好……",
            "「引用」",
            "（括号）",
            "第１２３号",
            "３．１４",
            "一二三四五六七八九十",
            "〇一二",      // 〇 is \p{N}
            "々仕事",      // 々 is a letter but outside the table → defer
            "\u{20000}好", // Ext-B Han → defer
            "深圳市－广州市",
            "ＦＵＬＬｗｉｄｔｈ",
            "ｶﾞｷﾞｸﾞ",
            "日本語テスト123テスト",
            "。\n、",
            "税込１，０００円",
            "「こんにちは」と言った",
        ];
        for spec in [CL100K, O200K, QWEN2, DEEPSEEK, MISTRAL, KIMI, P50K] {
            for text in &texts {
                assert_fast_matches_reference(spec, text);
            }
        }
    }

    // ASCII fast-path equivalence: the cl100k fast path (now built into
    // RegexPreTokenizer) must produce byte-for-byte identical pieces to the
    // pure-regex reference for ANY input.
    /// How many random cases each property sweep generates.
    ///
    /// The committed `proptest-regressions/` seeds replay before any random
    /// case, so every input that ever failed is still checked at any setting —
    /// what this scales is how much *new* ground a run covers. The default is a
    /// smoke sample so a push is answered in minutes; the full sweep is a
    /// release gate, run with `PROPTEST_CASES=20000` (see the Release section
    /// of the top-level README).
    fn proptest_cases() -> u32 {
        std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(512)
    }

    /// The punctuation table (PATCH.md section 14) is the class test it
    /// replaced, byte for byte.
    #[test]
    fn the_punctuation_table_is_the_class_test() {
        for b in 0..=255u8 {
            let class =
                b < 0x80 && !is_ascii_ws(b) && !b.is_ascii_alphabetic() && !b.is_ascii_digit();
            assert_eq!(is_ascii_punct(b), class, "byte {b:#04x}");
        }
    }

    /// The table of characters a word may start with (PATCH.md section 15)
    /// is the class test it replaced, byte for byte.
    #[test]
    fn the_word_lead_table_is_the_class_test() {
        for b in 0..=255u8 {
            let class = b < 0x80
                && b != b'\r'
                && b != b'\n'
                && !b.is_ascii_alphabetic()
                && !b.is_ascii_digit();
            assert_eq!(is_ascii_lead(b), class, "byte {b:#04x}");
        }
    }

    /// Every ASCII character before a word's letters (PATCH.md section 15:
    /// which may start a word, from a table) and before digits and
    /// punctuation, in each scanner, against the regex.
    #[test]
    fn every_ascii_character_before_a_word_cuts_as_the_regex_cuts_it() {
        for spec in [CL100K, O200K, QWEN2, MISTRAL, KIMI] {
            let pt = spec.tokenizer();
            for c in (0u8..0x80).map(char::from) {
                let text = format!("{c}ab {c}Ab x{c}aB\n{c}AB{c}{c}z {c}1{c}.{c}");
                assert_eq!(
                    collect_matches(&pt, &text),
                    reference_matches(spec, &text),
                    "fast/regex mismatch for {text:?}"
                );
            }
        }
    }

    /// The lowercase-word shortcut (PATCH.md section 13) at its edges, for
    /// each o200k-like scanner, against the regex: contractions in either
    /// case after runs shorter and longer than the 8-byte step, a quote
    /// that starts none, a combining mark or a non-ASCII letter that
    /// continues the word, an uppercase letter that ends it, the text's end.
    #[test]
    fn lowercase_words_cut_as_the_regex_cuts_them() {
        let texts = [
            "it's we'LL don't they'Ve i'M he'D x'y ab'",
            "abcdefghijklmnop's abcdefghijklmnopq'RE abcdefg'll abcdefgh'T",
            "caf\u{e9} cafe\u{301}s abc\u{3099}d abc\u{d55c}d ab\u{1c5}c",
            "fooBar abcdefghiJ abcdefghijklmnopqrsTuv x y z 'abc 'abc's",
            "abc\nabc\r\nabc.abc,abc0abc/abc's\u{2019}s abc",
            "lowercase",
        ];
        for spec in [O200K, MISTRAL, KIMI] {
            let pt = spec.tokenizer();
            for text in texts {
                assert_eq!(
                    collect_matches(&pt, text),
                    reference_matches(spec, text),
                    "fast/regex mismatch for {text:?}"
                );
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(proptest_cases()))]

        #[test]
        fn prop_cl100k_fast_matches_regex(text in ".*") {
            let pt = CL100K.tokenizer();
            let fast = collect_matches(&pt, &text);
            let reference = reference_matches(CL100K, &text);
            proptest::prop_assert_eq!(fast, reference, "fast/regex mismatch for {:?}", text);
        }

        // ASCII-heavy generator to stress the fast path specifically.
        #[test]
        fn prop_cl100k_fast_matches_regex_ascii(text in "[ -~ \t\r\n]*") {
            let pt = CL100K.tokenizer();
            let fast = collect_matches(&pt, &text);
            let reference = reference_matches(CL100K, &text);
            proptest::prop_assert_eq!(fast, reference, "fast/regex mismatch for {:?}", text);
        }

        // Newline-dense generator: the alphabet the issue #5 regression lives in.
        #[test]
        fn prop_cl100k_fast_matches_regex_newlines(text in "[\r\n \tabc.!]*") {
            let pt = CL100K.tokenizer();
            let fast = collect_matches(&pt, &text);
            let reference = reference_matches(CL100K, &text);
            proptest::prop_assert_eq!(fast, reference, "fast/regex mismatch for {:?}", text);
        }

        #[test]
        fn prop_o200k_fast_matches_regex(text in ".*") {
            let pt = O200K.tokenizer();
            let fast = collect_matches(&pt, &text);
            let reference = reference_matches(O200K, &text);
            proptest::prop_assert_eq!(fast, reference, "fast/regex mismatch for {:?}", text);
        }

        #[test]
        fn prop_o200k_fast_matches_regex_ascii(text in "[ -~ \t\r\n]*") {
            let pt = O200K.tokenizer();
            let fast = collect_matches(&pt, &text);
            let reference = reference_matches(O200K, &text);
            proptest::prop_assert_eq!(fast, reference, "fast/regex mismatch for {:?}", text);
        }

        #[test]
        fn prop_o200k_fast_matches_regex_newlines(text in "[\r\n \tabc.!]*") {
            let pt = O200K.tokenizer();
            let fast = collect_matches(&pt, &text);
            let reference = reference_matches(O200K, &text);
            proptest::prop_assert_eq!(fast, reference, "fast/regex mismatch for {:?}", text);
        }

        #[test]
        fn prop_qwen2_fast_matches_regex(text in ".*") {
            let pt = QWEN2.tokenizer();
            let fast = collect_matches(&pt, &text);
            let reference = reference_matches(QWEN2, &text);
            proptest::prop_assert_eq!(fast, reference, "fast/regex mismatch for {:?}", text);
        }

        #[test]
        fn prop_qwen2_fast_matches_regex_ascii(text in "[ -~ \t\r\n]*") {
            let pt = QWEN2.tokenizer();
            let fast = collect_matches(&pt, &text);
            let reference = reference_matches(QWEN2, &text);
            proptest::prop_assert_eq!(fast, reference, "fast/regex mismatch for {:?}", text);
        }

        #[test]
        fn prop_deepseek_fast_matches_regex(text in ".*") {
            let pt = DEEPSEEK.tokenizer();
            let fast = collect_matches(&pt, &text);
            let reference = reference_matches(DEEPSEEK, &text);
            proptest::prop_assert_eq!(fast, reference, "fast/regex mismatch for {:?}", text);
        }

        #[test]
        fn prop_deepseek_fast_matches_regex_ascii(text in "[ -~ \t\r\n]*") {
            let pt = DEEPSEEK.tokenizer();
            let fast = collect_matches(&pt, &text);
            let reference = reference_matches(DEEPSEEK, &text);
            proptest::prop_assert_eq!(fast, reference, "fast/regex mismatch for {:?}", text);
        }

        #[test]
        fn prop_mistral_fast_matches_regex(text in ".*") {
            let pt = MISTRAL.tokenizer();
            let fast = collect_matches(&pt, &text);
            let reference = reference_matches(MISTRAL, &text);
            proptest::prop_assert_eq!(fast, reference, "fast/regex mismatch for {:?}", text);
        }

        #[test]
        fn prop_mistral_fast_matches_regex_ascii(text in "[ -~ \t\r\n]*") {
            let pt = MISTRAL.tokenizer();
            let fast = collect_matches(&pt, &text);
            let reference = reference_matches(MISTRAL, &text);
            proptest::prop_assert_eq!(fast, reference, "fast/regex mismatch for {:?}", text);
        }

        // Slash-dense generator: o200k's `[\r\n/]*` punctuation tail — the shape
        // whose absence from the fixture corpus let a missing `/` survive.
        #[test]
        fn prop_o200k_fast_matches_regex_slashes(text in "[/\r\n .!abcAB0]*") {
            let pt = O200K.tokenizer();
            let fast = collect_matches(&pt, &text);
            let reference = reference_matches(O200K, &text);
            proptest::prop_assert_eq!(fast, reference, "fast/regex mismatch for {:?}", text);
        }

        // Slash-dense generator: the `[\r\n/]*` punctuation tail shared with o200k.
        #[test]
        fn prop_mistral_fast_matches_regex_slashes(text in "[/\r\n .!abcAB0]*") {
            let pt = MISTRAL.tokenizer();
            let fast = collect_matches(&pt, &text);
            let reference = reference_matches(MISTRAL, &text);
            proptest::prop_assert_eq!(fast, reference, "fast/regex mismatch for {:?}", text);
        }

        #[test]
        fn prop_kimi_fast_matches_regex(text in ".*") {
            let pt = KIMI.tokenizer();
            let fast = collect_matches(&pt, &text);
            let reference = reference_matches(KIMI, &text);
            proptest::prop_assert_eq!(fast, reference, "fast/regex mismatch for {:?}", text);
        }

        // Kimi keeps o200k's ASCII rules but NOT its `[\r\n/]*` tail — this
        // generator is what separates the two scanners.
        #[test]
        fn prop_kimi_fast_matches_regex_slashes(text in "[/\r\n .!abcAB0]*") {
            let pt = KIMI.tokenizer();
            let fast = collect_matches(&pt, &text);
            let reference = reference_matches(KIMI, &text);
            proptest::prop_assert_eq!(fast, reference, "fast/regex mismatch for {:?}", text);
        }

        #[test]
        fn prop_p50k_fast_matches_regex(text in "[ -~ \t\r\n]*") {
            let pt = P50K.tokenizer();
            let fast = collect_matches(&pt, &text);
            let reference = reference_matches(P50K, &text);
            proptest::prop_assert_eq!(fast, reference, "fast/regex mismatch for {:?}", text);
        }

        // CJK-dense generators. The alphabet deliberately mixes run members
        // (Han, kana, hangul, fullwidth letters), certain terminators (CJK
        // punctuation, fullwidth digits, ideographic space), chars right
        // outside the table (々 〇 combining marks, Ext-B Han) that must
        // defer, and ASCII to hit every boundary between the two worlds.
        #[test]
        fn prop_cl100k_fast_matches_regex_cjk(
            text in "[世界你好日本語謎アイウエオぁあんーゟＡＢａｂ한글、。！？（）「」・…　 a-cA-C0-9'\r\n々〇\u{3099}\u{20000}é]*"
        ) {
            let pt = CL100K.tokenizer();
            let fast = collect_matches(&pt, &text);
            let reference = reference_matches(CL100K, &text);
            proptest::prop_assert_eq!(fast, reference, "fast/regex mismatch for {:?}", text);
        }

        /// Hangul syllables beside the characters just outside their block
        /// (unassigned U+ABFF and U+D7A4, Jamo extensions, a Meetei Mayek mark,
        /// compatibility and conjoining jamo, a Hangul tone mark) and ASCII:
        /// the syllable fast path (PATCH.md section 9) cuts what the regex cuts.
        #[test]
        fn prop_fast_matches_regex_hangul_edges(
            text in "[가각힣한\u{ABFF}\u{D7A4}\u{D7B0}\u{A960}\u{ABE3}\u{1100}\u{3131}\u{302E}ÀaA '0.,\n]*"
        ) {
            for spec in [CL100K, O200K, QWEN2, KIMI] {
                let pt = spec.tokenizer();
                let fast = collect_matches(&pt, &text);
                let reference = reference_matches(spec, &text);
                proptest::prop_assert_eq!(fast, reference, "fast/regex mismatch for {:?}", text);
            }
        }

        /// Whitespace runs of every ASCII kind and Unicode spaces beside Hangul
        /// syllables: the whitespace and piece-start fast paths take a syllable
        /// for a letter (PATCH.md section 11), as the regex does.
        #[test]
        fn prop_fast_matches_regex_hangul_whitespace(
            text in "[가힣\u{D7A4}\u{3131} \t\r\n\u{0B}\u{0C}\u{3000}\u{A0}\u{2002}\u{85}a.0]*"
        ) {
            for spec in [CL100K, O200K, QWEN2, KIMI] {
                let pt = spec.tokenizer();
                let fast = collect_matches(&pt, &text);
                let reference = reference_matches(spec, &text);
                proptest::prop_assert_eq!(fast, reference, "fast/regex mismatch for {:?}", text);
            }
        }

        /// Words that start lowercase (the o200k-family shortcut of PATCH.md
        /// section 13) beside uppercase letters, contraction quotes and their
        /// letters, non-ASCII letters and combining marks that continue a
        /// word, digits and spaces: runs of every length around the 8-byte
        /// step, for each o200k-like scanner, against the regex.
        #[test]
        fn prop_fast_matches_regex_lowercase_words(
            text in "[abstdmlrveSTDMLRVE'’ \u{301}\u{3099}éÉ한ǅ0.\n]{0,40}"
        ) {
            for spec in [O200K, MISTRAL, KIMI] {
                let pt = spec.tokenizer();
                let fast = collect_matches(&pt, &text);
                let reference = reference_matches(spec, &text);
                proptest::prop_assert_eq!(fast, reference, "fast/regex mismatch for {:?}", text);
            }
        }

        /// Words of mixed case (PATCH.md section 17: an uppercase start cut
        /// from one 8-byte load): case runs of every length around 8 bytes,
        /// each letter bound's neighbours, contractions in both cases, base64's
        /// `+` and `/`, digits, combining marks and non-ASCII letters that may
        /// continue a word, for each o200k-like scanner, against the regex.
        #[test]
        fn prop_fast_matches_regex_cased_words(
            text in "[AZazMmSsTtDdLlVvEe@\\[`{'’+/0 \n\u{301}éÉ한ǅ]{0,40}"
        ) {
            for spec in [O200K, MISTRAL, KIMI] {
                let pt = spec.tokenizer();
                let fast = collect_matches(&pt, &text);
                let reference = reference_matches(spec, &text);
                proptest::prop_assert_eq!(fast, reference, "fast/regex mismatch for {:?}", text);
            }
        }

        /// Punctuation runs (PATCH.md section 14: the run's class from a
        /// table) beside every ASCII whitespace byte, letters, digits, the
        /// line tail's `\r`, `\n` and `/`, DEL and NUL, and non-ASCII
        /// punctuation, letters and spaces, for each scanner that cuts them,
        /// against the regex.
        #[test]
        fn prop_fast_matches_regex_punctuation_runs(
            text in "[!-/:-@\\[-`{-~\u{7f}\u{0} \t\n\r\u{0B}\u{0C}aZ09、。é\u{3000}\u{A0}]{0,40}"
        ) {
            for spec in [CL100K, O200K, QWEN2, MISTRAL, KIMI] {
                let pt = spec.tokenizer();
                let fast = collect_matches(&pt, &text);
                let reference = reference_matches(spec, &text);
                proptest::prop_assert_eq!(fast, reference, "fast/regex mismatch for {:?}", text);
            }
        }

        /// PATCH.md section 27: the chars of the BMP table beside ASCII, for
        /// every scanner that asks it: accented Latin in both cases and a
        /// titlecase digraph, Greek, Cyrillic, Hebrew and Arabic letters, a
        /// modifier letter, a combining mark, `ſ` and the Kelvin sign (they
        /// case-fold to ASCII), non-ASCII digits and numbers, no-break and
        /// other spaces, punctuation, symbols and box drawing, beside quotes
        /// for the contractions, digits, and whitespace of every kind.
        #[test]
        fn prop_fast_matches_regex_bmp_scripts(
            text in "[aZs'’ 0\t\n\r.!/éÉßǅʰωΩяЯאب\u{301}ſ\u{212A}²٣Ⅻ\u{A0}\u{2003}«»•✓─█€]{0,40}"
        ) {
            for spec in [CL100K, O200K, QWEN2, MISTRAL, KIMI, DEEPSEEK] {
                let pt = spec.tokenizer();
                let fast = collect_matches(&pt, &text);
                let reference = reference_matches(spec, &text);
                proptest::prop_assert_eq!(fast, reference, "fast/regex mismatch for {:?}", text);
            }
        }

        #[test]
        fn prop_o200k_fast_matches_regex_cjk(
            text in "[世界你好日本語謎アイウエオぁあんーゟＡＢａｂ한글、。！？（）「」・…　 a-cA-C0-9'\r\n々〇\u{3099}\u{20000}é]*"
        ) {
            let pt = O200K.tokenizer();
            let fast = collect_matches(&pt, &text);
            let reference = reference_matches(O200K, &text);
            proptest::prop_assert_eq!(fast, reference, "fast/regex mismatch for {:?}", text);
        }

        #[test]
        fn prop_qwen2_fast_matches_regex_cjk(
            text in "[世界你好ぁーア１２、。！　 a-cA-C0-9'\r\n々〇é]*"
        ) {
            let pt = QWEN2.tokenizer();
            let fast = collect_matches(&pt, &text);
            let reference = reference_matches(QWEN2, &text);
            proptest::prop_assert_eq!(fast, reference, "fast/regex mismatch for {:?}", text);
        }

        #[test]
        fn prop_deepseek_fast_matches_regex_cjk(
            text in "[世界你好龥龦ぁゟ゠アヿー、。１ a-c0-9\r\n々é]*"
        ) {
            let pt = DEEPSEEK.tokenizer();
            let fast = collect_matches(&pt, &text);
            let reference = reference_matches(DEEPSEEK, &text);
            proptest::prop_assert_eq!(fast, reference, "fast/regex mismatch for {:?}", text);
        }

        #[test]
        fn prop_mistral_fast_matches_regex_cjk(
            text in "[世界アＡａ、。！　 a-cA-C0-9/\r\né]*"
        ) {
            let pt = MISTRAL.tokenizer();
            let fast = collect_matches(&pt, &text);
            let reference = reference_matches(MISTRAL, &text);
            proptest::prop_assert_eq!(fast, reference, "fast/regex mismatch for {:?}", text);
        }

        // Kimi: Han runs are their own branch and Han must never join a word.
        #[test]
        fn prop_kimi_fast_matches_regex_cjk(
            text in "[世界你好龥アイぁーＡａ한、。！　 a-cA-C0-9'\r\n々\u{20000}é]*"
        ) {
            let pt = KIMI.tokenizer();
            let fast = collect_matches(&pt, &text);
            let reference = reference_matches(KIMI, &text);
            proptest::prop_assert_eq!(fast, reference, "fast/regex mismatch for {:?}", text);
        }
    }
}
