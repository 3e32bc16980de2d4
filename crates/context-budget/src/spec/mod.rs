//! Spec documents: how many tokens a spec costs, with or without its sub-spec files,
//! what it is made of, and what fits a budget.
//!
//! A specs root holds folders `NNN-name/` with a `README.md` and sub-spec files
//! (`DESIGN.md`, ...), possibly one level down in group folders (`archived/`).
//! [`SpecStore`] finds them ([`layout`]), resolves what a caller names ([`resolve`]),
//! measures files in parallel with a cache ([`scan`], [`measure`]) and shapes the
//! answers ([`report`]). It reads files only inside the root it was given.

pub mod layout;
pub mod markdown;
pub mod measure;
pub mod report;
pub mod resolve;
pub mod scan;

use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::Serialize;

use crate::ResolvedModel;
use crate::counter::usd;
use layout::{SpecFile, SpecFolder, discover, load_all_files, load_files};
use markdown::FrontmatterState;
use measure::{Breakdown, FileIssue};
use report::{
    BudgetFit, FileTokens, LargestSpec, Level, LevelCounts, ListingSummary, LoadPlan, Performance,
    SpecCost, budget_fit, plan, recommendation,
};
use resolve::{find_file, resolve};
use scan::{MeasureCache, Measured, ScanControl, measure_all};

/// Why a spec request failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SpecError {
    #[error("specs root `{path}` cannot be used: {reason}")]
    RootNotFound { path: String, reason: String },
    #[error("`{query}` is not a usable spec path: {reason}")]
    InvalidQuery { query: String, reason: String },
    #[error("`{query}` points outside the specs root")]
    OutsideRoot { query: String },
    #[error("no spec matches `{query}`")]
    NotFound { query: String, closest: Vec<String> },
    #[error("`{query}` matches more than one spec: {}", candidates.join(", "))]
    Ambiguous {
        query: String,
        candidates: Vec<String>,
    },
    #[error("spec `{spec}` has no file `{file}`")]
    FileNotFound {
        spec: String,
        file: String,
        available: Vec<String>,
    },
    #[error("`{path}` cannot be measured: {reason}")]
    FileUnreadable { path: String, reason: String },
    #[error("the scan was cancelled")]
    Cancelled,
}

/// How a listing is ordered.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, serde::Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SortOrder {
    /// Largest first (ties by name).
    #[default]
    Tokens,
    /// By spec id.
    Name,
}

/// What `spec-tokens` was asked.
#[derive(Debug, Clone, Default)]
pub struct SpecQuery {
    /// A spec, sub-spec file or path; `None` lists every spec.
    pub spec_path: Option<String>,
    pub include_sub_specs: bool,
    pub detailed: bool,
    pub budget: Option<u64>,
    pub sort: SortOrder,
    pub min_tokens: Option<u64>,
    pub max_tokens: Option<u64>,
    /// Most rows a listing returns (the summary always covers every match).
    pub limit: Option<usize>,
}

/// The model a measurement was made for.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ModelUsed {
    pub model: String,
    pub encoding: &'static str,
    pub exact: bool,
}

impl ModelUsed {
    fn of(model: &ResolvedModel<'_>) -> ModelUsed {
        ModelUsed {
            model: model.name().to_string(),
            encoding: model.tokenizer().name(),
            exact: model.tokenizer().is_exact(),
        }
    }
}

/// One spec (or one of its files) measured.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct SpecReport {
    /// The spec's id: its folder path relative to the root.
    pub spec: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    #[serde(flatten)]
    pub model: ModelUsed,
    /// `readme`, `readme_and_sub_specs`, or `file` (one file was asked for).
    pub scope: &'static str,
    pub total: u64,
    pub files: Vec<FileTokens>,
    /// Sub-specs not counted in `total` (ask with `includeSubSpecs` to include them).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub excluded_sub_specs: Vec<FileTokens>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recommendation: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub breakdown: Option<Breakdown>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub performance: Option<Performance>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget: Option<BudgetFit>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context_window: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub estimated_input_cost_usd: Option<f64>,
    /// Files skipped and problems found (binary files, invalid frontmatter, ...).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// One row of a listing.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct SpecRow {
    pub spec: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    pub total: u64,
    /// Files counted in `total`.
    pub files: usize,
    pub level: Level,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub breakdown: Option<Breakdown>,
    /// What is wrong with this spec (missing README, invalid frontmatter, ...);
    /// `total` still counts every file that could be measured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// Every spec under the root.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct SpecListing {
    pub specs_dir: String,
    #[serde(flatten)]
    pub model: ModelUsed,
    pub include_sub_specs: bool,
    pub sort: SortOrder,
    /// Over every spec that passed the filters, not only the rows shown.
    pub summary: ListingSummary,
    /// Specs found under the root before filtering.
    pub scanned: usize,
    pub shown: usize,
    /// True when `limit` cut rows off.
    pub truncated: bool,
    pub specs: Vec<SpecRow>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// `spec-tokens` answers one spec or a listing.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum SpecTokens {
    Spec(Box<SpecReport>),
    Listing(Box<SpecListing>),
}

