//! context-loader experiment (issue 43; PATCH.md, "Tried for issue 43, not
//! kept"): the ASCII pieces of cl100k_base and o200k_base cut from bitmasks
//! of a window of the text, classified 16 bytes per step (SSE2 on x86_64, a
//! byte loop elsewhere).
//!
//! A [`Window`] holds, for 64 bytes of the text from `base`, one bit per byte
//! of each class the patterns' ASCII rules read. A piece that starts at `pos`
//! in the window's first 32 bytes and is an ASCII word with at most one
//! leading character, a digit run, a punctuation run or a whitespace run is
//! cut with shifts and trailing-zero counts; anything the masks do not decide
//! (a non-ASCII byte at a decision point, a quote where a contraction may
//! start, a run reaching the window's end) is `None`, and the caller asks the
//! per-byte scanner of `pretokenize.rs`, which cuts every piece as before.

/// The masks of 64 bytes of the text from `base` (bit `k` describes byte
/// `base + k`), for one encoding's rules: `CL100K` for cl100k_base's, else
/// o200k_base's.
#[derive(Clone, Copy)]
pub(crate) struct Window<const CL100K: bool> {
    base: usize,
    m: Masks,
}

/// One bit per byte of each class the rules of [`Window::piece`] read.
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
struct Masks {
    /// `[A-Za-z]`.
    alpha: u64,
    /// `[a-z]`.
    lower: u64,
    /// `[0-9]`.
    digit: u64,
    /// ASCII and none of whitespace, a letter or a digit: the punctuation
    /// rule's `[^\s\p{L}\p{N}]` over ASCII.
    punct: u64,
    /// ASCII whitespace: `[\t\n\x0B\x0C\r ]`.
    ws: u64,
    /// `[\r\n]`.
    nl: u64,
    /// `' '`.
    space: u64,
    /// `'/'`.
    slash: u64,
    /// A byte >= 0x80.
    non_ascii: u64,
    /// `'`.
    quote: u64,
}

const MASKS: usize = 10;

impl Masks {
    #[inline(always)]
    fn to_array(self) -> [u64; MASKS] {
        [
            self.alpha,
            self.lower,
            self.digit,
            self.punct,
            self.ws,
            self.nl,
            self.space,
            self.slash,
            self.non_ascii,
            self.quote,
        ]
    }

    #[inline(always)]
    fn from_array(a: [u64; MASKS]) -> Self {
        let [
            alpha,
            lower,
            digit,
            punct,
            ws,
            nl,
            space,
            slash,
            non_ascii,
            quote,
        ] = a;
        Self {
            alpha,
            lower,
            digit,
            punct,
            ws,
            nl,
            space,
            slash,
            non_ascii,
            quote,
        }
    }
}

/// [`Masks`] of 16 bytes, in [`Masks`]'s order.
type Masks16 = [u16; MASKS];

/// The window moves on once a piece starts this far past its base: every
/// piece it decides has at least `64 - STEP` bytes of masks from its start.
const STEP: usize = 32;

