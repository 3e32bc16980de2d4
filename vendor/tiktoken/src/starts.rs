//! context-loader patch (PATCH.md section 24): the piece starts of cl100k_base's
//! and o200k_base's patterns in up to 64 bytes of ASCII text at once, from
//! bitmasks, for the count loop.
//!
//! The scanners of `pretokenize` find one piece's end at a time: a branch on the
//! first byte's class, then a loop over the piece, about half the time of a warm
//! count. Here the bytes of a window are sorted into classes (one `u64` per
//! class, bit `i` for the byte at `pos + i`) and every rule of the pattern
//! becomes shifts, ands and ors over those masks, so all the starts of the
//! window come out together; the count loop then walks them with a trailing-zero
//! count, with no branch on what kind of piece comes next.
//!
//! The window takes the text to start at `pos`, a piece start: neither pattern
//! looks behind, so the pieces from a start on depend only on the text from
//! there. It answers only what its bytes decide: up to the first non-ASCII byte,
//! and never inside a run of blanks that may still end in a newline. Whatever it
//! cannot decide is left to the scanners.

/// One `u64` per byte class of a window: bit `i` is the byte at `pos + i`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Classes {
    /// `a-z`.
    lower: u64,
    /// `A-Z`.
    upper: u64,
    /// `0-9`.
    digit: u64,
    /// `\s` over ASCII: `\t \n \v \f \r` and the space.
    white: u64,
    /// `\r` and `\n`.
    newline: u64,
    /// The space alone (the punctuation rule's ` ?`).
    space: u64,
    /// `'`.
    quote: u64,
    /// `/` (o200k's punctuation tail `[\r\n/]*`).
    slash: u64,
    /// Bytes of 0x80 and above: the window stops at the first.
    high: u64,
}

impl Classes {
    /// The definition, one byte at a time (the SIMD versions are held to it).
    pub(crate) fn of_bytes(chunk: &[u8; 64]) -> Classes {
        let mut c = Classes::default();
        for (i, &b) in chunk.iter().enumerate() {
            let bit = 1u64 << i;
            let set = |mask: &mut u64, yes: bool| *mask |= if yes { bit } else { 0 };
            set(&mut c.lower, b.is_ascii_lowercase());
            set(&mut c.upper, b.is_ascii_uppercase());
            set(&mut c.digit, b.is_ascii_digit());
            set(
                &mut c.white,
                matches!(b, b'\t' | b'\n' | 0x0B | 0x0C | b'\r' | b' '),
            );
            set(&mut c.newline, matches!(b, b'\r' | b'\n'));
            set(&mut c.space, b == b' ');
            set(&mut c.quote, b == b'\'');
            set(&mut c.slash, b == b'/');
            set(&mut c.high, b >= 0x80);
        }
        c
    }

    /// SSE2 (every x86_64): four 16-byte compares per class, `movemask` to bits.
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    pub(crate) fn sse2(chunk: &[u8; 64]) -> Classes {
        use std::arch::x86_64::*;
        let mut c = Classes::default();
        for k in 0..4 {
            // SAFETY: SSE2 is part of x86_64's baseline; the load reads 16 of
            // `chunk`'s 64 bytes.
            unsafe {
                let v = _mm_loadu_si128(chunk.as_ptr().add(16 * k).cast::<__m128i>());
                let bits = |m: __m128i| _mm_movemask_epi8(m) as u16 as u64;
                // `lo <= b < lo + n` as one signed compare: shift the range to
                // start at -128 (SSE2 has no unsigned byte compare).
                let range = |lo: u8, n: u8| {
                    let shifted = _mm_sub_epi8(v, _mm_set1_epi8(lo.wrapping_sub(0x80) as i8));
                    bits(_mm_cmplt_epi8(
                        shifted,
                        _mm_set1_epi8(n.wrapping_sub(0x80) as i8),
                    ))
                };
                let eq = |b: u8| bits(_mm_cmpeq_epi8(v, _mm_set1_epi8(b as i8)));
                let at = 16 * k;
                let space = eq(b' ');
                c.lower |= range(b'a', 26) << at;
                c.upper |= range(b'A', 26) << at;
                c.digit |= range(b'0', 10) << at;
                c.white |= (range(b'\t', 5) | space) << at;
                c.newline |= (eq(b'\n') | eq(b'\r')) << at;
                c.space |= space << at;
                c.quote |= eq(b'\'') << at;
                c.slash |= eq(b'/') << at;
                c.high |= bits(v) << at;
            }
        }
        c
    }

