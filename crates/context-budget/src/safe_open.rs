//! Opening a file under a root without races: open, then check the opened handle.
//!
//! Checking a path and then opening it leaves a window in which the path can be
//! swapped (a file for a symlink out of the root, or for a FIFO that blocks `open`
//! forever). So the open itself refuses a final symlink (`O_NOFOLLOW`) and never
//! waits (`O_NONBLOCK`: a FIFO opens at once), and everything else is checked on the
//! handle: `fstat` says it is a regular file, and the kernel's own name for it
//! (`/proc/self/fd`) must be the path asked for, so a directory on the way swapped
//! for a link elsewhere is caught too. `O_NONBLOCK` changes nothing for reading a
//! regular file. A plain path a walk listed can skip the /proc step: `openat2` with
//! `RESOLVE_NO_SYMLINKS` refuses a link anywhere on the way in the open itself
//! ([`open_regular_if_canonical`]).

use std::fs::{File, Metadata, OpenOptions};
use std::path::{Path, PathBuf};

/// Why a file was not opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error("cannot open: {0}")]
    Io(#[from] std::io::Error),
    #[error("not a regular file (a symlink, FIFO, device or directory)")]
    NotRegular,
    #[error("the file moved while being opened (now `{}`)", actual.display())]
    Moved { actual: PathBuf },
}

/// `dir` canonicalized, when it is an existing directory; why not in words
/// otherwise. How a root (specs root, file roots) is fixed once per call, before
/// anything under it is opened.
pub fn canonical_dir(dir: &Path) -> Result<PathBuf, String> {
    let path = std::fs::canonicalize(dir).map_err(|e| e.to_string())?;
    if !path.is_dir() {
        return Err("not a directory".into());
    }
    Ok(path)
}

/// Open `path` (absolute and canonical: no links on the way) for reading, as a
/// regular file that is still at `path`; its metadata from the handle.
pub fn open_regular(path: &Path) -> Result<(File, Metadata), OpenError> {
    // Opened with no link anywhere on the way, a plain path is where the handle is:
    // one system call, not two (`load-files` opens every file again to pack it: a
    // `readlink` per file). A failure other than a link is the answer: the same open
    // would fail the same way (a walk probes two ignore files in every folder, most
    // of them missing). A link on the way takes the checks below, which say why.
    #[cfg(target_os = "linux")]
    match open_if_no_link_on_the_way(path) {
        Some(Ok(file)) => return regular(file),
        Some(Err(e)) if e.raw_os_error() != Some(libc::ELOOP) => return Err(OpenError::Io(e)),
        _ => {}
    }
    let (file, metadata) = open_no_follow(path)?;
    // Without /proc (some sandboxes) the checks of `open_no_follow` still hold.
    if let Some(actual) = where_handle_is(&file)
        && actual != path
    {
        return Err(OpenError::Moved { actual });
    }
    Ok((file, metadata))
}

/// [`open_regular`] of a `path` not known to be canonical, kept only when the kernel
/// names the handle at `path` itself: then no link was on the way and `path` is
/// canonical, as canonicalizing it first would have shown (realpath's call per path
/// component was a third of the system calls of `files` over a tree). `Ok(None)`:
/// that cannot be shown here (the path went through a link, or there is no /proc);
/// the handle is closed and the caller canonicalizes first. Open only what was looked
/// at first: opening a device can have effects of its own.
pub fn open_regular_if_canonical(path: &Path) -> Result<Option<(File, Metadata)>, OpenError> {
    // Only Linux names a handle: elsewhere the file would be opened twice for nothing.
    if !cfg!(target_os = "linux") {
        return Ok(None);
    }
    #[cfg(target_os = "linux")]
    if let Some(opened) = open_if_no_link_on_the_way(path) {
        return match opened {
            Ok(file) => regular(file).map(Some),
            // A link on the way, or at the end: the caller canonicalizes.
            Err(e) if e.raw_os_error() == Some(libc::ELOOP) => Ok(None),
            Err(e) => Err(OpenError::Io(e)),
        };
    }
    let (file, metadata) = open_no_follow(path)?;
    // Byte for byte: `Path`'s `==` takes `a/./b` and `a//b` for `a/b`, and the
    // caller keeps `path` as the file's canonical name (a cache key, compared as
    // bytes).
    let named_here =
        where_handle_is(&file).is_some_and(|actual| actual.as_os_str() == path.as_os_str());
    Ok(named_here.then_some((file, metadata)))
}

