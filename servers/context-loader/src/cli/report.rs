//! `--html FILE`: a command's result written as a standalone report, the MCP App's
//! page with the result embedded (`app::standalone`), for every command whose tool
//! the page draws (`app::VIEWS`). The file is checked before the command runs (an
//! existing one must be a regular file, never followed through a symlink) and
//! opened the same way when it is written, so the report cannot land on a device,
//! a FIFO or a file a link points at.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;

use serde::Serialize;

/// The flag's name (its clap id too).
pub const HTML_FLAG: &str = "html";

/// Why the report cannot be written there: said before the command runs.
pub fn check(path: &Path) -> Result<(), String> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_file() => Ok(()),
        Ok(meta) => Err(format!(
            "--html {}: {} exists and is not a regular file; name a new file or a regular one \
             to overwrite",
            path.display(),
            kind(&meta.file_type())
        )),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(format!("--html {}: {e}", path.display())),
    }
}

/// Write `tool`'s `result` as a report to `path`; its size in bytes.
pub fn write(path: &Path, tool: &str, result: &impl Serialize) -> Result<usize, String> {
    let page = crate::app::standalone(tool, result)
        .map_err(|e| format!("--html: cannot serialize the result: {e}"))?;
    let mut file = open(path).map_err(|e| format!("--html {}: {e}", path.display()))?;
    let meta = file
        .metadata()
        .map_err(|e| format!("--html {}: {e}", path.display()))?;
    if !meta.file_type().is_file() {
        return Err(format!(
            "--html {}: {} is not a regular file; name a new file or a regular one to overwrite",
            path.display(),
            kind(&meta.file_type())
        ));
    }
    file.set_len(0)
        .and_then(|()| file.write_all(page.as_bytes()))
        .and_then(|()| file.flush())
        .map_err(|e| format!("--html {}: {e}", path.display()))?;
    Ok(page.len())
}

/// Open for writing without following a final symlink and without blocking on a
/// FIFO; not truncated until it is known to be a regular file.
fn open(path: &Path) -> std::io::Result<File> {
    let mut options = OpenOptions::new();
    options.write(true).create(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    options.open(path)
}

fn kind(file_type: &std::fs::FileType) -> &'static str {
    if file_type.is_dir() {
        "a folder"
    } else if file_type.is_symlink() {
        "a symbolic link"
    } else {
        "a special file"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_is_written_to_a_new_or_regular_file_only() {
        let dir = tempfile::tempdir().expect("temp dir");
        let new = dir.path().join("report.html");
        check(&new).expect("a new file is fine");
        let size = write(
            &new,
            "fit-messages",
            &serde_json::json!({"first_write": [0]}),
        )
        .expect("written");
        assert_eq!(
            std::fs::metadata(&new).expect("exists").len() as usize,
            size
        );
        // Overwriting a regular file replaces it whole.
        write(&new, "fit-messages", &serde_json::json!({})).expect("overwritten");
        let text = std::fs::read_to_string(&new).expect("read");
        assert!(text.ends_with("</html>\n") && !text.contains("first_write"));

        let error = check(dir.path()).expect_err("a folder");
        assert!(error.contains("a folder"), "{error}");
        #[cfg(unix)]
        {
            let link = dir.path().join("link.html");
            std::os::unix::fs::symlink(&new, &link).expect("symlink");
            assert!(check(&link).expect_err("a link").contains("symbolic link"));
            assert!(write(&link, "fit-messages", &serde_json::json!({})).is_err());
            let fifo = dir.path().join("fifo");
            let name = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).expect("path");
            // SAFETY: a valid NUL-terminated path; mkfifo reads it only.
            assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
            assert!(check(&fifo).expect_err("a FIFO").contains("special file"));
            // Opened without blocking, and refused.
            assert!(write(&fifo, "fit-messages", &serde_json::json!({})).is_err());
        }
    }
}
