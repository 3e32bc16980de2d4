//! Why a spec request failed: one typed error the server maps to tool errors.

/// Why a spec request failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SpecError {
    #[error("specs root `{path}` cannot be used: {reason}")]
    RootNotFound { path: String, reason: String },
    #[error("`{query}` is not a usable spec path: {reason}")]
    InvalidQuery { query: String, reason: String },
    #[error("`{query}` points outside the specs root")]
    OutsideRoot { query: String },
    #[error("no spec matches `{query}`")]
    NotFound {
        query: String,
        /// Spec ids, closest first (possibly none).
        closest: Vec<String>,
        /// How `closest` was chosen.
        by: Closeness,
    },
    #[error("`{query}` matches more than one spec: {}", candidates.join(", "))]
    Ambiguous {
        query: String,
        candidates: Vec<String>,
    },
    #[error("spec `{spec}` has no file `{file}`")]
    FileNotFound {
        spec: String,
        file: String,
        available: Vec<String>,
    },
    #[error("`{path}` cannot be measured: {reason}")]
    FileUnreadable { path: String, reason: String },
    #[error("the scan was cancelled")]
    Cancelled,
    /// A name or the number of specs over its bound, refused before any file is read.
    #[error(transparent)]
    Limit(#[from] crate::limits::LimitError),
}

/// How the specs offered for a name that matched nothing were chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Closeness {
    /// The query was a number: the specs with the nearest numbers.
    Number,
    /// The query was a name: the specs whose names are spelled most alike.
    Name,
}
