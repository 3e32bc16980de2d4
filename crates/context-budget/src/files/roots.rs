//! The folders file tools may read, and what a requested path means inside them.
//!
//! Roots are canonical directories. A requested path is a file, a folder or a
//! glob, relative to a root (or absolute inside one). Anything that resolves
//! outside every root — `..`, an absolute path elsewhere, a symlink leading out —
//! is refused; nothing outside is ever opened.

use std::path::{Component, Path, PathBuf};

use super::FilesError;

/// One root: its canonical path and the path as the operator gave it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Root {
    pub path: PathBuf,
    pub shown: String,
}

/// The roots of a call (never empty).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Roots {
    roots: Vec<Root>,
}

impl Roots {
    /// Canonicalize `dirs`; each must be an existing directory. Duplicates and
    /// roots nested inside another root are kept once (the outer one).
    pub fn new(dirs: &[PathBuf]) -> Result<Roots, FilesError> {
        let mut roots: Vec<Root> = Vec::new();
        for dir in dirs {
            let shown = dir.display().to_string();
            let path =
                crate::safe_open::canonical_dir(dir).map_err(|reason| FilesError::BadRoot {
                    root: shown.clone(),
                    reason,
                })?;
            roots.push(Root { path, shown });
        }
        Roots::from_canonical(roots)
    }

    fn from_canonical(mut roots: Vec<Root>) -> Result<Roots, FilesError> {
        roots.sort_by(|a, b| a.path.cmp(&b.path));
        let mut kept: Vec<Root> = Vec::new();
        for root in roots {
            if !kept.iter().any(|k| root.path.starts_with(&k.path)) {
                kept.push(root);
            }
        }
        if kept.is_empty() {
            return Err(FilesError::NoRoots);
        }
        Ok(Roots { roots: kept })
    }

    pub fn list(&self) -> &[Root] {
        &self.roots
    }

    /// The roots as the answers show them (their canonical paths).
    pub fn shown_paths(&self) -> Vec<String> {
        self.list()
            .iter()
            .map(|r| r.path.display().to_string())
            .collect()
    }

    /// The root a file row names: only when there are several to tell apart.
    pub fn label(&self, index: usize) -> Option<String> {
        let roots = self.list();
        (roots.len() > 1).then(|| roots[index].shown.clone())
    }

    /// The roots a client offered (MCP `roots/list`) intersected with these: a
    /// client root inside one of ours replaces it, ours inside a client root stays,
    /// anything else is dropped. Client roots that do not exist are ignored. When
    /// nothing overlaps the call has no root at all.
    pub fn narrow(&self, client_dirs: &[PathBuf]) -> Result<Roots, FilesError> {
        let mut narrowed = Vec::new();
        for dir in client_dirs {
            let Ok(client) = std::fs::canonicalize(dir) else {
                continue;
            };
            for ours in &self.roots {
                if client.starts_with(&ours.path) && client.is_dir() {
                    narrowed.push(Root {
                        shown: client.display().to_string(),
                        path: client.clone(),
                    });
                } else if ours.path.starts_with(&client) {
                    narrowed.push(ours.clone());
                }
            }
        }
        Roots::from_canonical(narrowed).map_err(|_| FilesError::NoSharedRoot {
            server_roots: self.roots.iter().map(|r| r.shown.clone()).collect(),
            client_roots: client_dirs
                .iter()
                .map(|d| d.display().to_string())
                .collect(),
        })
    }

    /// The root that holds the canonical path `path`, by index.
    pub fn holding(&self, path: &Path) -> Option<usize> {
        self.roots.iter().position(|r| path.starts_with(&r.path))
    }
}

/// What one entry of `paths` asks for, once checked against the roots.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A file or folder that exists: the root it is under, the path as the caller
    /// named it (relative to that root, `/`-separated, `""` for the root itself),
    /// and its canonical path.
    Existing {
        root: usize,
        relative: String,
        canonical: PathBuf,
    },
    /// A glob, relative to a root: the folder to walk (literal prefix of the
    /// pattern) and the whole pattern. `root` is `None` for a relative glob, which
    /// applies under every root.
    Glob {
        root: Option<usize>,
        base: String,
        pattern: String,
    },
}

/// Whether `path` is a glob rather than a literal path.
pub fn is_glob(path: &str) -> bool {
    path.contains(['*', '?', '[', '{'])
}

