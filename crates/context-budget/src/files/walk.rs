//! Turning requested paths into candidate files: ripgrep's `ignore` walker
//! (.gitignore, .ignore, git's global and repository excludes, hidden files off
//! unless asked for, several threads), then globs and include/exclude filters.
//!
//! What the rules kept out is counted, not hidden: the walker yields every entry
//! (its own filters are off), and each one the hidden-file rule or an ignore rule
//! leaves out is counted where it is left out (a `target/` folder counts once, its
//! contents are not walked).

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Instant;

use globset::{GlobBuilder, GlobMatcher};
use ignore::{WalkBuilder, WalkState};

use super::error::FilesError;
use super::ignore::{IgnoreRules, LastFolder};
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
    dedupe(&mut walked.candidates, &mut walked.skipped);
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
/// The keys are borrowed and a path is hashed as one run of bytes: cloning every
/// path and hashing it component by component took ~14 ms for 16k files, on one
/// core while the other waited to count. Bytes compare as paths do here: every
/// candidate path is a canonical root joined with a normalized relative path, or
/// an entry the walker joined under one.
fn dedupe(candidates: &mut Vec<Candidate>, skipped: &mut Vec<Skipped>) {
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
    let root_path = &roots.list()[root].path;
    let threads = crate::fan_out::cores();
    let walker = WalkBuilder::new(dir)
        // Hidden entries are left out below, after they count against
        // --max-walk-entries: filtered inside the walker, 200k of them were free.
        .hidden(false)
        .follow_links(false)
        // Ignore files are read by `IgnoreRules` instead, bounded and once per call
        // (they apply in any folder, git repository or not).
        .ignore(false)
        .git_ignore(false)
        .git_exclude(false)
        .git_global(false)
        .parents(false)
        .threads(threads)
        .build_parallel();

    let found: Mutex<Vec<Candidate>> = Mutex::new(Vec::new());
    let skipped: Mutex<Vec<Skipped>> = Mutex::new(Vec::new());
    let excluded: Mutex<Excluded> = Mutex::default();
    let stop: Mutex<Option<Stop>> = Mutex::new(None);
    let failed: Mutex<Option<FilesError>> = Mutex::new(None);
    let stopping = AtomicBool::new(false);

    walker.run(|| {
        // Each visitor thread batches its findings and hands them over every few
        // hundred entries and when the walk drops it.
        let mut batch = Batch {
            found: &found,
            skipped: &skipped,
            excluded: &excluded,
            local_found: Vec::new(),
            local_skipped: Vec::new(),
            local_excluded: Excluded::default(),
        };
        let (stop, stopping, failed) = (&stop, &stopping, &failed);
        let mut last_folder = LastFolder::default();
        Box::new(move |entry| {
            if stopping.load(Ordering::Relaxed) {
                return WalkState::Quit;
            }
            if let Some(reason) = budget.over(budget.entries.fetch_add(1, Ordering::Relaxed) + 1) {
                stopping.store(true, Ordering::Relaxed);
                if let Ok(mut stop) = stop.lock() {
                    stop.get_or_insert(reason);
                }
                return WalkState::Quit;
            }
            let entry = match entry {
                Ok(entry) => entry,
                Err(error) => {
                    let path = error_path(&error)
                        .map(|p| relative_to(&p, root_path))
                        .unwrap_or_default();
                    batch.local_skipped.push(Skipped::new(
                        &path,
                        SkipReason::Unreadable(error.to_string()),
                    ));
                    return WalkState::Continue;
                }
            };
            let path = entry.path();
            if !options.hidden
                && entry.depth() > 0
                && entry.file_name().as_encoded_bytes().starts_with(b".")
            {
                batch.local_excluded.hidden += 1;
                return WalkState::Skip;
            }
            if entry.depth() > 0 {
                let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
                match budget
                    .rules
                    .ignored(path, is_dir, &mut last_folder, &|| budget.check())
                {
                    Ok(true) => {
                        batch.local_excluded.ignored += 1;
                        batch
                            .local_excluded
                            .ignored_examples
                            .push(relative_to(path, root_path));
                        batch.maybe_flush();
                        return WalkState::Skip;
                    }
                    Ok(false) => {}
                    Err(error) => {
                        stopping.store(true, Ordering::Relaxed);
                        if let Ok(mut failed) = failed.lock() {
                            failed.get_or_insert(error);
                        }
                        return WalkState::Quit;
                    }
                }
            }
            let Some(file_type) = entry.file_type() else {
                return WalkState::Continue;
            };
            if file_type.is_dir() {
                return WalkState::Continue;
            }
            let relative = relative_to(path, root_path);
            if glob.is_some_and(|g| !g.matches(&relative)) || !filters.admits(&relative) {
                return WalkState::Continue;
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
                    root,
                    relative,
                    path: path.to_path_buf(),
                    explicit: false,
                    seen_regular: file_type.is_file(),
                });
            }
            batch.maybe_flush();
            WalkState::Continue
        })
    });

    if let Some(error) = failed.into_inner().ok().flatten() {
        return Err(error);
    }
    let stopped = stop.lock().ok().and_then(|s| *s);
    match stopped {
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

    let mut found = found.into_inner().unwrap_or_default();
    // In place (a stable sort takes a scratch copy of 16k candidates, on one core
    // with the other waiting); the raw path orders the names that show the same,
    // which the walk's threads found in any order.
    found.sort_unstable_by(|a, b| {
        (a.relative.as_str(), a.path.as_os_str()).cmp(&(b.relative.as_str(), b.path.as_os_str()))
    });
    walked.candidates.extend(found);
    let mut skipped = skipped.into_inner().unwrap_or_default();
    skipped.sort_by(|a, b| a.path.cmp(&b.path));
    walked.skipped.extend(skipped);
    walked
        .excluded
        .add(excluded.into_inner().unwrap_or_default());
    Ok(())
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

fn error_path(error: &ignore::Error) -> Option<PathBuf> {
    match error {
        ignore::Error::WithPath { path, .. } => Some(path.clone()),
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
            error_path(err)
        }
        _ => None,
    }
}
