//! A scratch folder for one test: uniquely named (every integration test of a crate
//! runs in one process, so a name built from the pid is shared by all of them), and
//! removed when the test ends, also when it fails.

use std::path::{Path, PathBuf};

/// A temporary folder named `<prefix>-XXXXXX` under the system's temp folder,
/// removed with everything in it on drop.
pub struct TempTree {
    _dir: tempfile::TempDir,
    /// The folder's path with no symlink in it (servers canonicalize their roots).
    path: PathBuf,
}

impl TempTree {
    /// A new, empty folder; `prefix` names the test in `ls /tmp` when one is left
    /// behind (a test killed mid-way).
    pub fn new(prefix: &str) -> TempTree {
        let dir = tempfile::Builder::new()
            .prefix(&format!("{prefix}-"))
            .tempdir()
            .unwrap_or_else(|e| panic!("cannot create a temp folder {prefix}-*: {e}"));
        let path = std::fs::canonicalize(dir.path()).expect("canonical temp folder");
        TempTree { _dir: dir, path }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The path as a command-line argument (`--root`, `--specs-dir`).
    pub fn arg(&self) -> &str {
        self.path.to_str().expect("a temp folder's path is UTF-8")
    }

    /// `rel` inside the folder (nothing is created).
    pub fn join(&self, rel: impl AsRef<Path>) -> PathBuf {
        self.path.join(rel)
    }

    /// Write `contents` to `rel`, creating its parent folders; the file's path.
    pub fn write(&self, rel: impl AsRef<Path>, contents: impl AsRef<[u8]>) -> PathBuf {
        let path = self.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .unwrap_or_else(|e| panic!("cannot create {}: {e}", parent.display()));
        }
        std::fs::write(&path, contents)
            .unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
        path
    }

    /// Create the folder `rel` and its parents; its path.
    pub fn mkdir(&self, rel: impl AsRef<Path>) -> PathBuf {
        let path = self.join(rel);
        std::fs::create_dir_all(&path)
            .unwrap_or_else(|e| panic!("cannot create {}: {e}", path.display()));
        path
    }

    #[cfg(unix)]
    /// A symlink at `rel` pointing to `target` (used as given: absolute, or relative
    /// to the link's folder); the link's path.
    pub fn symlink(&self, target: impl AsRef<Path>, rel: impl AsRef<Path>) -> PathBuf {
        let link = self.join(rel);
        std::os::unix::fs::symlink(target.as_ref(), &link).unwrap_or_else(|e| {
            panic!(
                "cannot link {} to {}: {e}",
                link.display(),
                target.as_ref().display()
            )
        });
        link
    }

    #[cfg(unix)]
    /// A FIFO (named pipe) at `rel`; its path.
    pub fn fifo(&self, rel: impl AsRef<Path>) -> PathBuf {
        use std::os::unix::ffi::OsStrExt;
        let path = self.join(rel);
        let c_path = std::ffi::CString::new(path.as_os_str().as_bytes()).expect("no NUL in path");
        // SAFETY: a valid NUL-terminated path; mkfifo has no other preconditions.
        let made = unsafe { libc::mkfifo(c_path.as_ptr(), 0o644) };
        assert_eq!(
            made,
            0,
            "mkfifo {}: {}",
            path.display(),
            std::io::Error::last_os_error()
        );
        path
    }
}

impl std::fmt::Debug for TempTree {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("TempTree").field(&self.path).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::TempTree;

    #[cfg(unix)]
    #[test]
    fn writes_under_a_unique_folder_removed_on_drop() {
        let (a, b) = (TempTree::new("tt-same"), TempTree::new("tt-same"));
        assert_ne!(a.path(), b.path());
        let file = a.write("x/y/z.txt", "hello");
        assert_eq!(std::fs::read_to_string(&file).expect("read"), "hello");
        assert_eq!(file, a.join("x/y/z.txt"));
        let link = a.symlink(&file, "link.txt");
        assert_eq!(std::fs::read_to_string(link).expect("read"), "hello");
        assert!(a.mkdir("d/e").is_dir());
        let fifo = a.fifo("d/pipe");
        use std::os::unix::fs::FileTypeExt;
        assert!(
            std::fs::symlink_metadata(fifo)
                .expect("stat")
                .file_type()
                .is_fifo()
        );
        let path = a.path().to_path_buf();
        assert!(
            path.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("tt-same-"))
        );
        drop(a);
        assert!(!path.exists());
    }
}