/// Several specs against one budget.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct SpecBudget {
    pub budget: u64,
    #[serde(flatten)]
    pub model: ModelUsed,
    pub specs: Vec<SpecCost>,
    pub total_readme_only: u64,
    pub total_full: u64,
    /// Everything, sub-specs included, fits.
    pub all_fit: bool,
    pub all_fit_readme_only: bool,
    pub plan: LoadPlan,
    pub suggestion: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// A specs root and the measurements cached for it.
#[derive(Debug)]
pub struct SpecStore {
    root: PathBuf,
    cache: MeasureCache,
}

impl SpecStore {
    /// The root is checked on each call, so it may be created after start-up.
    pub fn new(root: impl Into<PathBuf>) -> SpecStore {
        SpecStore {
            root: root.into(),
            cache: MeasureCache::default(),
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
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
        let (root, mut specs, notes) = self.open()?;
        match query.spec_path.as_deref() {
            Some(path) => {
                let target = resolve(&specs, &root, path)?;
                let spec = &mut specs[target.spec];
                load_files(&root, spec);
                let file = target.file.map(|name| find_file(spec, &name)).transpose()?;
                self.report(spec, file, query, model, control)
                    .map(|r| SpecTokens::Spec(Box::new(r)))
            }
            None => {
                load_all_files(&root, &mut specs);
                self.listing(&specs, notes, query, model, control)
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
        let (root, mut specs, _) = self.open()?;
        let mut chosen: Vec<usize> = Vec::new();
        let mut notes = Vec::new();
        for query in queries {
            let index = resolve(&specs, &root, query)?.spec;
            if chosen.contains(&index) {
                notes.push(format!(
                    "`{query}` names {} again; counted once",
                    specs[index].id
                ));
            } else {
                load_files(&root, &mut specs[index]);
                chosen.push(index);
            }
        }
        let chosen: Vec<&SpecFolder> = chosen.iter().map(|&i| &specs[i]).collect();
        let files: Vec<&SpecFile> = chosen.iter().flat_map(|s| &s.files).collect();
        let measured = measure_all(&files, model.tokenizer(), &self.cache, control)
            .ok_or(SpecError::Cancelled)?;
        let mut measured = measured.into_iter();
        let mut costs = Vec::new();
        for spec in &chosen {
            let mut cost = SpecCost {
                spec: spec.id.clone(),
                readme_tokens: 0,
                full_tokens: 0,
                sub_specs: Vec::new(),
                readme_path: None,
            };
            for file in &spec.files {
                let m = measured.next().unwrap_or_else(|| {
                    std::sync::Arc::new(Err(FileIssue::Unreadable("missing".into())))
                });
                let path = format!("{}/{}", spec.id, file.name);
                let Ok(text) = m.as_ref() else {
                    notes.push(format!(
                        "{path}: {}",
                        m.as_ref()
                            .as_ref()
                            .err()
                            .map(ToString::to_string)
                            .unwrap_or_default()
                    ));
                    continue;
                };
                cost.full_tokens += text.tokens;
                if file.is_readme() {
                    cost.readme_tokens = text.tokens;
                    cost.readme_path = Some(path);
                } else {
                    cost.sub_specs.push(FileTokens {
                        path,
                        tokens: text.tokens,
                        lines: text.lines,
                    });
                }
            }
            if cost.readme_path.is_none() {
                notes.push(format!("{}: no measurable README.md", spec.id));
            }
            costs.push(cost);
        }
        let total_readme_only: u64 = costs.iter().map(|c| c.readme_tokens).sum();
        let total_full: u64 = costs.iter().map(|c| c.full_tokens).sum();
        let plan = plan(&costs, budget);
        let suggestion = if total_full <= budget {
            format!(
                "Everything fits: load all {} specs with their sub-specs ({total_full} tokens).",
                costs.len()
            )
        } else if total_readme_only <= budget {
            format!(
                "All sub-specs together are over by {}: load every README ({total_readme_only} tokens) \
                 plus the plan's sub-specs ({} tokens in all).",
                total_full - budget,
                plan.tokens
            )
        } else {
            format!(
                "Even the READMEs alone are over by {}: the plan loads the READMEs that fit, in the \
                 order given ({} tokens).",
                total_readme_only - budget,
                plan.tokens
            )
        };
        Ok(SpecBudget {
            budget,
            model: ModelUsed::of(model),
            all_fit: total_full <= budget,
            all_fit_readme_only: total_readme_only <= budget,
            specs: costs,
            total_readme_only,
            total_full,
            plan,
            suggestion,
            notes,
        })
    }

    /// The canonical root and what is under it.
    fn open(&self) -> Result<(PathBuf, Vec<SpecFolder>, Vec<String>), SpecError> {
        let shown = self.root.display().to_string();
        let root = std::fs::canonicalize(&self.root).map_err(|e| SpecError::RootNotFound {
            path: shown.clone(),
            reason: e.to_string(),
        })?;
        if !root.is_dir() {
            return Err(SpecError::RootNotFound {
                path: shown,
                reason: "not a directory".into(),
            });
        }
        let (specs, notes) = discover(&root).map_err(|e| SpecError::RootNotFound {
            path: shown,
            reason: e.to_string(),
        })?;
        Ok((root, specs, notes))
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
        let (mut included, mut excluded) = (Vec::new(), Vec::new());
        let mut breakdown = Breakdown::default();
        let (mut title, mut status) = (None, None);
        for (file, m) in files.iter().zip(&measured) {
            let path = format!("{}/{}", spec.id, file.name);
            let text = match m.as_ref() {
                Ok(text) => text,
                Err(issue) if scope == "file" && !issue.is_skip() => {
                    return Err(SpecError::FileUnreadable {
                        path,
                        reason: issue.to_string(),
                    });
                }
                Err(issue) => {
                    notes.push(format!("{path}: {issue}"));
                    continue;
                }
            };
            let row = FileTokens {
                path: path.clone(),
                tokens: text.tokens,
                lines: text.lines,
            };
            if scope == "readme" && !file.is_readme() {
                excluded.push(row);
                continue;
            }
            if file.is_readme() || scope == "file" {
                (title, status) = describe(text, &path, &mut notes);
            }
            breakdown.add(&text.breakdown);
            included.push(row);
        }
        if spec.readme().is_none() && scope != "file" {
            notes.push(format!("{}: no README.md", spec.id));
        }
        let total: u64 = included.iter().map(|f| f.tokens).sum();
        let model_spec = model.entry();
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
            context_window: model_spec.map(|m| m.context_window),
            estimated_input_cost_usd: model_spec.map(|m| usd(total as usize, m.input_usd_per_mtok)),
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
                row(spec, &mine, query.detailed)
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
        let summary = summarize(&rows, query.detailed);
        let truncated = query.limit.is_some_and(|limit| rows.len() > limit);
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
            truncated,
            specs: rows,
            notes,
        })
    }
}

/// Title and status from a main file, noting frontmatter problems.
fn describe(
    text: &measure::TextMeasure,
    path: &str,
    notes: &mut Vec<String>,
) -> (Option<String>, Option<String>) {
    match &text.frontmatter {
        FrontmatterState::Valid(fm) => (
            fm.title.clone().or_else(|| text.heading.clone()),
            fm.status.clone(),
        ),
        FrontmatterState::Absent => {
            notes.push(format!("{path}: no frontmatter"));
            (text.heading.clone(), None)
        }
        FrontmatterState::Invalid(message) => {
            notes.push(format!("{path}: {message}"));
            (text.heading.clone(), None)
        }
    }
}

/// One listing row; a broken spec becomes a row with an `error`, never a failure.
fn row(spec: &SpecFolder, files: &[(&SpecFile, &Measured)], detailed: bool) -> SpecRow {
    let (mut total, mut counted) = (0u64, 0usize);
    let mut breakdown = Breakdown::default();
    let (mut errors, mut notes) = (Vec::new(), Vec::new());
    let (mut title, mut status) = (None, None);
    for (file, measured) in files {
        match measured.as_ref() {
            Ok(text) => {
                total += text.tokens;
                counted += 1;
                breakdown.add(&text.breakdown);
                if file.is_readme() {
                    let mut found = Vec::new();
                    (title, status) = describe(text, &file.name, &mut found);
                    match &text.frontmatter {
                        FrontmatterState::Invalid(_) => errors.extend(found),
                        _ => notes.extend(found),
                    }
                }
            }
            Err(issue) if issue.is_skip() && !file.is_readme() => {
                notes.push(format!("{}: {issue}", file.name))
            }
            Err(issue) => errors.push(format!("{}: {issue}", file.name)),
        }
    }
    if spec.readme().is_none() {
        errors.push("no README.md".into());
    }
    SpecRow {
        spec: spec.id.clone(),
        title,
        status,
        total,
        files: counted,
        level: Level::of(total),
        breakdown: detailed.then_some(breakdown),
        error: (!errors.is_empty()).then(|| errors.join("; ")),
        notes,
    }
}

fn summarize(rows: &[SpecRow], detailed: bool) -> ListingSummary {
    let mut levels = LevelCounts::default();
    let mut breakdown = Breakdown::default();
    for row in rows {
        levels.add(row.level);
        if let Some(b) = &row.breakdown {
            breakdown.add(b);
        }
    }
    let total_tokens: u64 = rows.iter().map(|r| r.total).sum();
    ListingSummary {
        specs: rows.len(),
        total_tokens,
        average_tokens: if rows.is_empty() {
            0
        } else {
            (total_tokens as f64 / rows.len() as f64).round() as u64
        },
        largest: rows
            .iter()
            .max_by_key(|r| (r.total, std::cmp::Reverse(r.spec.clone())))
            .map(|r| LargestSpec {
                spec: r.spec.clone(),
                total: r.total,
            }),
        levels,
        with_errors: rows.iter().filter(|r| r.error.is_some()).count(),
        breakdown: detailed.then_some(breakdown),
    }
}
