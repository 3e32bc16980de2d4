use std::sync::OnceLock;

use regex::Regex;
use rustc_hash::FxHashMap;

use crate::count_memo;
use crate::merge;
use crate::piece_cache;
use crate::pretokenize::{
    FastPath, PreTokenizer, RegexPreTokenizer, WhitespaceRules, with_fast_path,
};
#[cfg(target_arch = "x86_64")]
use crate::starts;
use crate::vocab::Vocab;

/// A Byte Pair Encoding tokenizer engine.
///
/// Instances are created via [`get_encoding`](crate::get_encoding) or
/// [`encoding_for_model`](crate::encoding_for_model) and cached globally.
///
/// # Examples
///
/// ```
/// let enc = tiktoken::get_encoding("cl100k_base").unwrap();
///
/// // encode
/// let tokens = enc.encode("hello world");
/// assert_eq!(tokens, vec![15339, 1917]);
///
/// // decode
/// let text = enc.decode_to_string(&tokens).unwrap();
/// assert_eq!(text, "hello world");
///
/// // count without allocating
/// assert_eq!(enc.count("hello world"), 2);
/// ```
pub struct CoreBpe {
    vocab: Vocab,
    /// Identity for the thread-local piece cache — a nonce, never an address.
    cache_id: u64,
    special_encoder: FxHashMap<Vec<u8>, u32>,
    special_decoder: FxHashMap<u32, Vec<u8>>,
    pre_tokenizer: RegexPreTokenizer,
    // context-loader patch: compiled on first use (only the *_with_special_tokens
    // calls need it), not when the encoding loads.
    special_regex: OnceLock<Option<Regex>>,
}

impl CoreBpe {
    pub(crate) fn new(
        encoder: FxHashMap<Vec<u8>, u32>,
        special_encoder: FxHashMap<Vec<u8>, u32>,
        pattern: &str,
        fast: FastPath,
        ws: WhitespaceRules,
    ) -> Self {
        let entries: Vec<(Vec<u8>, u32)> = encoder.into_iter().collect();
        Self::with_vocab(
            Vocab::from_entries(entries),
            special_encoder,
            pattern,
            fast,
            ws,
        )
    }

    /// context-loader patch: an encoding over a vocabulary already built (the
    /// embedded ones are read in place, see `Vocab::from_static`).
    pub(crate) fn with_vocab(
        vocab: Vocab,
        special_encoder: FxHashMap<Vec<u8>, u32>,
        pattern: &str,
        fast: FastPath,
        ws: WhitespaceRules,
    ) -> Self {
        debug_assert!(
            special_encoder.keys().all(|k| !k.is_empty()),
            "special token keys must not be empty"
        );
        let pre_tokenizer = RegexPreTokenizer::new(pattern, fast, ws);

        let special_decoder = special_encoder
            .iter()
            .map(|(k, &v)| (v, k.clone()))
            .collect();

        Self {
            vocab,
            cache_id: piece_cache::new_cache_id(),
            special_encoder,
            special_decoder,
            pre_tokenizer,
            special_regex: OnceLock::new(),
        }
    }

    /// The alternation of the special tokens, compiled on first use.
    fn special_regex(&self) -> Option<&Regex> {
        self.special_regex
            .get_or_init(|| {
                if self.special_encoder.is_empty() {
                    return None;
                }
                let pat = self
                    .special_encoder
                    .keys()
                    .map(|k| regex::escape(&String::from_utf8_lossy(k)))
                    .collect::<Vec<_>>()
                    .join("|");
                Some(Regex::new(&pat).expect("invalid special regex"))
            })
            .as_ref()
    }

    /// context-loader patch: the vocabulary, for the tests of its tables.
    #[cfg(test)]
    pub(crate) fn vocab(&self) -> &Vocab {
        &self.vocab
    }

    /// context-loader patch: the bytes of one regular token, without allocating
    /// (`None` for a special token or an id outside the vocabulary).
    #[inline]
    #[must_use]
    pub fn token_bytes(&self, token: u32) -> Option<&[u8]> {
        self.vocab.try_decode(token)
    }

    /// Encode text into token ids.
    ///
    /// Special tokens like `<|endoftext|>` are treated as ordinary text.
    /// Use [`encode_with_special_tokens`](Self::encode_with_special_tokens) to recognize them.
    ///
    /// # Examples
    ///
    /// ```
    /// let enc = tiktoken::get_encoding("cl100k_base").unwrap();
    /// let tokens = enc.encode("hello world");
    /// assert_eq!(tokens, vec![15339, 1917]);
    /// ```
    #[inline]
    #[must_use]
    pub fn encode(&self, text: &str) -> Vec<u32> {
        let mut result = Vec::with_capacity(text.len() / 3);
        self.encode_into(text, &mut result);
        result
    }

