//! context-loader patch: a small thread-local memo of whole pieces → token
//! count, in front of the vocabulary for [`CoreBpe::count`](crate::CoreBpe::count).
//!
//! Why: counting a source tree spent a quarter of its loop on one load, the
//! probe of o200k_base's 8 MB open-addressing table for a whole piece, a cache
//! (and TLB) miss. Code repeats its pieces (identifiers, keywords, indentation,
//! punctuation runs), so a 256 KiB direct-mapped memo that stays in L2 answers
//! most of them without touching the big table, and answers the pieces that are
//! not one token (a BPE merge) just as cheaply.
//!
//! Correctness containment:
//! - a slot holds the exact piece bytes (zero-padded) and its length, so a hit
//!   is an exact match: two pieces that hash alike only evict each other;
//! - a slot is written only with a count just computed for those bytes, and
//!   eviction is overwrite;
//! - one memo per encoding per thread (keyed by the encoding's nonce, never
//!   its address), so two encodings never share an entry;
//! - pieces longer than [`KEY_MAX`] bytes are not memoised.

use std::cell::RefCell;

/// Longest piece memoised: a slot is 32 bytes, 24 of key, then its length and
/// count. Most code pieces (identifiers, indentation, operators) are shorter.
pub(crate) const KEY_MAX: usize = 24;
/// Direct-mapped slots, a power of two: 8,192 × 32 B = 256 KiB, a quarter of
/// one core's L2 here, so the memo and the merge's pair table stay resident.
const SLOTS: usize = 8192;
/// Encodings memoised per thread; the least recently added is dropped first.
const OWNERS_MAX: usize = 4;

/// Words 0..3: the key, zero-padded, little-endian; word 3: its length at bit
/// 48, the count at bit 56. Length 0 marks an empty slot (no piece is empty).
type Slot = [u64; 4];
const COUNT_MASK: u64 = 0xFF << 56;

/// One encoding's memo on one thread.
pub(crate) struct Memo {
    slots: Box<[Slot]>,
}

impl Memo {
    fn new() -> Self {
        // All zero: every slot empty (and the allocation is lazily zeroed pages).
        Self {
            slots: vec![[0u64; 4]; SLOTS].into_boxed_slice(),
        }
    }

    /// The count of `piece`: from the memo on a hit, else `compute()`'s,
    /// stored for next time. Caller guarantees `3 <= piece.len() <= KEY_MAX`.
    #[inline(always)]
    pub(crate) fn count(&mut self, piece: &[u8], compute: impl FnOnce() -> usize) -> usize {
        match self.get(piece) {
            Some(n) => n,
            None => {
                let n = compute();
                self.put(piece, n);
                n
            }
        }
    }

    /// The stored count of `piece`, if its slot holds exactly it.
    #[inline(always)]
    pub(crate) fn get(&self, piece: &[u8]) -> Option<usize> {
        let key = padded_key(piece);
        let slot = &self.slots[index(&key)];
        (slot[0] == key[0]
            && slot[1] == key[1]
            && slot[2] == key[2]
            && slot[3] & !COUNT_MASK == key[3])
            .then_some((slot[3] >> 56) as usize)
    }

    /// Store `n` as the count of `piece`, evicting whatever held its slot.
    #[inline(always)]
    pub(crate) fn put(&mut self, piece: &[u8], n: usize) {
        // A piece of at most 24 bytes merges into at most 24 tokens; the guard
        // keeps the invariant local.
        if n <= u8::MAX as usize {
            let key = padded_key(piece);
            self.slots[index(&key)] = [key[0], key[1], key[2], key[3] | (n as u64) << 56];
        }
    }
}

/// `piece` as a slot's key: its bytes zero-padded into three little-endian
/// words, its length in the fourth. Overlapping word loads, no copy loop: this
/// runs for most pieces of a text.
#[inline(always)]
fn padded_key(piece: &[u8]) -> Slot {
    let len = piece.len();
    debug_assert!((3..=KEY_MAX).contains(&len));
    let word = |at: usize| u64::from_le_bytes(piece[at..at + 8].try_into().unwrap());
    // The last 8 bytes, shifted so the bytes before `from` fall off: the tail
    // of the key from byte `from` on, zero-padded.
    let tail = |from: usize| word(len - 8) >> (8 * (from + 8 - len));
    let (w0, w1, w2) = match len {
        0..=8 => (crate::vocab_layout::load_inline_key(piece), 0, 0),
        9..=16 => (word(0), tail(8), 0),
        _ => (word(0), word(8), tail(16)),
    };
    [w0, w1, w2, (len as u64) << 48]
}

/// The slot of a padded key (length included, so "ab" and "ab\0" differ).
#[inline]
fn index(key: &Slot) -> usize {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    let h = (key[0].wrapping_mul(K) ^ key[1].rotate_left(21) ^ key[2].rotate_left(42) ^ key[3])
        .wrapping_mul(K);
    (h >> 40) as usize & (SLOTS - 1)
}

thread_local! {
    static MEMOS: RefCell<Vec<(u64, Memo)>> = const { RefCell::new(Vec::new()) };
}