    /// AVX-512BW: one compare per class straight into a mask register (Rust
    /// 1.89 and later: `build.rs` sets `tiktoken_avx512`).
    ///
    /// # Safety
    /// The CPU must have AVX-512BW (and the caller be compiled for it, or the
    /// intrinsics are calls).
    #[cfg(all(target_arch = "x86_64", tiktoken_avx512))]
    #[inline(always)]
    pub(crate) unsafe fn avx512(chunk: &[u8; 64]) -> Classes {
        use std::arch::x86_64::*;
        // SAFETY: the caller's CPU has AVX-512BW; the load reads `chunk`'s 64 bytes.
        unsafe {
            let v = _mm512_loadu_si512(chunk.as_ptr().cast());
            let range = |lo: u8, n: u8| {
                _mm512_cmplt_epu8_mask(
                    _mm512_sub_epi8(v, _mm512_set1_epi8(lo as i8)),
                    _mm512_set1_epi8(n as i8),
                )
            };
            let eq = |b: u8| _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8(b as i8));
            let space = eq(b' ');
            Classes {
                lower: range(b'a', 26),
                upper: range(b'A', 26),
                digit: range(b'0', 10),
                white: range(b'\t', 5) | space,
                newline: eq(b'\n') | eq(b'\r'),
                space,
                quote: eq(b'\''),
                slash: eq(b'/'),
                high: _mm512_movepi8_mask(v),
            }
        }
    }
}

/// Which classifier a window runs: a `const` parameter, so each count loop is
/// compiled for one (the AVX-512 one inside a `#[target_feature]` function).
pub(crate) const BYTES: u8 = 0;
#[cfg(target_arch = "x86_64")]
pub(crate) const SSE2: u8 = 1;
#[cfg(all(target_arch = "x86_64", tiktoken_avx512))]
pub(crate) const AVX512: u8 = 2;

/// The starts one window decided.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Window {
    /// Bit `i` (`0 < i < end`): a piece starts at `pos + i`. Bit 0, `pos`
    /// itself, is left out.
    pub(crate) starts: u64,
    /// How far the window decided: no start at or past `pos + end` is in
    /// `starts`, and the piece at the highest start may run past it.
    pub(crate) end: usize,
    /// The text ends at `pos + end` and the window decided all of it: the piece
    /// at the highest start (or at `pos`) runs to the text's end.
    pub(crate) last: bool,
}

/// The piece starts after `pos` (a piece start) of cl100k_base's pattern
/// (`O200K == false`) or o200k_base's, as far as up to 64 ASCII bytes from
/// `pos` decide them. `starts == 0 && !last` when they decide none (non-ASCII
/// at `pos`, or a piece longer than the window): the scanner takes that piece.
#[inline(always)]
pub(crate) fn window<const O200K: bool, const CLASSIFIER: u8>(text: &[u8], pos: usize) -> Window {
    let rest = text.len() - pos;
    let mut padded = [0u8; 64];
    let chunk: &[u8; 64] = match text[pos..].first_chunk::<64>() {
        Some(chunk) => chunk,
        None => {
            padded[..rest].copy_from_slice(&text[pos..]);
            &padded
        }
    };
    let c = match CLASSIFIER {
        #[cfg(target_arch = "x86_64")]
        SSE2 => Classes::sse2(chunk),
        // SAFETY: the count loop runs this classifier only where the CPU has
        // AVX-512BW, inside a function compiled for it.
        #[cfg(all(target_arch = "x86_64", tiktoken_avx512))]
        AVX512 => unsafe { Classes::avx512(chunk) },
        _ => Classes::of_bytes(chunk),
    };
    decide::<O200K>(text, pos, rest, &c)
}

