//! [`FileStore`]: the measurement cache and limits behind both file tools, and the
//! two tools as named steps: walk, measure ([`super::measure`]), then shape the
//! rows ([`super::output`]) or pack the text ([`super::load`]).

use std::sync::Arc;

use super::error::FilesError;
use super::load::{self, Packing, Reserve};
use super::measure::{FileMeasure, Measured, Measurer, Reading, walk_while_loading};
use super::output::{FileRow, cap_skipped, folder_rollup, sort_rows};
use super::output::{FileTokens, FilesModel, LoadedFiles, WindowShare};
use super::query::{FileLimits, FileQuery, FileSort, LoadRequest};
use super::roots::{Roots, Target, resolve};
use super::walk::{self, Filters, WalkOptions, collect};
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
        let walked = walk_while_loading(tokenizer, || self.walk(roots, query, control))?;
        let measurer = self.measurer(roots, tokenizer, control);
        let (measured, mut skipped) =
            measurer.measure(walked.candidates, Reading::Count, walked.entries)?;
        skipped.splice(0..0, walked.skipped);

        let mut rows = file_rows(roots, &measured);
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
            files_measured: measured.len(),
            bytes: measured.iter().map(|m| m.measure.bytes).sum(),
            lines: measured.iter().map(|m| m.measure.lines).sum(),
            window: WindowShare::of(model, total),
            sort,
            page,
            files: rows,
            folders,
            skipped,
            skipped_counts,
            excluded: walked.excluded,
            cached: measured.iter().filter(|m| m.cached).count(),
        })
    }

    /// `load-files`: the files `query` reaches, packed into `request.budget` tokens.
    pub fn load_files(
        &self,
        roots: &Roots,
        query: &FileQuery,
        request: &LoadRequest,
        model: &ResolvedModel<'_>,
        control: &dyn ScanControl,
    ) -> Result<LoadedFiles, FilesError> {
        let budget = load::budget(request, model)?;
        let tokenizer = model.tokenizer();
        let walked = walk_while_loading(tokenizer, || self.walk(roots, query, control))?;
        let measurer = self.measurer(roots, tokenizer, control);
        let (mut measured, mut skipped) =
            measurer.measure(walked.candidates, load::reading(request), walked.entries)?;
        skipped.splice(0..0, walked.skipped);
        let reserve = Reserve::of(
            request,
            model,
            roots,
            budget,
            &measured,
            &skipped,
            &walked.excluded,
        )?;
        let fit_by_bytes = load::all_fit_by_bytes(&measured, request, tokenizer, &reserve);
        if !fit_by_bytes.1 {
            measurer.count_missing(&mut measured)?;
        }
        load::order(&mut measured, request.order);
        let mut packing = Packing::new(request, &measurer, (budget.0, reserve), fit_by_bytes);
        packing.pack(&measurer, &mut measured, walked.entries, &mut skipped)?;
        packing.finish(model, budget.1, skipped, walked.excluded)
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
        }
    }

    /// The candidate files `query` names: each path resolved inside the roots
    /// (`.` meaning every root), then walked with the filters.
    /// Bound the call's own paths and globs before any is compiled or walked: 100,000
    /// `exclude` globs (a request of a few MB) took 8.9 s and 1.4 GB to compile.
    fn check_patterns(&self, query: &FileQuery) -> Result<(), FilesError> {
        let lists = [
            ("paths", &query.paths),
            ("include", &query.include),
            ("exclude", &query.exclude),
        ];
        let count: usize = lists.iter().map(|(_, list)| list.len()).sum();
        if count > self.limits.max_patterns {
            return Err(FilesError::TooManyPatterns {
                count,
                limit: self.limits.max_patterns,
            });
        }
        for (field, list) in lists {
            if let Some(long) = list
                .iter()
                .find(|p| p.len() > self.limits.max_pattern_bytes)
            {
                return Err(FilesError::PatternTooLong {
                    field,
                    bytes: long.len(),
                    limit: self.limits.max_pattern_bytes,
                });
            }
        }
        Ok(())
    }

    fn walk(
        &self,
        roots: &Roots,
        query: &FileQuery,
        control: &dyn ScanControl,
    ) -> Result<walk::Walked, FilesError> {
        self.check_patterns(query)?;
        let paths: Vec<&str> = if query.paths.is_empty() {
            vec!["."]
        } else {
            query.paths.iter().map(String::as_str).collect()
        };
        let mut targets = Vec::new();
        for path in paths {
            match resolve(roots, path)? {
                // `.` (or empty) means every root.
                Target::Existing { relative, .. }
                    if relative.is_empty() && roots.list().len() > 1 =>
                {
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
            &self.limits,
            control,
        )
    }
}

/// One row per measured file, in measured order.
fn file_rows(roots: &Roots, measured: &[Measured]) -> Vec<FileRow> {
    measured
        .iter()
        .map(|m| FileRow {
            path: m.candidate.relative.clone(),
            root: roots.label(m.candidate.root),
            tokens: m.measure.tokens,
            lines: m.measure.lines,
            bytes: m.measure.bytes,
        })
        .collect()
}
