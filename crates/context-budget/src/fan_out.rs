//! The engine's one way to spread work over cores: a shared queue of items that
//! up to `threads` scoped threads (the calling one included) take from one at a
//! time, results back in item order. A leaf, std only.
//!
//! A queue rather than pre-cut chunks: files differ in size by orders of magnitude,
//! and a thread that drew the large ones would finish last on an idle machine.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

/// Threads for work that keeps every core busy: one per core (1 when unknown).
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// [`map_with`] without per-thread state.
pub fn map<T, R>(
    items: impl IntoIterator<Item = T, IntoIter: ExactSizeIterator + Send>,
    threads: usize,
    work: impl Fn(T) -> Option<R> + Sync,
) -> Vec<Option<R>>
where
    R: Send,
{
    map_with(items, threads, || (), |_, item| work(item))
}

/// [`map`] that always finishes: `work` on every item of `items`, results in item
/// order, and the items a panicking thread (a bug) left undone are done again on the
/// calling thread rather than lost. For work that has no reason to stop early.
pub fn map_all<T, R>(items: &[T], threads: usize, work: impl Fn(T) -> R + Sync) -> Vec<R>
where
    T: Copy + Sync,
    R: Send,
{
    map(items.iter().copied(), threads, |item| Some(work(item)))
        .into_iter()
        .zip(items)
        .map(|(done, &item)| done.unwrap_or_else(|| work(item)))
        .collect()
}

/// `work` on every item of `items`, on up to `threads` threads (never more than
/// there are items; the calling thread is one of them), each starting with its own
/// state from `init` (a buffer it reuses from item to item).
///
/// The answer has one slot per item, in item order. `work` returning `None` stops
/// the fan-out: no item is started after it, and the slots of items not done are
/// `None`. So are those of a thread that panicked (a bug): each caller decides
/// whether to redo them, report them or leave them out. A panic on the calling
/// thread propagates.
pub fn map_with<T, S, R>(
    items: impl IntoIterator<Item = T, IntoIter: ExactSizeIterator + Send>,
    threads: usize,
    init: impl Fn() -> S + Sync,
    work: impl Fn(&mut S, T) -> Option<R> + Sync,
) -> Vec<Option<R>>
where
    R: Send,
{
    let items = items.into_iter();
    let len = items.len();
    let threads = threads.clamp(1, len.max(1));
    let queue = Mutex::new(items.enumerate());
    let stopped = AtomicBool::new(false);
    let worker = || {
        let mut state = init();
        let mut done = Vec::new();
        while !stopped.load(Ordering::Relaxed) {
            // The lock is held to take an item, never while working on it.
            let Some((index, item)) = queue.lock().ok().and_then(|mut q| q.next()) else {
                break;
            };
            match work(&mut state, item) {
                Some(result) => done.push((index, result)),
                None => stopped.store(true, Ordering::Relaxed),
            }
        }
        done
    };
    let done = std::thread::scope(|scope| {
        let handles: Vec<_> = (1..threads).map(|_| scope.spawn(worker)).collect();
        let mut all = worker();
        for handle in handles {
            all.extend(handle.join().unwrap_or_default());
        }
        all
    });
    let mut results: Vec<Option<R>> = (0..len).map(|_| None).collect();
    for (index, result) in done {
        results[index] = Some(result);
    }
    results
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    #[test]
    fn results_come_back_in_item_order() {
        let squares = map(0..1000usize, 4, |n| Some(n * n));
        assert_eq!(
            squares,
            (0..1000usize).map(|n| Some(n * n)).collect::<Vec<_>>()
        );
        assert!(map(Vec::<u8>::new(), 4, Some).is_empty());
    }

    #[test]
    fn items_can_be_changed_in_place_with_a_buffer_per_thread() {
        let mut words = vec![String::from("a"); 100];
        map_with(words.iter_mut(), 3, String::new, |buffer, word| {
            buffer.clear();
            buffer.push_str(word);
            buffer.push('!');
            word.clone_from(buffer);
            Some(())
        });
        assert!(words.iter().all(|w| w == "a!"));
    }

    #[test]
    fn map_all_does_again_what_a_panicking_thread_left() {
        let items: Vec<usize> = (0..200).collect();
        let caller = std::thread::current().id();
        let panicked = AtomicBool::new(false);
        // The other thread's first item panics (a panic on the calling thread would
        // propagate); the caller is slowed so that the other thread takes items.
        let doubled = map_all(&items, 2, |n| {
            if std::thread::current().id() == caller {
                std::thread::sleep(std::time::Duration::from_millis(1));
            } else if !panicked.swap(true, Ordering::Relaxed) {
                // resume_unwind: no panic message in the test output.
                std::panic::resume_unwind(Box::new("expected"));
            }
            n * 2
        });
        assert!(
            panicked.load(Ordering::Relaxed),
            "the other thread took an item"
        );
        assert_eq!(doubled, items.iter().map(|n| n * 2).collect::<Vec<_>>());
    }

    #[test]
    fn none_stops_the_fan_out() {
        let started = AtomicUsize::new(0);
        let results = map(0..10_000, 2, |n| {
            started.fetch_add(1, Ordering::Relaxed);
            (n != 10).then_some(n)
        });
        assert_eq!(results[10], None);
        assert!(
            started.load(Ordering::Relaxed) < 10_000,
            "items after the stop are not started"
        );
    }
}