/// The rules of the patterns over a window's classes.
#[inline(always)]
fn decide<const O200K: bool>(text: &[u8], pos: usize, rest: usize, c: &Classes) -> Window {
    let read = rest.min(64);
    let in_text = if read == 64 {
        u64::MAX
    } else {
        (1u64 << read) - 1
    };
    // The window knows the bytes before the first non-ASCII one.
    let high = c.high & in_text;
    let known_len = if high == 0 {
        read
    } else {
        high.trailing_zeros() as usize
    };
    let known = if known_len == 64 {
        u64::MAX
    } else {
        (1u64 << known_len) - 1
    };
    let last = known_len == rest;
    let lower = c.lower & known;
    let upper = c.upper & known;
    let digit = c.digit & known;
    let white = c.white & known;
    let newline = c.newline & known;
    let space = c.space & known;
    let letter = lower | upper;
    let blank = white & !newline; // whitespace other than newlines
    let punct = known & !(letter | digit | white); // [^\s\p{L}\p{N}]
    // `prev(m)`: bit i set when byte i - 1 is in m (nothing before `pos`).
    let prev = |m: u64| m << 1;

    // Newlines right after punctuation belong to its piece (`[\r\n]*`, in o200k
    // `[\r\n/]*`), through the whole run of them.
    let tail = if O200K {
        newline | (c.slash & known)
    } else {
        newline
    };
    let mut taken = newline & prev(punct);
    loop {
        let more = taken | (prev(taken) & tail);
        if more == taken {
            break;
        }
        taken = more;
    }

    // Contractions ('s 't 're 've 'm 'll 'd in any case): in o200k the end of a
    // word (a quote right after its letters), in cl100k a piece of their own (a
    // quote where a piece starts).
    let own_punct = punct & !taken;
    let punct_start_any = own_punct & !prev(own_punct) & !prev(space);
    let mut quotes = c.quote & known & if O200K { prev(letter) } else { punct_start_any };
    let mut contraction = 0u64; // every byte of one
    let mut after_contraction = 0u64; // the byte after one: a start
    while quotes != 0 {
        let i = quotes.trailing_zeros() as usize;
        quotes &= quotes - 1;
        // o200k: a quote right after a contraction follows no word's letters.
        if O200K && after_contraction >> i & 1 == 1 {
            continue;
        }
        let at = |k: usize| text.get(pos + i + k).map_or(0, |b| b | 0x20);
        let raw = |k: usize| text.get(pos + i + k).copied();
        let len = match at(1) {
            b's' | b't' | b'm' | b'd' => 2,
            // `'ſ` (U+017F folds to `s`), as `match_contraction` reads it.
            _ if raw(1) == Some(0xC5) && raw(2) == Some(0xBF) => 3,
            b'r' | b'v' if at(2) == b'e' => 3,
            b'l' if at(2) == b'l' => 3,
            _ => continue,
        };
        contraction |= ((1u64 << len) - 1) << i;
        after_contraction |= 1u64.checked_shl((i + len) as u32).unwrap_or(0);
    }

    // Punctuation runs start after anything but punctuation or the space that
    // leads them (` ?`). An o200k contraction's quote is its word's.
    let own_punct = if O200K {
        own_punct & !contraction
    } else {
        own_punct
    };
    let punct_start = own_punct & !prev(own_punct) & !prev(space);

    // Words: letters after a non-letter (o200k also at a lower→upper change,
    // `[\p{Lu}]*[\p{Ll}]+`), taking the byte before as theirs when it starts a
    // piece and is not a newline, letter or digit.
    let word_start = if O200K {
        letter & !prev(letter) | upper & prev(lower)
    } else {
        letter & !prev(letter)
    } & !contraction;
    let prefixed = word_start & !prev(letter) & prev(blank | punct_start);
    let word = word_start & !prefixed;

    // Digits: `\p{N}{1,3}`, runs cut every three from their start.
    let mut cut = digit & !prev(digit);
    let mut digits = cut;
    loop {
        cut = (cut << 3) & digit & prev(digit) & prev(prev(digit));
        if cut == 0 {
            break;
        }
        digits |= cut;
    }

    // Whitespace: a run's first byte; the byte after its last newline; and before
    // anything but whitespace, the last byte of two or more (`\s+(?!\S)`), which
    // then starts the next piece.
    let own_white = white & !taken;
    let white_start = own_white & !prev(own_white);
    let after_newline = blank & prev(newline);
    let then_nonwhite = (known & !white) >> 1;
    let last_blank = blank & prev(blank) & then_nonwhite;

    let starts =
        white_start | after_newline | last_blank | punct_start | word | digits | after_contraction;

    // How far that is decided: every rule above reads only bytes before the one
    // it decides, but two. Contractions read the text itself, past the window
    // too. And the last blank before something that is not whitespace starts a
    // piece: for a blank that is the last byte the window knows, that is
    // unknown, so blanks there are left to the scanner.
    let mut end = known_len;
    if !last && known_len > 0 && blank >> (known_len - 1) & 1 == 1 {
        // Blanks up to what the window knows may end in a newline past it
        // (`\s*[\r\n]+` would take them): stop where they begin.
        let before = !blank & known & ((1u64 << (known_len - 1)) - 1);
        let run = if before == 0 {
            0
        } else {
            64 - before.leading_zeros() as usize
        };
        end = end.min(run);
    }
    let blank_then_newline = blank & (newline >> 1);
    if blank_then_newline != 0 {
        // Blanks before a newline (trailing spaces, an indented empty line): the
        // `after_newline` rule may have cut that whitespace run wrongly, so stop
        // after the run's first byte and leave the rest to the scanner.
        let first = blank_then_newline.trailing_zeros() as usize;
        let runs = white_start & (u64::MAX >> (63 - first));
        let run = 63 - runs.leading_zeros() as usize;
        end = end.min(run + 1);
    }
    let decided = if end >= 64 {
        u64::MAX
    } else {
        (1u64 << end) - 1
    };
    Window {
        starts: starts & decided & !1,
        end,
        last: last && end == known_len,
    }
}

