//! context-loader patch: a thread-local memo of whole pieces → token count, in
//! front of the vocabulary for [`CoreBpe::count`](crate::CoreBpe::count).
//!
//! Why: counting a source tree spent a quarter of its loop on one load, the
//! probe of o200k_base's 8 MB open-addressing table for a whole piece, a cache
//! (and TLB) miss. Code repeats its pieces (identifiers, keywords, indentation,
//! punctuation runs), so a direct-mapped memo of 1.75 MiB per thread answers
//! most of them without touching the big table, and answers the pieces that
//! are not one token (a BPE merge) just as cheaply.
//!
//! Behind it, a second level of 4 MiB (two-way buckets) keeps what the first
//! evicts, allocated once the first has missed as many pieces as it has slots
//! (a process that counts short texts never holds it), and shared by every
//! thread counting with the encoding: what one thread computed is a hit for
//! the others. On the benchmark tree (388 MB of crate sources) the first level
//! missed 2.8 M of ~50 M lookups, about four times the distinct pieces: each
//! miss cost a vocabulary probe and, for half of them, a merge of ~6 more
//! probes, all cache misses — a quarter of the counting time. The second level
//! is probed one piece later, its bucket prefetched with the vocabulary slot,
//! so a hit there costs one load that overlapped the scan.
//!
//! Correctness containment:
//! - a slot holds the exact piece bytes (zero-padded) and its length, so a hit
//!   is an exact match: two pieces that hash alike only evict each other;
//! - a slot is written only with a count just computed for those bytes (or
//!   copied from the other level, which got it the same way), and eviction is
//!   overwrite;
//! - one memo per encoding per thread (keyed by the encoding's nonce, never
//!   its address), so two encodings never share an entry;
//! - pieces longer than [`KEY_MAX`] bytes are not memoised;
//! - the second level is one per encoding for the whole process ([`Second`],
//!   PATCH.md section 26): its words are only read and written atomically,
//!   each slot under a version that a reader checks before and after reading
//!   (a slot being written, or rewritten meanwhile, is a miss).

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering, fence};
use std::sync::{Arc, Mutex, Weak};

/// Longest piece memoised: a slot is 32 bytes, 24 of key, then its length and
/// count. Most code pieces (identifiers, indentation, operators) are shorter.
pub(crate) const KEY_MAX: usize = 24;
/// First-level misses before the second level is allocated. context-loader
/// patch (PATCH.md section 16): the first level was 8,192 slots (256 KiB),
/// then 32,768 (1 MiB); 1.4 MB of English prose meets more distinct pieces
/// than the first, and each first-level miss cost a Bloom probe, a prefetch
/// of the vocabulary's slot and a probe of the 4 MiB second level.
const SECOND_AFTER: usize = 32768;
/// First-level slots of pieces of 3 to 7 bytes (most pieces of prose and
/// code), direct-mapped, a power of two: 131,072 words = 1 MiB. context-loader
/// patch (PATCH.md section 21): such a piece, its length and its count fit in
/// one word ([`TinySlot`]), eight slots to a cache line where 16-byte slots
/// held four, so the same lines hold twice the pieces.
const TINY_SLOTS: usize = 131072;
/// First-level slots of pieces of 8 to 15 bytes (longer words, Korean words
/// with their space), [`MidSlot`]s of 16 B: 32,768 = 512 KiB.
const MID_SLOTS: usize = 32768;
/// First-level slots of pieces of 16 to [`KEY_MAX`] bytes: 8,192 × 32 B =
/// 256 KiB.
const LONG_SLOTS: usize = 8192;
/// Second-level buckets of two slots (one cache line), a power of two:
/// 65,536 × 64 B = 4 MiB per encoding, shared by its threads (PATCH.md
/// section 26).
const BUCKETS: usize = 1 << 16;
/// Encodings memoised per thread; the least recently added is dropped first.
const OWNERS_MAX: usize = 4;

/// A copy of the first level's pointer to its tiny slots, read by a count loop
/// that holds the memo too (a miss still goes through the memo, which may write
/// the slots): the allocation lives and stays put as long as the memo does, and
/// the loop holds both no longer than one count.
#[derive(Clone, Copy)]
pub(crate) struct TinyView {
    start: *const u64,
}

impl TinyView {
    /// The count of the piece of `len` (3 to 7) bytes whose bytes start
    /// `eight` (little-endian), if its tiny slot holds it.
    #[inline(always)]
    pub(crate) fn get(self, eight: u64, len: usize) -> Option<usize> {
        debug_assert!((3..=7).contains(&len), "a tiny piece's length: {len}");
        let key = Key::of_tiny(eight, len);
        // SAFETY: `key.first` is a tiny slot's index (below `TINY_SLOTS`, the
        // slots allocated), as in `Lines::tiny`.
        tiny_count(unsafe { *self.start.add(key.first) }, &key)
    }
}

/// Words 0..3: the key, zero-padded, little-endian; word 3: its length at bit
/// 48, the count at bit 56. Length 0 marks an empty slot (no piece is empty).
type Slot = [u64; 4];
/// A first-level slot of a piece of 8 to 15 bytes: its first 8 bytes, then the
/// rest (zero-padded) with its count at bit 56 and its length at bit 60, as a
/// [`TinySlot`] holds them.
type MidSlot = [u64; 2];
/// A first-level slot of a piece of 3 to 7 bytes, one word: the piece's bytes
/// (bits 0..56, zero-padded), its count (bits 56..60: a piece of `n` bytes is
/// at most `n` tokens) and its length (bits 60..64; 0 marks an empty slot).
type TinySlot = u64;
/// The count of a tiny slot, or of a mid slot's second word: 4 bits at bit 56.
const COUNT_NIBBLE: u64 = 0xF << 56;
const COUNT_MASK: u64 = 0xFF << 56;
const LINE: usize = 64;

/// Zeroed slots whose first one starts a cache line, so no slot straddles
/// two. The first level's come from `calloc` (lazily zeroed pages), faulted in
/// for writing once the thread has more than a short text to count
/// ([`Memo::ready_for`]). The second level's are on huge pages where the system
/// gives them ([`Lines::huge`]).
struct Lines {
    /// Slot 0's first word, line-aligned, inside `owner`'s allocation.
    start: *mut u64,
    /// Words from `start` on: 4 per slot.
    words: usize,
    owner: Owner,
}

/// The allocation behind [`Lines`], freed when they are dropped.
enum Owner {
    /// From `Box::into_raw` of a zeroed boxed slice (`calloc`).
    Calloc(*mut [u64]),
    /// From `std::alloc::alloc` with this layout.
    Aligned(std::ptr::NonNull<u8>, std::alloc::Layout),
}

impl Drop for Lines {
    fn drop(&mut self) {
        match self.owner {
            // SAFETY: the pointer came from `Box::into_raw` (`Lines::new`) and
            // is freed once, here.
            Owner::Calloc(words) => drop(unsafe { Box::from_raw(words) }),
            // SAFETY: `ptr` came from `alloc(layout)` (`Lines::huge`) and is
            // freed once, here.
            Owner::Aligned(ptr, layout) => unsafe { std::alloc::dealloc(ptr.as_ptr(), layout) },
        }
    }
}

// SAFETY: `Lines` owns its allocation alone, as a `Box` would (`start` only
// points into it); memos move between threads through `RETIRED`.
unsafe impl Send for Lines {}

/// A huge page's size on the targets [`advise_huge_pages`] asks for them.
const HUGE_PAGE: usize = 2 << 20;

