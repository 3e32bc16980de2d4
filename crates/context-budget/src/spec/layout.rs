//! Finding specs under a root: folders named `NNN-name` (2–4 digits) holding a
//! `README.md` and sub-spec `*.md` files, directly under the root or one level down
//! in group folders such as `archived/`.
//!
//! Nothing outside the root is read: the root is canonicalized once, entries are
//! looked at without following links (`DirEntry::file_type`), and a symlink is
//! followed only when its target resolves inside the root.

use crate::cache::FileStamp;
use std::path::{Path, PathBuf};

/// A spec folder and its Markdown files.
#[derive(Debug, Clone, PartialEq)]
pub struct SpecFolder {
    /// Path relative to the root with `/`: `059-token-engine` or `archived/012-old`.
    pub id: String,
    /// The folder name: `059-token-engine`.
    pub folder: String,
    pub number: u32,
    /// The folder name without its number: `token-engine`.
    pub name: String,
    pub dir: PathBuf,
    /// `README.md` first (when present), then the sub-specs by name. Empty until
    /// [`find_spec_files`] ran.
    pub files: Vec<SpecFile>,
    /// Entries that are not spec files, with the reason (binary is found later).
    pub skipped: Vec<String>,
}

impl SpecFolder {
    fn new(id: String, folder: String, number: u32, name: String, dir: PathBuf) -> SpecFolder {
        SpecFolder {
            id,
            folder,
            number,
            name,
            dir,
            files: Vec::new(),
            skipped: Vec::new(),
        }
    }

    pub fn readme(&self) -> Option<&SpecFile> {
        self.files.first().filter(|f| f.is_readme())
    }

    pub fn sub_specs(&self) -> impl Iterator<Item = &SpecFile> {
        self.files.iter().filter(|f| !f.is_readme())
    }
}

/// One Markdown file of a spec, with what the cache keys on.
#[derive(Debug, Clone, PartialEq)]
pub struct SpecFile {
    /// File name within the spec folder: `README.md`, `DESIGN.md`.
    pub name: String,
    pub path: PathBuf,
    pub size: u64,
    /// What the measurement cache keys on (size, mtime, ctime, inode, device).
    pub stamp: Option<FileStamp>,
}

impl SpecFile {
    pub fn is_readme(&self) -> bool {
        self.name.eq_ignore_ascii_case("README.md")
    }
}

/// What [`discover`] found under a root, and what it read to find it.
#[derive(Debug, Clone)]
pub struct Discovered {
    /// Every spec folder, sorted by id, without its files (see [`find_spec_files`]).
    pub specs: Vec<SpecFolder>,
    /// Skipped entries (e.g. a symlink pointing outside the root).
    pub notes: Vec<String>,
    /// The directories whose entries were read (the root first, then each group
    /// folder), each with its stamp taken before it was read.
    pub read: Vec<(PathBuf, FileStamp)>,
    /// Whether a symlink was looked at: its target may change while every directory
    /// read stays the same.
    pub saw_links: bool,
    /// Whether an entry could not be read (an I/O error partway through a listing):
    /// the listing may lack folders that are there.
    pub incomplete: bool,
}

/// Every spec folder under `root` (already canonical), without their files (see
/// [`find_spec_files`]). Reads only directory entries: two or three `read_dir` calls
/// for a whole repository, so resolving one spec stays cheap.
pub fn discover(root: &Path) -> std::io::Result<Discovered> {
    let mut found = Discovered {
        specs: Vec::new(),
        notes: Vec::new(),
        read: Vec::new(),
        saw_links: false,
        incomplete: false,
    };
    for mut entry in read_dir_stamped(root, &mut found)? {
        let Some(dir) = inside_dir(root, &mut entry, &mut found) else {
            continue;
        };
        match parse_folder_name(&entry.name) {
            Some((number, name)) => found.specs.push(SpecFolder::new(
                entry.name.clone(),
                entry.name,
                number,
                name,
                dir,
            )),
            // A group folder (`archived/`): specs one level down.
            None => {
                let Ok(children) = read_dir_stamped(&dir, &mut found) else {
                    found
                        .notes
                        .push(format!("`{}`: cannot be read; skipped", entry.name));
                    continue;
                };
                for mut child in children {
                    let Some((number, name)) = parse_folder_name(&child.name) else {
                        continue;
                    };
                    let Some(child_dir) = inside_dir(root, &mut child, &mut found) else {
                        continue;
                    };
                    found.specs.push(SpecFolder::new(
                        format!("{}/{}", entry.name, child.name),
                        child.name,
                        number,
                        name,
                        child_dir,
                    ));
                }
            }
        }
    }
    found.specs.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(found)
}

/// `059-token-engine` → (59, `token-engine`). 2–4 digits, a dash, a name.
pub fn parse_folder_name(name: &str) -> Option<(u32, String)> {
    let (digits, rest) = name.split_once('-')?;
    let is_number = (2..=4).contains(&digits.len()) && digits.bytes().all(|b| b.is_ascii_digit());
    if !is_number || rest.is_empty() {
        return None;
    }
    Some((digits.parse().ok()?, rest.to_string()))
}