/// Writes `base + i` for each bit `i` of `starts`, lowest first, to `out`; returns
/// how many. AVX-512's compress puts 16 of them in place per instruction where
/// a trailing-zero loop took one per turn and mispredicted its exit once per
/// window (PATCH.md section 29).
///
/// # Safety
/// The CPU must have AVX-512F (and the caller be compiled for it), and `out`
/// must have room for 64 values: each of the four stores writes 16 whole lanes.
#[cfg(all(target_arch = "x86_64", tiktoken_avx512))]
#[inline(always)]
pub(crate) unsafe fn compress_starts(starts: u64, base: u32, out: *mut u32) -> usize {
    use std::arch::x86_64::*;
    // SAFETY: the caller's CPU has AVX-512F; the four stores write lanes
    // `out[n..n + 16]` with `n <= 48`, inside the 64 the caller has room for.
    unsafe {
        let lanes = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
        let mut at = _mm512_add_epi32(lanes, _mm512_set1_epi32(base as i32));
        let sixteen = _mm512_set1_epi32(16);
        let mut n = 0;
        for k in 0..4 {
            let bits = (starts >> (16 * k)) as u16;
            let packed = _mm512_maskz_compress_epi32(bits, at);
            _mm512_storeu_si512(out.add(n).cast(), packed);
            n += bits.count_ones() as usize;
            at = _mm512_add_epi32(at, sixteen);
        }
        n
    }
}

/// How many `u32` a batch's piece bounds and each of [`Sorted`]'s lists hold:
/// the count loop's 512 pieces, a window's 64 past them, and room for the
/// 16-lane reads and writes of [`Sorted::sort`].
pub(crate) const LIST: usize = 608;

/// Whether the count loop of `classifier` sorts its pieces by length
/// ([`Sorted`]) before counting them: the AVX-512 one, which has the compress.
pub(crate) const fn sorts_pieces(classifier: u8) -> bool {
    #[cfg(all(target_arch = "x86_64", tiktoken_avx512))]
    if classifier == AVX512 {
        return true;
    }
    let _ = classifier;
    false
}

/// A batch's pieces sorted by length, so the loops that count them branch on
/// no piece's length (PATCH.md section 30): how many are one byte long (one
/// token each), the starts of those of two bytes, and the bounds of those of
/// 3–7 bytes (the tiny memo's) and of 8 or more, each list in text order.
#[cfg(all(target_arch = "x86_64", tiktoken_avx512))]
pub(crate) struct Sorted {
    ones: usize,
    lens: [usize; 3],
    // Written 16 lanes at a time by `sort`, never read past what it counted:
    // not zeroed, which for texts of a few hundred bytes would cost more than
    // the sort.
    twos: std::mem::MaybeUninit<[u32; LIST]>,
    tiny: [std::mem::MaybeUninit<[u32; LIST]>; 2],
    long: [std::mem::MaybeUninit<[u32; LIST]>; 2],
}

