//! [`SpecStore`]: a specs root and the measurements cached for it. Each public call
//! sees the root as it is now (it may change between calls: the folder listing is
//! reused only while provably unchanged, see [`super::discovery`]), measures what it
//! needs in parallel through the cache, and hands the measurements to the shaping steps.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::budget;
use super::discovery::DiscoveryCache;
use super::error::SpecError;
use super::layout::{Discovered, SpecFile, SpecFolder, find_all_spec_files, find_spec_files};
use super::listing;
use super::measure::{Breakdown, SpecWords};
use super::output::{ModelUsed, SpecBudget, SpecListing, SpecReport, SpecRow, SpecTokens};
use super::query::{SortOrder, SpecQuery};
use super::report::{FileTokens, Performance, budget_fit, recommendation};
use super::resolve::{find_file, resolve};
use super::scan::{MeasureCache, Measured, measure_all};
use crate::ResolvedModel;
use crate::answer::Page;
use crate::counter::cost;
use crate::limits;
use crate::scan_control::ScanControl;

/// A specs root and the measurements cached for it.
#[derive(Debug)]
pub struct SpecStore {
    root: PathBuf,
    cache: MeasureCache,
    /// The spec folders, kept between calls while the directories are unchanged.
    folders: DiscoveryCache,
    /// Longest spec name or path a call may give (`--max-name-bytes`).
    max_name_bytes: usize,
}

impl SpecStore {
    /// The root is checked on each call, so it may be created after start-up.
    pub fn new(root: impl Into<PathBuf>) -> SpecStore {
        SpecStore {
            root: root.into(),
            cache: MeasureCache::default(),
            folders: DiscoveryCache::default(),
            max_name_bytes: limits::DEFAULT_MAX_NAME_BYTES,
        }
    }

    /// Refuse spec names and paths longer than `bytes` (default
    /// [`limits::DEFAULT_MAX_NAME_BYTES`]), before anything is resolved or read.
    pub fn with_name_limit(mut self, bytes: usize) -> SpecStore {
        self.max_name_bytes = bytes;
        self
    }

    /// Listings of the root read from disk rather than reused.
    pub fn folder_reads(&self) -> u64 {
        self.folders.reads()
    }

    /// Files measured and remembered.
    pub fn cached_files(&self) -> usize {
        self.cache.len()
    }

    /// `spec-tokens`: one spec (or file) when `query.spec_path` is set, else a listing.
    pub fn spec_tokens(
        &self,
        query: &SpecQuery,
        model: &ResolvedModel<'_>,
        control: &dyn ScanControl,
    ) -> Result<SpecTokens, SpecError> {
        if let Some(path) = &query.spec_path {
            limits::check_name("specPath", path, self.max_name_bytes)?;
        }
        let (root, found) = self.open()?;
        match query.spec_path.as_deref() {
            Some(path) => {
                let target = resolve(&found.specs, &root, path)?;
                let mut spec = found.specs[target.spec].clone();
                find_spec_files(&root, &mut spec);
                let file = target
                    .file
                    .map(|name| find_file(&spec, &name))
                    .transpose()?;
                self.report(&spec, file, query, model, control)
                    .map(|r| SpecTokens::Spec(Box::new(r)))
            }
            None => {
                let mut specs = found.specs.clone();
                find_all_spec_files(&root, &mut specs);
                self.listing(&specs, found.notes.clone(), query, model, control)
                    .map(|l| SpecTokens::Listing(Box::new(l)))
            }
        }
    }

    /// `spec-budget`: each spec's cost with and without sub-specs against `budget`,
    /// and the largest README-first plan that fits.
    pub fn spec_budget(
        &self,
        queries: &[String],
        budget: u64,
        model: &ResolvedModel<'_>,
        control: &dyn ScanControl,
    ) -> Result<SpecBudget, SpecError> {
        limits::check_spec_count(queries.len())?;
        for query in queries {
            limits::check_name("specs", query, self.max_name_bytes)?;
        }
        let (root, found) = self.open()?;
        let mut notes = Vec::new();
        let chosen = choose(&root, &found.specs, queries, &mut notes)?;
        let files: Vec<&SpecFile> = chosen.iter().flat_map(|s| &s.files).collect();
        let measured = measure_all(&files, model.tokenizer(), &self.cache, control)
            .ok_or(SpecError::Cancelled)?;
        let mut measured = measured.into_iter();
        let costs = chosen
            .iter()
            .map(|spec| budget::spec_cost(spec, &mut measured, &mut notes))
            .collect();
        Ok(budget::answer(costs, budget, model, notes))
    }

    /// The canonical root and the spec folders under it (without their files).
    fn open(&self) -> Result<(PathBuf, Arc<Discovered>), SpecError> {
        let shown = self.root.display().to_string();
        let root = crate::safe_open::canonical_dir(&self.root).map_err(|reason| {
            SpecError::RootNotFound {
                path: shown.clone(),
                reason,
            }
        })?;
        let found = self
            .folders
            .discover(&root)
            .map_err(|e| SpecError::RootNotFound {
                path: shown,
                reason: e.to_string(),
            })?;
        Ok((root, found))
    }