/// Run `f` with this thread's memo for the encoding `owner` (a
/// [`new_cache_id`](crate::piece_cache::new_cache_id) nonce), or with `None`
/// when the memo is already in use on this thread (re-entry): no memo, same
/// answer.
#[inline]
pub(crate) fn with_memo<R>(owner: u64, f: impl FnOnce(Option<&mut Memo>) -> R) -> R {
    MEMOS.with(|memos| {
        let Ok(mut memos) = memos.try_borrow_mut() else {
            return f(None);
        };
        let at = match memos.iter().position(|(o, _)| *o == owner) {
            Some(at) => at,
            None => {
                if memos.len() == OWNERS_MAX {
                    memos.remove(0);
                }
                memos.push((owner, Memo::new()));
                memos.len() - 1
            }
        };
        f(Some(&mut memos[at].1))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::piece_cache::new_cache_id;

    /// Two distinct pieces that land on the same slot.
    fn colliding_pair() -> (Vec<u8>, Vec<u8>) {
        let slot_of = |p: &[u8]| {
            let mut m = Memo::new();
            m.count(p, || 1);
            m.slots.iter().position(|s| s[0] != 0).unwrap()
        };
        let first = b"abc".to_vec();
        let target = slot_of(&first);
        for i in 0u32.. {
            let other = format!("xy{i}").into_bytes();
            if slot_of(&other) == target {
                return (first, other);
            }
        }
        unreachable!()
    }

    #[test]
    fn the_key_is_the_piece_zero_padded_with_its_length() {
        let bytes: Vec<u8> = (1..=KEY_MAX as u8)
            .map(|b| b.wrapping_mul(37) | 1)
            .collect();
        for len in 3..=KEY_MAX {
            let key = padded_key(&bytes[..len]);
            let mut expected = [0u8; 32];
            expected[..len].copy_from_slice(&bytes[..len]);
            expected[30] = len as u8;
            let got: Vec<u8> = key.iter().flat_map(|w| w.to_le_bytes()).collect();
            assert_eq!(got, expected, "length {len}");
        }
    }

    #[test]
    fn a_hit_returns_the_stored_count_without_computing() {
        let mut m = Memo::new();
        assert_eq!(m.count(b"hello", || 2), 2);
        assert_eq!(m.count(b"hello", || unreachable!("must hit")), 2);
        // A prefix, an extension and a NUL-padded twin are other pieces.
        assert_eq!(m.count(b"hell", || 3), 3);
        assert_eq!(m.count(b"hello!", || 4), 4);
        assert_eq!(m.count(b"hello\0", || 5), 5);
        assert_eq!(m.count(b"hello", || unreachable!("must hit")), 2);
        // The longest key memoised, and its last byte matters.
        let long = [b'z'; KEY_MAX];
        let mut other = long;
        other[KEY_MAX - 1] = b'y';
        assert_eq!(m.count(&long, || 7), 7);
        assert_eq!(m.count(&other, || 8), 8);
        assert_eq!(m.count(&long, || unreachable!("must hit")), 7);
    }

    #[test]
    fn colliding_pieces_evict_each_other_and_never_share_a_count() {
        let (a, b) = colliding_pair();
        let mut m = Memo::new();
        assert_eq!(m.count(&a, || 1), 1);
        // b takes a's slot: computed, not a's count.
        assert_eq!(m.count(&b, || 9), 9);
        assert_eq!(m.count(&b, || unreachable!("must hit")), 9);
        // a was evicted: computed again, and stored again.
        let mut computed = false;
        assert_eq!(
            m.count(&a, || {
                computed = true;
                1
            }),
            1
        );
        assert!(computed);
        assert_eq!(m.count(&a, || unreachable!("must hit")), 1);
    }

    #[test]
    fn counts_too_large_for_a_slot_are_not_stored() {
        let mut m = Memo::new();
        assert_eq!(m.count(b"big", || 300), 300);
        assert_eq!(m.count(b"big", || 301), 301);
    }

    #[test]
    fn each_encoding_has_its_own_memo_and_old_ones_are_dropped() {
        let (a, b) = (new_cache_id(), new_cache_id());
        with_memo(a, |m| assert_eq!(m.unwrap().count(b"same", || 1), 1));
        // Same bytes under another encoding: its own count.
        with_memo(b, |m| assert_eq!(m.unwrap().count(b"same", || 2), 2));
        with_memo(a, |m| {
            assert_eq!(m.unwrap().count(b"same", || unreachable!("a's")), 1)
        });
        with_memo(b, |m| {
            assert_eq!(m.unwrap().count(b"same", || unreachable!("b's")), 2)
        });
        // OWNERS_MAX newer encodings push a's memo out: computed again.
        for _ in 0..OWNERS_MAX {
            with_memo(new_cache_id(), |m| {
                m.unwrap().count(b"same", || 3);
            });
        }
        with_memo(a, |m| assert_eq!(m.unwrap().count(b"same", || 4), 4));
    }

    #[test]
    fn re_entry_gets_no_memo() {
        let a = new_cache_id();
        with_memo(a, |outer| {
            assert!(outer.is_some());
            with_memo(a, |inner| assert!(inner.is_none()));
        });
    }
}