#[cfg(all(target_arch = "x86_64", tiktoken_avx512))]
impl Sorted {
    pub(crate) fn new() -> Sorted {
        use std::mem::MaybeUninit;
        Sorted {
            ones: 0,
            lens: [0; 3],
            twos: MaybeUninit::uninit(),
            tiny: [MaybeUninit::uninit(); 2],
            long: [MaybeUninit::uninit(); 2],
        }
    }

    /// Sorts the pieces `bounds[i]..bounds[i + 1]` for `i < n`, 16 per step:
    /// their lengths from two overlapping loads, a mask per class, and each
    /// class's starts (and ends) packed into its list by AVX-512's compress.
    ///
    /// # Safety
    /// The CPU must have AVX-512F (and the caller be compiled for it).
    #[inline(always)]
    pub(crate) unsafe fn sort(&mut self, bounds: &[u32; LIST], n: usize) {
        use std::arch::x86_64::*;
        assert!(n + 16 <= LIST, "a batch of {n} pieces");
        let twos = self.twos.as_mut_ptr().cast::<u32>();
        let [tiny_from, tiny_to] = self.tiny.each_mut().map(|l| l.as_mut_ptr().cast::<u32>());
        let [long_from, long_to] = self.long.each_mut().map(|l| l.as_mut_ptr().cast::<u32>());
        // SAFETY: the caller's CPU has AVX-512F. Step `k` (`k < n`) reads
        // `bounds[k..k + 17]`, inside it as `n + 16 <= LIST`; it writes 16
        // lanes at each list's length so far, at most `k`, so inside `LIST`.
        unsafe {
            let splat = |v: i32| _mm512_set1_epi32(v);
            let (mut ones, mut t, mut s, mut l) = (0, 0, 0, 0);
            let mut k = 0;
            while k < n {
                let valid = if n - k >= 16 {
                    u16::MAX
                } else {
                    (1u16 << (n - k)) - 1
                };
                let from = _mm512_loadu_si512(bounds.as_ptr().add(k).cast());
                let to = _mm512_loadu_si512(bounds.as_ptr().add(k + 1).cast());
                let len = _mm512_sub_epi32(to, from);
                let one = _mm512_mask_cmpeq_epi32_mask(valid, len, splat(1));
                let two = _mm512_mask_cmpeq_epi32_mask(valid, len, splat(2));
                let long = _mm512_mask_cmpge_epu32_mask(valid, len, splat(8));
                let tiny = valid & !(one | two | long);
                ones += one.count_ones() as usize;
                let pack = |mask: u16, v: __m512i, out: *mut u32, at: usize| {
                    _mm512_storeu_si512(out.add(at).cast(), _mm512_maskz_compress_epi32(mask, v));
                };
                pack(two, from, twos, t);
                t += two.count_ones() as usize;
                pack(tiny, from, tiny_from, s);
                pack(tiny, to, tiny_to, s);
                s += tiny.count_ones() as usize;
                pack(long, from, long_from, l);
                pack(long, to, long_to, l);
                l += long.count_ones() as usize;
                k += 16;
            }
            self.ones = ones;
            self.lens = [t, s, l];
        }
    }

    /// How many pieces are one byte long.
    pub(crate) fn ones(&self) -> usize {
        self.ones
    }

    /// The starts of the pieces of two bytes.
    pub(crate) fn twos(&self) -> &[u32] {
        // SAFETY: `sort` wrote the first `lens[0]` (all of them while none did).
        unsafe { std::slice::from_raw_parts(self.twos.as_ptr().cast(), self.lens[0]) }
    }

    /// The starts and ends of the pieces of 3–7 bytes.
    pub(crate) fn tiny(&self) -> (&[u32], &[u32]) {
        // SAFETY: as in `twos`.
        unsafe { (self.list(&self.tiny[0], 1), self.list(&self.tiny[1], 1)) }
    }

