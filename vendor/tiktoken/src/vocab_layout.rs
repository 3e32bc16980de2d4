// context-loader patch: the vocabulary's lookup tables, built by one function that both
// `build.rs` (at compile time, for the embedded cl100k_base and o200k_base) and
// `Vocab::from_entries` (at run time, for anything else) call, so the tables read in
// place from the binary are exactly the ones a run-time build would make.
//
// Plain `std` only: `build.rs` includes this file with `#[path]`. Everything here is
// fixed-width (u64 hashes, no `usize` in a hash) so a build host and a target of
// different word size agree.

/// Longest key stored inline in a slot. Above this, the slot holds an arena
/// offset and a hash tag instead of the bytes themselves.
pub(crate) const INLINE_MAX: usize = 8;

/// Rank sentinel for "absent" in the direct-indexed tables.
pub(crate) const ABSENT: u32 = u32::MAX;
/// Words of [`Tables::pair_bits`]: a bit per pair of bytes.
pub(crate) const PAIR_BITS_WORDS: usize = (1 << 16) / 64;

/// One 16-byte slot of the open-addressing table.
///
/// `len == 0` marks an empty slot. For `3..=INLINE_MAX`, `key` holds the token
/// bytes little-endian, zero-padded — equality is a single integer compare.
/// For longer keys, `key`'s low 32 bits hold the arena offset and bits 32..40
/// an 8-bit tag from the unused high hash bits; the tag rejects most
/// mismatched slots without an arena load.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub(crate) struct Slot {
    pub(crate) key: u64,
    pub(crate) rank: u32,
    pub(crate) len: u32,
}

pub(crate) const EMPTY: Slot = Slot {
    key: 0,
    rank: 0,
    len: 0,
};

/// Where a rank's bytes are in the arena; `offset == u32::MAX` for a rank not in
/// the vocabulary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub(crate) struct Span {
    pub(crate) offset: u32,
    pub(crate) len: u32,
}

/// Load 3..=8 bytes as a zero-padded little-endian u64 with two overlapping
/// word reads instead of a variable-length copy.
#[inline]
pub(crate) fn load_inline_key(bytes: &[u8]) -> u64 {
    let len = bytes.len();
    debug_assert!((3..=INLINE_MAX).contains(&len));
    if len >= 4 {
        let lo = u32::from_le_bytes(bytes[..4].try_into().unwrap()) as u64;
        let hi = u32::from_le_bytes(bytes[len - 4..].try_into().unwrap()) as u64;
        // the reads overlap on 8 - len bytes; identical bits, so OR is exact
        lo | (hi << ((len - 4) * 8))
    } else {
        (bytes[0] as u64) | ((bytes[1] as u64) << 8) | ((bytes[2] as u64) << 16)
    }
}

/// Hash for inline keys: multiply–xorshift over the padded key with the
/// length folded in (tokens may contain NUL bytes, so "ab" and "ab\0" share a
/// padded key and must not share a bucket chain shape).
#[inline]
pub(crate) fn hash_inline(key: u64, len: usize) -> u64 {
    let x = key.wrapping_add((len as u64).wrapping_mul(0xA24B_AED4_963E_E407));
    let h = x.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    h ^ (h >> 32)
}

/// Hash for spill (> 8-byte) keys: an Fx-style rotate–xor–multiply over 8-byte
/// words, the same on every host (upstream hashed with `FxHasher`, whose result
/// depends on the word size, which a build script's host need not share).
#[inline]
pub(crate) fn hash_spill(bytes: &[u8]) -> u64 {
    const K: u64 = 0xF135_7AEA_2E62_A9C5;
    let mut h = (bytes.len() as u64).wrapping_mul(K);
    let mut words = bytes.chunks_exact(8);
    for word in &mut words {
        h = (h.rotate_left(26) ^ u64::from_le_bytes(word.try_into().unwrap())).wrapping_mul(K);
    }
    let rest = words.remainder();
    if !rest.is_empty() {
        let mut word = [0u8; 8];
        word[..rest.len()].copy_from_slice(rest);
        h = (h.rotate_left(26) ^ u64::from_le_bytes(word)).wrapping_mul(K);
    }
    h ^ (h >> 32)
}

