//! Any files, folders and globs under a set of roots: what they cost for a model
//! (`file_tokens`) and the files themselves packed into a budget (`load_files`).
//!
//! One concept per module: [`roots`] (what a requested path means, and refusing
//! everything outside the roots), [`walk`] (ripgrep's `ignore` walker, globs,
//! filters, counting what the rules excluded), `ignore` (the ignore files' rules,
//! bounded and read once per call), [`secrets`] (credential-looking
//! names), [`open`] (open, then verify the handle), `measure` (open, read with the
//! shared core `crate::read`, count through the cache, on all cores with
//! `crate::fan_out`), `load` (`load-files` in named steps: budget, order, pack,
//! prove), [`pack`] (wrapping files and cutting one), `store` ([`FileStore`]: the
//! cache and limits, and each tool's steps in order), `persist` (the cache written
//! out and read back between command-line runs), `query` (what a call asks, and
//! [`FileLimits`], the bounds on every call), `output` (what it answers), `error`
//! ([`FilesError`]). The measurement cache type is
//! shared with specs ([`crate::cache`]).

mod error;
mod ignore;
mod load;
mod measure;
pub mod open;
mod output;
pub mod pack;
mod persist;
mod query;
pub mod roots;
pub mod secrets;
mod store;
pub mod walk;

pub use crate::read::SkipReason;
pub use error::FilesError;
pub use load::default_budget;
pub use measure::FileMeasure;
pub use output::{
    Excluded, FileRow, FileTokens, FilesModel, FolderRow, IncludedFile, LoadedFiles, MAX_EXAMPLES,
    OmittedFile, Skipped, WindowShare,
};
pub use persist::{BadCacheFile, MAX_CACHE_FILE_BYTES};
pub use query::{DEFAULT_LOAD_ROWS, FileLimits, FileQuery, FileSort, LoadRequest};
pub use store::FileStore;
