//! Any files, folders and globs under a set of roots: what they cost for a model
//! (`file_tokens`) and the files themselves packed into a budget (`load_files`).
//!
//! One concept per module, in a stack: a module imports only modules of the levels
//! below it (or of its own, without a cycle), so each can be read without those
//! above it. Bottom to top:
//!
//! 1. What a call asks and answers: `query` (what a call asks, and [`FileLimits`],
//!    the bounds on every call), `output` (the answers' wire types and the shaping
//!    both tools share), `error` ([`FilesError`]), [`pack`] (the packed text's
//!    formats, wrapping files and cutting one).
//! 2. One path or file: [`roots`] (what a requested path means, and refusing
//!    everything outside the roots), [`secrets`] (credential-looking names),
//!    `ignore` (the ignore files' rules, bounded and read once per call), [`open`]
//!    (open, then verify the handle).
//! 3. Many files: [`walk`] (a query's paths and globs to candidate files: a parallel
//!    walk judging each folder's listing with its ignore rules, filters, counting
//!    what the rules excluded), `measure` (open,
//!    read with the shared core `crate::read`, count through the cache, on all cores
//!    with `crate::fan_out`; when asked, the file's outline too, `crate::outline`,
//!    only ever of a file the secret rules let through).
//! 4. `load`: `load-files`, the whole procedure, one module per idea in its folder.
//! 5. `store`: [`FileStore`], the cache and limits behind both tools; `file-tokens`
//!    as named steps, and one call into `load`.
//! 6. `persist`: the store's cache written out and read back between command-line
//!    runs.
//!
//! The measurement cache type is shared with specs ([`crate::cache`]).

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
pub use measure::{FileMeasure, OutlineTokens};
pub use output::{
    Excluded, FileRow, FileTokens, FilesModel, FolderRow, IncludedFile, Levels, LoadedFiles,
    MAX_EXAMPLES, OmittedFile, Skipped, WindowShare,
};
pub use persist::{BadCacheFile, MAX_CACHE_FILE_BYTES};
pub use query::{DEFAULT_LOAD_ROWS, FileLimits, FileQuery, FileSort, LoadRequest};
pub use store::FileStore;