    fn report(
        &self,
        spec: &SpecFolder,
        file: Option<&SpecFile>,
        query: &SpecQuery,
        model: &ResolvedModel<'_>,
        control: &dyn ScanControl,
    ) -> Result<SpecReport, SpecError> {
        let (scope, files): (&'static str, Vec<&SpecFile>) = match file {
            Some(file) => ("file", vec![file]),
            None if query.include_sub_specs => {
                ("readme_and_sub_specs", spec.files.iter().collect())
            }
            // Sub-specs are measured anyway (cheap, cached) to say what was left out.
            None => ("readme", spec.files.iter().collect()),
        };
        let measured = measure_all(&files, model.tokenizer(), &self.cache, control)
            .ok_or(SpecError::Cancelled)?;
        let mut notes: Vec<String> = spec.skipped.clone();
        // A spec asked for whole must have a README: without one (or with one that
        // cannot be read) its total would say "costs nothing".
        if scope != "file" && spec.readme().is_none() {
            return Err(SpecError::FileUnreadable {
                path: format!("{}/README.md", spec.id),
                reason: "missing: the spec folder has no README.md".into(),
            });
        }
        let (mut included, mut excluded) = (Vec::new(), Vec::new());
        let mut breakdown = Breakdown::default();
        let (mut title, mut status) = (None, None);
        for (file, m) in files.iter().zip(&measured) {
            // Notes and errors name the file from the root; `files[].path` is
            // relative to the spec folder (the answer's `spec` names it).
            let shown = format!("{}/{}", spec.id, file.name);
            let counted = scope != "readme" || file.is_readme();
            let text = match m.as_ref() {
                Ok(text) => text,
                // The file asked for, the README, or a counted sub-spec that is
                // broken (not merely binary or oversize, which are skipped on
                // purpose): the total would be wrong, so the call fails.
                Err(issue)
                    if scope == "file" || file.is_readme() || (counted && !issue.is_skip()) =>
                {
                    return Err(SpecError::FileUnreadable {
                        path: shown,
                        reason: SpecWords(issue).to_string(),
                    });
                }
                Err(issue) => {
                    notes.push(format!("{shown}: {}; skipped", SpecWords(issue)));
                    continue;
                }
            };
            let row = FileTokens {
                path: file.name.clone(),
                tokens: text.tokens,
                lines: text.lines,
            };
            if !counted {
                excluded.push(row);
                continue;
            }
            if file.is_readme() || scope == "file" {
                (title, status) = text.title_and_status(&shown, &mut notes);
            }
            breakdown.add(&text.breakdown);
            included.push(row);
        }
        let total: u64 = included.iter().map(|f| f.tokens).sum();
        let model_entry = model.entry();
        Ok(SpecReport {
            spec: spec.id.clone(),
            title,
            status,
            model: ModelUsed::of(model),
            scope,
            total,
            budget: query.budget.map(|b| budget_fit(&included, b)),
            files: included,
            excluded_sub_specs: excluded,
            recommendation: recommendation(total),
            breakdown: query.detailed.then_some(breakdown),
            performance: query.detailed.then(|| Performance::of(total)),
            context_window: model_entry.map(|m| m.context_window),
            estimated_input_cost_usd: model_entry.and_then(|m| cost(total as usize, m)),
            notes,
        })
    }

    fn listing(
        &self,
        specs: &[SpecFolder],
        notes: Vec<String>,
        query: &SpecQuery,
        model: &ResolvedModel<'_>,
        control: &dyn ScanControl,
    ) -> Result<SpecListing, SpecError> {
        let counted = |file: &SpecFile| query.include_sub_specs || file.is_readme();
        let files: Vec<&SpecFile> = specs
            .iter()
            .flat_map(|s| s.files.iter().filter(|f| counted(f)))
            .collect();
        let measured = measure_all(&files, model.tokenizer(), &self.cache, control)
            .ok_or(SpecError::Cancelled)?;
        let mut measured = measured.iter();
        let mut rows: Vec<SpecRow> = specs
            .iter()
            .map(|spec| {
                let mine: Vec<(&SpecFile, &Measured)> = spec
                    .files
                    .iter()
                    .filter(|f| counted(f))
                    .filter_map(|f| measured.next().map(|m| (f, m)))
                    .collect();
                listing::row(spec, &mine, query.detailed)
            })
            .collect();
        let scanned = rows.len();
        rows.retain(|r| {
            query.min_tokens.is_none_or(|min| r.total >= min)
                && query.max_tokens.is_none_or(|max| r.total <= max)
        });
        match query.sort {
            SortOrder::Tokens => {
                rows.sort_by(|a, b| b.total.cmp(&a.total).then_with(|| a.spec.cmp(&b.spec)))
            }
            SortOrder::Name => rows.sort_by(|a, b| a.spec.cmp(&b.spec)),
        }
        let summary = listing::summarize(&rows, query.detailed);
        let page = Page::of(
            0,
            query.limit.map_or(rows.len(), |n| n.min(rows.len())),
            rows.len(),
        );
        if let Some(limit) = query.limit {
            rows.truncate(limit);
        }
        Ok(SpecListing {
            specs_dir: self.root.display().to_string(),
            model: ModelUsed::of(model),
            include_sub_specs: query.include_sub_specs,
            sort: query.sort,
            summary,
            scanned,
            shown: rows.len(),
            page,
            specs: rows,
            notes,
        })
    }
}

/// The specs `queries` name, in order and each once (a repeat is noted), with their
/// files loaded.
fn choose(
    root: &Path,
    specs: &[SpecFolder],
    queries: &[String],
    notes: &mut Vec<String>,
) -> Result<Vec<SpecFolder>, SpecError> {
    let mut chosen: Vec<usize> = Vec::new();
    for query in queries {
        let index = resolve(specs, root, query)?.spec;
        if chosen.contains(&index) {
            notes.push(format!(
                "`{query}` names {} again; counted once",
                specs[index].id
            ));
        } else {
            chosen.push(index);
        }
    }
    Ok(chosen
        .into_iter()
        .map(|index| {
            let mut spec = specs[index].clone();
            find_spec_files(root, &mut spec);
            spec
        })
        .collect())
}
