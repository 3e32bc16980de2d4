//! Turning requested paths into candidate files: a walk on every core that reads
//! each folder's listing whole and judges its entries by the folder's ignore rules
//! (.gitignore, .ignore, git's global and repository excludes, with ripgrep's
//! matchers; hidden files off unless asked for), then globs and include/exclude
//! filters.
//!
//! What the rules kept out is counted, not hidden: every entry listed counts against
//! `--max-walk-entries`, and each one the hidden-file rule or an ignore rule leaves
//! out is counted where it is left out (a `target/` folder counts once, its contents
//! are not listed).

use std::collections::HashSet;
use std::fs::FileType;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Instant;

use globset::{GlobBuilder, GlobMatcher};

use super::error::FilesError;
use super::ignore::{FolderRules, IgnoreRules, Listed};
use super::output::{Excluded, Skipped};
use super::query::{FileLimits, FileQuery};
use super::roots::{Roots, Target, relative_to, resolve};
use super::secrets::looks_secret_path;
use crate::limits;
use crate::read::SkipReason;
use crate::scan_control::ScanControl;

// The nesting bound holds for the caller's globs and the ignore files' patterns
// alike; it lives with the latter, the lower module of the two.
pub use super::ignore::{MAX_GLOB_NESTING, alternates_too_deep};

/// A file to open: where it was found and how it was asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    pub root: usize,
    /// Relative to the root, `/`-separated: what answers show.
    pub relative: String,
    /// Absolute path as found (may be a symlink; opened only after checks).
    pub path: PathBuf,
    /// Named by the caller as a file (not reached through a folder or glob): ignore
    /// rules do not apply (secret rules do, see [`super::secrets`]).
    pub explicit: bool,
    /// The walk saw a regular file here, not a link: the open may try the path as
    /// spelled before canonicalizing it ([`super::open::open_in_root`]).
    pub seen_regular: bool,
}

/// Everything the walk found for one call.
#[derive(Debug, Default)]
pub struct Walked {
    pub candidates: Vec<Candidate>,
    pub skipped: Vec<Skipped>,
    pub excluded: Excluded,
    /// Directory entries visited, for progress.
    pub entries: usize,
}

/// A glob as the caller wrote it: with a `/` it matches the path relative to the
/// root (`*` stays within one folder, `**` crosses folders); without one it
/// matches the file name at any depth, as in .gitignore.
#[derive(Debug, Clone)]
pub struct PathGlob {
    matcher: GlobMatcher,
    by_name: bool,
}

impl PathGlob {
    pub fn new(pattern: &str) -> Result<PathGlob, FilesError> {
        let pattern = pattern.trim().trim_start_matches("./");
        let by_name = !pattern.contains('/');
        if let Some(depth) = alternates_too_deep(pattern) {
            return Err(FilesError::InvalidPath {
                path: limits::preview(pattern),
                reason: format!(
                    "alternates `{{…}}` nested {depth} deep; at most {MAX_GLOB_NESTING}"
                ),
            });
        }
        let glob = GlobBuilder::new(pattern)
            .literal_separator(true)
            .build()
            .map_err(|e| FilesError::InvalidPath {
                path: limits::preview(pattern),
                reason: format!("not a valid glob: {}", e.kind()),
            })?;
        Ok(PathGlob {
            matcher: glob.compile_matcher(),
            by_name,
        })
    }

    pub fn matches(&self, relative: &str) -> bool {
        if self.by_name {
            let name = relative.rsplit('/').next().unwrap_or(relative);
            self.matcher.is_match(name)
        } else {
            self.matcher.is_match(relative)
        }
    }
}

/// Include and exclude filters for files reached through folders and globs.
#[derive(Debug, Clone, Default)]
pub struct Filters {
    pub include: Vec<PathGlob>,
    pub exclude: Vec<PathGlob>,
}

impl Filters {
    pub fn new(include: &[String], exclude: &[String]) -> Result<Filters, FilesError> {
        let compile = |patterns: &[String]| -> Result<Vec<PathGlob>, FilesError> {
            patterns
                .iter()
                .filter(|p| !p.trim().is_empty())
                .map(|p| PathGlob::new(p))
                .collect()
        };
        Ok(Filters {
            include: compile(include)?,
            exclude: compile(exclude)?,
        })
    }

