//! [`FileStore`]: the measurement cache and limits behind both file tools, and
//! `file-tokens` as named steps: walk ([`super::walk`]), measure
//! ([`super::measure`]), shape the rows ([`super::output`]). `load-files` is one
//! call into [`super::load`], which runs its own steps.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::error::FilesError;
use super::load;
use super::measure::{FileMeasure, Measured, Measurer, OutlineTokens, Reading, walk_while_loading};
use super::output::{FileRow, cap_skipped, folder_rollup, sort_rows};
use super::output::{FileTokens, FilesModel, LoadedFiles, WindowShare};
use super::query::{FileLimits, FileQuery, FileSort, LoadRequest};
use super::roots::Roots;
use super::walk::walk_query;
use crate::answer::Page;
use crate::cache::MeasureCache;
use crate::scan_control::ScanControl;
use crate::{ResolvedModel, Tokenizer};

/// The measurement cache and limits behind both file tools.
#[derive(Debug)]
pub struct FileStore {
    pub(super) cache: Arc<MeasureCache<FileMeasure>>,
    limits: FileLimits,
}

impl FileStore {
    pub fn new(limits: FileLimits) -> FileStore {
        FileStore {
            cache: Arc::default(),
            limits,
        }
    }

    /// A store that keeps no measures ([`MeasureCache::off`]): for a process
    /// that measures once and writes no cache file.
    pub fn without_cache(limits: FileLimits) -> FileStore {
        FileStore {
            cache: Arc::new(MeasureCache::off()),
            limits,
        }
    }

    pub fn limits(&self) -> &FileLimits {
        &self.limits
    }

    /// Files remembered in the measurement cache.
    pub fn cached_files(&self) -> usize {
        self.cache.len()
    }

    /// `file-tokens`: every file `query` reaches, measured.
    pub fn file_tokens(
        &self,
        roots: &Roots,
        query: &FileQuery,
        model: &ResolvedModel<'_>,
        sort: FileSort,
        limit: Option<usize>,
        control: &dyn ScanControl,
    ) -> Result<FileTokens, FilesError> {
        let tokenizer = model.tokenizer();
        let walked = walk_while_loading(tokenizer, || {
            walk_query(roots, query, &self.limits, control)
        })?;
        let mut measurer = self.measurer(roots, tokenizer, control);
        measurer.outline = query.outline;
        let (measured, mut skipped) =
            measurer.measure(walked.candidates, Reading::Count, walked.entries)?;
        skipped.splice(0..0, walked.skipped);

        let (outline_total, outline_missing) = outline_totals(&measured, query.outline);
        let files_measured = measured.len();
        let bytes = measured.iter().map(|m| m.measure.bytes).sum();
        let lines = measured.iter().map(|m| m.measure.lines).sum();
        let cached = measured.iter().filter(|m| m.cached).count();
        let mut rows = file_rows(roots, measured, query.outline);
        let total: u64 = rows.iter().map(|r| r.tokens).sum();
        let mut folders = folder_rollup(&rows);
        sort_rows(&mut rows, sort);
        let page = Page::of(
            0,
            limit.map_or(rows.len(), |n| n.min(rows.len())),
            rows.len(),
        );
        if let Some(n) = limit {
            rows.truncate(n);
            folders.truncate(n);
        }
        let (skipped, skipped_counts) = cap_skipped(skipped);
        Ok(FileTokens {
            model: FilesModel::of(model),
            roots: roots.shown_paths(),
            total,
            outline_total,
            outline_missing,
            files_measured,
            bytes,
            lines,
            window: WindowShare::of(model, total),
            sort,
            page,
            files: rows,
            folders,
            skipped,
            skipped_counts,
            excluded: walked.excluded,
            cached,
        })
    }

    /// `load-files`: the files `query` reaches, packed into `request.budget` tokens
    /// (the `load` module runs its steps).
    pub fn load_files(
        &self,
        roots: &Roots,
        query: &FileQuery,
        request: &LoadRequest,
        model: &ResolvedModel<'_>,
        control: &dyn ScanControl,
    ) -> Result<LoadedFiles, FilesError> {
        let measurer = self.measurer(roots, model.tokenizer(), control);
        load::load_files(&measurer, query, request, model)
    }

    /// This call's view of the store, for measuring.
    fn measurer<'a>(
        &'a self,
        roots: &'a Roots,
        tokenizer: Tokenizer,
        control: &'a dyn ScanControl,
    ) -> Measurer<'a> {
        Measurer {
            roots,
            cache: &self.cache,
            limits: &self.limits,
            tokenizer,
            control,
            outline: false,
        }
    }
}

/// One row per measured file, in measured order, taking the file's relative path
/// (not a copy of it: 16k strings copied, then freed, on one core after the
/// counting); with its outline's tokens when asked for.
fn file_rows(roots: &Roots, measured: Vec<Measured>, outline: bool) -> Vec<FileRow> {
    measured
        .into_iter()
        .map(|m| FileRow {
            path: m.candidate.relative,
            root: roots.label(m.candidate.root),
            tokens: m.measure.tokens,
            outline_tokens: m.measure.outline.tokens().filter(|_| outline),
            lines: m.measure.lines,
            bytes: m.measure.bytes,
        })
        .collect()
}

/// When outlines were asked for: the tokens of every file as its outline (at full
/// tokens when it has none), and how many files have none, per reason.
fn outline_totals(
    measured: &[Measured],
    outline: bool,
) -> (Option<u64>, BTreeMap<&'static str, usize>) {
    let mut missing = BTreeMap::new();
    if !outline {
        return (None, missing);
    }
    let mut total = 0;
    for m in measured {
        total += match m.measure.outline {
            OutlineTokens::Tokens(n) => n,
            OutlineTokens::Missing(reason) => {
                *missing.entry(reason).or_insert(0) += 1;
                m.measure.tokens
            }
            OutlineTokens::NotCounted => m.measure.tokens,
        };
    }
    (Some(total), missing)
}
