//! The ignore rules of one call: `.ignore`, `.gitignore` and `.git/info/exclude` of
//! every folder on the way to a file (parents of the root too), and git's global
//! excludes, with the precedence of ripgrep's `ignore` crate (whose matchers they
//! are). ripgrep's walker read these files itself; it was not used for them, because
//! they are repository content: a 100,000-line `.gitignore` took 13 s and 1.7 GB per
//! call, uncancellable, and was compiled again for every `paths` entry.
//!
//! Here each folder's rules are read once per call (shared by all its walks), the
//! files together no larger than `--max-ignore-bytes` (compiling costs some 500
//! bytes of memory per byte of patterns, ordinary or hostile alike) and holding no
//! more than `--max-ignore-patterns` patterns, none longer than `--max-pattern-bytes`;
//! over any the call stops with a clear
//! error naming the file and the flag. Skipping the file instead would quietly pull in
//! everything the repository meant to keep out (build output, vendored code), so the
//! answer would not be what the caller expects. The walk's clock and cancellation are
//! looked at before each file is compiled.

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};

use super::error::FilesError;

/// Deepest `{a,{b,c}}` nesting a glob may have. globset parses alternates
/// recursively: 2,000 nested `{` overflowed the stack (the whole process aborts) and
/// 1,000 nested `{a,` made its regex compilation panic. Real globs nest once or twice.
pub const MAX_GLOB_NESTING: usize = 8;