    fn admits(&self, relative: &str) -> bool {
        (self.include.is_empty() || self.include.iter().any(|g| g.matches(relative)))
            && !self.exclude.iter().any(|g| g.matches(relative))
    }
}

/// How the walk treats hidden files and ignore rules.
#[derive(Debug, Clone, Copy)]
pub struct WalkOptions {
    /// Also walk hidden files and folders (names starting with `.`).
    pub hidden: bool,
}

/// The candidate files `query` names: each path resolved inside the roots (`.`
/// meaning every root), then walked with the filters.
pub(super) fn walk_query(
    roots: &Roots,
    query: &FileQuery,
    limits: &FileLimits,
    control: &dyn ScanControl,
) -> Result<Walked, FilesError> {
    check_patterns(query, limits)?;
    let paths: Vec<&str> = if query.paths.is_empty() {
        vec!["."]
    } else {
        query.paths.iter().map(String::as_str).collect()
    };
    let mut targets = Vec::new();
    for path in paths {
        match resolve(roots, path)? {
            // `.` (or empty) means every root.
            Target::Existing { relative, .. } if relative.is_empty() && roots.list().len() > 1 => {
                for (index, root) in roots.list().iter().enumerate() {
                    targets.push(Target::Existing {
                        root: index,
                        relative: String::new(),
                        canonical: root.path.clone(),
                    });
                }
            }
            target => targets.push(target),
        }
    }
    let filters = Filters::new(&query.include, &query.exclude)?;
    collect(
        roots,
        &targets,
        &filters,
        WalkOptions {
            hidden: query.hidden,
        },
        limits,
        control,
    )
}

/// Bound the call's own paths and globs before any is compiled or walked: 100,000
/// `exclude` globs (a request of a few MB) took 8.9 s and 1.4 GB to compile.
fn check_patterns(query: &FileQuery, limits: &FileLimits) -> Result<(), FilesError> {
    let lists = [
        ("paths", &query.paths),
        ("include", &query.include),
        ("exclude", &query.exclude),
    ];
    let count: usize = lists.iter().map(|(_, list)| list.len()).sum();
    if count > limits.max_patterns {
        return Err(FilesError::TooManyPatterns {
            count,
            limit: limits.max_patterns,
        });
    }
    for (field, list) in lists {
        if let Some(long) = list.iter().find(|p| p.len() > limits.max_pattern_bytes) {
            return Err(FilesError::PatternTooLong {
                field,
                bytes: long.len(),
                limit: limits.max_pattern_bytes,
            });
        }
    }
    Ok(())
}

/// Expand `targets` into candidate files, in the order the targets were given
/// (files of one folder or glob by path), each file once.
pub fn collect(
    roots: &Roots,
    targets: &[Target],
    filters: &Filters,
    options: WalkOptions,
    limits: &FileLimits,
    control: &dyn ScanControl,
) -> Result<Walked, FilesError> {
    let started = Instant::now();
    let mut walked = Walked::default();
    let budget = WalkBudget {
        started,
        entries: AtomicUsize::new(0),
        limits,
        control,
        rules: IgnoreRules::new(
            limits.max_ignore_bytes,
            limits.max_ignore_patterns,
            limits.max_pattern_bytes,
        ),
    };
    for target in targets {
        match target {
            Target::Existing {
                root,
                relative,
                canonical,
            } => {
                if canonical.is_dir() {
                    let dir = roots.list()[*root].path.join(relative);
                    walk_dir(
                        roots,
                        *root,
                        &dir,
                        None,
                        filters,
                        options,
                        &budget,
                        &mut walked,
                    )?;
                } else {
                    walked.candidates.push(Candidate {
                        root: *root,
                        relative: relative.clone(),
                        path: roots.list()[*root].path.join(relative),
                        explicit: true,
                        seen_regular: false,
                    });
                }
            }
            Target::Glob {
                root,
                base,
                pattern,
            } => {
                let glob = PathGlob::new(pattern)?;
                let indices: Vec<usize> = match root {
                    Some(index) => vec![*index],
                    None => (0..roots.list().len()).collect(),
                };
                for index in indices {
                    let root_path = &roots.list()[index].path;
                    let dir = root_path.join(base);
                    match std::fs::canonicalize(&dir) {
                        Ok(real) if real.starts_with(root_path) && real.is_dir() => {
                            walk_dir(
                                roots,
                                index,
                                &dir,
                                Some(&glob),
                                filters,
                                options,
                                &budget,
                                &mut walked,
                            )?;
                        }
                        Ok(real) if !real.starts_with(root_path) => walked
                            .skipped
                            .push(Skipped::new(base, SkipReason::OutsideRoot)),
                        _ => {}
                    }
                }
            }
        }
    }
    // A file named twice (or reached by two globs) is measured once, first place kept.
    dedupe(
        &mut walked.candidates,
        &mut walked.skipped,
        targets.len() == 1,
    );
    walked.entries = budget.entries.load(Ordering::Relaxed);
    if walked.candidates.len() > limits.max_files {
        return Err(FilesError::TooManyFiles {
            found: walked.candidates.len(),
            limit: limits.max_files,
        });
    }
    Ok(walked)
}