/// Check one requested path against the roots.
pub fn resolve(roots: &Roots, requested: &str) -> Result<Target, FilesError> {
    let requested_trim = requested.trim();
    if requested_trim.contains('\0') {
        return Err(FilesError::InvalidPath {
            path: requested.into(),
            reason: "contains a NUL byte".into(),
        });
    }
    let raw = if requested_trim.is_empty() {
        "."
    } else {
        requested_trim
    };
    let outside = || FilesError::OutsideRoot {
        path: requested.to_string(),
    };
    if is_glob(raw) {
        let (root, relative) = if Path::new(raw).is_absolute() {
            let index = roots
                .list()
                .iter()
                .position(|r| Path::new(raw).starts_with(&r.path))
                .ok_or_else(outside)?;
            let relative = Path::new(raw)
                .strip_prefix(&roots.list()[index].path)
                .map_err(|_| outside())?;
            (Some(index), relative.to_string_lossy().into_owned())
        } else {
            (None, raw.to_string())
        };
        let relative = normalize_relative(&relative).ok_or_else(outside)?;
        let base = glob_base(&relative);
        return Ok(Target::Glob {
            root,
            base,
            pattern: relative,
        });
    }
    if Path::new(raw).is_absolute() {
        let canonical = std::fs::canonicalize(raw).map_err(|e| not_found(requested, &e))?;
        let root = roots.holding(&canonical).ok_or_else(outside)?;
        // Named through a symlink inside the root? Show the name the caller used when
        // it lies in the root, else the canonical one.
        let relative = Path::new(raw)
            .strip_prefix(&roots.list()[root].path)
            .ok()
            .and_then(|p| normalize_relative(&p.to_string_lossy()))
            .unwrap_or_else(|| relative_to(&canonical, &roots.list()[root].path));
        return Ok(Target::Existing {
            root,
            relative,
            canonical,
        });
    }
    // Lexically escaping (`../x`, `a/../../x`) is refused before touching the disk.
    let relative = normalize_relative(raw).ok_or_else(outside)?;
    let mut first_error = None;
    for (index, root) in roots.list().iter().enumerate() {
        let joined = root.path.join(&relative);
        match std::fs::canonicalize(&joined) {
            // A symlink inside the root can still lead out of it.
            Ok(canonical) if canonical.starts_with(&root.path) => {
                return Ok(Target::Existing {
                    root: index,
                    relative,
                    canonical,
                });
            }
            Ok(_) => return Err(outside()),
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    Err(match first_error {
        Some(e) => not_found(requested, &e),
        None => FilesError::NoRoots,
    })
}

fn not_found(requested: &str, error: &std::io::Error) -> FilesError {
    FilesError::NotFound {
        path: requested.to_string(),
        reason: error.to_string(),
    }
}

/// `a/./b/../c/` -> `a/c`; `None` when `..` climbs above the start or the path
/// is absolute. `.` and `` become ``.
pub fn normalize_relative(path: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for component in Path::new(path).components() {
        match component {
            Component::Normal(part) => parts.push(part.to_str()?),
            Component::CurDir => {}
            Component::ParentDir => {
                parts.pop()?;
            }
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(parts.join("/"))
}

/// The folders of a glob before its first wildcard: `src/**/*.rs` -> `src`.
fn glob_base(pattern: &str) -> String {
    let mut base = Vec::new();
    let parts: Vec<&str> = pattern.split('/').collect();
    for part in &parts[..parts.len().saturating_sub(1)] {
        if is_glob(part) {
            break;
        }
        base.push(*part);
    }
    base.join("/")
}

/// A path component as answers show it: as is when it is UTF-8, otherwise each byte
/// that is not as `\xNN`. A lossy U+FFFD would show `n\xff.txt` and `n\xfe.txt` as
/// the same name, and one of the two files would vanish as a duplicate.
pub fn shown_name(part: &std::ffi::OsStr) -> String {
    if let Some(text) = part.to_str() {
        return text.to_string();
    }
    #[cfg(unix)]
    {
        use std::fmt::Write;
        use std::os::unix::ffi::OsStrExt;
        let mut shown = String::new();
        for chunk in part.as_bytes().utf8_chunks() {
            shown.push_str(chunk.valid());
            for byte in chunk.invalid() {
                let _ = write!(shown, "\\x{byte:02x}");
            }
        }
        shown
    }
    #[cfg(not(unix))]
    {
        part.to_string_lossy().into_owned()
    }
}

/// `path` relative to `root` with `/` separators (`""` for the root itself).
pub fn relative_to(path: &Path, root: &Path) -> String {
    // Nearly every path a walk finds is the root's own bytes, `/`, then UTF-8 names
    // with nothing to normalize: taken as it is, one copy. (Component by component
    // it was a string per name, a tenth of the walk's CPU.)
    match plain_relative(path, root) {
        Some(plain) => plain.to_string(),
        None => relative_by_components(path, root),
    }
}

/// [`relative_to`] for any spelling: the names after `root`, each shown.
fn relative_by_components(path: &Path, root: &Path) -> String {
    path.strip_prefix(root)
        .map(|p| {
            p.components()
                .filter_map(|c| match c {
                    Component::Normal(part) => Some(shown_name(part)),
                    _ => None,
                })
                .collect::<Vec<_>>()
                .join("/")
        })
        .unwrap_or_else(|_| path.display().to_string())
}

/// The part of `path` after `root` and a `/`, when it is UTF-8 and every name in it
/// is an ordinary one (not empty, `.` or `..`): then it is what
/// [`relative_to`]'s components would join to.
#[cfg(unix)]
fn plain_relative<'a>(path: &'a Path, root: &Path) -> Option<&'a str> {
    let path = path.as_os_str().as_encoded_bytes();
    let root = root.as_os_str().as_encoded_bytes();
    let rest = path.strip_prefix(root)?.strip_prefix(b"/")?;
    let rest = std::str::from_utf8(rest).ok()?;
    let plain = root.len() > 1
        && !root.ends_with(b"/")
        && rest.split('/').all(|name| !matches!(name, "" | "." | ".."));
    plain.then_some(rest)
}

#[cfg(not(unix))]
fn plain_relative<'a>(_path: &'a Path, _root: &Path) -> Option<&'a str> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_are_normalized_and_never_climb_out() {
        assert_eq!(normalize_relative("a/./b/../c/"), Some("a/c".into()));
        assert_eq!(normalize_relative("."), Some(String::new()));
        assert_eq!(normalize_relative("../x"), None);
        assert_eq!(normalize_relative("a/../../x"), None);
        assert_eq!(normalize_relative("/etc/passwd"), None);
    }

    #[test]
    fn plain_paths_are_taken_as_they_are_and_others_by_components() {
        use std::os::unix::ffi::OsStrExt;
        let raw = std::ffi::OsStr::from_bytes(b"/r/oot/n\xff.txt");
        let cases: Vec<(&Path, &str)> = vec![
            (Path::new("/r/oot/src/lib.rs"), "/r/oot"),
            (Path::new("/r/oot"), "/r/oot"),
            (Path::new("/r/oot/"), "/r/oot"),
            (Path::new("/r/oot/a//b/./c/"), "/r/oot"),
            (Path::new("/r/oot/a/../b"), "/r/oot"),
            (Path::new("/r/oot/./a"), "/r/oot"),
            (Path::new("/r/oot/a"), "/r/oot/"),
            (Path::new("/r/oot/a"), "/r//oot"),
            (Path::new("/r//oot/a"), "/r/oot"),
            (Path::new("/r/oots/a"), "/r/oot"),
            (Path::new("/x"), "/"),
            (Path::new("/elsewhere/a"), "/r/oot"),
            (Path::new(raw), "/r/oot"),
            (Path::new("/r/oot/é/ü.md"), "/r/oot"),
        ];
        for (path, root) in cases {
            let root = Path::new(root);
            assert_eq!(
                relative_to(path, root),
                relative_by_components(path, root),
                "{path:?} under {root:?}"
            );
        }
        assert_eq!(
            relative_to(Path::new("/r/oot/src/lib.rs"), Path::new("/r/oot")),
            "src/lib.rs"
        );
        assert_eq!(
            relative_to(Path::new(raw), Path::new("/r/oot")),
            "n\\xff.txt"
        );
        assert_eq!(
            relative_to(Path::new("/r/oot/a//b/./c/"), Path::new("/r/oot")),
            "a/b/c"
        );
    }

    #[test]
    fn glob_bases_stop_at_the_first_wildcard() {
        assert_eq!(glob_base("src/**/*.rs"), "src");
        assert_eq!(glob_base("*.md"), "");
        assert_eq!(glob_base("crates/*/src/lib.rs"), "crates");
        assert_eq!(glob_base("a/b/c*.txt"), "a/b");
    }
}