/// Open `path` as [`open_no_follow`] does, with the kernel refusing a link anywhere
/// on the way (`openat2`'s `RESOLVE_NO_SYMLINKS`, Linux 5.6 and later; `ELOOP` when
/// there is one): one system call where opening then reading the handle's name in
/// /proc takes two (the `readlink`s were 1.5 % of `files`' CPU over a source tree).
/// A path with no link and only plain names (absolute; no `.`, `..` or empty name)
/// is the name /proc would give. `None`: this cannot answer (such a path is not
/// plain, or the kernel or a seccomp filter refuses `openat2`): the caller checks
/// the handle's name instead.
#[cfg(target_os = "linux")]
fn open_if_no_link_on_the_way(path: &Path) -> Option<std::io::Result<File>> {
    use std::os::fd::FromRawFd;
    use std::os::unix::ffi::OsStrExt;
    use std::sync::atomic::{AtomicBool, Ordering};
    // Set once the kernel has said it has no openat2 for us.
    static REFUSED: AtomicBool = AtomicBool::new(false);
    let bytes = path.as_os_str().as_bytes();
    let plain = bytes.strip_prefix(b"/").is_some_and(|names| {
        names
            .split(|&b| b == b'/')
            .all(|name| !matches!(name, b"" | b"." | b".."))
    });
    if !plain || REFUSED.load(Ordering::Relaxed) {
        return None;
    }
    let name = std::ffi::CString::new(bytes).ok()?;
    // The kernel's `struct open_how` (libc's is non-exhaustive).
    #[repr(C)]
    struct OpenHow {
        flags: u64,
        mode: u64,
        resolve: u64,
    }
    let how = OpenHow {
        flags: (libc::O_RDONLY
            | libc::O_CLOEXEC
            | libc::O_NOFOLLOW
            | libc::O_NONBLOCK
            | libc::O_NOCTTY) as u64,
        mode: 0,
        resolve: libc::RESOLVE_NO_SYMLINKS,
    };
    // SAFETY: openat2 reads the NUL-terminated `name` and `how` (passed with its
    // size), both alive for the call, and returns a new descriptor or -1.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            libc::AT_FDCWD,
            name.as_ptr(),
            &how as *const OpenHow,
            std::mem::size_of::<OpenHow>(),
        )
    };
    if fd < 0 {
        let error = std::io::Error::last_os_error();
        if matches!(
            error.raw_os_error(),
            Some(libc::ENOSYS | libc::EPERM | libc::EINVAL | libc::E2BIG)
        ) {
            REFUSED.store(true, Ordering::Relaxed);
            return None;
        }
        return Some(Err(error));
    }
    // SAFETY: `fd` is a descriptor the kernel just opened for us and nothing else owns.
    Some(Ok(unsafe { File::from_raw_fd(fd as i32) }))
}

/// Open for reading with no final link followed and no wait, as a regular file.
fn open_no_follow(path: &Path) -> Result<(File, Metadata), OpenError> {
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY);
    }
    let file = options.open(path).map_err(|e| {
        // ELOOP is how O_NOFOLLOW says "that was a symlink".
        #[cfg(unix)]
        if e.raw_os_error() == Some(libc::ELOOP) {
            return OpenError::NotRegular;
        }
        OpenError::Io(e)
    })?;
    regular(file)
}

/// `file` with its metadata from the handle (`fstat`), if it is a regular file.
fn regular(file: File) -> Result<(File, Metadata), OpenError> {
    let metadata = file.metadata()?;
    if !metadata.is_file() {
        return Err(OpenError::NotRegular);
    }
    Ok((file, metadata))
}

/// The kernel's own name for an open handle (`/proc/self/fd`); `None` where it
/// cannot say (no /proc, not Linux).
fn where_handle_is(file: &File) -> Option<PathBuf> {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd())).ok()
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = file;
        None
    }
}