/// Keep the first occurrence of each file, by its raw path (names need not be
/// UTF-8). Two files whose names show the same (a literal `\xff` and a byte that
/// is not UTF-8, see [`super::roots::shown_name`]) cannot both be told apart in an
/// answer: the later one is skipped, saying so, never dropped unseen.
///
/// `one_target`: the candidates come from one path or glob, which lists each file
/// once (a walk reads each folder once and follows no link). Then only a name shown
/// with an escape can clash, and without one there is nothing to look for: the two
/// sets took ~4 ms for 16k files, on one core while the other waited to count.
///
/// The keys are borrowed and a path is hashed as one run of bytes: cloning every
/// path and hashing it component by component took ~14 ms for 16k files, on one
/// core while the other waited to count. Bytes compare as paths do here: every
/// candidate path is a canonical root joined with a normalized relative path, or
/// an entry the walker joined under one.
fn dedupe(candidates: &mut Vec<Candidate>, skipped: &mut Vec<Skipped>, one_target: bool) {
    if one_target && !candidates.iter().any(|c| c.relative.contains('\\')) {
        return;
    }
    let keep: Vec<bool> = {
        let mut seen = HashSet::with_capacity(candidates.len());
        let mut shown = HashSet::with_capacity(candidates.len());
        candidates
            .iter()
            .map(|c| {
                if !seen.insert((c.root, c.path.as_os_str().as_encoded_bytes())) {
                    return false;
                }
                let first = shown.insert((c.root, c.relative.as_str()));
                if !first {
                    skipped.push(Skipped::new(
                        &c.relative,
                        SkipReason::SameName(c.relative.clone()),
                    ));
                }
                first
            })
            .collect()
    };
    let mut keep = keep.into_iter();
    candidates.retain(|_| keep.next().unwrap_or(false));
}

/// Shared stop conditions of one call's walks, and its ignore rules (read once
/// for all of them).
struct WalkBudget<'a> {
    started: Instant,
    entries: AtomicUsize,
    limits: &'a FileLimits,
    control: &'a dyn ScanControl,
    rules: IgnoreRules,
}

impl WalkBudget<'_> {
    /// Whether the walk must stop after `seen` entries (cancellation and the clock
    /// are looked at every 1,024 entries).
    fn over(&self, seen: usize) -> Option<Stop> {
        if seen > self.limits.max_walk_entries {
            return Some(Stop::Entries);
        }
        if !seen.is_multiple_of(1024) {
            return None;
        }
        self.control.progress(seen, seen);
        if self.control.is_cancelled() {
            Some(Stop::Cancelled)
        } else if self.started.elapsed() > self.limits.walk_timeout {
            Some(Stop::Time)
        } else {
            None
        }
    }

    /// The clock and cancellation as an error, for work that is not entries (ignore
    /// files being compiled).
    fn check(&self) -> Result<(), FilesError> {
        if self.control.is_cancelled() {
            Err(FilesError::Cancelled)
        } else if self.started.elapsed() > self.limits.walk_timeout {
            Err(FilesError::WalkTooSlow {
                limit_ms: self.limits.walk_timeout.as_millis() as u64,
            })
        } else {
            Ok(())
        }
    }
}

