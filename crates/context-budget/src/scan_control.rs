//! How a long scan (measuring specs, walking and reading files) reports progress
//! and learns that its caller gave up. A leaf: the spec and file tools both take a
//! `&dyn ScanControl`, and the server implements it per request.

/// What a long scan tells its caller, and how the caller stops it. Called from
/// worker threads.
pub trait ScanControl: Sync {
    /// `done` of `total` files measured so far.
    fn progress(&self, _done: usize, _total: usize) {}
    /// True once the caller no longer wants the result.
    fn is_cancelled(&self) -> bool {
        false
    }
}

/// For callers that need neither progress nor cancellation.
pub struct Unobserved;
impl ScanControl for Unobserved {}
