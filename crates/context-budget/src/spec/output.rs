//! What the spec engine answers: one spec's report, a listing, a budget plan. These
//! are the tools' structured results, so field names and order are the wire format.

use crate::answer::Page;
use schemars::JsonSchema;
use serde::Serialize;

use super::measure::Breakdown;
use super::query::SortOrder;
use super::report::{
    BudgetFit, FileTokens, Level, ListingSummary, LoadPlan, Performance, SpecCost,
};
use crate::ResolvedModel;

/// The model a measurement was made for.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ModelUsed {
    pub model: String,
    /// The name asked for, when it is not `model` (a dated id, an alias).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requested_model: Option<String>,
    pub encoding: &'static str,
    pub exact: bool,
}

impl ModelUsed {
    pub(super) fn of(model: &ResolvedModel<'_>) -> ModelUsed {
        ModelUsed {
            model: model.name().to_string(),
            requested_model: model.requested_if_other(),
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
    /// Absent when the row has an `error`: a spec whose files could not all be
    /// measured has no honest grade (its total would look cheap).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub level: Option<Level>,
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
    /// This page of `specs`: cut by `limit` and by the server's answer limit; `next`
    /// is the `offset` for the rows after it.
    #[serde(flatten)]
    pub page: Page,
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
    /// This page of `specs` (each spec's costs; `plan` always covers all of them):
    /// cut by the server's answer limit; `next` is the `offset` for the rest.
    #[serde(flatten)]
    pub page: Page,
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