/// Why a walk stopped early.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Stop {
    Cancelled,
    Entries,
    Time,
}

/// One walk of one folder: its threads take folders from a shared stack, read each
/// listing whole, judge every entry of it with that folder's rules, and stack the
/// folders found. A folder's listing is read before any of its entries is judged,
/// so its rules come from the ignore files the listing names, without looking for
/// missing ones (three failing path lookups per folder, a sixth of a tree walk's
/// CPU, when ripgrep's walker handed entries over one at a time).
struct Walk<'a> {
    root: usize,
    root_path: &'a Path,
    glob: Option<&'a PathGlob>,
    filters: &'a Filters,
    options: WalkOptions,
    budget: &'a WalkBudget<'a>,
    queue: Mutex<Queue>,
    wake: Condvar,
    found: Mutex<Vec<Candidate>>,
    skipped: Mutex<Vec<Skipped>>,
    excluded: Mutex<Excluded>,
    stop: Mutex<Option<Stop>>,
    failed: Mutex<Option<FilesError>>,
    stopping: AtomicBool,
}

/// A folder to read, with the rules of the folder holding it (`None`: the walk's
/// first folder, whose rules are looked for where they would be, parents too).
struct Folder {
    path: PathBuf,
    parent: Option<Arc<FolderRules>>,
}

/// The folders left to read.
struct Queue {
    folders: Vec<Folder>,
    /// Threads reading a folder now: they may stack more, so the others wait.
    busy: usize,
}

#[allow(clippy::too_many_arguments)]
fn walk_dir(
    roots: &Roots,
    root: usize,
    dir: &Path,
    glob: Option<&PathGlob>,
    filters: &Filters,
    options: WalkOptions,
    budget: &WalkBudget<'_>,
    walked: &mut Walked,
) -> Result<(), FilesError> {
    let walk = Walk {
        root,
        root_path: &roots.list()[root].path,
        glob,
        filters,
        options,
        budget,
        queue: Mutex::new(Queue {
            folders: vec![Folder {
                path: dir.to_path_buf(),
                parent: None,
            }],
            busy: 0,
        }),
        wake: Condvar::new(),
        found: Mutex::default(),
        skipped: Mutex::default(),
        excluded: Mutex::default(),
        stop: Mutex::new(None),
        failed: Mutex::new(None),
        stopping: AtomicBool::new(false),
    };
    // The first folder is an entry of the walk too.
    if let Some(reason) = budget.over(budget.entries.fetch_add(1, Ordering::Relaxed) + 1) {
        walk.halt(reason);
    }
    let threads = crate::fan_out::cores();
    std::thread::scope(|scope| {
        for _ in 1..threads {
            scope.spawn(|| walk.work());
        }
        walk.work();
    });

    if let Some(error) = walk.failed.into_inner().ok().flatten() {
        return Err(error);
    }
    match walk.stop.into_inner().ok().flatten() {
        Some(Stop::Cancelled) => return Err(FilesError::Cancelled),
        Some(Stop::Entries) => {
            return Err(FilesError::WalkTooLarge {
                limit: budget.limits.max_walk_entries,
            });
        }
        Some(Stop::Time) => {
            return Err(FilesError::WalkTooSlow {
                limit_ms: budget.limits.walk_timeout.as_millis() as u64,
            });
        }
        None => {}
    }

    let mut found = walk.found.into_inner().unwrap_or_default();
    // In place (a stable sort takes a scratch copy of 16k candidates, on one core
    // with the other waiting); the raw path orders the names that show the same,
    // which the walk's threads found in any order.
    found.sort_unstable_by(|a, b| {
        (a.relative.as_str(), a.path.as_os_str()).cmp(&(b.relative.as_str(), b.path.as_os_str()))
    });
    walked.candidates.extend(found);
    let mut skipped = walk.skipped.into_inner().unwrap_or_default();
    skipped.sort_by(|a, b| a.path.cmp(&b.path));
    walked.skipped.extend(skipped);
    walked
        .excluded
        .add(walk.excluded.into_inner().unwrap_or_default());
    Ok(())
}