/// [`Masks16`] of `chunk`, one byte at a time: the definition the SIMD
/// version is held to, and the version for targets without it.
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
fn classify_bytes(chunk: &[u8; 16]) -> Masks16 {
    let mut m = [0u16; MASKS];
    for (k, &c) in chunk.iter().enumerate() {
        let ws = matches!(c, b' ' | b'\t' | b'\n' | b'\r' | 0x0B | 0x0C);
        let classes = [
            c.is_ascii_alphabetic(),
            c.is_ascii_lowercase(),
            c.is_ascii_digit(),
            c < 0x80 && !ws && !c.is_ascii_alphanumeric(),
            ws,
            c == b'\r' || c == b'\n',
            c == b' ',
            c == b'/',
            c >= 0x80,
            c == b'\'',
        ];
        for (mask, yes) in m.iter_mut().zip(classes) {
            *mask |= (yes as u16) << k;
        }
    }
    m
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn classify(chunk: &[u8; 16]) -> Masks16 {
    use std::arch::x86_64::*;
    debug_assert_eq!(std::mem::size_of_val(chunk), 16);
    // SAFETY: SSE2 is part of the x86_64 baseline; the unaligned load reads
    // the 16 bytes of `chunk` (checked above in debug builds), nothing else.
    unsafe {
        let v = _mm_loadu_si128(chunk.as_ptr().cast());
        let splat = |c: u8| _mm_set1_epi8(c as i8);
        // Signed compares: bytes >= 0x80 are negative, so below every bound.
        let within = |x: __m128i, lo: u8, hi: u8| {
            _mm_and_si128(
                _mm_cmpgt_epi8(x, splat(lo - 1)),
                _mm_cmplt_epi8(x, splat(hi + 1)),
            )
        };
        let eq = |c: u8| _mm_cmpeq_epi8(v, splat(c));
        let mask = |x: __m128i| _mm_movemask_epi8(x) as u16;
        let alpha = within(_mm_or_si128(v, splat(0x20)), b'a', b'z');
        let digit = within(v, b'0', b'9');
        let space = eq(b' ');
        let ws = _mm_or_si128(space, within(v, b'\t', b'\r'));
        let other = _mm_or_si128(_mm_or_si128(alpha, digit), _mm_or_si128(ws, v));
        [
            mask(alpha),
            mask(within(v, b'a', b'z')),
            mask(digit),
            !mask(other),
            mask(ws),
            mask(_mm_or_si128(eq(b'\r'), eq(b'\n'))),
            mask(space),
            mask(eq(b'/')),
            mask(v),
            mask(eq(b'\'')),
        ]
    }
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn classify(chunk: &[u8; 16]) -> Masks16 {
    classify_bytes(chunk)
}

/// The masks of the 16 · `BLOCKS` bytes of `b` from `at`, bytes past the end
/// of `b` in no class: no run goes on past the text's end.
#[inline(always)]
fn masks<const BLOCKS: usize>(b: &[u8], at: usize) -> [u64; MASKS] {
    let mut out = [0u64; MASKS];
    for k in 0..BLOCKS {
        let from = at + 16 * k;
        let m = match b.get(from..from + 16) {
            Some(chunk) => classify(chunk.try_into().unwrap()),
            None => {
                let mut chunk = [0u8; 16];
                let valid = b.len().saturating_sub(from);
                if valid > 0 {
                    chunk[..valid].copy_from_slice(&b[from..]);
                }
                let mut m = classify(&chunk);
                // Zero bytes are punctuation; those past the end are not.
                m[3] &= !(u16::MAX << valid);
                m
            }
        };
        for (acc, v) in out.iter_mut().zip(m) {
            *acc |= (v as u64) << (16 * k);
        }
    }
    out
}

/// Bit `k` of `mask`, for `k < 64`.
#[inline(always)]
fn bit(mask: u64, k: usize) -> bool {
    debug_assert!(k < 64);
    mask >> k & 1 != 0
}

/// The end of the run of `mask`'s bits from bit `k` (`k < 64`): 64 if it
/// reaches the window's end.
#[inline(always)]
fn run_end(mask: u64, k: usize) -> usize {
    debug_assert!(k < 64);
    k + (!(mask >> k)).trailing_zeros() as usize
}

impl<const CL100K: bool> Window<CL100K> {
    /// A window that holds nothing yet: the first piece fills it.
    #[inline(always)]
    pub(crate) fn new() -> Self {
        Self {
            base: usize::MAX / 2 + 1,
            m: Masks::default(),
        }
    }

    /// The window moved on to hold `pos` in its first `STEP` bytes (once
    /// per 32 bytes of text). Inlined: out of line, with the masks kept in
    /// memory across the call, the count ran ~10 % slower still.
    #[inline(always)]
    fn moved(&self, b: &[u8], pos: usize) -> Self {
        let off = pos.wrapping_sub(self.base);
        if off < 2 * STEP {
            // The second half is still good: shift it down and classify the
            // next 32 bytes.
            let next = masks::<2>(b, self.base + 64);
            let mut m = self.m.to_array();
            for (old, new) in m.iter_mut().zip(next) {
                *old = *old >> STEP | new << STEP;
            }
            return Self {
                base: self.base + STEP,
                m: Masks::from_array(m),
            };
        }
        Self {
            base: pos,
            m: Masks::from_array(masks::<4>(b, pos)),
        }
    }

    /// The end of the piece at `pos` under cl100k_base's or o200k_base's
    /// pattern when the masks decide it, else `None` (the caller asks the
    /// scanner, which decides every piece). Decided: ASCII words with at most
    /// one leading character, digit runs, ASCII punctuation runs with their
    /// leading space and line tail, and ASCII whitespace runs, each cut as
    /// `pretokenize.rs`'s scanners cut it, when no byte the rule reads is
    /// non-ASCII, past the window, or (cl100k) a quote at the piece's start
    /// or (o200k) a quote after a word (contractions). Caller guarantees
    /// `pos < b.len()`.
    #[inline(always)]
    pub(crate) fn piece(&mut self, b: &[u8], pos: usize) -> Option<usize> {
        let mut off = pos.wrapping_sub(self.base);
        if off >= STEP {
            *self = self.moved(b, pos);
            off = pos - self.base;
        }
        debug_assert!(off < STEP && pos < b.len());
        let m = &self.m;
        let lead = m.punct | (m.ws & !m.nl);
        let c1 = off + 1;
        // Words: `[^\r\n\p{L}\p{N}]?` then letters.
        let s = if bit(m.alpha, off) {
            Some(off)
        } else if bit(lead, off) && bit(m.alpha, c1) && !(CL100K && bit(m.quote, off)) {
            Some(c1)
        } else {
            None
        };
        if let Some(s) = s {
            let e = if CL100K {
                run_end(m.alpha, s)
            } else {
                // `[A-Z]*` then `[a-z]*`: one of them takes a letter.
                let q = run_end(m.alpha & !m.lower, s);
                if q >= 64 {
                    return None;
                }
                run_end(m.lower, q)
            };
            let stop = if CL100K {
                m.non_ascii
            } else {
                m.non_ascii | m.quote
            };
            if e >= 64 || bit(stop, e) {
                return None;
            }
            return Some(self.base + e);
        }
        // Whatever starts with a non-ASCII byte or a leading character before
        // one, or (cl100k) a quote (rule 1's contractions).
        if bit(m.non_ascii, off) || (bit(lead, off) && bit(m.non_ascii, c1)) {
            return None;
        }
        if CL100K && bit(m.quote, off) {
            return None;
        }
        // Digits: `\p{N}{1,3}`; a non-ASCII byte after fewer than three may
        // be a Unicode digit.
        if bit(m.digit, off) {
            let e = run_end(m.digit, off).min(off + 3);
            if e < off + 3 && bit(m.non_ascii, e) {
                return None;
            }
            return Some(self.base + e);
        }
        // Punctuation: ` ?[^\s\p{L}\p{N}]+[\r\n]*` (o200k: `[\r\n/]*`).
        let s = if bit(m.punct, off) {
            Some(off)
        } else if bit(m.space, off) && bit(m.punct, c1) {
            Some(c1)
        } else {
            None
        };
        if let Some(s) = s {
            let e = run_end(m.punct, s);
            if e >= 64 || bit(m.non_ascii, e) {
                return None;
            }
            let tail = if CL100K { m.nl } else { m.nl | m.slash };
            let e = run_end(tail, e);
            if e >= 64 {
                return None;
            }
            return Some(self.base + e);
        }
        // Whitespace: `\s*[\r\n]+|\s+(?!\S)|\s+` over an ASCII run.
        debug_assert!(bit(m.ws, off));
        let e = run_end(m.ws, off);
        if e >= 64 || bit(m.non_ascii, e) {
            return None;
        }
        let newlines = m.nl & (u64::MAX >> (63 - (e - 1))) >> off << off;
        let end = if newlines != 0 {
            64 - newlines.leading_zeros() as usize
        } else if e - off == 1 || self.base + e == b.len() {
            e
        } else {
            e - 1
        };
        Some(self.base + end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_simd_classes_are_the_byte_classes() {
        // Every byte value in every lane position.
        for start in 0..=255u8 {
            let chunk: [u8; 16] = std::array::from_fn(|k| start.wrapping_add(k as u8 * 17));
            assert_eq!(classify(&chunk), classify_bytes(&chunk), "{chunk:?}");
        }
    }
}
#[cfg(test)]
mod exact {
    use crate::pretokenize::{FastPath, PreTokenizer, RegexPreTokenizer, WhitespaceRules};

    const FRAGMENTS: &[&str] = &[
        "a",
        "z",
        "A",
        "Z",
        "@",
        "[",
        "`",
        "{",
        "0",
        "9",
        "/",
        ":",
        " ",
        "  ",
        "\t",
        "\n",
        "\r",
        "\r\n",
        "\x0b",
        "\x0c",
        "\0",
        "\x7f",
        "'",
        "'s",
        "'S",
        "'t",
        "'re",
        "'VE",
        "'m",
        "'ll",
        "'d",
        "'x",
        "the",
        "Hello",
        "HTTP",
        "camelCase",
        "x1",
        "123",
        "12345",
        "...",
        "!?",
        " .",
        "  .",
        ", ",
        "é",
        "É",
        "한",
        "中",
        "\u{3000}",
        "\u{a0}",
        "½",
        "²",
        "’",
        "—",
        "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz",
        "                                        ",
    ];

    fn text(seed: &mut u64, len: usize) -> String {
        let mut t = String::new();
        for _ in 0..len {
            *seed ^= *seed << 13;
            *seed ^= *seed >> 7;
            *seed ^= *seed << 17;
            t.push_str(FRAGMENTS[(*seed % FRAGMENTS.len() as u64) as usize]);
        }
        t
    }

    /// Every piece the window decides at each char boundary of `t`, with a
    /// fresh window and with one walking forward, is the scanner's; returns
    /// how many it decided.
    fn check_every_start(t: &str) -> usize {
        let b = t.as_bytes();
        let mut decided = 0;
        for (fast, cl100k, pattern) in [
            (FastPath::Cl100k, true, crate::encoding::CL100K_PATTERN),
            (FastPath::O200k, false, crate::encoding::O200K_PATTERN),
        ] {
            let pt = RegexPreTokenizer::new(pattern, fast, WhitespaceRules::NewlineFirst);
            let mut walking = (super::Window::<true>::new(), super::Window::<false>::new());
            for pos in (0..b.len()).filter(|&p| t.is_char_boundary(p)) {
                let expected = pt.next_match(t, pos).map(|(_, e)| e);
                let (fresh, walked) = if cl100k {
                    (
                        super::Window::<true>::new().piece(b, pos),
                        walking.0.piece(b, pos),
                    )
                } else {
                    (
                        super::Window::<false>::new().piece(b, pos),
                        walking.1.piece(b, pos),
                    )
                };
                for got in [fresh, walked].into_iter().flatten() {
                    decided += 1;
                    assert_eq!(Some(got), expected, "{t:?} at {pos}");
                }
            }
        }
        decided
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]
        /// ASCII-heavy strings: letters and digits at their class bounds,
        /// every ASCII whitespace byte, contractions in both cases,
        /// punctuation, NUL, DEL, and a few non-ASCII characters.
        #[test]
        fn prop_window_cuts_as_the_scanner(
            t in "([aAzZbQ09@\\[`{/:.,!'\"\\- \t\n\r\x0b\x0c\x00\x7f]|'s|'S|'t|'re|'VE|'m|'ll|'D|é|É|한|中|\u{3000}|\u{a0}|½|²|’|  +|[a-z]{8,40}|[0-9]{2,5})*"
        ) {
            check_every_start(&t);
        }

        /// Any Unicode.
        #[test]
        fn prop_window_cuts_as_the_scanner_unicode(t in "\\PC*") {
            check_every_start(&t);
        }
    }

    /// Every piece the window decides, at every start of random texts, is
    /// the scanner's (itself held to the regex in `pretokenize`'s tests),
    /// with one window walking forward as the count loop's does and with a
    /// fresh one at each start.
    #[test]
    fn the_window_cuts_every_piece_it_decides_as_the_scanner() {
        for (fast, cl100k, pattern) in [
            (FastPath::Cl100k, true, crate::encoding::CL100K_PATTERN),
            (FastPath::O200k, false, crate::encoding::O200K_PATTERN),
        ] {
            let pt = RegexPreTokenizer::new(pattern, fast, WhitespaceRules::NewlineFirst);
            let mut seed = 0x9E37_79B9_7F4A_7C15u64;
            let mut decided = 0;
            for round in 0..3000 {
                let t = text(&mut seed, round % 60);
                let b = t.as_bytes();
                let mut walking = (super::Window::<true>::new(), super::Window::<false>::new());
                for pos in (0..b.len()).filter(|&p| t.is_char_boundary(p)) {
                    let expected = pt.next_match(&t, pos).map(|(_, e)| e);
                    let fresh = if cl100k {
                        super::Window::<true>::new().piece(b, pos)
                    } else {
                        super::Window::<false>::new().piece(b, pos)
                    };
                    let walked = if cl100k {
                        walking.0.piece(b, pos)
                    } else {
                        walking.1.piece(b, pos)
                    };
                    for got in [fresh, walked].into_iter().flatten() {
                        decided += 1;
                        assert_eq!(Some(got), expected, "{t:?} at {pos}");
                    }
                }
            }
            assert!(decided > 100_000, "{decided}");
        }
    }
}