    /// Encode text into token ids, recognizing special tokens.
    ///
    /// Special tokens (e.g. `<|endoftext|>`) are encoded as their designated ids
    /// instead of being split into sub-word pieces.
    ///
    /// # Examples
    ///
    /// ```
    /// let enc = tiktoken::get_encoding("cl100k_base").unwrap();
    /// let tokens = enc.encode_with_special_tokens("hello<|endoftext|>world");
    /// assert!(tokens.contains(&100257)); // <|endoftext|> token id
    /// ```
    #[must_use]
    pub fn encode_with_special_tokens(&self, text: &str) -> Vec<u32> {
        let special_regex = match self.special_regex() {
            Some(r) => r,
            None => return self.encode(text),
        };

        let mut result = Vec::with_capacity(text.len() / 3);
        let mut start = 0;

        for mat in special_regex.find_iter(text) {
            if mat.start() > start {
                self.encode_into(&text[start..mat.start()], &mut result);
            }
            let piece = &text.as_bytes()[mat.start()..mat.end()];
            if let Some(&token) = self.special_encoder.get(piece) {
                result.push(token);
            } else {
                debug_assert!(
                    false,
                    "special regex matched {:?} but no encoder entry found",
                    String::from_utf8_lossy(piece)
                );
            }
            start = mat.end();
        }

        if start < text.len() {
            self.encode_into(&text[start..], &mut result);
        }

        result
    }

    /// Decode token ids back to raw bytes.
    ///
    /// Use [`decode_to_string`](Self::decode_to_string) if you want a `String` directly.
    ///
    /// # Examples
    ///
    /// ```
    /// let enc = tiktoken::get_encoding("cl100k_base").unwrap();
    /// let bytes = enc.decode(&[15339, 1917]);
    /// assert_eq!(&bytes, b"hello world");
    /// ```
    #[must_use]
    pub fn decode(&self, tokens: &[u32]) -> Vec<u8> {
        let mut result = Vec::with_capacity(tokens.len() * 4);
        for &token in tokens {
            if let Some(bytes) = self.vocab.try_decode(token) {
                result.extend_from_slice(bytes);
                continue;
            }
            if let Some(bytes) = self.special_decoder.get(&token) {
                result.extend_from_slice(bytes);
            }
        }
        result
    }

    /// Decode token ids back to a UTF-8 string.
    ///
    /// Returns `Err` if the decoded bytes are not valid UTF-8.
    ///
    /// # Examples
    ///
    /// ```
    /// let enc = tiktoken::get_encoding("cl100k_base").unwrap();
    /// let text = enc.decode_to_string(&[15339, 1917]).unwrap();
    /// assert_eq!(text, "hello world");
    /// ```
    pub fn decode_to_string(&self, tokens: &[u32]) -> Result<String, std::string::FromUtf8Error> {
        String::from_utf8(self.decode(tokens))
    }

    /// Count tokens without allocating a token vector.
    ///
    /// This is faster than `encode(text).len()` because it avoids building
    /// the full token id vector.
    ///
    /// Note: special tokens (e.g. `<|endoftext|>`) are treated as ordinary text,
    /// matching the behavior of [`encode`](Self::encode). Use
    /// [`count_with_special_tokens`](Self::count_with_special_tokens) if you
    /// need special tokens to be recognized.
    ///
    /// # Examples
    ///
    /// ```
    /// let enc = tiktoken::get_encoding("o200k_base").unwrap();
    /// let count = enc.count("The quick brown fox.");
    /// assert_eq!(count, enc.encode("The quick brown fox.").len());
    /// ```
    #[inline]
    #[must_use]
    pub fn count(&self, text: &str) -> usize {
        // context-loader patch: one loop per kept vocabulary's scanner, each with
        // its scanner inlined (see `next_match_for`).
        with_fast_path!(self.pre_tokenizer.fast_path(), self.count_for(text))
    }

    /// [`Self::count`] with the pre-tokenizer's fast path fixed at compile time.
    #[inline(always)]
    fn count_for<const FAST: u8>(&self, text: &str) -> usize {
        // context-loader patch: pieces of 3..=24 bytes are answered from a
        // per-thread memo that stays in L2, not the vocabulary's table (a cache
        // miss per piece on o200k_base's 8 MB), see `count_memo`.
        count_memo::with_memo(self.cache_id, |memo| {
            let Some(memo) = memo else {
                // Re-entry on this thread (its memo is in use): no memo.
                let mut count = 0;
                let mut pos = 0;
                while let Some((start, end)) = self.pre_tokenizer.next_match_for::<FAST>(text, pos)
                {
                    count += self.count_piece(&text.as_bytes()[start..end]);
                    pos = end;
                }
                return count;
            };
            memo.ready_for(text.len());
            // context-loader patch (PATCH.md section 24): on x86_64, cl100k_base's
            // and o200k_base's pieces come from 64-byte windows of bitmasks, not
            // one scanner call per piece.
            #[cfg(target_arch = "x86_64")]
            if FAST == CL100K || FAST == O200K {
                #[cfg(tiktoken_avx512)]
                if avx512() {
                    // SAFETY: `avx512` found AVX-512BW, BMI1/2, LZCNT and POPCNT.
                    return unsafe { self.count_windows_avx512::<FAST>(text, memo) };
                }
                return self.count_windows::<FAST, { starts::SSE2 }>(text, memo);
            }
            let mut count = 0;
            let mut pos = 0;
            // A piece the memo's first level did not know, its second-level
            // bucket and vocabulary slot prefetched: it is resolved after the
            // next piece is found, so those loads (often from memory: the pieces
            // the first level misses are the rare ones) overlap the scan instead
            // of stalling it.
            let mut pending = None;
            while let Some((start, end)) = self.pre_tokenizer.next_match_for::<FAST>(text, pos) {
                count += self.count_one(text.as_bytes(), start, end, memo, &mut pending);
                pos = end;
            }
            if let Some((piece, key)) = pending {
                count += self.count_into_memo(piece, &key, memo);
            }
            count
        })
    }