    /// The starts and ends of the pieces of 8 bytes or more.
    pub(crate) fn long(&self) -> (&[u32], &[u32]) {
        // SAFETY: as in `twos`.
        unsafe { (self.list(&self.long[0], 2), self.list(&self.long[1], 2)) }
    }

    /// # Safety
    /// `sort` wrote the first `lens[which]` of `list`.
    unsafe fn list<'a>(
        &'a self,
        list: &'a std::mem::MaybeUninit<[u32; LIST]>,
        which: usize,
    ) -> &'a [u32] {
        // SAFETY: the caller's.
        unsafe { std::slice::from_raw_parts(list.as_ptr().cast(), self.lens[which]) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pretokenize::{FastPath, PreTokenizer, RegexPreTokenizer, WhitespaceRules};

    /// Whether this CPU can run the AVX-512 classifier (as `bpe::avx512` asks).
    #[cfg(all(target_arch = "x86_64", tiktoken_avx512))]
    fn has_avx512() -> bool {
        std::arch::is_x86_feature_detected!("avx512bw")
    }

    #[cfg(all(target_arch = "x86_64", tiktoken_avx512))]
    #[target_feature(enable = "avx512f,avx512bw")]
    unsafe fn classes_avx512(chunk: &[u8; 64]) -> Classes {
        // SAFETY: compiled for AVX-512BW, called only where the CPU has it.
        unsafe { Classes::avx512(chunk) }
    }

    #[cfg(all(target_arch = "x86_64", tiktoken_avx512))]
    #[target_feature(enable = "avx512f,avx512bw")]
    unsafe fn window_avx512<const O200K: bool>(text: &[u8], pos: usize) -> Window {
        window::<O200K, AVX512>(text, pos)
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn the_simd_classes_are_the_byte_classes() {
        // Every byte value in every lane: lane k of round r holds r + 17k.
        for round in 0..=255u8 {
            let chunk: [u8; 64] =
                std::array::from_fn(|k| round.wrapping_add((k as u8).wrapping_mul(17)));
            let bytes = Classes::of_bytes(&chunk);
            assert_eq!(Classes::sse2(&chunk), bytes, "{chunk:?}");
            #[cfg(tiktoken_avx512)]
            if has_avx512() {
                // SAFETY: the CPU has AVX-512BW.
                assert_eq!(unsafe { classes_avx512(&chunk) }, bytes, "{chunk:?}");
            }
        }
    }

    /// Every window's starts at each char boundary of `t`, through every
    /// classifier this CPU runs, are the scanner's piece boundaries there (the
    /// scanner being held to the regex in `pretokenize`'s tests); returns how
    /// many starts the windows decided.
    fn check_every_start(t: &str) -> usize {
        let b = t.as_bytes();
        let mut decided = 0;
        for (o200k, fast, pattern) in [
            (false, FastPath::Cl100k, crate::encoding::CL100K_PATTERN),
            (true, FastPath::O200k, crate::encoding::O200K_PATTERN),
        ] {
            let scanner = RegexPreTokenizer::new(pattern, fast, WhitespaceRules::NewlineFirst);
            for pos in (0..b.len()).filter(|&p| t.is_char_boundary(p)) {
                // The scanner's boundaries after `pos`, as bits, to 64 bytes on.
                let mut expected = 0u64;
                let mut at = pos;
                let mut text_end = None;
                while let Some((_, end)) = scanner.next_match(t, at) {
                    if end == b.len() {
                        text_end = Some(end - pos);
                        break;
                    }
                    if end - pos >= 64 {
                        break;
                    }
                    expected |= 1 << (end - pos);
                    at = end;
                }
                let mut windows = vec![("bytes", decide_with_bytes(o200k, b, pos))];
                #[cfg(target_arch = "x86_64")]
                {
                    windows.push((
                        "sse2",
                        if o200k {
                            window::<true, SSE2>(b, pos)
                        } else {
                            window::<false, SSE2>(b, pos)
                        },
                    ));
                    #[cfg(tiktoken_avx512)]
                    if has_avx512() {
                        // SAFETY: the CPU has AVX-512BW.
                        windows.push(("avx512", unsafe {
                            if o200k {
                                window_avx512::<true>(b, pos)
                            } else {
                                window_avx512::<false>(b, pos)
                            }
                        }));
                    }
                }
                for (classifier, w) in windows {
                    let what = format!("{classifier}, o200k {o200k}, {t:?} at {pos}: {w:?}");
                    assert!(
                        w.end <= 64 && w.starts >> w.end.min(63) == 0 || w.end == 64,
                        "{what}"
                    );
                    let decided_bits = if w.end >= 64 {
                        u64::MAX
                    } else {
                        (1u64 << w.end) - 1
                    };
                    assert_eq!(w.starts, expected & decided_bits & !1, "{what}");
                    if w.last {
                        assert_eq!(Some(w.end), text_end, "{what}");
                    }
                    decided += w.starts.count_ones() as usize + usize::from(w.last);
                }
            }
        }
        decided
    }

    fn decide_with_bytes(o200k: bool, b: &[u8], pos: usize) -> Window {
        if o200k {
            window::<true, BYTES>(b, pos)
        } else {
            window::<false, BYTES>(b, pos)
        }
    }

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
        "//",
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
        "\x1c",
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
        "'r",
        "'l",
        "'lx",
        "'v",
        "'Rx",
        "ſ",
        "'ſ",
        "the",
        "Hello",
        "HTTP",
        "camelCase",
        "x1",
        "123",
        "12345",
        "1234567",
        "...",
        "!?",
        " .",
        "  .",
        ", ",
        ";\n",
        "{\n",
        "}\n//",
        "\n  \n",
        "  \n",
        "\n\n",
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
        "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklm",
        "                                                                    ",
        "    ",
        "        let ",
        "fn main() {\n",
        "    }\n",
        "don't",
        "it's",
        "x's's",
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

    /// The windows decide the same starts as the scanner at every start of
    /// 2,000 random texts of the fragments above (the bytes beside each class's
    /// bounds, every ASCII whitespace byte, contractions in both cases and
    /// chained, digit runs past three, spaces before newlines, runs longer than
    /// a window, and non-ASCII letters, spaces and punctuation), and decide a
    /// good share of them.
    #[test]
    fn every_start_a_window_decides_is_the_scanners() {
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let mut decided = 0;
        for round in 0..2000 {
            decided += check_every_start(&text(&mut seed, round % 40));
        }
        assert!(decided > 1_000_000, "{decided}");
    }

    #[cfg(all(target_arch = "x86_64", tiktoken_avx512))]
    #[target_feature(enable = "avx512f,avx512bw")]
    unsafe fn compress_avx512(starts: u64, base: u32, out: &mut [u32; 80]) -> usize {
        // SAFETY: compiled for AVX-512F, called only where the CPU has it; 80
        // lanes leave room for the 64 it may write.
        unsafe { compress_starts(starts, base, out.as_mut_ptr()) }
    }

    /// The compressed starts are the set bits in order, offset by the base, and
    /// nothing else is counted: masks with every bit count and at each 16-bit
    /// lane boundary, bases near `u32::MAX / 2`.
    #[test]
    #[cfg(all(target_arch = "x86_64", tiktoken_avx512))]
    fn compressed_starts_are_the_set_bits_in_order() {
        if !has_avx512() {
            return;
        }
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let mut masks = vec![
            0,
            1 << 1,
            1 << 15,
            1 << 16,
            1 << 63,
            !1,
            0xFFFF_0000_FFFF_0000,
        ];
        for _ in 0..2000 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            // Sparse and dense masks alike.
            masks.push(seed & seed.rotate_left(17) & !1);
            masks.push(seed & !1);
            masks.push((seed | seed.rotate_left(29)) & !1);
        }
        for starts in masks {
            for base in [0u32, 7, 40_000, 0x7FFF_FF00] {
                let mut out = [u32::MAX; 80];
                // SAFETY: checked for AVX-512 above.
                let n = unsafe { compress_avx512(starts, base, &mut out) };
                let expected: Vec<u32> = (0..64)
                    .filter(|i| starts >> i & 1 == 1)
                    .map(|i| base + i)
                    .collect();
                assert_eq!(&out[..n], &expected[..], "{starts:#x} from {base}");
                assert!(
                    out[64..].iter().all(|&v| v == u32::MAX),
                    "{starts:#x}: wrote past 64"
                );
            }
        }
    }

    #[cfg(all(target_arch = "x86_64", tiktoken_avx512))]
    #[target_feature(enable = "avx512f,avx512bw")]
    unsafe fn sort_avx512(sorted: &mut Sorted, bounds: &[u32; LIST], n: usize) {
        // SAFETY: compiled for AVX-512F, called only where the CPU has it.
        unsafe { sorted.sort(bounds, n) }
    }

    /// Each piece lands in its length's class, in order, and nothing else
    /// does: batches of every size up to the count loop's largest (575
    /// pieces), lengths 1 to 40, and a sorter reused from a larger batch (its
    /// lists hold stale values past what the new sort counts).
    #[test]
    #[cfg(all(target_arch = "x86_64", tiktoken_avx512))]
    fn sorted_pieces_are_the_pieces_by_length() {
        if !has_avx512() {
            return;
        }
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        let mut sorted = Sorted::new();
        for n in (0..=575).rev() {
            let mut bounds = [0u32; LIST];
            for i in 1..=n {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                // Mostly short pieces, as in text, some up to 40 bytes.
                let len = if seed.is_multiple_of(4) {
                    (seed >> 8) % 40
                } else {
                    seed >> 8 & 7
                } + 1;
                bounds[i] = bounds[i - 1] + len as u32;
            }
            // Past the batch: values that would sort as pieces if read.
            for (i, b) in bounds.iter_mut().enumerate().skip(n + 1) {
                *b = 1_000_000 + 3 * i as u32;
            }
            // SAFETY: checked for AVX-512 above.
            unsafe { sort_avx512(&mut sorted, &bounds, n) };
            let piece = |i: usize| (bounds[i], bounds[i + 1]);
            let of = |lens: std::ops::RangeInclusive<u32>| -> (Vec<u32>, Vec<u32>) {
                (0..n)
                    .map(piece)
                    .filter(|(a, b)| lens.contains(&(b - a)))
                    .unzip()
            };
            assert_eq!(sorted.ones(), of(1..=1).0.len(), "n {n}");
            assert_eq!(sorted.twos(), &of(2..=2).0[..], "n {n}");
            let (from, to) = of(3..=7);
            assert_eq!(sorted.tiny(), (&from[..], &to[..]), "n {n}");
            let (from, to) = of(8..=u32::MAX);
            assert_eq!(sorted.long(), (&from[..], &to[..]), "n {n}");
        }
    }

    #[test]
    fn windows_stop_where_their_bytes_stop_deciding() {
        // A run of spaces reaching past the window may end in a newline: the
        // window stops where it begins, and has decided nothing after `pos`.
        let t = format!("a{}\nb", " ".repeat(70));
        let w = window::<true, BYTES>(t.as_bytes(), 0);
        assert_eq!((w.starts, w.end, w.last), (0, 1, false));
        // Spaces before a newline: decided up to the whitespace run's first byte.
        let w = window::<true, BYTES>(
            b"x = 1;  \n  y = 2;\n  z = 3;\n  w = 4;\n  v = 5;\n  u = 6;\n",
            0,
        );
        assert_eq!((w.starts, w.end, w.last), (0b111_1010, 7, false));
        // Non-ASCII at the start: nothing decided.
        let w = window::<true, BYTES>("한국어 text".as_bytes(), 0);
        assert_eq!((w.starts, w.last), (0, false));
        // A short text is decided to its end.
        let w = window::<false, BYTES>(b"hi there", 0);
        assert_eq!((w.starts, w.end, w.last), (0b100, 8, true));
        check_every_start(&t);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]
        /// ASCII-heavy strings.
        #[test]
        fn prop_windows_cut_as_the_scanner(
            t in "([aAzZbQsStTmMdDrRvVeElL09@\\[`{/:.,!'\"\\- \t\n\r\x0b\x0c\x00\x1f\x7f]|'s|'S|'t|'re|'VE|'m|'ll|'D|'ſ|ſ|é|É|한|中|\u{3000}|\u{a0}|½|’|  +|[a-z]{8,40}|[A-Z]{2,9}|[0-9]{2,7}| +\n)*"
        ) {
            check_every_start(&t);
        }

        /// Any Unicode.
        #[test]
        fn prop_windows_cut_as_the_scanner_unicode(t in "\\PC*") {
            check_every_start(&t);
        }
    }
}