impl Lines {
    fn new(slots: usize) -> Self {
        // A zeroed `Vec<u64>` is one `calloc`; a line's worth of spare words
        // leaves room to align the start.
        let words = Box::into_raw(vec![0u64; slots * 4 + LINE / 8].into_boxed_slice());
        let first = words.cast::<u64>();
        let misaligned = first as usize % LINE;
        let skip = (LINE - misaligned) % LINE / 8;
        Self {
            // SAFETY: `skip < LINE / 8`: within the spare words.
            start: unsafe { first.add(skip) },
            words: slots * 4,
            owner: Owner::Calloc(words),
        }
    }

    /// Every page of the slots faulted in for writing ([`populate_for_writes`]).
    fn populate(&self) {
        populate_for_writes(self.start.cast(), self.words * 8);
    }

    /// context-loader patch (PATCH.md section 18): slots on 2 MiB pages when
    /// they fill whole ones (the second level's 4 MiB), zeroed after the
    /// kernel is asked for huge pages, so its first touches fault them in.
    /// Its buckets are read at random over 1,024 small pages, and with the
    /// vocabulary's 8 MB table beside them that is more pages than the TLB
    /// holds: most second-level probes also walked the page table. Counting
    /// English and code on a warm thread got 3-6 % faster. The memory is the
    /// same: pieces land in random buckets, so most of the level's small pages
    /// were resident soon after it was allocated anyway.
    fn huge(slots: usize) -> Self {
        let bytes = slots * 32;
        if bytes % HUGE_PAGE != 0 {
            return Self::new(slots);
        }
        let layout = std::alloc::Layout::from_size_align(bytes, HUGE_PAGE)
            .expect("a power-of-two alignment and a size below isize::MAX");
        // SAFETY: `layout`'s size is not zero.
        let ptr = unsafe { std::alloc::alloc(layout) };
        let Some(ptr) = std::ptr::NonNull::new(ptr) else {
            std::alloc::handle_alloc_error(layout)
        };
        advise_huge_pages(ptr.as_ptr(), bytes);
        // SAFETY: `bytes` bytes from `ptr` were just allocated for us.
        unsafe { std::ptr::write_bytes(ptr.as_ptr(), 0, bytes) };
        Self {
            start: ptr.as_ptr().cast(),
            words: bytes / 8,
            owner: Owner::Aligned(ptr, layout),
        }
    }

    /// Slot `at`, which callers take from the top bits of a hash: always one
    /// of the slots `new` was given room for. context-loader patch: read
    /// without the slice's bounds checks (two compares and a branch on every
    /// piece of a count).
    #[inline(always)]
    fn slot(&self, at: usize) -> &Slot {
        let from = at * 4;
        assert_in_bounds(from, self.words);
        // SAFETY: `from + 4 <= words` (checked above in debug builds): `at` is
        // a slot index below the count the allocation was made for; a `Slot`
        // is 4 words, u64-aligned like `start`.
        unsafe { &*self.start.add(from).cast::<Slot>() }
    }

    #[inline(always)]
    fn slot_mut(&mut self, at: usize) -> &mut Slot {
        let from = at * 4;
        assert_in_bounds(from, self.words);
        // SAFETY: as in `slot`; `&mut self` makes the borrow unique.
        unsafe { &mut *self.start.add(from).cast::<Slot>() }
    }

    /// Mid slot `at` (16 bytes), of lines made for `n / 2` slots of 32
    /// bytes; `at` is below `n`.
    #[inline(always)]
    fn mid(&self, at: usize) -> &MidSlot {
        let from = at * 2;
        debug_assert!(from + 2 <= self.words, "mid slot out of range: {from}");
        // SAFETY: `from + 2 <= words` (checked above in debug builds): `at` is
        // a mid slot's index from a hash's top bits, below twice the 32-byte
        // slots allocated; a `MidSlot` is 2 words, u64-aligned like `start`.
        unsafe { &*self.start.add(from).cast::<MidSlot>() }
    }

    #[inline(always)]
    fn mid_mut(&mut self, at: usize) -> &mut MidSlot {
        let from = at * 2;
        debug_assert!(from + 2 <= self.words, "mid slot out of range: {from}");
        // SAFETY: as in `mid`; `&mut self` makes the borrow unique.
        unsafe { &mut *self.start.add(from).cast::<MidSlot>() }
    }

    /// Tiny slot `at` (one word), of lines made for `n / 4` slots of 32
    /// bytes; `at` is below `n`.
    #[inline(always)]
    fn tiny(&self, at: usize) -> TinySlot {
        debug_assert!(at < self.words, "tiny slot out of range: {at}");
        // SAFETY: `at < words` (checked above in debug builds): `at` is a tiny
        // slot's index from a hash's top bits, below four times the 32-byte
        // slots allocated.
        unsafe { *self.start.add(at) }
    }

    #[inline(always)]
    fn tiny_mut(&mut self, at: usize) -> &mut TinySlot {
        debug_assert!(at < self.words, "tiny slot out of range: {at}");
        // SAFETY: as in `tiny`; `&mut self` makes the borrow unique.
        unsafe { &mut *self.start.add(at) }
    }