#[inline]
pub(crate) fn spill_tag(hash: u64) -> u64 {
    (hash >> 56) & 0xFF
}

/// Bits of the presence filter per key of 3+ bytes, at least (the filter's
/// length is rounded up to a power of two words).
pub(crate) const FILTER_BITS_PER_KEY: usize = 8;

/// Where a key of 3+ bytes sits in the presence filter: the word (from the top
/// `64 - shift` bits of a remix of its table hash) and the four bits of that
/// word it sets. A remix, not the table hash itself: the table indexes by the
/// hash's low bits, and in `hash_inline` the middle bits depend on the key's
/// first bytes only.
#[inline(always)]
pub(crate) fn filter_bits(hash: u64, shift: u32) -> (usize, u64) {
    let m = (hash as u128) * 0xD6E8_FEB8_6659_FD93u128;
    let f = (m >> 64) as u64 ^ m as u64;
    let word = (f >> shift) as usize;
    let bits = (1u64 << (f & 63))
        | (1u64 << ((f >> 6) & 63))
        | (1u64 << ((f >> 12) & 63))
        | (1u64 << ((f >> 18) & 63));
    (word, bits)
}

/// The presence filter's `shift` for a filter of `words` words (a power of
/// two, at least 2): `filter_bits` takes the word from the top bits.
pub(crate) fn filter_shift(words: usize) -> u32 {
    debug_assert!(words.is_power_of_two() && words >= 2);
    64 - words.trailing_zeros()
}

/// The tables of one vocabulary, owned (what `build.rs` writes out and
/// `Vocab::from_entries` keeps).
pub(crate) struct Tables {
    /// All token bytes, contiguous; referenced by `decoder` and by spill slots.
    pub(crate) arena: Vec<u8>,
    /// Rank by first byte, for 1-byte keys; ABSENT if missing.
    pub(crate) single: Vec<u32>,
    /// Rank by (first byte << 8 | second byte), for 2-byte keys.
    pub(crate) pair: Vec<u32>,
    /// Bit (first byte << 8 | second byte) set when `pair` holds a rank there:
    /// 8 KiB that stay in L1, where counting asks only whether a 2-byte piece
    /// is one token (context-loader patch, PATCH.md section 21).
    pub(crate) pair_bits: Vec<u64>,
    /// Open addressing, linear probing, for keys of 3+ bytes; a power of two long.
    pub(crate) table: Vec<Slot>,
    /// Indexed by rank: where its bytes are in the arena, for decode.
    pub(crate) decoder: Vec<Span>,
    /// A one-word-per-key Bloom filter of the keys of 3+ bytes (see
    /// `filter_bits`), a power of two words long: a key whose four bits are
    /// not all set is not in `table`. Small enough to stay in L2, so a miss
    /// (most probes of a BPE merge) costs no load from the table.
    pub(crate) filter: Vec<u64>,
}

