//! Running a tool's CPU-heavy work on tokio's blocking pool, off the async executor;
//! a panic in that work comes back as an INTERNAL_ERROR result.

use crate::{ErrorCode, ToolError};

/// Run CPU-heavy work (counting megabytes) off the async executor, so one large
/// request does not stall every other connection on that worker thread.
pub async fn run_blocking<T, F>(work: F) -> Result<T, ToolError>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T, ToolError> + Send + 'static,
{
    tokio::task::spawn_blocking(work).await.unwrap_or_else(|e| {
        Err(ToolError::new(
            ErrorCode::InternalError,
            format!("the tool's worker failed: {e}"),
            "Retry the call; if it fails again, report it with the input that caused it.",
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn blocking_work_returns_its_result() {
        assert_eq!(run_blocking(|| Ok(2 + 2)).await, Ok(4));
        let failed = run_blocking::<(), _>(|| panic!("boom"))
            .await
            .expect_err("panic is an error");
        assert_eq!(failed.code, ErrorCode::InternalError);
    }
}