/// The nesting depth of `pattern`'s alternates when it is over [`MAX_GLOB_NESTING`].
/// Escaped braces (`\{`) do not count; a `{` inside `[...]` does, which only refuses
/// a pattern no one writes.
pub fn alternates_too_deep(pattern: &str) -> Option<usize> {
    let (mut depth, mut deepest, mut escaped) = (0usize, 0usize, false);
    for byte in pattern.bytes() {
        match byte {
            _ if escaped => escaped = false,
            b'\\' => escaped = true,
            b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    (deepest > MAX_GLOB_NESTING).then_some(deepest)
}

/// One folder's rules, and its parent's (up to the file system's root).
pub(super) struct FolderRules {
    parent: Option<Arc<FolderRules>>,
    dot_ignore: Option<Gitignore>,
    gitignore: Option<Gitignore>,
    git_exclude: Option<Gitignore>,
    /// The folder holds `.git`: `.gitignore` files above it do not apply below it.
    has_git: bool,
}

/// Which of a folder's names hold its rules, as its listing shows them: a walk that
/// has read the listing opens only the ignore files that are there. Probing every
/// folder for `.ignore`, `.gitignore` and `.git` was three failing path lookups per
/// folder, a sixth of a tree walk's CPU.
#[derive(Clone, Copy, Default)]
pub(super) struct Listed {
    pub(super) dot_ignore: bool,
    pub(super) gitignore: bool,
    pub(super) git: bool,
}

impl Listed {
    /// Note one name of the folder's listing.
    pub(super) fn see(&mut self, name: &[u8]) {
        match name {
            b".ignore" => self.dot_ignore = true,
            b".gitignore" => self.gitignore = true,
            b".git" => self.git = true,
            _ => {}
        }
    }
}

/// One folder's rules once read. Threads that need a folder being read wait for it,
/// so no file is read (nor its patterns counted) twice.
type Slot = Arc<Mutex<Option<Arc<FolderRules>>>>;

/// The ignore rules of one call, read lazily folder by folder and kept for the
/// call's other walks.
pub(super) struct IgnoreRules {
    folders: Mutex<HashMap<PathBuf, Slot>>,
    global: Option<Gitignore>,
    /// Bytes of all ignore files together (`--max-ignore-bytes`).
    max_bytes: u64,
    max_patterns: usize,
    /// Longest pattern (`--max-pattern-bytes`, as for the request's own globs): one
    /// 240 KB line of `a*` took 160 MB to compile.
    max_pattern_bytes: usize,
    patterns: AtomicUsize,
    bytes: AtomicU64,
}

impl IgnoreRules {
    pub(super) fn new(
        max_bytes: u64,
        max_patterns: usize,
        max_pattern_bytes: usize,
    ) -> IgnoreRules {
        // git's core.excludesFile: the user's own configuration, not repository content.
        let (global, _) = Gitignore::global();
        IgnoreRules {
            folders: Mutex::default(),
            global: (!global.is_empty()).then_some(global),
            max_bytes,
            max_patterns,
            max_pattern_bytes,
            patterns: AtomicUsize::new(0),
            bytes: AtomicU64::new(0),
        }
    }

    /// Whether `path` (absolute, found by the walk in the folder whose rules are
    /// `rules`) is ignored.
    pub(super) fn ignores(&self, rules: &Arc<FolderRules>, path: &Path, is_dir: bool) -> bool {
        let (mut by_ignore, mut by_gitignore, mut by_exclude) =
            (Match::None, Match::None, Match::None);
        let mut saw_git = false;
        let mut folder = Some(rules);
        while let Some(rules) = folder {
            let matched = |rules: &Option<Gitignore>| {
                rules
                    .as_ref()
                    .map_or(Match::None, |g| g.matched(path, is_dir).map(|_| ()))
            };
            if by_ignore.is_none() {
                by_ignore = matched(&rules.dot_ignore);
            }
            if !saw_git && by_gitignore.is_none() {
                by_gitignore = matched(&rules.gitignore);
            }
            if !saw_git && by_exclude.is_none() {
                by_exclude = matched(&rules.git_exclude);
            }
            saw_git |= rules.has_git;
            folder = rules.parent.as_ref();
        }
        let by_global = self
            .global
            .as_ref()
            .map_or(Match::None, |g| g.matched(path, is_dir).map(|_| ()));
        let decided = [by_ignore, by_gitignore, by_exclude, by_global]
            .into_iter()
            .find(|m| !m.is_none())
            .unwrap_or(Match::None);
        decided.is_ignore()
    }

    /// The rules of `dir` with its parents', read once per call, looking for each
    /// ignore file where it would be (a walk's first folder, and its parents).
    /// `check` is the walk's clock and cancellation, looked at before any ignore
    /// file is compiled.
    pub(super) fn folder(
        &self,
        dir: &Path,
        check: &dyn Fn() -> Result<(), FilesError>,
    ) -> Result<Arc<FolderRules>, FilesError> {
        self.once(dir, || {
            let parent = match dir.parent() {
                Some(parent) => Some(self.folder(parent, check)?),
                None => None,
            };
            let listed = Listed {
                dot_ignore: true,
                gitignore: true,
                git: std::fs::symlink_metadata(dir.join(".git")).is_ok(),
            };
            self.read(dir, parent, listed, check)
        })
    }

    /// The rules of `dir`, a folder of `parent` whose listing the walk has read:
    /// only the ignore files `listed` names are opened.
    pub(super) fn listed(
        &self,
        dir: &Path,
        parent: &Arc<FolderRules>,
        listed: Listed,
        check: &dyn Fn() -> Result<(), FilesError>,
    ) -> Result<Arc<FolderRules>, FilesError> {
        self.once(dir, || self.read(dir, Some(parent.clone()), listed, check))
    }

    /// `dir`'s rules as `make` reads them, once per call however many walks and
    /// threads ask.
    fn once(
        &self,
        dir: &Path,
        make: impl FnOnce() -> Result<Arc<FolderRules>, FilesError>,
    ) -> Result<Arc<FolderRules>, FilesError> {
        let slot: Slot = match self.folders.lock() {
            Ok(mut folders) => folders.entry(dir.to_path_buf()).or_default().clone(),
            Err(_) => Slot::default(),
        };
        // Held while the folder is read: parents are locked after children, never
        // the other way round, so waiting cannot go in a circle.
        let mut slot = slot.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(known) = slot.as_ref() {
            return Ok(known.clone());
        }
        let rules = make()?;
        *slot = Some(rules.clone());
        Ok(rules)
    }

    /// The ignore files of `dir` that `listed` names, compiled.
    fn read(
        &self,
        dir: &Path,
        parent: Option<Arc<FolderRules>>,
        listed: Listed,
        check: &dyn Fn() -> Result<(), FilesError>,
    ) -> Result<Arc<FolderRules>, FilesError> {
        let compile = |wanted: bool, name: &str| match wanted {
            true => self.compile(dir, &dir.join(name), check),
            false => Ok(None),
        };
        Ok(Arc::new(FolderRules {
            parent,
            dot_ignore: compile(listed.dot_ignore, ".ignore")?,
            gitignore: compile(listed.gitignore, ".gitignore")?,
            git_exclude: compile(listed.git, ".git/info/exclude")?,
            has_git: listed.git,
        }))
    }

    /// One ignore file's rules (`None` when there is no such regular file), within
    /// the call's bounds.
    fn compile(
        &self,
        dir: &Path,
        file: &Path,
        check: &dyn Fn() -> Result<(), FilesError>,
    ) -> Result<Option<Gitignore>, FilesError> {
        // Opened as any file is (no FIFO to block on, no symlink followed out).
        let Ok((handle, metadata)) = crate::safe_open::open_regular(file) else {
            return Ok(None);
        };
        let shown = file.display().to_string();
        let over = |bytes: u64| FilesError::IgnoreFilesTooLarge {
            path: shown.clone(),
            bytes,
            limit: self.max_bytes,
        };
        let before = self.bytes.fetch_add(metadata.len(), Ordering::Relaxed);
        if before + metadata.len() > self.max_bytes {
            return Err(over(metadata.len()));
        }
        let mut bytes = Vec::new();
        // Held to the limit also if it grows while read.
        let left = self.max_bytes - before;
        if handle.take(left + 1).read_to_end(&mut bytes).is_err() {
            return Ok(None);
        }
        if bytes.len() as u64 > left {
            return Err(over(bytes.len() as u64));
        }
        let text = String::from_utf8_lossy(&bytes);
        let lines: Vec<&str> = text
            .lines()
            .map(|line| line.trim_start_matches('\u{feff}'))
            .filter(|line| !line.trim().is_empty() && !line.starts_with('#'))
            .collect();
        if let Some(long) = lines.iter().find(|l| l.len() > self.max_pattern_bytes) {
            return Err(FilesError::IgnorePatternTooLong {
                path: shown,
                bytes: long.len(),
                limit: self.max_pattern_bytes,
            });
        }
        let total = self.patterns.fetch_add(lines.len(), Ordering::Relaxed) + lines.len();
        if total > self.max_patterns {
            return Err(FilesError::TooManyIgnorePatterns {
                path: shown,
                limit: self.max_patterns,
            });
        }
        check()?;
        let mut builder = GitignoreBuilder::new(dir);
        for line in lines {
            // A line git would not understand is skipped, as the walker did; so is one
            // whose nested `{…}` would overflow globset's parser (git has no braces).
            if alternates_too_deep(line).is_some() {
                continue;
            }
            let _ = builder.add_line(Some(file.to_path_buf()), line);
        }
        Ok(builder.build().ok().filter(|g| !g.is_empty()))
    }
}