struct Entry {
    name: String,
    path: PathBuf,
    file_type: std::fs::FileType,
}

/// [`read_dir_sorted`], noting `dir` and its stamp (taken first, so a change while
/// it is read shows as a different stamp next time) in `found.read`.
fn read_dir_stamped(dir: &Path, found: &mut Discovered) -> std::io::Result<Vec<Entry>> {
    let stamp = FileStamp::of(&std::fs::metadata(dir)?);
    let mut complete = true;
    let entries = read_dir_sorted(dir, &mut complete)?;
    found.read.push((dir.to_path_buf(), stamp));
    found.incomplete |= !complete;
    Ok(entries)
}

/// The entries of `dir` that are not hidden and have UTF-8 names, by name;
/// `complete` turns false when an entry could not be read (it is left out).
fn read_dir_sorted(dir: &Path, complete: &mut bool) -> std::io::Result<Vec<Entry>> {
    let mut entries: Vec<Entry> = std::fs::read_dir(dir)?
        .filter_map(|e| {
            let Ok(e) = e else {
                *complete = false;
                return None;
            };
            let name = e.file_name().into_string().ok()?;
            let Ok(file_type) = e.file_type() else {
                *complete = false;
                return None;
            };
            (!name.starts_with('.')).then(|| Entry {
                name,
                path: e.path(),
                file_type,
            })
        })
        .collect();
    entries.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(entries)
}

/// The entry as a directory inside the root, following a symlink only when its
/// target stays inside; `None` for files, and for links that escape (noted).
fn inside_dir(root: &Path, entry: &mut Entry, found: &mut Discovered) -> Option<PathBuf> {
    if entry.file_type.is_dir() {
        return Some(std::mem::take(&mut entry.path));
    }
    if entry.file_type.is_symlink() {
        found.saw_links = true;
        let target = resolve_link(root, &entry.path, &mut found.notes, &entry.name)?;
        return target.is_dir().then_some(target);
    }
    None
}

fn resolve_link(root: &Path, path: &Path, notes: &mut Vec<String>, shown: &str) -> Option<PathBuf> {
    match std::fs::canonicalize(path) {
        Ok(target) if target.starts_with(root) => Some(target),
        Ok(_) => {
            notes.push(format!(
                "`{shown}` is a symlink to a place outside the specs root; skipped"
            ));
            None
        }
        Err(_) => {
            notes.push(format!("`{shown}` is a broken symlink; skipped"));
            None
        }
    }
}

/// Find the Markdown files of `spec` (README first), noting what was skipped.
pub fn find_spec_files(root: &Path, spec: &mut SpecFolder) {
    let (mut files, mut skipped) = (Vec::new(), Vec::new());
    match read_dir_sorted(&spec.dir, &mut true) {
        Err(e) => skipped.push(format!("the folder cannot be read: {e}")),
        Ok(entries) => {
            for entry in entries {
                let path = if entry.file_type.is_symlink() {
                    match resolve_link(root, &entry.path, &mut skipped, &entry.name) {
                        Some(target) if target.is_file() => target,
                        _ => continue,
                    }
                } else if entry.file_type.is_file() {
                    entry.path.clone()
                } else {
                    continue;
                };
                let is_markdown = Path::new(&entry.name)
                    .extension()
                    .is_some_and(|e| e.eq_ignore_ascii_case("md"));
                if !is_markdown {
                    skipped.push(format!("`{}` is not Markdown; not counted", entry.name));
                    continue;
                }
                let metadata = std::fs::metadata(&path).ok();
                files.push(SpecFile {
                    name: entry.name,
                    path,
                    size: metadata.as_ref().map_or(0, |m| m.len()),
                    stamp: metadata.as_ref().map(FileStamp::of),
                });
            }
        }
    }
    // README first; the rest keep name order.
    files.sort_by_key(|f| !f.is_readme());
    spec.files = files;
    spec.skipped = skipped;
}

/// [`find_spec_files`] for many specs, on all cores: a repository listing stats
/// every file, and that is most of a warm (fully cached) call.
pub fn find_all_spec_files(root: &Path, specs: &mut [SpecFolder]) {
    crate::fan_out::map(specs.iter_mut(), crate::fan_out::cores(), |spec| {
        find_spec_files(root, spec);
        Some(())
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folder_names_need_two_to_four_digits_and_a_name() {
        assert_eq!(
            parse_folder_name("059-token-engine"),
            Some((59, "token-engine".into()))
        );
        assert_eq!(parse_folder_name("01-a"), Some((1, "a".into())));
        assert_eq!(parse_folder_name("1593-big"), Some((1593, "big".into())));
        for not_a_spec in [
            "5-short",
            "12345-long",
            "059-",
            "059",
            "abc-def",
            "archived",
            "0x1-a",
        ] {
            assert_eq!(parse_folder_name(not_a_spec), None, "{not_a_spec}");
        }
    }
}