    /// A hint to load slot `at`'s line; no effect on any answer. (From the
    /// pointer alone: other threads may be writing the slot.)
    #[inline(always)]
    fn prefetch(&self, at: usize) {
        assert_in_bounds(at * 4, self.words);
        let slot = self.start.wrapping_add(at * 4);
        #[cfg(target_arch = "x86_64")]
        // SAFETY: a prefetch of a valid address reads nothing the program sees
        // and cannot fault.
        unsafe {
            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(slot.cast())
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = slot;
    }
}

/// Debug builds (tests) check what `Lines::slot`'s callers guarantee.
#[inline(always)]
fn assert_in_bounds(from: usize, words: usize) {
    debug_assert!(from + 4 <= words, "slot out of range: {from} of {words}");
}

/// Ask Linux to back `len` bytes from `ptr` (2 MiB-aligned) with huge
/// pages (`madvise(MADV_HUGEPAGE)`: transparent huge pages are often enabled
/// only on request). A hint: when it fails, or elsewhere, the slots are on
/// ordinary pages and every answer is the same.
#[inline]
fn advise_huge_pages(ptr: *mut u8, len: usize) {
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    {
        const MADV_HUGEPAGE: i32 = 14;
        advise(ptr as usize, len, MADV_HUGEPAGE);
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    let _ = (ptr, len);
}

/// `madvise(start, len, advice)` on Linux, a hint whose failure is ignored
/// (each caller says why it asks); elsewhere nothing. `start..start + len` is
/// memory this process allocated, whole pages, and no advice used here changes
/// its contents or protection.
#[inline]
fn advise(start: usize, len: usize, advice: i32) {
    #[cfg(target_os = "linux")]
    {
        unsafe extern "C" {
            fn madvise(
                addr: *mut std::ffi::c_void,
                len: usize,
                advice: std::ffi::c_int,
            ) -> std::ffi::c_int;
        }
        // SAFETY: the caller's pages; the advice changes no contents and no
        // protection.
        let _ = unsafe { madvise(start as *mut _, len, advice) };
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (start, len, advice);
}

/// The size of a page: [`populate_for_writes`] asks for whole ones.
const PAGE: usize = 4096;
/// Bytes of text a memo counts with its first level's pages faulted in as the
/// count reaches them; the text that reaches this has them all faulted in for
/// writing first ([`Memo::ready_for`]). A process that counts one short text
/// touches a few pages, not 1.75 MiB (~0.4 ms for `count` of a word); a text of
/// a kilobyte has ~100 pieces to look up.
const POPULATE_AFTER: usize = 1024;

/// context-loader patch (PATCH.md section 28): fault the whole pages of the
/// `len` bytes from `ptr` in for writing, their contents unchanged.
///
/// Why: a lookup reads its slot before a miss writes it, so each page of a
/// lazily zeroed table was first mapped to the kernel's shared zero page, then
/// copied on its first write. While another thread of the process runs, that
/// copy flushes the other core's TLB with an interrupt (under KVM, an exit to
/// the hypervisor on both cores): `files` over the bench tree took ~3,600 such
/// flushes, from the memo's first level and the piece cache (~750 pages per
/// counting thread), and ~5 % of its wall time. A page faulted in for writing
/// first is never the zero page, so nothing is flushed later; the faults cost
/// what the count's own would have, once per table.
///
/// `MADV_POPULATE_WRITE` (Linux 5.14) faults pages in as a write would, without
/// writing. Only whole pages: the partial ones at either end are left as they
/// are (at most two per table, and the first one usually holds the allocator's
/// header, so it is no zero page), and nothing outside the range is touched.
/// Where the call is missing (older kernels, other systems), nothing is done
/// and the tables fault in as the count reaches them.
pub(crate) fn populate_for_writes(ptr: *mut u8, len: usize) {
    let start = (ptr as usize).next_multiple_of(PAGE);
    let end = (ptr as usize + len) / PAGE * PAGE;
    if start < end {
        const MADV_POPULATE_WRITE: i32 = 23;
        advise(start, end - start, MADV_POPULATE_WRITE);
    }
}

/// One encoding's memo on one thread: two levels.
pub(crate) struct Memo {
    /// The first level: pieces of 3 to 7 bytes in `tiny`, of 8 to 15 in
    /// `mid`, longer ones in `long`.
    tiny: Lines,
    mid: Lines,
    long: Lines,
    /// The encoding's second level, shared with every other thread's memo of
    /// it. `None` until the first level has missed [`SECOND_AFTER`] pieces, or
    /// another thread's memo made it: the random buckets of even a few
    /// thousand distinct pieces would make most of its 4 MiB resident, in
    /// every process that ever counted something.
    second: Option<Arc<Second>>,
    misses: usize,
    /// Bytes of text left to count before the first level is faulted in for
    /// writing ([`Self::ready_for`]); 0 once it is.
    until_populated: usize,
    /// The encoding's nonce: whose second level to share.
    owner: u64,
}

impl Memo {
    fn new(owner: u64) -> Self {
        Self {
            tiny: Lines::new(TINY_SLOTS / 4),
            mid: Lines::new(MID_SLOTS / 2),
            long: Lines::new(LONG_SLOTS),
            second: SECONDS.find(owner),
            misses: 0,
            until_populated: POPULATE_AFTER,
            owner,
        }
    }

    /// Called before counting a text of `len` bytes: once a thread's texts
    /// reach [`POPULATE_AFTER`] bytes, the first level's pages are faulted in
    /// for writing ([`populate_for_writes`] says why), before the count that
    /// crosses it reads any.
    #[inline]
    pub(crate) fn ready_for(&mut self, len: usize) {
        if self.until_populated == 0 {
            return;
        }
        if len < self.until_populated {
            self.until_populated -= len;
            return;
        }
        self.until_populated = 0;
        for lines in [&self.tiny, &self.mid, &self.long] {
            lines.populate();
        }
    }

    /// The count of `piece`: from the memo on a hit, else `compute()`'s,
    /// stored for next time. Caller guarantees `3 <= piece.len() <= KEY_MAX`.
    /// (`CoreBpe::count` does the same in two steps, so that the second
    /// level's load overlaps the scan for the next piece.)
    #[cfg(test)]
    pub(crate) fn count(&mut self, piece: &[u8], compute: impl FnOnce() -> usize) -> usize {
        let key = Key::of(piece);
        match self.get(&key).or_else(|| self.get_second(&key)) {
            Some(n) => n,
            None => {
                let n = compute();
                self.put(&key, n);
                n
            }
        }
    }

    /// The count of `key`'s piece from the first level, if its slot holds
    /// exactly it.
    #[inline(always)]
    pub(crate) fn get(&self, key: &Key) -> Option<usize> {
        if key.is_tiny() {
            tiny_count(self.tiny.tiny(key.first), key)
        } else if key.is_mid() {
            mid_count(self.mid.mid(key.first), key)
        } else {
            count_if_same(self.long.slot(key.first), &key.slot)
        }
    }

    /// The key of the piece `text[start..end]` and its count from the first
    /// level: [`Key::of`] then [`Self::get`]. context-loader patch: a piece of
    /// at most 8 bytes with 8 bytes of `text` from its start is read with one
    /// load (no `load_inline_key`, its two overlapping loads and branch); a
    /// tiny piece's key is compared on one word, an 8-byte piece's on two, its
    /// bytes and its length: a slot holding a key of that length has zero
    /// words 1 and 2 (every key is zero-padded), as the piece's key has.
    /// Caller guarantees `3 <= end - start <= KEY_MAX`.
    #[inline(always)]
    pub(crate) fn get_text(&self, text: &[u8], start: usize, end: usize) -> (Key, Option<usize>) {
        let len = end - start;
        match text.get(start..start + 8) {
            Some(eight) if len <= 7 => {
                let key = Key::of_tiny(u64::from_le_bytes(eight.try_into().unwrap()), len);
                let n = tiny_count(self.tiny.tiny(key.first), &key);
                (key, n)
            }
            Some(eight) if len == 8 => {
                let key = Key::of_eight(u64::from_le_bytes(eight.try_into().unwrap()));
                let n = mid_count(self.mid.mid(key.first), &key);
                (key, n)
            }
            _ => {
                let key = Key::of(&text[start..end]);
                let n = self.get(&key);
                (key, n)
            }
        }
    }

    /// The tiny pieces' table, for a count loop to read without going through
    /// the memo for each piece (see [`TinyView`]).
    #[inline(always)]
    pub(crate) fn tiny_view(&self) -> TinyView {
        TinyView {
            start: self.tiny.start,
        }
    }

    /// Start loading the second level's bucket for `key`, to be read by
    /// [`Self::get_second`] a little later.
    #[inline(always)]
    pub(crate) fn prefetch_second(&self, key: &Key) {
        if let Some(second) = &self.second {
            second.lines.prefetch(key.second() * 2);
        }
    }

    /// The count of `key`'s piece from the second level; a hit is copied into
    /// the first, where the next occurrence will look.
    #[inline(always)]
    pub(crate) fn get_second(&mut self, key: &Key) -> Option<usize> {
        let second = self.second.as_ref()?;
        let at = key.second() * 2;
        let slot = [at, at + 1]
            .into_iter()
            .filter_map(|at| second.read(at))
            .find(|slot| count_if_same(slot, &key.slot).is_some())?;
        let slot = [slot[0], slot[1], slot[2], slot[3] & !VERSION];
        self.put_first(key, slot);
        Some((slot[3] >> 56) as usize)
    }

    /// Store `slot` (`key`'s, with its count) in `key`'s first-level table.
    #[inline(always)]
    fn put_first(&mut self, key: &Key, slot: Slot) {
        if key.is_tiny() {
            // A piece of at most 7 bytes is at most 7 tokens: its count fits.
            debug_assert!(
                slot[3] >> 56 <= 7,
                "a tiny piece's count: {}",
                slot[3] >> 56
            );
            *self.tiny.tiny_mut(key.first) = key.tiny_probe() | slot[3] & COUNT_MASK;
        } else if key.is_mid() {
            debug_assert!(
                slot[3] >> 56 <= 15,
                "a mid piece's count: {}",
                slot[3] >> 56
            );
            *self.mid.mid_mut(key.first) = [slot[0], key.mid_probe() | slot[3] & COUNT_MASK];
        } else {
            *self.long.slot_mut(key.first) = slot;
        }
    }

    /// Store `n` as the count of `key`'s piece in both levels: it evicts
    /// whatever held its first-level slot, and the older of its second-level
    /// bucket's.
    #[inline(always)]
    pub(crate) fn put(&mut self, key: &Key, n: usize) {
        // A piece of `len` bytes merges into at most `len` tokens (each has a
        // byte at least): the guard keeps local the invariant that every count
        // fits its slot (4 bits in a tiny or mid slot, 8 in a long one).
        if n <= (key.slot[3] >> 48) as usize {
            let k = &key.slot;
            let slot = [k[0], k[1], k[2], k[3] | (n as u64) << 56];
            self.put_first(key, slot);
            match &self.second {
                Some(second) => {
                    let at = key.second() * 2;
                    if let Some(newer) = second.read(at) {
                        second.write(at + 1, newer);
                    }
                    second.write(at, slot);
                }
                None => {
                    self.misses += 1;
                    if self.misses == SECOND_AFTER {
                        self.second = Some(SECONDS.find_or_make(self.owner));
                    }
                }
            }
        }
    }
}

/// context-loader patch (PATCH.md section 26): the second level of one
/// encoding, shared by every thread's memo of it. Two threads that count one
/// tree each met most of its pieces on their own: 800 k pieces computed where
/// one thread computed 627 k (o200k_base, the bench tree). Shared, a piece one
/// thread computed is a hit for the other.
///
/// Each slot's last word carries, beside the piece's length and count, a
/// version in its low 48 bits (zero in a key: no key reaches them): bit 0 set
/// while a thread writes the slot, the rest counting its writes. A reader
/// takes the words only if the version is the same before and after and not
/// being written; a writer takes the slot by setting bit 0 (compare and
/// swap), or gives up if another has it: it is a cache, a store may be
/// dropped. Every word is read and written atomically (plain loads and stores
/// on x86_64), so no two threads race on memory the language does not let
/// them share.
pub(crate) struct Second {
    lines: Lines,
}

/// The bits of a second-level slot's last word that hold its version.
const VERSION: u64 = (1 << 48) - 1;
/// The version's bit set while a thread writes the slot.
const WRITING: u64 = 1;

// SAFETY: after `Second::new` (which zeroes the lines before anything can
// share them), every access to the lines' words is atomic (`Second::word`),
// and the allocation is freed only by the last `Arc`'s drop.
unsafe impl Sync for Second {}

impl Second {
    fn new() -> Self {
        Self {
            lines: Lines::huge(BUCKETS * 2),
        }
    }

    /// Word `w` of slot `at`, as an atomic.
    #[inline(always)]
    fn word(&self, at: usize, w: usize) -> &AtomicU64 {
        assert_in_bounds(at * 4, self.lines.words);
        // SAFETY: `at * 4 + w < words` (`at` is a bucket's slot from a hash's
        // top bits, `w < 4`), 8-byte aligned inside the lines' allocation,
        // which lives as long as `self`; every access to it is atomic.
        unsafe { AtomicU64::from_ptr(self.lines.start.add(at * 4 + w)) }
    }

    /// Slot `at`'s words as they were at one moment, or `None` while a thread
    /// writes it. The version is left in the last word: compare it as
    /// [`count_if_same`] does (which ignores it) and clear it before storing
    /// the slot elsewhere ([`Memo::put_first`] keeps only the count).
    #[inline(always)]
    fn read(&self, at: usize) -> Option<Slot> {
        let last = self.word(at, 3).load(Ordering::Acquire);
        if last & WRITING != 0 {
            return None;
        }
        let words = [0, 1, 2].map(|w| self.word(at, w).load(Ordering::Relaxed));
        // The words' loads before the version's second load: a writer that
        // changed any of them had set `WRITING` first, so the version moved.
        fence(Ordering::Acquire);
        (self.word(at, 3).load(Ordering::Relaxed) == last)
            .then_some([words[0], words[1], words[2], last])
    }

    /// Store `slot` (a key with its count; its version bits are ignored) in
    /// slot `at`, unless another thread is writing it.
    #[inline(always)]
    fn write(&self, at: usize, slot: Slot) {
        let last = self.word(at, 3);
        let before = last.load(Ordering::Relaxed);
        if before & WRITING != 0
            || last
                .compare_exchange(
                    before,
                    before | WRITING,
                    Ordering::Acquire,
                    Ordering::Relaxed,
                )
                .is_err()
        {
            return;
        }
        // The words' stores after the version's: a reader that sees any of
        // them sees `WRITING` or a later version.
        fence(Ordering::Release);
        for w in 0..3 {
            self.word(at, w).store(slot[w], Ordering::Relaxed);
        }
        let version = (before & VERSION).wrapping_add(2) & VERSION;
        last.store(slot[3] & !VERSION | version, Ordering::Release);
    }
}

/// The second levels in use, one per encoding, held by the memos that share
/// them: the last memo of an encoding to go frees its level.
static SECONDS: Seconds = Seconds(Mutex::new(Vec::new()));

struct Seconds(Mutex<Vec<(u64, Weak<Second>)>>);

impl Seconds {
    /// The second level of the encoding `owner`, if a memo holds one.
    fn find(&self, owner: u64) -> Option<Arc<Second>> {
        let seconds = self.0.lock().unwrap_or_else(|e| e.into_inner());
        seconds
            .iter()
            .find(|(o, _)| *o == owner)
            .and_then(|(_, second)| second.upgrade())
    }

    /// The second level of the encoding `owner`, made if no memo holds one.
    fn find_or_make(&self, owner: u64) -> Arc<Second> {
        let mut seconds = self.0.lock().unwrap_or_else(|e| e.into_inner());
        seconds.retain(|(_, second)| second.strong_count() > 0);
        if let Some(second) = seconds
            .iter()
            .find(|(o, _)| *o == owner)
            .and_then(|(_, second)| second.upgrade())
        {
            return second;
        }
        let second = Arc::new(Second::new());
        seconds.push((owner, Arc::downgrade(&second)));
        second
    }
}

/// A piece as the memo looks it up: padded and hashed once, then carried from
/// the first level's miss to the second level's prefetch, probe and store (one
/// piece later), instead of being padded and hashed again at each step.
#[derive(Clone, Copy)]
pub(crate) struct Key {
    slot: Slot,
    hash: u64,
    first: usize,
}

impl Key {
    /// The key of a piece of `len` bytes (`3 <= len <= 7`) that are the low
    /// bytes of `eight` (8 bytes of the text from the piece's start,
    /// little-endian; the bytes past the piece are masked off).
    #[inline(always)]
    fn of_tiny(eight: u64, len: usize) -> Self {
        let word = eight & u64::MAX >> (64 - 8 * len);
        let slot = [word, 0, 0, (len as u64) << 48];
        let hash = tiny_hash(word, len);
        Self {
            slot,
            hash,
            first: tiny_index(hash),
        }
    }

    /// The key of the 8-byte piece whose bytes are `eight`, little-endian.
    #[inline(always)]
    fn of_eight(eight: u64) -> Self {
        let slot = [eight, 0, 0, 8 << 48];
        let hash = hash(&slot);
        Self {
            slot,
            hash,
            first: mid_index(hash),
        }
    }

    /// The key of `piece`. Caller guarantees `3 <= piece.len() <= KEY_MAX`.
    #[inline(always)]
    pub(crate) fn of(piece: &[u8]) -> Self {
        let slot = padded_key(piece);
        let (hash, first) = match piece.len() {
            ..=7 => {
                let hash = tiny_hash(slot[0], piece.len());
                (hash, tiny_index(hash))
            }
            8..=15 => {
                let hash = hash(&slot);
                (hash, mid_index(hash))
            }
            _ => {
                let hash = hash(&slot);
                (hash, long_index(hash))
            }
        };
        Self { slot, hash, first }
    }

    /// Whether the piece is at most 7 bytes long (its slot in the tiny
    /// table; `first` indexes that table).
    #[inline(always)]
    fn is_tiny(&self) -> bool {
        self.slot[3] <= 7 << 48
    }

    /// What a tiny slot holding this key's piece holds but its count: the
    /// piece's bytes, and its length at bit 60.
    #[inline(always)]
    fn tiny_probe(&self) -> TinySlot {
        self.slot[0] | (self.slot[3] >> 48) << 60
    }

    /// Whether the piece is 8 to 15 bytes long, once [`Self::is_tiny`] has
    /// said no (its slot in the mid table; `first` indexes that table).
    #[inline(always)]
    fn is_mid(&self) -> bool {
        self.slot[3] <= 15 << 48
    }

    /// What a mid slot's second word holds but the count: the piece's bytes
    /// from the 9th on, and its length at bit 60.
    #[inline(always)]
    fn mid_probe(&self) -> u64 {
        self.slot[1] | (self.slot[3] >> 48) << 60
    }

    #[inline(always)]
    fn second(&self) -> usize {
        second_index(self.hash)
    }
}

/// The count a slot holds if it holds exactly `key`.
#[inline(always)]
fn count_if_same(slot: &Slot, key: &Slot) -> Option<usize> {
    // A second-level slot's version (bits 0..48) is no part of its piece.
    (slot[0] == key[0]
        && slot[1] == key[1]
        && slot[2] == key[2]
        && slot[3] & !(COUNT_MASK | VERSION) == key[3])
        .then_some((slot[3] >> 56) as usize)
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

/// A padded key's hash (length included, so "ab" and "ab\0" differ).
#[inline(always)]
fn hash(key: &Slot) -> u64 {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    (key[0].wrapping_mul(K) ^ key[1].rotate_left(21) ^ key[2].rotate_left(42) ^ key[3])
        .wrapping_mul(K)
}

/// The hash of a piece of `len` bytes (at most 7) whose zero-padded bytes are
/// `word`: one multiply of the word a tiny slot compares, where [`hash`] takes
/// two. Its top bits spread the pieces of the benchmark's corpora over the
/// tiny table as well as [`hash`]'s did (PATCH.md section 21).
#[inline(always)]
fn tiny_hash(word: u64, len: usize) -> u64 {
    (word | (len as u64) << 60).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// A tiny slot's count if it holds exactly `key`'s piece.
#[inline(always)]
fn tiny_count(slot: TinySlot, key: &Key) -> Option<usize> {
    (slot & !COUNT_NIBBLE == key.tiny_probe()).then_some((slot >> 56 & 0xF) as usize)
}

/// The first-level slot of a padded key's hash: its top bits (the only ones
/// every key bit reaches), in the tiny, mid or long pieces' table.
#[inline(always)]
fn tiny_index(hash: u64) -> usize {
    (hash >> (64 - TINY_SLOTS.trailing_zeros())) as usize
}

#[inline(always)]
fn mid_index(hash: u64) -> usize {
    (hash >> (64 - MID_SLOTS.trailing_zeros())) as usize
}

/// A mid slot's count if it holds exactly `key`'s piece.
#[inline(always)]
fn mid_count(slot: &MidSlot, key: &Key) -> Option<usize> {
    (slot[0] == key.slot[0] && slot[1] & !COUNT_NIBBLE == key.mid_probe())
        .then_some((slot[1] >> 56 & 0xF) as usize)
}

#[inline(always)]
fn long_index(hash: u64) -> usize {
    (hash >> (64 - LONG_SLOTS.trailing_zeros())) as usize
}

/// The second-level bucket of a padded key's hash: the top bits of the hash
/// mixed once more, so pieces that share a first-level slot spread over
/// buckets. One more multiply, paid only on a first-level miss.
#[inline(always)]
fn second_index(h: u64) -> usize {
    const K: u64 = 0xD6E8_FEB8_6659_FD93;
    ((h ^ h >> 29).wrapping_mul(K) >> (64 - BUCKETS.trailing_zeros())) as usize
}

/// This thread's memos, one per encoding; handed to [`RETIRED`] when the thread
/// exits.
struct ThreadMemos(Vec<(u64, Memo)>);

impl Drop for ThreadMemos {
    fn drop(&mut self) {
        RETIRED.retire(self.0.drain(..));
    }
}

thread_local! {
    static MEMOS: RefCell<ThreadMemos> = const { RefCell::new(ThreadMemos(Vec::new())) };
}

/// context-loader patch: the memos of threads that have exited, for the next
/// thread that counts with the same encoding.
///
/// Why: callers count on short-lived threads (a scoped worker per request for
/// `files`, a fresh `spawn_blocking` thread after an idle spell), and a fresh
/// thread's memo is empty: every distinct piece it meets costs a probe of the
/// vocabulary's table (a cache miss) and often a merge. Counting 1.4 MB of
/// English prose with o200k_base on a fresh thread ran at a quarter of the
/// rate of the same count on a thread whose memo was warm (58 vs 251 MB/s,
/// same process, PATCH.md section 8). A retired memo holds exact counts for
/// its encoding's nonce only, so adopting it changes no answer.
static RETIRED: Retired = Retired::new();

/// Memos kept after their threads exit: a bound on the memory held for threads
/// that no longer exist (each memo is 1.75 MiB, and keeps its encoding's
/// shared 4 MiB second level alive); as many as a machine runs counting
/// threads at once, mostly.
const RETIRED_MAX: usize = 8;

struct Retired(std::sync::Mutex<Vec<(u64, Memo)>>);

impl Retired {
    const fn new() -> Self {
        Self(std::sync::Mutex::new(Vec::new()))
    }

    /// Keep `memos`, dropping the oldest kept beyond [`RETIRED_MAX`].
    fn retire(&self, memos: impl Iterator<Item = (u64, Memo)>) {
        let mut kept = self.0.lock().unwrap_or_else(|e| e.into_inner());
        for memo in memos {
            if kept.len() == RETIRED_MAX {
                kept.remove(0);
            }
            kept.push(memo);
        }
    }

    /// The newest kept memo of the encoding `owner`, taken out of the pool.
    fn adopt(&self, owner: u64) -> Option<Memo> {
        let mut kept = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let at = kept.iter().rposition(|(o, _)| *o == owner)?;
        Some(kept.remove(at).1)
    }
}

/// Run `f` with this thread's memo for the encoding `owner` (a
/// [`new_cache_id`](crate::piece_cache::new_cache_id) nonce), or with `None`
/// when the memo is already in use on this thread (re-entry): no memo, same
/// answer. A thread's first count with an encoding adopts the memo a thread
/// that has exited left for it, if any ([`RETIRED`]).
#[inline]
pub(crate) fn with_memo<R>(owner: u64, f: impl FnOnce(Option<&mut Memo>) -> R) -> R {
    MEMOS.with(|memos| {
        let Ok(mut memos) = memos.try_borrow_mut() else {
            return f(None);
        };
        let memos = &mut memos.0;
        let at = match memos.iter().position(|(o, _)| *o == owner) {
            Some(at) => at,
            None => {
                if memos.len() == OWNERS_MAX {
                    memos.remove(0);
                }
                let memo = RETIRED.adopt(owner).unwrap_or_else(|| Memo::new(owner));
                memos.push((owner, memo));
                memos.len() - 1
            }
        };
        f(Some(&mut memos[at].1))
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::piece_cache::new_cache_id;

    /// `n` distinct pieces whose keys' hashes share `index`'s value.
    fn colliding(index: fn(u64) -> usize, n: usize) -> Vec<Vec<u8>> {
        let target = index(Key::of(b"abc").hash);
        let mut found = vec![b"abc".to_vec()];
        for i in 0u32.. {
            let other = format!("xy{i}").into_bytes();
            if index(Key::of(&other).hash) == target {
                found.push(other);
                if found.len() == n {
                    break;
                }
            }
        }
        found
    }

    /// Minor page faults this thread has taken so far (`getrusage`).
    fn faults_of_this_thread() -> i64 {
        unsafe extern "C" {
            fn getrusage(who: std::ffi::c_int, usage: *mut [i64; 18]) -> std::ffi::c_int;
        }
        const RUSAGE_THREAD: std::ffi::c_int = 1;
        // struct rusage on 64-bit Linux: two timevals, then 14 longs, the
        // fifth of which (word 8) is ru_minflt.
        let mut usage = [0i64; 18];
        // SAFETY: `usage` is a struct rusage's size and alignment.
        assert_eq!(unsafe { getrusage(RUSAGE_THREAD, &mut usage) }, 0);
        usage[8]
    }

    /// Which pages of `len` bytes from `ptr` fault under a count's pattern: on
    /// each page, a lookup's read, then a miss's write of what it read.
    pub(crate) fn pages_faulting(ptr: *mut u8, len: usize) -> Vec<bool> {
        // Once first, so the calls' own stack is in place.
        faults_of_this_thread();
        (0..len)
            .step_by(PAGE)
            .map(|at| {
                let before = faults_of_this_thread();
                // SAFETY: inside the caller's allocation; the byte is written
                // back unchanged.
                unsafe {
                    let byte = std::ptr::read_volatile(ptr.add(at));
                    std::ptr::write_volatile(ptr.add(at), byte);
                }
                faults_of_this_thread() > before
            })
            .collect()
    }

    /// How many of `pages` faulted.
    pub(crate) fn faulted(pages: &[bool]) -> usize {
        pages.iter().filter(|&&f| f).count()
    }

    /// glibc's `calloc` of a table this size from fresh pages (lazily zeroed),
    /// as in a process that has freed no large block yet; a test process has
    /// freed many, and glibc then serves them from its zeroed heap.
    pub(crate) fn tables_from_fresh_pages() {
        #[cfg(target_env = "gnu")]
        {
            unsafe extern "C" {
                fn mallopt(param: std::ffi::c_int, value: std::ffi::c_int) -> std::ffi::c_int;
            }
            const M_MMAP_THRESHOLD: std::ffi::c_int = -3;
            // SAFETY: a plain setting; any later allocation honours it.
            assert_eq!(unsafe { mallopt(M_MMAP_THRESHOLD, 128 * 1024) }, 1);
        }
    }

    /// PATCH.md section 28: once a thread counts more than a short text, its
    /// memo's first level is faulted in for writing before the count reads it,
    /// so the count's reads and writes fault nothing. Read first, a lazily
    /// zeroed page is the kernel's zero page, and the first write copies it and
    /// flushes the TLB of every other core running the process: two faults per
    /// page, ~450 pages per thread. A short text leaves the pages alone.
    #[test]
    fn a_memo_faults_its_first_level_in_for_writing_before_a_longer_text() {
        tables_from_fresh_pages();
        let faulted = std::thread::spawn(|| {
            let tables =
                |m: &Memo| [&m.tiny, &m.mid, &m.long].map(|l| (l.start.cast::<u8>(), l.words * 8));
            let mut m = Memo::new(new_cache_id());
            // A word.
            m.ready_for(5);
            // A page inside the tiny slots (the first may hold calloc's header).
            // SAFETY: the tiny slots are 1 MiB, 256 pages.
            let inside = unsafe { tables(&m)[0].0.add(100 * PAGE) };
            assert!(
                pages_faulting(inside, 1)[0],
                "a short text faulted nothing in"
            );
            m.ready_for(POPULATE_AFTER - 5);
            assert_eq!(m.until_populated, 0);
            tables(&m).map(|(start, len)| faulted(&pages_faulting(start, len)))
        })
        .join()
        .unwrap();
        // Of 256, 128 and 64 pages: the partial page at a table's end, and one
        // for anything else the kernel does, at most.
        assert!(
            faulted.iter().all(|&f| f <= 2),
            "pages faulting per table: {faulted:?}"
        );
    }

    /// Populating a memo that short texts have already filled keeps every
    /// slot as it was: a piece in the first slot (on the partial page at the
    /// table's start) is still found with its count, and the piece its bytes
    /// would spell with the first one zeroed is not.
    #[test]
    fn populating_a_used_memo_keeps_its_slots() {
        let piece = (0u32..)
            .map(|i| format!("p{i:04}").into_bytes())
            .find(|p| Key::of(p).first == 0)
            .unwrap();
        let mut zeroed = piece.clone();
        zeroed[0] = 0;
        let mut m = Memo::new(new_cache_id());
        m.ready_for(5);
        assert_eq!(m.count(&piece, || 3), 3);
        m.ready_for(POPULATE_AFTER);
        assert_eq!(m.until_populated, 0);
        assert_eq!(m.count(&piece, || unreachable!("stored")), 3);
        assert_eq!(m.count(&zeroed, || 5), 5);
    }

    /// The whole pages of a range that starts and ends mid-page are faulted
    /// in, nothing outside the range is, and no byte changes.
    #[test]
    fn populating_faults_in_the_ranges_whole_pages_only_and_keeps_the_bytes() {
        tables_from_fresh_pages();
        std::thread::spawn(|| {
            let mut words = vec![0u64; 64 * PAGE / 8].into_boxed_slice();
            let ptr = words.as_mut_ptr().cast::<u8>();
            // Page `p` of the allocation's whole pages (the first partial one may
            // hold the allocator's header).
            let first = (ptr as usize).next_multiple_of(PAGE) - ptr as usize;
            // SAFETY: below 64 pages from `ptr` for every `p` used here.
            let page = |p: usize| unsafe { ptr.add(first + p * PAGE) };
            // From the middle of page 1 to the middle of page 61.
            // SAFETY: page 1 + half a page is inside the allocation.
            populate_for_writes(unsafe { page(1).add(PAGE / 2) }, 60 * PAGE);
            // Pages 2..=60 are whole inside the range; 0, 1, 61 and 62 are not.
            let pages = pages_faulting(page(0), 63 * PAGE);
            assert!(faulted(&pages[2..=60]) <= 1, "{:?}", &pages[2..=60]);
            assert!(
                pages[0] && pages[62],
                "pages outside the range were faulted in"
            );
            assert!(words.iter().all(|&w| w == 0));
        })
        .join()
        .unwrap();
    }

    /// A memo whose second level is already allocated.
    fn with_second() -> Memo {
        let mut m = Memo::new(new_cache_id());
        m.second = Some(Arc::new(Second::new()));
        m
    }

    #[test]
    fn the_second_level_comes_once_the_first_has_missed_as_many_pieces_as_it_has_slots() {
        let mut m = Memo::new(new_cache_id());
        let piece = |i: usize| format!("p{i:07}").into_bytes();
        for i in 0..SECOND_AFTER - 1 {
            m.count(&piece(i), || 2);
        }
        assert!(
            m.second.is_none(),
            "a thread counting short texts holds 1.75 MiB"
        );
        // Hits are not misses.
        m.count(&piece(SECOND_AFTER - 2), || unreachable!("first level"));
        assert!(m.second.is_none());
        m.count(&piece(SECOND_AFTER - 1), || 2);
        assert!(m.second.is_some());
        // From then on, what the first level evicts is kept.
        let pieces = colliding(tiny_index, 2);
        m.count(&pieces[0], || 1);
        m.count(&pieces[1], || 3);
        assert_eq!(m.count(&pieces[0], || unreachable!("second level")), 1);
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

    /// `Memo::get_text` (one load from the text, a two-word compare for short
    /// pieces) makes the key `Key::of` makes from the piece alone, and finds
    /// what `Memo::get` finds, for every length, wherever the piece sits in
    /// the text (8 bytes after its start or not), whatever bytes follow it:
    /// with the memo empty, holding every piece, and holding pieces of
    /// other lengths in the same slots.
    #[test]
    fn a_lookup_in_the_text_is_the_pieces_lookup() {
        let text: Vec<u8> = (0..64u32).map(|i| (i * 151 + 7) as u8 | 1).collect();
        let spans = || {
            (0..text.len()).flat_map(|start| {
                (start + 3..=(start + KEY_MAX).min(text.len())).map(move |end| (start, end))
            })
        };
        let check = |m: &Memo| {
            for (start, end) in spans() {
                let (key, hit) = m.get_text(&text, start, end);
                let of = Key::of(&text[start..end]);
                assert_eq!(key.slot, of.slot, "{start}..{end}");
                assert_eq!(key.hash, of.hash, "{start}..{end}");
                assert_eq!(key.first, of.first, "{start}..{end}");
                assert_eq!(hit, m.get(&of), "{start}..{end}");
            }
        };
        let mut m = Memo::new(new_cache_id());
        check(&m);
        for (start, end) in spans() {
            m.put(&Key::of(&text[start..end]), (end - start) % 7 + 1);
        }
        check(&m);
        // Each piece's slot taken by a piece of another length (and other
        // bytes): a long piece must not match a slot whose words 1 and 2
        // are not its own, nor any piece one of another length.
        let mut m = Memo::new(new_cache_id());
        for (start, end) in spans() {
            let other = Key::of(&text[start..end]);
            let len = end - start;
            if other.is_tiny() {
                let len = if len == 7 { 3 } else { len + 1 } as u64;
                *m.tiny.tiny_mut(other.first) = other.slot[0] | len << 60 | 1 << 56;
                assert_eq!(m.get(&other), None, "{start}..{end}");
                continue;
            }
            if other.is_mid() {
                let len = if len == 15 { 8 } else { len + 1 } as u64;
                *m.mid.mid_mut(other.first) = [other.slot[0], other.slot[1] | len << 60 | 1 << 56];
                assert_eq!(m.get(&other), None, "{start}..{end}");
                continue;
            }
            let mut slot = other.slot;
            slot[3] = ((len + 8).min(KEY_MAX) as u64) << 48;
            slot[1] |= 1;
            m.put_first(&other, [slot[0], slot[1], slot[2], slot[3] | 1 << 56]);
        }
        check(&m);
        // A tiny slot holding the same bytes but one more: no match either.
        let mut m = Memo::new(new_cache_id());
        for (start, end) in spans().filter(|(start, end)| end - start < 7) {
            let other = Key::of(&text[start..end]);
            let longer = (other.tiny_probe() + (1 << 60)) | (0x41 << (8 * (end - start)));
            *m.tiny.tiny_mut(other.first) = longer | 1 << 56;
            assert_eq!(m.get(&other), None, "{start}..{end}");
        }
        check(&m);
    }

    /// PATCH.md sections 20 and 21: pieces of 16 to 24 bytes have their own
    /// first-level table. Two that share a slot there evict each other (and
    /// come back from the second level); a piece of at most 7 bytes whose
    /// tiny slot, or of 8 to 15 whose mid slot, has the same index is
    /// neither evicted nor evicting.
    #[test]
    fn long_pieces_have_their_own_first_level_slots() {
        let first = b"a longer piece, yes".to_vec();
        let target = long_index(Key::of(&first).hash);
        let second = (0u32..)
            .map(|i| format!("another long piece {i}").into_bytes())
            .find(|p| long_index(Key::of(p).hash) == target)
            .unwrap();
        let short = (0u32..)
            .map(|i| format!("sh{i:02}").into_bytes())
            .find(|p| tiny_index(Key::of(p).hash) == target)
            .unwrap();
        let mid = (0u32..)
            .map(|i| format!("middling {i:02}").into_bytes())
            .find(|p| mid_index(Key::of(p).hash) == target)
            .unwrap();
        let mut m = with_second();
        assert_eq!(m.count(&first, || 4), 4);
        assert_eq!(m.count(&short, || 2), 2);
        assert_eq!(m.count(&mid, || 6), 6);
        assert_eq!(m.get(&Key::of(&first)), Some(4));
        assert_eq!(m.count(&second, || 5), 5);
        assert_eq!(m.get(&Key::of(&first)), None);
        assert_eq!(m.get(&Key::of(&short)), Some(2));
        assert_eq!(m.count(&first, || unreachable!("second level")), 4);
        assert_eq!(m.get(&Key::of(&first)), Some(4));
        assert_eq!(m.get(&Key::of(&second)), None);
        assert_eq!(m.count(&short, || unreachable!("first level")), 2);
        assert_eq!(m.count(&mid, || unreachable!("first level")), 6);
        // The tiny table holds 7 bytes of a key, the mid table 15: longer
        // pieces must never go there.
        let bytes = [b'q'; KEY_MAX];
        for len in 3..=KEY_MAX {
            let key = Key::of(&bytes[..len]);
            assert_eq!(key.is_tiny(), len <= 7, "length {len}");
            assert_eq!(
                !key.is_tiny() && key.is_mid(),
                (8..=15).contains(&len),
                "length {len}"
            );
        }
    }

    #[test]
    fn a_hit_returns_the_stored_count_without_computing() {
        let mut m = Memo::new(new_cache_id());
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
    fn a_piece_evicted_from_the_first_level_is_found_in_the_second_and_moves_back() {
        let pieces = colliding(tiny_index, 2);
        let (a, b) = (&pieces[0], &pieces[1]);
        let mut m = with_second();
        assert_eq!(m.count(a, || 1), 1);
        // b takes a's first-level slot: computed, not a's count.
        assert_eq!(m.count(b, || 3), 3);
        let (ka, kb) = (Key::of(a), Key::of(b));
        assert_eq!(m.get(&ka), None);
        assert_eq!(m.get(&kb), Some(3));
        // a is still in the second level, with its own count, and moves back.
        assert_eq!(m.get_second(&ka), Some(1));
        assert_eq!(m.get(&ka), Some(1));
        assert_eq!(m.count(b, || unreachable!("second level")), 3);
    }

    #[test]
    fn a_second_level_bucket_keeps_the_two_newest_pieces() {
        let pieces = colliding(second_index, 3);
        let mut m = with_second();
        for (n, piece) in pieces.iter().enumerate() {
            m.put(&Key::of(piece), n + 1);
        }
        let second = |m: &mut Memo, at: usize| m.get_second(&Key::of(&pieces[at]));
        assert_eq!(second(&mut m, 0), None, "the oldest is evicted");
        assert_eq!(second(&mut m, 1), Some(2));
        assert_eq!(second(&mut m, 2), Some(3));
        // Gone from the second level; its own count if its first-level slot
        // survived, else computed again: never another piece's.
        let n = m.count(&pieces[0], || 7);
        assert!(n == 1 || n == 7, "{n}");
    }

    /// PATCH.md section 18: the second level starts on a huge page's
    /// boundary (so its 4 MiB are two whole huge pages) and every slot is
    /// empty; the first level stays a line-aligned `calloc`.
    #[test]
    fn the_second_level_is_zeroed_and_starts_on_a_huge_page() {
        let m = with_second();
        let second = m.second.as_ref().unwrap();
        assert_eq!(second.lines.start as usize % HUGE_PAGE, 0);
        assert_eq!(second.lines.words, BUCKETS * 2 * 4);
        assert!((0..BUCKETS * 2).all(|at| second.read(at) == Some([0; 4])));
        assert!(matches!(m.long.owner, Owner::Calloc(_)));
        assert!(matches!(second.lines.owner, Owner::Aligned(..)));
    }

    /// PATCH.md section 26: one second level per encoding, shared by the
    /// memos of every thread, and freed with the last of them.
    #[test]
    fn a_piece_one_memo_computed_is_found_by_another_memo_of_its_encoding() {
        let owner = new_cache_id();
        let mut a = Memo::new(owner);
        assert!(a.second.is_none(), "no memo has made one yet");
        a.second = Some(SECONDS.find_or_make(owner));
        assert_eq!(a.count(b"shared piece", || 3), 3);
        // A memo made now shares it at once: a's piece, without computing.
        let mut b = Memo::new(owner);
        assert!(b.second.is_some());
        assert_eq!(b.count(b"shared piece", || unreachable!("a's")), 3);
        // Another encoding's memo never sees it.
        let mut other = Memo::new(new_cache_id());
        other.second = Some(SECONDS.find_or_make(other.owner));
        assert_eq!(other.count(b"shared piece", || 2), 2);
        // The last memo of the encoding frees its level.
        drop((a, b));
        assert!(SECONDS.find(owner).is_none());
        assert!(Memo::new(owner).second.is_none());
    }

    /// The version's protocol, one step at a time: a slot a writer holds is a
    /// miss and is not written by another; every write moves the version.
    #[test]
    fn a_slot_being_written_is_a_miss_and_left_to_its_writer() {
        let second = Second::new();
        let (a, b) = (Key::of(b"piece a"), Key::of(b"piece b"));
        let with_count = |key: &Key, n: u64| {
            let k = key.slot;
            [k[0], k[1], k[2], k[3] | n << 56]
        };
        second.write(5, with_count(&a, 2));
        let stored = second.read(5).expect("no writer");
        assert_eq!(count_if_same(&stored, &a.slot), Some(2));
        let version = stored[3] & VERSION;
        assert_eq!(version & WRITING, 0);
        // Another thread holds the slot: readers miss, writers give up.
        second.word(5, 3).fetch_or(WRITING, Ordering::Relaxed);
        assert_eq!(second.read(5), None);
        second.write(5, with_count(&b, 3));
        second.word(5, 3).fetch_and(!WRITING, Ordering::Relaxed);
        assert_eq!(count_if_same(&second.read(5).unwrap(), &a.slot), Some(2));
        // A write of its own moves the version on.
        second.write(5, with_count(&b, 3));
        let stored = second.read(5).unwrap();
        assert_eq!(count_if_same(&stored, &b.slot), Some(3));
        assert_ne!(stored[3] & VERSION, version);
        // A hit copied to the first level keeps no version bits.
        let long = Key::of(b"a piece of twenty bytes");
        let mut m = Memo::new(new_cache_id());
        m.second = Some(Arc::new(second));
        let at = long.second() * 2;
        m.second.as_ref().unwrap().write(at, with_count(&long, 4));
        m.second.as_ref().unwrap().write(at, with_count(&long, 4));
        assert_eq!(m.get_second(&long), Some(4));
        assert_eq!(m.get(&long), Some(4));
        assert_eq!(*m.long.slot(long.first), with_count(&long, 4));
    }

    /// Threads storing and reading the pieces of one second-level bucket at
    /// once: a read finds a piece with its own count or not at all, never
    /// another piece's count (a slot read while written is a miss).
    #[test]
    fn threads_sharing_a_bucket_never_read_another_pieces_count() {
        let owner = new_cache_id();
        let pieces = colliding(second_index, 6);
        let count_of = |piece: &[u8]| 1 + (Key::of(piece).hash >> 7) as usize % 3;
        let second = SECONDS.find_or_make(owner);
        let all_hits = std::sync::atomic::AtomicUsize::new(0);
        std::thread::scope(|scope| {
            for t in 0..4usize {
                let (pieces, second, all_hits) = (&pieces, &second, &all_hits);
                scope.spawn(move || {
                    let mut m = Memo::new(owner);
                    assert!(Arc::ptr_eq(m.second.as_ref().unwrap(), second));
                    let (mut hits, mut state) = (0, t as u64 + 1);
                    for _ in 0..20_000 {
                        state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
                        let piece = &pieces[(state >> 33) as usize % pieces.len()];
                        let key = Key::of(piece);
                        if state >> 62 == 0 {
                            m.put(&key, count_of(piece));
                        } else if let Some(n) = m.get_second(&key) {
                            assert_eq!(n, count_of(piece), "{piece:?}");
                            hits += 1;
                        }
                    }
                    all_hits.fetch_add(hits, Ordering::Relaxed);
                });
            }
        });
        // Over all threads: one thread may find none, when it ran all its steps
        // while two others, preempted mid-write, held both slots.
        assert!(all_hits.into_inner() > 0, "the pieces stored are found");
        // Every slot of the bucket ends with a whole piece and no writer.
        let at = Key::of(&pieces[0]).second() * 2;
        for at in [at, at + 1] {
            let slot = second.read(at).expect("no writer left");
            let piece = pieces
                .iter()
                .find(|p| count_if_same(&slot, &Key::of(p).slot).is_some())
                .expect("one of the pieces");
            assert_eq!((slot[3] >> 56) as usize, count_of(piece));
        }
    }

    #[test]
    fn no_slot_straddles_two_cache_lines() {
        let mut m = with_second();
        for level in [&m.long, &m.second.as_ref().unwrap().lines] {
            assert_eq!(level.slot(0).as_ptr() as usize % LINE, 0);
            assert_eq!(level.slot(1).as_ptr() as usize % LINE, 32);
        }
        assert_eq!(m.mid.mid(0).as_ptr() as usize % LINE, 0);
        assert_eq!(m.mid.mid(1).as_ptr() as usize % LINE, 16);
        assert_eq!(m.mid.mid(3).as_ptr() as usize % LINE, 48);
        assert_eq!(m.tiny.tiny_mut(0) as *const u64 as usize % LINE, 0);
    }

    #[test]
    fn counts_too_large_for_a_slot_are_not_stored() {
        let mut m = Memo::new(new_cache_id());
        assert_eq!(m.count(b"big", || 300), 300);
        assert_eq!(m.count(b"big", || 301), 301);
        // More tokens than bytes is no count a piece has: never stored (a
        // tiny slot keeps 4 bits of count, next to its length).
        assert_eq!(m.count(b"bug", || 4), 4);
        assert_eq!(m.count(b"bug", || 15), 15);
        assert_eq!(m.count(b"bug", || 3), 3);
        assert_eq!(m.count(b"bug", || unreachable!("stored")), 3);
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
    fn a_thread_adopts_the_memo_an_exited_thread_left_for_its_encoding() {
        let (a, b) = (new_cache_id(), new_cache_id());
        std::thread::spawn(move || {
            with_memo(a, |m| assert_eq!(m.unwrap().count(b"left", || 3), 3));
        })
        .join()
        .unwrap();
        std::thread::spawn(move || {
            // Another encoding: never a's memo.
            with_memo(b, |m| assert_eq!(m.unwrap().count(b"left", || 2), 2));
            // a's: what the exited thread stored, without computing.
            with_memo(a, |m| {
                assert_eq!(m.unwrap().count(b"left", || unreachable!("adopted")), 3)
            });
        })
        .join()
        .unwrap();
    }

    #[test]
    fn the_pool_keeps_the_newest_memos_and_gives_each_once() {
        let pool = Retired::new();
        let owners: Vec<u64> = (0..RETIRED_MAX + 2).map(|_| new_cache_id()).collect();
        pool.retire(owners.iter().map(|&o| {
            let mut m = Memo::new(o);
            m.count(b"mine", || (o % 4 + 1) as usize);
            (o, m)
        }));
        // The two oldest were dropped.
        assert!(pool.adopt(owners[0]).is_none());
        assert!(pool.adopt(owners[1]).is_none());
        for &o in &owners[2..] {
            let mut m = pool.adopt(o).expect("kept");
            assert_eq!(
                m.count(b"mine", || unreachable!("its own")),
                (o % 4 + 1) as usize
            );
            assert!(pool.adopt(o).is_none(), "given once");
        }
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