    /// [`Self::count_windows`] with AVX-512's classifier, compiled for it (Rust
    /// 1.89 and later: `build.rs` sets `tiktoken_avx512`).
    ///
    /// # Safety
    /// The CPU must have what [`avx512`] checks for.
    #[cfg(all(target_arch = "x86_64", tiktoken_avx512))]
    #[target_feature(enable = "avx512f,avx512bw,bmi1,bmi2,lzcnt,popcnt")]
    unsafe fn count_windows_avx512<const FAST: u8>(
        &self,
        text: &str,
        memo: &mut count_memo::Memo,
    ) -> usize {
        self.count_windows::<FAST, { starts::AVX512 }>(text, memo)
    }

    /// The count of `FAST`'s (cl100k_base's or o200k_base's) pieces in two
    /// steps a batch at a time: the windows of [`starts`] write where pieces
    /// end (the scanner the pieces they cannot decide), then the pieces are
    /// counted. Two short loops, each with its own state in registers, ran
    /// faster than one loop doing both (PATCH.md section 24).
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    fn count_windows<const FAST: u8, const CLASSIFIER: u8>(
        &self,
        text: &str,
        memo: &mut count_memo::Memo,
    ) -> usize {
        /// Piece ends a batch gathers before they are counted (and room for
        /// one more window's worth).
        const BATCH: usize = 512;
        let o200k = FAST == O200K;
        let bytes = text.as_bytes();
        // Ends as offsets from the batch's start: a window adds at most 63 and
        // moves on at most 63 bytes, so a batch spans less than 33 KiB (a text
        // may be longer than 4 GiB, a batch may not). `bounds[0]` is the
        // batch's start and `bounds[1..=n]` its pieces' ends: piece `i` is
        // `bounds[i]..bounds[i + 1]`.
        let mut bounds = [0u32; starts::LIST];
        #[cfg(tiktoken_avx512)]
        let mut sorted = starts::Sorted::new();
        let mut count = 0;
        let mut pending = None;
        let mut pos = 0;
        while pos < bytes.len() {
            let start = pos;
            let mut n = 0;
            let mut undecided = false;
            while pos < bytes.len() && n < BATCH {
                // The text eight windows ahead asked for (PATCH.md section 31):
                // the windows read it faster than the hardware's prefetchers
                // bring it.
                // SAFETY: a prefetch reads nothing the program sees and never
                // faults, at an address past the text's end too.
                unsafe {
                    std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                        bytes.as_ptr().wrapping_add(pos + 512).cast(),
                    )
                };
                if !ascii_next(bytes, pos) {
                    // A window would decide little before the non-ASCII byte.
                    undecided = true;
                    break;
                }
                let window = if o200k {
                    starts::window::<true, CLASSIFIER>(bytes, pos)
                } else {
                    starts::window::<false, CLASSIFIER>(bytes, pos)
                };
                let starts = window.starts;
                if starts == 0 && !window.last {
                    undecided = true;
                    break;
                }
                let base = (pos - start) as u32;
                match CLASSIFIER {
                    // SAFETY: this loop runs the AVX-512 classifier only inside
                    // a function compiled for it, where the CPU has it; `n <
                    // BATCH` leaves room for 64 ends.
                    #[cfg(tiktoken_avx512)]
                    starts::AVX512 => {
                        n += unsafe {
                            starts::compress_starts(starts, base, bounds.as_mut_ptr().add(1 + n))
                        };
                    }
                    _ => {
                        let mut rest = starts;
                        while rest != 0 {
                            bounds[1 + n] = base + rest.trailing_zeros();
                            rest &= rest - 1;
                            n += 1;
                        }
                    }
                }
                // The next window starts at the last start found (bit 0 is
                // never one).
                let mut at = pos + (63 - (starts | 1).leading_zeros() as usize);
                if window.last {
                    bounds[1 + n] = (bytes.len() - start) as u32;
                    n += 1;
                    at = bytes.len();
                }
                pos = at;
            }
            // Pieces of one or two bytes and tiny memo hits (nine in ten) from
            // tables held here; the others as the scanner's loop counts them.
            let (tiny, pairs) = (memo.tiny_view(), self.vocab.pair_words());
            if starts::sorts_pieces(CLASSIFIER) {
                // The pieces by length first, then one loop per length class,
                // so no branch depends on a piece's length (PATCH.md section 30).
                #[cfg(tiktoken_avx512)]
                {
                    // SAFETY: only the AVX-512 classifier sorts, run as above.
                    unsafe { sorted.sort(&bounds, n) };
                    count += sorted.ones();
                    for &at in sorted.twos() {
                        let at = start + at as usize;
                        count += 2 - crate::vocab::pair_bit(pairs, bytes[at], bytes[at + 1]);
                    }
                    let (from, to) = sorted.tiny();
                    for (&from, &end) in from.iter().zip(to) {
                        let (from, end) = (start + from as usize, start + end as usize);
                        count += match self.count_hot(bytes, from, end, tiny, pairs) {
                            Some(n) => n,
                            None => self.count_one(bytes, from, end, memo, &mut pending),
                        };
                    }
                    let (from, to) = sorted.long();
                    for (&from, &end) in from.iter().zip(to) {
                        let (from, end) = (start + from as usize, start + end as usize);
                        count += self.count_one(bytes, from, end, memo, &mut pending);
                    }
                }
            } else {
                for i in 0..n {
                    let (from, end) = (start + bounds[i] as usize, start + bounds[i + 1] as usize);
                    count += match self.count_hot(bytes, from, end, tiny, pairs) {
                        Some(n) => n,
                        None => self.count_one(bytes, from, end, memo, &mut pending),
                    };
                }
            }
            if undecided {
                let (counted, to) = self.count_scanned::<FAST>(text, pos, memo, &mut pending);
                count += counted;
                pos = to;
            }
        }
        if let Some((piece, key)) = pending {
            count += self.count_into_memo(piece, &key, memo);
        }
        count
    }

    /// The scanner's count loop (as on other targets and patterns) from `pos`
    /// until 16 ASCII bytes come next, for [`Self::count_windows`]: the count
    /// and where it stopped. Out of line, so text that is not ASCII runs the
    /// loop it ran before the windows (inlined there, it counted Korean 5–15 %
    /// slower).
    #[cfg(target_arch = "x86_64")]
    #[inline(never)]
    fn count_scanned<'t, const FAST: u8>(
        &self,
        text: &'t str,
        mut pos: usize,
        memo: &mut count_memo::Memo,
        pending: &mut Option<(&'t [u8], count_memo::Key)>,
    ) -> (usize, usize) {
        let bytes = text.as_bytes();
        let mut count = 0;
        while let Some((start, end)) = self.pre_tokenizer.next_match_for::<FAST>(text, pos) {
            count += self.count_one(bytes, start, end, memo, pending);
            pos = end;
            if ascii_next(bytes, pos) {
                break;
            }
        }
        (count, pos)
    }

    /// The tokens of the piece `bytes[start..end]` when it is one or two bytes
    /// long or its tiny memo slot holds it; `None` sends it to [`Self::count_one`].
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    fn count_hot(
        &self,
        bytes: &[u8],
        start: usize,
        end: usize,
        tiny: count_memo::TinyView,
        pairs: &[u64; crate::vocab_layout::PAIR_BITS_WORDS],
    ) -> Option<usize> {
        if start >= end || end > bytes.len() {
            piece_out_of_bounds(start, end, bytes.len());
        }
        let len = end - start;
        if len <= 2 {
            // SAFETY: `start < end <= bytes.len()`, checked just above.
            let (first, last) =
                unsafe { (*bytes.get_unchecked(start), *bytes.get_unchecked(end - 1)) };
            let pair = crate::vocab::pair_bit(pairs, first, last);
            return Some(std::hint::select_unpredictable(len == 2, 2 - pair, 1));
        }
        if len <= 7
            && let Some(eight) = bytes.get(start..start + 8)
        {
            return tiny.get(u64::from_le_bytes(eight.try_into().unwrap()), len);
        }
        None
    }

    /// The tokens of the piece `bytes[start..end]`, from the memo where it can
    /// (`pending`: see [`Self::count_for`]).
    #[inline(always)]
    fn count_one<'t>(
        &self,
        bytes: &'t [u8],
        start: usize,
        end: usize,
        memo: &mut count_memo::Memo,
        pending: &mut Option<(&'t [u8], count_memo::Key)>,
    ) -> usize {
        if start >= end || end > bytes.len() {
            piece_out_of_bounds(start, end, bytes.len());
        }
        // SAFETY: `start < end <= bytes.len()`, checked just above.
        let piece = unsafe { bytes.get_unchecked(start..end) };
        match piece.len() {
            // Half of code's pieces: a byte (always one token: merging
            // needs two) or a pair (one token if the vocabulary's pair
            // table has it, else two bytes), without a branch on which.
            // (No piece is empty: an empty one would never advance `pos`.)
            len @ 0..=2 => {
                let pair = self.vocab.pair_bit(piece[0], piece[len - 1]);
                std::hint::select_unpredictable(len == 2, 2 - pair, 1)
            }
            3..=count_memo::KEY_MAX => {
                let (key, hit) = memo.get_text(bytes, start, end);
                match hit {
                    Some(n) => n,
                    None => {
                        self.vocab.prefetch(piece);
                        memo.prefetch_second(&key);
                        match pending.replace((piece, key)) {
                            None => 0,
                            Some((before, key)) => self.count_into_memo(before, &key, memo),
                        }
                    }
                }
            }
            _ => self.count_piece(piece),
        }
    }

    /// The tokens of a piece the memo's first level missed (`key` is its memo
    /// key): from its second level, else computed and stored in both. The memo
    /// holds merges too: no other cache behind it.
    #[inline(always)]
    fn count_into_memo(
        &self,
        piece: &[u8],
        key: &count_memo::Key,
        memo: &mut count_memo::Memo,
    ) -> usize {
        if let Some(n) = memo.get_second(key) {
            return n;
        }
        let n = if self.vocab.contains_key(piece) {
            1
        } else {
            merge::bpe_count(piece, &self.vocab)
        };
        memo.put(key, n);
        n
    }

    /// The tokens of one piece: one if the vocabulary has it, else its merge.
    #[inline(always)]
    fn count_piece(&self, piece: &[u8]) -> usize {
        if self.vocab.contains_key(piece) {
            1
        } else if (3..=piece_cache::KEY_MAX).contains(&piece.len()) {
            piece_cache::count_piece(self.cache_id, piece, |buf| {
                merge::bpe_encode_buf(piece, &self.vocab, buf)
            })
        } else {
            merge::bpe_count(piece, &self.vocab)
        }
    }

    /// Count tokens, recognizing special tokens.
    ///
    /// This is the counting equivalent of
    /// [`encode_with_special_tokens`](Self::encode_with_special_tokens).
    #[must_use]
    pub fn count_with_special_tokens(&self, text: &str) -> usize {
        let special_regex = match self.special_regex() {
            Some(r) => r,
            None => return self.count(text),
        };

        let mut total = 0;
        let mut start = 0;

        for mat in special_regex.find_iter(text) {
            if mat.start() > start {
                total += self.count(&text[start..mat.start()]);
            }
            total += 1; // special token = 1 token
            start = mat.end();
        }

        if start < text.len() {
            total += self.count(&text[start..]);
        }

        total
    }

    /// Encode text using multiple threads for large inputs.
    ///
    /// Falls back to single-threaded encoding for texts smaller than 4 KB.
    /// Results are identical to [`encode`](Self::encode).
    ///
    /// Requires the `parallel` feature.
    #[cfg(feature = "parallel")]
    #[must_use]
    pub fn encode_parallel(&self, text: &str) -> Vec<u32> {
        use rayon::prelude::*;

        // Below this size, single-threaded encode wins: the ASCII fast-path made
        // serial tokenization cheap, and pre-tokenization (~60% of the work)
        // stays serial here, so rayon's dispatch/join overhead dominates. Measured
        // break-even on an M4 Pro is ~460 KB (45 KB: 1.8x slower; 180 KB: 1.1x
        // slower; 900 KB: 1.2x faster). 512 KB keeps the parallel path strictly a
        // win. Even above it the ceiling is only ~20% (Amdahl, serial pre-tokenize).
        const THRESHOLD: usize = 512 * 1024;
        if text.len() < THRESHOLD {
            return self.encode(text);
        }

        // collect all pre-tokenizer match ranges
        let mut ranges = Vec::new();
        let mut pos = 0;
        while let Some((start, end)) = self.pre_tokenizer.next_match(text, pos) {
            ranges.push((start, end));
            pos = end;
        }

        // Encode the pieces in parallel, but grouped into contiguous chunks so
        // each rayon task fills a single local buffer instead of allocating one
        // Vec per piece (which would be tens of thousands of tiny allocations on
        // large inputs). Aim for a few chunks per worker thread for load balance.
        let bytes = text.as_bytes();
        let chunk_size = ranges
            .len()
            .div_ceil(rayon::current_num_threads() * 4)
            .max(1);
        let parts: Vec<Vec<u32>> = ranges
            .par_chunks(chunk_size)
            .map(|chunk| {
                let span = chunk.last().map_or(0, |&(_, end)| end)
                    - chunk.first().map_or(0, |&(start, _)| start);
                let mut local = Vec::with_capacity(span / 3 + 1);
                for &(start, end) in chunk {
                    let piece = &bytes[start..end];
                    if let Some(token) = self.vocab.get(piece) {
                        local.push(token);
                    } else {
                        merge::bpe_encode(piece, &self.vocab, &mut local);
                    }
                }
                local
            })
            .collect();

        let total: usize = parts.iter().map(|c| c.len()).sum();
        let mut result = Vec::with_capacity(total);
        for part in parts {
            result.extend_from_slice(&part);
        }
        result
    }

    /// Number of regular (non-special) tokens in the vocabulary.
    ///
    /// # Examples
    ///
    /// ```
    /// let enc = tiktoken::get_encoding("cl100k_base").unwrap();
    /// assert_eq!(enc.vocab_size(), 100256);
    /// ```
    #[inline]
    #[must_use]
    pub fn vocab_size(&self) -> usize {
        self.vocab.len()
    }

    /// Number of special tokens (e.g. `<|endoftext|>`).
    ///
    /// # Examples
    ///
    /// ```
    /// let enc = tiktoken::get_encoding("cl100k_base").unwrap();
    /// assert_eq!(enc.num_special_tokens(), 5);
    /// ```
    #[inline]
    #[must_use]
    pub fn num_special_tokens(&self) -> usize {
        self.special_encoder.len()
    }

    /// Main encoding hot loop. Iterates pre-tokenizer matches over the input,
    /// then for each matched piece: (1) try direct vocab lookup (fast path for
    /// known tokens), (2) fall back to BPE merge for unknown multi-byte pieces.
    fn encode_into(&self, text: &str, result: &mut Vec<u32>) {
        // context-loader patch: as in `count`, one loop per scanner, inlined.
        with_fast_path!(
            self.pre_tokenizer.fast_path(),
            self.encode_into_for(text, result)
        )
    }

    /// [`Self::encode_into`] with the pre-tokenizer's fast path fixed at compile time.
    #[inline(always)]
    fn encode_into_for<const FAST: u8>(&self, text: &str, result: &mut Vec<u32>) {
        let bytes = text.as_bytes();
        let mut pos = 0;

        while let Some((start, end)) = self.pre_tokenizer.next_match_for::<FAST>(text, pos) {
            let piece = &bytes[start..end];
            if let Some(token) = self.vocab.get(piece) {
                result.push(token);
            } else if (3..=piece_cache::KEY_MAX).contains(&piece.len()) {
                piece_cache::encode_piece(self.cache_id, piece, result, |buf| {
                    merge::bpe_encode_buf(piece, &self.vocab, buf)
                });
            } else {
                merge::bpe_encode(piece, &self.vocab, result);
            }
            pos = end;
        }
    }
}