/// Build the tables from (token bytes, rank) pairs, in the order given (the
/// probe chains depend on it; lookups do not).
pub(crate) fn build_tables<'a>(entries: impl ExactSizeIterator<Item = (&'a [u8], u32)>) -> Tables {
    let count = entries.len();
    let mut arena = Vec::new();
    let mut items: Vec<(u32, u32, u32)> = Vec::with_capacity(count);
    let mut decoder: Vec<Span> = Vec::new();
    for (token, rank) in entries {
        assert!(arena.len() <= u32::MAX as usize, "arena offset overflow");
        let offset = arena.len() as u32;
        let len = token.len() as u32;
        arena.extend_from_slice(token);
        items.push((rank, offset, len));
        if decoder.len() <= rank as usize {
            decoder.resize(
                rank as usize + 1,
                Span {
                    offset: u32::MAX,
                    len: 0,
                },
            );
        }
        debug_assert!(
            decoder[rank as usize].offset == u32::MAX,
            "duplicate rank {rank} in vocabulary entries"
        );
        decoder[rank as usize] = Span { offset, len };
    }

    let mut single = vec![ABSENT; 256];
    let mut pair = vec![ABSENT; 1 << 16];

    // sized on the full entry count even though 1- and 2-byte keys never
    // enter it — the resulting sub-50% load factor keeps probe chains short
    let table_size = (count * 2).next_power_of_two();
    let mask = table_size - 1;
    let mut table = vec![EMPTY; table_size];

    let long_keys = items.iter().filter(|&&(_, _, len)| len >= 3).count();
    let filter_words = (long_keys * FILTER_BITS_PER_KEY)
        .div_ceil(64)
        .next_power_of_two()
        .max(2);
    let shift = filter_shift(filter_words);
    let mut filter = vec![0u64; filter_words];

    for &(rank, offset, len) in &items {
        let token = &arena[offset as usize..(offset + len) as usize];
        match token.len() {
            0 => {}
            1 => single[token[0] as usize] = rank,
            2 => pair[(token[0] as usize) << 8 | token[1] as usize] = rank,
            l if l <= INLINE_MAX => {
                let key = load_inline_key(token);
                let hash = hash_inline(key, l);
                let (word, bits) = filter_bits(hash, shift);
                filter[word] |= bits;
                let mut idx = hash as usize & mask;
                while table[idx].len != 0 {
                    idx = (idx + 1) & mask;
                }
                table[idx] = Slot {
                    key,
                    rank,
                    len: l as u32,
                };
            }
            l => {
                let hash = hash_spill(token);
                let (word, bits) = filter_bits(hash, shift);
                filter[word] |= bits;
                let mut idx = hash as usize & mask;
                while table[idx].len != 0 {
                    idx = (idx + 1) & mask;
                }
                table[idx] = Slot {
                    key: (offset as u64) | (spill_tag(hash) << 32),
                    rank,
                    len: l as u32,
                };
            }
        }
    }

    let mut pair_bits = vec![0u64; PAIR_BITS_WORDS];
    for (i, &rank) in pair.iter().enumerate() {
        pair_bits[i / 64] |= u64::from(rank != ABSENT) << (i % 64);
    }
    Tables {
        arena,
        single,
        pair,
        pair_bits,
        table,
        decoder,
        filter,
    }
}

/// One decompressed TKV1 frame (see `encoding::parse_tkv` for the layout) as
/// (token bytes, rank) pairs in rank order.
pub(crate) fn frame_entries(data: &[u8]) -> Vec<(&[u8], u32)> {
    assert_eq!(&data[..4], b"TKV1", "bad vocabulary frame magic");
    let n_tokens = u32::from_le_bytes(data[4..8].try_into().unwrap()) as usize;
    let rank0 = u32::from_le_bytes(data[8..12].try_into().unwrap());

    let mut pos = 12;
    let mut lengths = Vec::with_capacity(n_tokens);
    let mut max_len = 0usize;
    for _ in 0..n_tokens {
        let mut len = 0usize;
        let mut shift = 0;
        loop {
            let byte = data[pos];
            pos += 1;
            len |= ((byte & 0x7F) as usize) << shift;
            if byte & 0x80 == 0 {
                break;
            }
            shift += 7;
        }
        max_len = max_len.max(len);
        lengths.push(len);
    }

    // where each length class starts in the body
    let mut cursors = vec![0usize; max_len + 1];
    for &len in &lengths {
        cursors[len] += 1;
    }
    let mut at = pos;
    for (len, cursor) in cursors.iter_mut().enumerate() {
        let count = *cursor;
        *cursor = at;
        at += len * count;
    }
    assert_eq!(at, data.len(), "vocabulary frame body length mismatch");

    let mut entries = Vec::with_capacity(n_tokens);
    for (i, &len) in lengths.iter().enumerate() {
        let start = cursors[len];
        cursors[len] = start + len;
        entries.push((&data[start..start + len], rank0 + i as u32));
    }
    entries
}
