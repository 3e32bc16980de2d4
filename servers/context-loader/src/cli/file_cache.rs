//! The file measures `files` and `load` keep between command-line runs
//! (`--cache-dir`, `--no-cache`): read before the command, written after it when it
//! measured anything new. A server keeps its cache in memory for its whole life; a
//! command-line run would otherwise start empty every time, and a hook that checks a
//! file's cost runs us once per file.
//!
//! Failing to read or write the cache never fails the command: it runs uncached and
//! says why on stderr. The file is written whole to a temporary name beside it and
//! renamed over it, so a reader (another run at the same time) sees the old file or
//! the new one, never half of either; of two runs at once, the last to finish wins.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use context_budget::files::{FileStore, MAX_CACHE_FILE_BYTES};

/// The file inside the cache folder.
const FILE_NAME: &str = "file-measures.bin";

/// Where the cache lives, when there is one.
#[derive(Debug, Clone)]
pub struct FileCache {
    path: PathBuf,
}

impl FileCache {
    /// The cache `--cache-dir` names, else the user's cache folder
    /// ($XDG_CACHE_HOME/context-loader, else ~/.cache/context-loader); none with
    /// `--no-cache`, or when there is no such folder to use.
    pub fn locate(dir: Option<&Path>, off: bool) -> Option<FileCache> {
        if off {
            return None;
        }
        let dir = match dir {
            Some(dir) => dir.to_path_buf(),
            None => {
                let absolute = |var: &str| {
                    std::env::var_os(var)
                        .map(PathBuf::from)
                        .filter(|p| p.is_absolute())
                };
                absolute("XDG_CACHE_HOME")
                    .or_else(|| absolute("HOME").map(|home| home.join(".cache")))?
                    .join("context-loader")
            }
        };
        Some(FileCache {
            path: dir.join(FILE_NAME),
        })
    }

    /// Read the cache into `store`. A missing file is a first run; any other
    /// failure is said on stderr, and the command runs uncached.
    pub fn load(&self, store: &FileStore) {
        let bytes = match read_bounded(&self.path) {
            Ok(Some(bytes)) => bytes,
            Ok(None) => return,
            Err(why) => return self.warn("cannot read", &why),
        };
        if let Err(why) = store.restore_cache(&bytes, generation()) {
            // Another build's cache is expected after an upgrade: replaced quietly.
            if why.0 != "written by another build" {
                self.warn("ignoring", &why.to_string());
            }
        }
    }

    /// Write `store`'s measures, when the command added any.
    pub fn save(&self, store: &FileStore) {
        if store.cache_added() == 0 {
            return;
        }
        if let Err(e) = write_atomically(&self.path, &store.cache_bytes(generation())) {
            self.warn("cannot write", &e.to_string());
        }
    }

    fn warn(&self, what: &str, why: &str) {
        eprintln!(
            "warning: {what} the file cache {} ({why}); set --cache-dir DIR, or --no-cache",
            self.path.display()
        );
    }
}

/// The build that writes and reads the cache: a cache from another build (which may
/// count differently) is not used. The executable's size and modification time tell
/// builds apart, the version releases.
fn generation() -> &'static str {
    static GENERATION: OnceLock<String> = OnceLock::new();
    GENERATION.get_or_init(|| {
        let binary = std::env::current_exe()
            .and_then(std::fs::metadata)
            .map(|m| {
                let modified = m
                    .modified()
                    .ok()
                    .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                    .unwrap_or_default();
                format!("{} {}", m.len(), modified.as_nanos())
            })
            .unwrap_or_default();
        format!("{} {binary}", env!("CARGO_PKG_VERSION"))
    })
}

/// The cache file's bytes (`None`: there is none), at most [`MAX_CACHE_FILE_BYTES`].
/// Opened without waiting (a FIFO put there cannot hang the command) and checked to
/// be a regular file before it is read.
fn read_bounded(path: &Path) -> Result<Option<Vec<u8>>, String> {
    let (file, metadata) = match context_budget::safe_open::open_named_regular(path) {
        Ok(opened) => opened,
        Err(context_budget::safe_open::OpenError::Io(e))
            if e.kind() == std::io::ErrorKind::NotFound =>
        {
            return Ok(None);
        }
        Err(e) => return Err(e.to_string()),
    };
    if metadata.len() > MAX_CACHE_FILE_BYTES {
        return Err(format!(
            "{} bytes, more than the {MAX_CACHE_FILE_BYTES} a cache file may hold",
            metadata.len()
        ));
    }
    let mut bytes = Vec::with_capacity(metadata.len() as usize);
    file.take(MAX_CACHE_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    Ok(Some(bytes))
}

/// Write `bytes` to `path` through a temporary file in the same folder, renamed
/// over it. The folder is made private to the user (0700), the file too (0600).
fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)?;
    let temporary = dir.join(format!(".{FILE_NAME}.{}.tmp", std::process::id()));
    // A leftover of a run that died with this process id; then created anew, never
    // opened through whatever (a symlink) might stand at that name.
    let _ = std::fs::remove_file(&temporary);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let written = options
        .open(&temporary)
        .and_then(|mut file| file.write_all(bytes))
        .and_then(|()| std::fs::rename(&temporary, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    written
}