impl Walk<'_> {
    /// One thread's share: folders until none is left or the walk stops.
    fn work(&self) {
        // A thread that panics (a bug) stops the others: they would otherwise wait
        // for its folder's subfolders forever, and the panic would never surface.
        struct StopOnPanic<'w, 'a>(&'w Walk<'a>);
        impl Drop for StopOnPanic<'_, '_> {
            fn drop(&mut self) {
                if std::thread::panicking() {
                    self.0.wake_all_stopping();
                }
            }
        }
        let _stop_on_panic = StopOnPanic(self);
        let mut batch = Batch {
            found: &self.found,
            skipped: &self.skipped,
            excluded: &self.excluded,
            local_found: Vec::new(),
            local_skipped: Vec::new(),
            local_excluded: Excluded::default(),
        };
        while let Some(folder) = self.next() {
            let more = self.read(folder, &mut batch);
            let mut queue = self.queue.lock().unwrap_or_else(|p| p.into_inner());
            queue.busy -= 1;
            if !more.is_empty() || queue.busy == 0 {
                queue.folders.extend(more);
                self.wake.notify_all();
            }
        }
    }

    /// The next folder to read; `None` when the walk is over or stopping.
    fn next(&self) -> Option<Folder> {
        let mut queue = self.queue.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            if self.stopping.load(Ordering::Relaxed) {
                return None;
            }
            if let Some(folder) = queue.folders.pop() {
                queue.busy += 1;
                return Some(folder);
            }
            if queue.busy == 0 {
                return None;
            }
            queue = self.wake.wait(queue).unwrap_or_else(|p| p.into_inner());
        }
    }

    /// Stop every thread of the walk, for `reason` (the first one kept).
    fn halt(&self, reason: Stop) {
        if let Ok(mut stop) = self.stop.lock() {
            stop.get_or_insert(reason);
        }
        self.wake_all_stopping();
    }

    fn fail(&self, error: FilesError) {
        if let Ok(mut failed) = self.failed.lock() {
            failed.get_or_insert(error);
        }
        self.wake_all_stopping();
    }

    fn wake_all_stopping(&self) {
        // Under the queue's lock: a thread about to wait has either seen the flag or
        // is waiting already, and is woken.
        let _queue = self.queue.lock().unwrap_or_else(|p| p.into_inner());
        self.stopping.store(true, Ordering::Relaxed);
        self.wake.notify_all();
    }

    /// Read `folder`'s listing and judge its entries; the folders it holds that are
    /// to be walked come back.
    fn read(&self, folder: Folder, batch: &mut Batch<'_>) -> Vec<Folder> {
        let mut more = Vec::new();
        let listing = match std::fs::read_dir(&folder.path) {
            Ok(listing) => listing,
            Err(error) => {
                // Counted as an entry, as the walker counted its errors.
                if self.count_entry() {
                    self.unreadable(&folder.path, &error, batch);
                }
                return more;
            }
        };
        // Held whole: its ignore files must be known before its entries are judged.
        // Never more of it than the walk may still visit: each entry listed counts.
        let seen = self.budget.entries.load(Ordering::Relaxed);
        let room = self.budget.limits.max_walk_entries.saturating_sub(seen);
        let mut entries: Vec<(std::ffi::OsString, std::io::Result<FileType>)> = Vec::new();
        let mut errors = Vec::new();
        let mut listed = Listed::default();
        for entry in listing {
            match entry {
                Ok(entry) => {
                    let name = entry.file_name();
                    listed.see(name.as_encoded_bytes());
                    entries.push((name, entry.file_type()));
                }
                Err(error) => errors.push(error),
            }
            if entries.len() + errors.len() > room {
                self.halt(Stop::Entries);
                return more;
            }
        }
        let check = || self.budget.check();
        let rules = match &folder.parent {
            None => self.budget.rules.folder(&folder.path, &check),
            Some(parent) => self
                .budget
                .rules
                .listed(&folder.path, parent, listed, &check),
        };
        let rules = match rules {
            Ok(rules) => rules,
            Err(error) => {
                self.fail(error);
                return more;
            }
        };
        for (name, file_type) in entries {
            if !self.count_entry() {
                return more;
            }
            self.judge(&folder.path, &rules, &name, file_type, batch, &mut more);
        }
        for error in errors {
            if !self.count_entry() {
                return more;
            }
            self.unreadable(&folder.path, &error, batch);
        }
        more
    }

    /// One more entry against the walk's budget; `false` once the walk stops.
    fn count_entry(&self) -> bool {
        if self.stopping.load(Ordering::Relaxed) {
            return false;
        }
        let seen = self.budget.entries.fetch_add(1, Ordering::Relaxed) + 1;
        match self.budget.over(seen) {
            Some(reason) => {
                self.halt(reason);
                false
            }
            None => true,
        }
    }

    /// What becomes of the entry `name` of the folder `dir` (whose rules are
    /// `rules`): left out as hidden or ignored (counted), walked (a folder), a
    /// candidate, or skipped saying why.
    fn judge(
        &self,
        dir: &Path,
        rules: &Arc<FolderRules>,
        name: &std::ffi::OsStr,
        file_type: std::io::Result<FileType>,
        batch: &mut Batch<'_>,
        more: &mut Vec<Folder>,
    ) {
        let file_type = match file_type {
            Ok(file_type) => file_type,
            Err(error) => return self.unreadable(&dir.join(name), &error, batch),
        };
        if !self.options.hidden && name.as_encoded_bytes().starts_with(b".") {
            batch.local_excluded.hidden += 1;
            return;
        }
        let path = dir.join(name);
        let is_dir = file_type.is_dir();
        if self.budget.rules.ignores(rules, &path, is_dir) {
            batch.local_excluded.ignored += 1;
            batch
                .local_excluded
                .ignored_examples
                .push(relative_to(&path, self.root_path));
            batch.maybe_flush();
            return;
        }
        if is_dir {
            more.push(Folder {
                path,
                parent: Some(rules.clone()),
            });
            return;
        }
        let relative = relative_to(&path, self.root_path);
        if self.glob.is_some_and(|g| !g.matches(&relative)) || !self.filters.admits(&relative) {
            return;
        }
        if !(file_type.is_file() || file_type.is_symlink()) {
            // FIFOs, sockets, devices: never opened.
            batch
                .local_skipped
                .push(Skipped::new(&relative, SkipReason::NotRegular));
        } else if looks_secret_path(&relative) {
            batch
                .local_skipped
                .push(Skipped::new(&relative, SkipReason::Secret));
        } else {
            batch.local_found.push(Candidate {
                root: self.root,
                relative,
                path,
                explicit: false,
                seen_regular: file_type.is_file(),
            });
        }
        batch.maybe_flush();
    }

    /// `path` could not be listed or looked at: skipped, saying why (the error's
    /// own words; the answer names the path, relative to its root).
    fn unreadable(&self, path: &Path, error: &std::io::Error, batch: &mut Batch<'_>) {
        batch.local_skipped.push(Skipped::new(
            &relative_to(path, self.root_path),
            SkipReason::Unreadable(error.to_string()),
        ));
    }
}

/// Findings of one visitor thread, moved to the shared lists in batches.
struct Batch<'a> {
    found: &'a Mutex<Vec<Candidate>>,
    skipped: &'a Mutex<Vec<Skipped>>,
    excluded: &'a Mutex<Excluded>,
    local_found: Vec<Candidate>,
    local_skipped: Vec<Skipped>,
    local_excluded: Excluded,
}

impl Batch<'_> {
    fn maybe_flush(&mut self) {
        let examples = self.local_excluded.ignored_examples.len();
        if self.local_found.len() + self.local_skipped.len() + examples >= 512 {
            self.flush();
        }
    }

    fn flush(&mut self) {
        if let Ok(mut found) = self.found.lock() {
            found.append(&mut self.local_found);
        }
        if let Ok(mut skipped) = self.skipped.lock() {
            skipped.append(&mut self.local_skipped);
        }
        if let Ok(mut excluded) = self.excluded.lock() {
            excluded.add(std::mem::take(&mut self.local_excluded));
        }
    }
}

impl Drop for Batch<'_> {
    fn drop(&mut self) {
        self.flush();
    }
}