/// Whether the 16 bytes at `pos` (or all there are, if fewer) are ASCII.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn ascii_next(bytes: &[u8], pos: usize) -> bool {
    match bytes.get(pos..).and_then(|rest| rest.first_chunk::<16>()) {
        Some(next) => u128::from_le_bytes(*next) & 0x8080_8080_8080_8080_8080_8080_8080_8080 == 0,
        None => bytes.get(pos..).is_some_and(|rest| rest.is_ascii()),
    }
}

/// `FAST` of the two patterns [`starts`] knows.
#[cfg(target_arch = "x86_64")]
const CL100K: u8 = FastPath::Cl100k as u8;
#[cfg(target_arch = "x86_64")]
const O200K: u8 = FastPath::O200k as u8;

/// Whether this CPU runs [`starts`]' AVX-512 classifier (and the count loop
/// compiled for it). `std` caches the answer, so this is a load.
#[cfg(all(target_arch = "x86_64", tiktoken_avx512))]
#[inline]
fn avx512() -> bool {
    std::arch::is_x86_feature_detected!("avx512bw")
        && std::arch::is_x86_feature_detected!("bmi1")
        && std::arch::is_x86_feature_detected!("bmi2")
        && std::arch::is_x86_feature_detected!("lzcnt")
        && std::arch::is_x86_feature_detected!("popcnt")
}