/// Open a file an operator named (a models file, a `tokenizer.json`) for reading:
/// links are followed (the operator chose the path), but the open never waits
/// (`O_NONBLOCK`: a FIFO opens at once instead of hanging start-up) and the handle
/// must be a regular file (`fstat`), so a FIFO, device (`/dev/zero`) or directory is
/// refused before a byte is read. Its metadata from the handle.
pub fn open_named_regular(path: &Path) -> Result<(File, Metadata), OpenError> {
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
    }
    let file = options.open(path)?;
    regular(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("cb-open-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        std::fs::canonicalize(&dir).expect("canonical")
    }

    #[test]
    fn regular_files_open_and_everything_else_is_refused_without_blocking() {
        let dir = temp_dir("kinds");
        let file = dir.join("README.md");
        std::fs::write(&file, "# hi\n").expect("write");
        let (_, metadata) = open_regular(&file).expect("a regular file opens");
        assert_eq!(metadata.len(), 5);
        assert!(matches!(open_regular(&dir), Err(OpenError::NotRegular)));
        assert!(matches!(
            open_regular(&dir.join("missing.md")),
            Err(OpenError::Io(_))
        ));
        #[cfg(unix)]
        {
            let outside = temp_dir("outside").join("secret.md");
            std::fs::write(&outside, "secret").expect("write");
            let link = dir.join("link.md");
            std::os::unix::fs::symlink(&outside, &link).expect("symlink");
            assert!(matches!(open_regular(&link), Err(OpenError::NotRegular)));
            // A FIFO with no writer: a plain open would block forever.
            let fifo = dir.join("fifo.md");
            let name = std::ffi::CString::new(fifo.to_string_lossy().as_bytes()).expect("path");
            // SAFETY: mkfifo reads a NUL-terminated path and touches no Rust memory.
            assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
            assert!(matches!(open_regular(&fifo), Err(OpenError::NotRegular)));
            let _ = std::fs::remove_dir_all(outside.parent().expect("its folder"));
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[cfg(unix)]
    #[test]
    fn a_named_file_follows_links_but_never_opens_a_fifo_or_device() {
        let dir = temp_dir("named");
        let file = dir.join("models.json");
        std::fs::write(&file, "{}").expect("write");
        let link = dir.join("link.json");
        std::os::unix::fs::symlink(&file, &link).expect("symlink");
        let (_, metadata) = open_named_regular(&link).expect("a link to a file opens");
        assert_eq!(metadata.len(), 2);
        assert!(matches!(
            open_named_regular(Path::new("/dev/zero")),
            Err(OpenError::NotRegular)
        ));
        assert!(matches!(
            open_named_regular(&dir),
            Err(OpenError::NotRegular)
        ));
        let fifo = dir.join("fifo.json");
        let name = std::ffi::CString::new(fifo.to_string_lossy().as_bytes()).expect("path");
        // SAFETY: mkfifo reads a NUL-terminated path and touches no Rust memory.
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
        assert!(matches!(
            open_named_regular(&fifo),
            Err(OpenError::NotRegular)
        ));
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// The fast open says yes only for a plain path with no link on the way; every
    /// other spelling is left to canonicalizing (`None`), and what it opens is what
    /// open_regular opens.
    #[cfg(target_os = "linux")]
    #[test]
    fn only_a_plain_path_with_no_link_on_the_way_opens_as_canonical() {
        let dir = temp_dir("canonical");
        let elsewhere = temp_dir("canonical-elsewhere");
        std::fs::create_dir_all(dir.join("sub")).expect("sub");
        std::fs::write(dir.join("sub/a.md"), "inside").expect("write");
        std::fs::write(elsewhere.join("a.md"), "outside").expect("write");
        std::os::unix::fs::symlink(&elsewhere, dir.join("linked")).expect("symlink");
        std::os::unix::fs::symlink(dir.join("sub/a.md"), dir.join("link.md")).expect("symlink");
        let (_, metadata) = open_regular_if_canonical(&dir.join("sub/a.md"))
            .expect("opens")
            .expect("plain and canonical");
        assert_eq!(metadata.len(), 6);
        for not_canonical in [
            dir.join("linked/a.md"),
            dir.join("link.md"),
            dir.join("sub/../sub/a.md"),
            dir.join("sub/./a.md"),
            PathBuf::from(format!("{}//sub/a.md", dir.display())),
            PathBuf::from(format!("{}/linked/../sub/a.md", dir.display())),
        ] {
            assert!(
                !matches!(open_regular_if_canonical(&not_canonical), Ok(Some(_))),
                "{not_canonical:?}"
            );
        }
        assert!(matches!(
            open_regular_if_canonical(&dir.join("sub")),
            Err(OpenError::NotRegular)
        ));
        assert!(open_regular_if_canonical(&dir.join("missing.md")).is_err());
        let _ = std::fs::remove_dir_all(&dir);
        let _ = std::fs::remove_dir_all(&elsewhere);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_directory_on_the_way_swapped_for_a_link_is_caught() {
        let dir = temp_dir("swap");
        let elsewhere = temp_dir("swap-elsewhere");
        std::fs::write(elsewhere.join("README.md"), "outside").expect("write");
        // `dir/spec` is a link to elsewhere: the path looks inside, the file is not.
        std::os::unix::fs::symlink(&elsewhere, dir.join("spec")).expect("symlink");
        let asked = dir.join("spec").join("README.md");
        assert!(matches!(
            open_regular(&asked),
            Err(OpenError::Moved { actual }) if actual == elsewhere.join("README.md")
        ));
        let _ = std::fs::remove_dir_all(&dir);
        let _ = std::fs::remove_dir_all(&elsewhere);
    }
}