/// context-loader patch (PATCH.md section 23): the count loop's one check of a
/// piece's bounds, out of line. A scanner bug stops the count here, as the
/// slice index it replaces would have.
#[cold]
#[inline(never)]
fn piece_out_of_bounds(start: usize, end: usize, len: usize) -> ! {
    panic!("pre-tokenizer piece {start}..{end} outside a text of {len} bytes")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Texts that take every path of [`CoreBpe::count_windows`]: batches of
    /// windows, pieces longer than a window, text that is not ASCII (the
    /// scanner's loop and the way back), and spaces before newlines.
    #[cfg(target_arch = "x86_64")]
    fn window_texts() -> Vec<String> {
        const PARTS: &[&str] = &[
            "fn main() {\n",
            "    let x = 12345;\n",
            "    }\n",
            "// don't, it's\n",
            "The QUICK brown foxJumps over 'the' lazy dog's back.\n",
            "  \n",
            "\t\r\n",
            "한국어 문장입니다. ",
            "中文",
            "é—’",
            "\u{3000}\u{a0}",
            "0x1F2E3D4C5B6A",
            "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
            "                                                                          ",
            ";\n//!",
            "x's's",
            "'ll",
            "HTTPServer",
            "=>",
            "\n\n\n",
        ];
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        let mut texts = Vec::new();
        for len in [0usize, 1, 2, 5, 17, 40, 90, 300, 2000] {
            for _ in 0..12 {
                let mut t = String::new();
                for _ in 0..len {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    t.push_str(PARTS[(seed % PARTS.len() as u64) as usize]);
                }
                texts.push(t);
            }
        }
        texts
    }

    /// Each classifier's count loop counts as many tokens as the encoding
    /// holds, on a fresh memo and a warm one (PATCH.md section 24).
    #[test]
    #[cfg(target_arch = "x86_64")]
    fn the_windows_count_what_encode_makes() {
        for name in ["cl100k_base", "o200k_base"] {
            let bpe = crate::get_encoding(name).unwrap();
            for t in window_texts() {
                let expected = bpe.encode(&t).len();
                for _ in 0..2 {
                    let sse2 = count_memo::with_memo(bpe.cache_id, |memo| {
                        let memo = memo.unwrap();
                        match name {
                            "cl100k_base" => {
                                bpe.count_windows::<CL100K, { starts::SSE2 }>(&t, memo)
                            }
                            _ => bpe.count_windows::<O200K, { starts::SSE2 }>(&t, memo),
                        }
                    });
                    assert_eq!(sse2, expected, "{name} sse2 {t:?}");
                    #[cfg(tiktoken_avx512)]
                    if avx512() {
                        let wide = count_memo::with_memo(bpe.cache_id, |memo| {
                            let memo = memo.unwrap();
                            // SAFETY: the CPU has what `avx512` checks for.
                            unsafe {
                                match name {
                                    "cl100k_base" => bpe.count_windows_avx512::<CL100K>(&t, memo),
                                    _ => bpe.count_windows_avx512::<O200K>(&t, memo),
                                }
                            }
                        });
                        assert_eq!(wide, expected, "{name} avx512 {t:?}");
                    }
                    assert_eq!(bpe.count(&t), expected, "{name} count {t:?}");
                }
            }
        }
    }

    fn make_test_bpe() -> CoreBpe {
        let mut encoder: FxHashMap<Vec<u8>, u32> = FxHashMap::default();
        encoder.insert(b"a".to_vec(), 0);
        encoder.insert(b"b".to_vec(), 1);
        encoder.insert(b"c".to_vec(), 2);
        encoder.insert(b"ab".to_vec(), 3);
        encoder.insert(b"bc".to_vec(), 4);
        encoder.insert(b"abc".to_vec(), 5);

        let special: FxHashMap<Vec<u8>, u32> = FxHashMap::default();
        CoreBpe::new(
            encoder,
            special,
            r"\w+|\S",
            FastPath::None,
            WhitespaceRules::Generic,
        )
    }

    #[test]
    fn test_byte_pair_merge_single_byte() {
        let mut ranks: FxHashMap<Vec<u8>, u32> = FxHashMap::default();
        ranks.insert(b"x".to_vec(), 0);
        let bpe = CoreBpe::new(
            ranks,
            FxHashMap::default(),
            r"\w+|\S",
            FastPath::None,
            WhitespaceRules::Generic,
        );
        let tokens = bpe.encode("x");
        assert_eq!(tokens, vec![0]);
    }

    #[test]
    fn test_byte_pair_merge_known_pair() {
        let mut ranks: FxHashMap<Vec<u8>, u32> = FxHashMap::default();
        ranks.insert(b"a".to_vec(), 0);
        ranks.insert(b"b".to_vec(), 1);
        ranks.insert(b"ab".to_vec(), 2);
        let bpe = CoreBpe::new(
            ranks,
            FxHashMap::default(),
            r"\w+|\S",
            FastPath::None,
            WhitespaceRules::Generic,
        );
        let tokens = bpe.encode("ab");
        assert_eq!(tokens, vec![2]);
    }

    #[test]
    fn test_byte_pair_merge_unknown_pair() {
        let mut ranks: FxHashMap<Vec<u8>, u32> = FxHashMap::default();
        ranks.insert(b"a".to_vec(), 0);
        ranks.insert(b"b".to_vec(), 1);
        let bpe = CoreBpe::new(
            ranks,
            FxHashMap::default(),
            r"\w|\S",
            FastPath::None,
            WhitespaceRules::Generic,
        );
        let tokens = bpe.encode("ab");
        assert_eq!(tokens, vec![0, 1]);
    }

    #[test]
    fn test_encode_decode_roundtrip() {
        let bpe = make_test_bpe();
        let tokens = bpe.encode("abc");
        let decoded = bpe.decode(&tokens);
        assert_eq!(&decoded, b"abc");
    }

    /// PATCH.md section 19: a piece of one or two bytes is counted without a
    /// branch on which (one token, or two when the pair table lacks the pair).
    /// Every text of two ASCII bytes, alone and with a space before each (the
    /// scanners cut them into pieces of one and two bytes: `a`, `ab`, ` a`,
    /// `!!`, `12`, control bytes, whose doubles are not tokens…), and each
    /// pair after every other, in one text, counts as it encodes, with both
    /// kept vocabularies.
    #[test]
    fn pieces_of_one_and_two_bytes_count_as_they_encode() {
        for name in ["cl100k_base", "o200k_base"] {
            let bpe = crate::get_encoding(name).unwrap();
            let mut all = String::new();
            for a in '\0'..='\x7f' {
                for b in '\0'..='\x7f' {
                    for text in [format!("{a}{b}"), format!(" {a} {b}")] {
                        assert_eq!(
                            bpe.count(&text),
                            bpe.encode(&text).len(),
                            "{name}: {text:?}"
                        );
                    }
                    all.push(a);
                    all.push(b);
                }
            }
            assert_eq!(bpe.count(&all), bpe.encode(&all).len(), "{name}");
        }
    }

    #[test]
    fn test_count_matches_encode_len() {
        let bpe = make_test_bpe();
        let text = "abc";
        assert_eq!(bpe.count(text), bpe.encode(text).len());
    }

    #[test]
    fn test_empty_input() {
        let bpe = make_test_bpe();
        assert_eq!(bpe.encode(""), Vec::<u32>::new());
        assert_eq!(bpe.count(""), 0);
        assert_eq!(bpe.decode(&[]), Vec::<u8>::new());
    }

    #[test]
    fn test_multi_step_bpe_merge() {
        let mut ranks: FxHashMap<Vec<u8>, u32> = FxHashMap::default();
        ranks.insert(b"d".to_vec(), 0);
        ranks.insert(b"e".to_vec(), 1);
        ranks.insert(b"f".to_vec(), 2);
        ranks.insert(b"de".to_vec(), 3);
        ranks.insert(b"ef".to_vec(), 4);
        let bpe = CoreBpe::new(
            ranks,
            FxHashMap::default(),
            r"\w+|\S",
            FastPath::None,
            WhitespaceRules::Generic,
        );
        let tokens = bpe.encode("def");
        assert_eq!(tokens, vec![3, 2]); // de=3, f=2
    }

    #[test]
    fn test_decode_to_string_invalid_utf8() {
        let mut encoder: FxHashMap<Vec<u8>, u32> = FxHashMap::default();
        encoder.insert(vec![0xFF, 0xFE], 0);
        let bpe = CoreBpe::new(
            encoder,
            FxHashMap::default(),
            r"[\s\S]+",
            FastPath::None,
            WhitespaceRules::Generic,
        );
        assert!(bpe.decode_to_string(&[0]).is_err());
    }

    #[test]
    fn test_encode_with_special_tokens_no_specials() {
        let bpe = make_test_bpe();
        assert_eq!(bpe.encode("abc"), bpe.encode_with_special_tokens("abc"));
    }

    #[test]
    fn test_encode_with_special_tokens_mixed() {
        let mut encoder: FxHashMap<Vec<u8>, u32> = FxHashMap::default();
        encoder.insert(b"x".to_vec(), 0);
        encoder.insert(b"y".to_vec(), 1);
        let mut special: FxHashMap<Vec<u8>, u32> = FxHashMap::default();
        special.insert(b"<|end|>".to_vec(), 99);
        let bpe = CoreBpe::new(
            encoder,
            special,
            r"\w|\S",
            FastPath::None,
            WhitespaceRules::Generic,
        );
        let tokens = bpe.encode_with_special_tokens("x<|end|>y");
        assert_eq!(tokens, vec![0, 99, 1]);
    }

    #[test]
    fn test_decode_includes_special_tokens() {
        let mut encoder: FxHashMap<Vec<u8>, u32> = FxHashMap::default();
        encoder.insert(b"hi".to_vec(), 0);
        let mut special: FxHashMap<Vec<u8>, u32> = FxHashMap::default();
        special.insert(b"<|end|>".to_vec(), 99);
        let bpe = CoreBpe::new(
            encoder,
            special,
            r"\w+|\S",
            FastPath::None,
            WhitespaceRules::Generic,
        );
        let decoded = bpe.decode(&[0, 99]);
        assert_eq!(&decoded, b"hi<|end|>");
    }

    #[test]
    fn test_bpe_merge_full_collapse() {
        let mut ranks: FxHashMap<Vec<u8>, u32> = FxHashMap::default();
        ranks.insert(b"a".to_vec(), 10);
        ranks.insert(b"b".to_vec(), 20);
        ranks.insert(b"c".to_vec(), 30);
        ranks.insert(b"ab".to_vec(), 5);
        ranks.insert(b"abc".to_vec(), 3);
        let bpe = CoreBpe::new(
            ranks.clone(),
            FxHashMap::default(),
            r"\w+|\S",
            FastPath::None,
            WhitespaceRules::Generic,
        );
        let tokens = bpe.encode("abc");
        assert_eq!(tokens, vec![3]);

        ranks.insert(b"d".to_vec(), 40);
        ranks.insert(b"cd".to_vec(), 7);
        ranks.insert(b"abcd".to_vec(), 1);
        let bpe2 = CoreBpe::new(
            ranks,
            FxHashMap::default(),
            r"\w+|\S",
            FastPath::None,
            WhitespaceRules::Generic,
        );
        let tokens2 = bpe2.encode("abcd");
        assert_eq!(tokens2, vec![1]);
    }

    #[test]
    fn test_bpe_merge_to_two_parts() {
        let mut ranks: FxHashMap<Vec<u8>, u32> = FxHashMap::default();
        ranks.insert(b"a".to_vec(), 10);
        ranks.insert(b"b".to_vec(), 20);
        ranks.insert(b"c".to_vec(), 30);
        ranks.insert(b"x".to_vec(), 40);
        ranks.insert(b"ab".to_vec(), 5);
        ranks.insert(b"abc".to_vec(), 2);
        ranks.insert(b"cx".to_vec(), 15);
        ranks.insert(b"abcx".to_vec(), 1);
        let bpe = CoreBpe::new(
            ranks,
            FxHashMap::default(),
            r"\w+|\S",
            FastPath::None,
            WhitespaceRules::Generic,
        );
        assert_eq!(bpe.encode("abcx"), vec![1]);
    }

    #[test]
    fn test_bpe_count_single_byte_fallback() {
        let mut ranks: FxHashMap<Vec<u8>, u32> = FxHashMap::default();
        ranks.insert(b"a".to_vec(), 0);
        ranks.insert(b"b".to_vec(), 1);
        let bpe = CoreBpe::new(
            ranks,
            FxHashMap::default(),
            r"\w+|\S",
            FastPath::None,
            WhitespaceRules::Generic,
        );
        assert_eq!(bpe.count("ab"), 2);
        assert_eq!(bpe.encode("ab"), vec![0, 1]);
    }

    #[test]
    fn test_count_with_special_tokens() {
        let mut encoder: FxHashMap<Vec<u8>, u32> = FxHashMap::default();
        encoder.insert(b"x".to_vec(), 0);
        encoder.insert(b"y".to_vec(), 1);
        let mut special: FxHashMap<Vec<u8>, u32> = FxHashMap::default();
        special.insert(b"<|end|>".to_vec(), 99);
        let bpe = CoreBpe::new(
            encoder,
            special,
            r"\w|\S",
            FastPath::None,
            WhitespaceRules::Generic,
        );

        assert_eq!(
            bpe.count_with_special_tokens("x<|end|>y"),
            bpe.encode_with_special_tokens("x<|end|>y").len()
        );
    }

    #[test]
    fn test_count_with_special_tokens_no_specials() {
        let bpe = make_test_bpe();
        assert_eq!(bpe.count_with_special_tokens("abc"), bpe.count("abc"));
    }

    #[test]
    fn test_encode_with_special_tokens_trailing_text() {
        let mut encoder: FxHashMap<Vec<u8>, u32> = FxHashMap::default();
        encoder.insert(b"a".to_vec(), 0);
        encoder.insert(b"b".to_vec(), 1);
        let mut special: FxHashMap<Vec<u8>, u32> = FxHashMap::default();
        special.insert(b"<|s|>".to_vec(), 99);
        let bpe = CoreBpe::new(
            encoder,
            special,
            r"\w|\S",
            FastPath::None,
            WhitespaceRules::Generic,
        );
        let tokens = bpe.encode_with_special_tokens("a<|s|>b");
        assert_eq!(tokens, vec![0, 99, 1]);
    }
}
