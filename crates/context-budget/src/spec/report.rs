//! What spec measurements are reported as: sizes, performance levels, budget fits,
//! listings and loading plans. Pure functions of numbers, tested without files.

use schemars::JsonSchema;
use serde::Serialize;

use super::measure::Breakdown;

/// How a spec's size affects an agent reading it. Bounds are `lower <= total <
/// upper`: 1999 is excellent, 2000 is good, 3500 is warning, 5000 is problem.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    /// Under 2,000 tokens.
    Excellent,
    /// 2,000 to 3,499.
    Good,
    /// 3,500 to 4,999.
    Warning,
    /// 5,000 and more.
    Problem,
}

impl Level {
    pub fn of(total: u64) -> Level {
        match total {
            0..2000 => Level::Excellent,
            2000..3500 => Level::Good,
            3500..5000 => Level::Warning,
            _ => Level::Problem,
        }
    }

    pub fn effectiveness(self) -> u8 {
        match self {
            Level::Excellent => 100,
            Level::Good => 95,
            Level::Warning => 85,
            Level::Problem => 70,
        }
    }

    pub fn recommendation(self) -> &'static str {
        match self {
            Level::Excellent => "Small enough to load whole.",
            Level::Good => "Fine to load whole.",
            Level::Warning => {
                "Approaching the 5,000-token limit: consider moving detail (design, testing, \
                 examples) into sub-spec files that are loaded on demand."
            }
            Level::Problem => {
                "Over 5,000 tokens: split this spec. Keep README.md an overview and move \
                 sections into sub-spec files; meanwhile load README.md only or one section."
            }
        }
    }
}

/// `detailed` performance figures of one spec.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Performance {
    pub level: Level,
    /// Total / 1,200 tokens (a comfortable spec), rounded to 0.1.
    #[serde(rename = "costMultiplier")]
    pub cost_multiplier: f64,
    /// Expected share of the spec an agent uses well: 100, 95, 85 or 70.
    pub effectiveness: u8,
    pub recommendation: String,
}

impl Performance {
    pub fn of(total: u64) -> Performance {
        let level = Level::of(total);
        Performance {
            level,
            cost_multiplier: (total as f64 / 1200.0 * 10.0).round() / 10.0,
            effectiveness: level.effectiveness(),
            recommendation: level.recommendation().to_string(),
        }
    }
}

/// The top-level recommendation: only for specs at warning level or above.
pub fn recommendation(total: u64) -> Option<String> {
    let level = Level::of(total);
    matches!(level, Level::Warning | Level::Problem).then(|| level.recommendation().to_string())
}

/// One measured file.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct FileTokens {
    /// Path relative to the spec's folder, e.g. `DESIGN.md` (the answer's `spec`
    /// names the folder), as LeanSpec answers it.
    pub path: String,
    pub tokens: u64,
    pub lines: u64,
}

/// Whether what was measured fits a token budget, and what would.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct BudgetFit {
    pub budget: u64,
    pub fits: bool,
    /// Tokens over the budget (0 when it fits).
    pub over_by: u64,
    /// The files that fit, README first, then the smallest sub-specs.
    pub fitting_files: Vec<String>,
    pub fitting_tokens: u64,
    pub suggestion: String,
}

/// Fit `files` (README first) into `budget`: README, then sub-specs smallest first.
pub fn budget_fit(files: &[FileTokens], budget: u64) -> BudgetFit {
    let total: u64 = files.iter().map(|f| f.tokens).sum();
    let fits = total <= budget;
    let (mut fitting, mut used) = (Vec::new(), 0u64);
    let mut rest: Vec<&FileTokens> = files.iter().skip(1).collect();
    rest.sort_by_key(|f| f.tokens);
    let mut left_out = Vec::new();
    if let Some(first) = files.first().filter(|f| f.tokens <= budget) {
        fitting.push(first.path.clone());
        used = first.tokens;
        for file in rest {
            if used + file.tokens <= budget {
                fitting.push(file.path.clone());
                used += file.tokens;
            } else {
                left_out.push(format!("{} ({} tokens)", file.path, file.tokens));
            }
        }
    }
    let suggestion = match files.first() {
        _ if fits => format!("Fits, with {} tokens to spare.", budget - total),
        None => "Nothing to load.".into(),
        Some(first) if first.tokens > budget => format!(
            "Even {} alone ({} tokens) is over the budget: load one of its sections, or raise \
             the budget to at least {}.",
            first.path, first.tokens, first.tokens
        ),
        Some(_) => format!(
            "Load {} ({} tokens); leave out {}.",
            fitting.join(" + "),
            used,
            left_out.join(", ")
        ),
    };
    BudgetFit {
        budget,
        fits,
        over_by: total.saturating_sub(budget),
        fitting_files: fitting,
        fitting_tokens: used,
        suggestion,
    }
}

/// How a spec is loaded in a plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LoadMode {
    /// README and every sub-spec.
    Full,
    /// README and some sub-specs.
    Partial,
    ReadmeOnly,
    /// Not even the README fits.
    None,
}

/// One spec's costs, as input to and output of planning.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct SpecCost {
    pub spec: String,
    /// README.md alone.
    pub readme_tokens: u64,
    /// README.md and every sub-spec.
    pub full_tokens: u64,
    pub sub_specs: Vec<FileTokens>,
    #[serde(skip)]
    pub readme_path: Option<String>,
}

/// One spec's part of a plan.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct PlannedSpec {
    pub spec: String,
    pub load: LoadMode,
    pub tokens: u64,
    pub files: Vec<String>,
}

/// The largest set of files that fits, built README-first.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct LoadPlan {
    pub specs: Vec<PlannedSpec>,
    pub tokens: u64,
    pub remaining: u64,
}

/// Plan loading `costs` (in the caller's priority order) into `budget`:
///
/// 1. every README that fits, in order (a spec whose README does not fit is skipped
///    and later ones are still tried): all specs are represented before any detail;
/// 2. specs upgraded to full, in order, when all their sub-specs fit;
/// 3. remaining space filled with single sub-specs, largest first.
///
/// Greedy, so predictable; it can miss a tighter packing, never the budget.
pub fn plan(costs: &[SpecCost], budget: u64) -> LoadPlan {
    let mut remaining = budget;
    let mut planned: Vec<PlannedSpec> = costs
        .iter()
        .map(|cost| {
            // A spec without a measurable README has nothing to load, not a free one.
            let fits = cost.readme_path.is_some() && cost.readme_tokens <= remaining;
            if fits {
                remaining -= cost.readme_tokens;
            }
            PlannedSpec {
                spec: cost.spec.clone(),
                load: if fits {
                    LoadMode::ReadmeOnly
                } else {
                    LoadMode::None
                },
                tokens: if fits { cost.readme_tokens } else { 0 },
                files: cost.readme_path.iter().filter(|_| fits).cloned().collect(),
            }
        })
        .collect();
    for (cost, planned) in costs.iter().zip(&mut planned) {
        let extra = cost.full_tokens - cost.readme_tokens;
        if planned.load == LoadMode::ReadmeOnly && extra <= remaining && !cost.sub_specs.is_empty()
        {
            remaining -= extra;
            planned.load = LoadMode::Full;
            planned.tokens = cost.full_tokens;
            planned
                .files
                .extend(cost.sub_specs.iter().map(|f| f.path.clone()));
        }
    }
    let mut singles: Vec<(usize, &FileTokens)> = costs
        .iter()
        .enumerate()
        .filter(|(i, _)| planned[*i].load == LoadMode::ReadmeOnly)
        .flat_map(|(i, c)| c.sub_specs.iter().map(move |f| (i, f)))
        .collect();
    singles.sort_by_key(|(_, f)| std::cmp::Reverse(f.tokens));
    for (i, file) in singles {
        if file.tokens <= remaining {
            remaining -= file.tokens;
            planned[i].load = LoadMode::Partial;
            planned[i].tokens += file.tokens;
            planned[i].files.push(file.path.clone());
        }
    }
    LoadPlan {
        tokens: budget - remaining,
        remaining,
        specs: planned,
    }
}

/// Totals over a listing.
#[derive(Debug, Clone, PartialEq, Default, Serialize, JsonSchema)]
pub struct ListingSummary {
    pub specs: usize,
    pub total_tokens: u64,
    pub average_tokens: u64,
    pub largest: Option<LargestSpec>,
    /// Rows graded at each level; a row with an `error` has no level and is not here.
    pub levels: LevelCounts,
    /// Rows with an `error` (not graded).
    pub with_errors: usize,
    /// Sum of the rows' breakdowns (`detailed` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub breakdown: Option<Breakdown>,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct LargestSpec {
    pub spec: String,
    pub total: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, JsonSchema)]
pub struct LevelCounts {
    pub excellent: usize,
    pub good: usize,
    pub warning: usize,
    pub problem: usize,
}

impl LevelCounts {
    pub fn add(&mut self, level: Level) {
        match level {
            Level::Excellent => self.excellent += 1,
            Level::Good => self.good += 1,
            Level::Warning => self.warning += 1,
            Level::Problem => self.problem += 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &str, tokens: u64) -> FileTokens {
        FileTokens {
            path: path.into(),
            tokens,
            lines: 1,
        }
    }

    #[test]
    fn levels_include_their_lower_bound() {
        assert_eq!(Level::of(0), Level::Excellent);
        assert_eq!(Level::of(1999), Level::Excellent);
        assert_eq!(Level::of(2000), Level::Good);
        assert_eq!(Level::of(3499), Level::Good);
        assert_eq!(Level::of(3500), Level::Warning);
        assert_eq!(Level::of(4999), Level::Warning);
        assert_eq!(Level::of(5000), Level::Problem);
        assert_eq!(Performance::of(5000).effectiveness, 70);
        assert_eq!(Performance::of(1999).effectiveness, 100);
    }

    #[test]
    fn cost_multiplier_is_total_over_1200_to_one_decimal() {
        assert_eq!(Performance::of(1200).cost_multiplier, 1.0);
        assert_eq!(Performance::of(3000).cost_multiplier, 2.5);
        assert_eq!(Performance::of(1259).cost_multiplier, 1.0);
        assert_eq!(Performance::of(1260).cost_multiplier, 1.1);
        assert_eq!(Performance::of(0).cost_multiplier, 0.0);
    }

    #[test]
    fn recommendations_start_at_3500() {
        assert_eq!(recommendation(3499), None);
        assert!(recommendation(3500).is_some_and(|r| r.contains("sub-spec")));
        assert!(recommendation(5000).is_some_and(|r| r.contains("split")));
    }

    #[test]
    fn budget_fit_loads_readme_then_smallest_sub_specs() {
        let files = [
            file("s/README.md", 1000),
            file("s/DESIGN.md", 3000),
            file("s/TESTING.md", 500),
        ];
        let fit = budget_fit(&files, 2000);
        assert!(!fit.fits);
        assert_eq!(fit.over_by, 2500);
        assert_eq!(fit.fitting_files, ["s/README.md", "s/TESTING.md"]);
        assert_eq!(fit.fitting_tokens, 1500);
        assert!(
            fit.suggestion
                .contains("leave out s/DESIGN.md (3000 tokens)"),
            "{}",
            fit.suggestion
        );

        let fits = budget_fit(&files, 4500);
        assert!(fits.fits);
        assert_eq!(fits.over_by, 0);
        assert!(fits.suggestion.contains("0 tokens to spare"));

        let too_small = budget_fit(&files, 999);
        assert!(too_small.fitting_files.is_empty());
        assert!(
            too_small.suggestion.contains("alone"),
            "{}",
            too_small.suggestion
        );
    }

    fn cost(spec: &str, readme: u64, subs: &[u64]) -> SpecCost {
        let sub_specs: Vec<FileTokens> = subs
            .iter()
            .enumerate()
            .map(|(i, &t)| file(&format!("{spec}/S{i}.md"), t))
            .collect();
        SpecCost {
            spec: spec.into(),
            readme_tokens: readme,
            full_tokens: readme + subs.iter().sum::<u64>(),
            sub_specs,
            readme_path: Some(format!("{spec}/README.md")),
        }
    }

    #[test]
    fn plan_puts_every_readme_before_any_detail() {
        let costs = [
            cost("a", 1000, &[4000]),
            cost("b", 1000, &[500]),
            cost("c", 1000, &[]),
        ];
        let p = plan(&costs, 4000);
        let modes: Vec<LoadMode> = p.specs.iter().map(|s| s.load).collect();
        // a's 4000-token sub-spec cannot fit once every README is in; b's can.
        assert_eq!(
            modes,
            [LoadMode::ReadmeOnly, LoadMode::Full, LoadMode::ReadmeOnly]
        );
        assert_eq!(p.tokens, 3500);
        assert_eq!(p.remaining, 500);
        assert!(p.tokens <= 4000);
    }

    #[test]
    fn plan_skips_a_readme_that_does_not_fit_and_fills_with_single_files() {
        let costs = [
            cost("a", 5000, &[]),
            cost("b", 1000, &[800, 300, 2000]),
            cost("c", 500, &[]),
        ];
        let p = plan(&costs, 2700);
        assert_eq!(p.specs[0].load, LoadMode::None);
        assert_eq!(p.specs[1].load, LoadMode::Partial);
        assert_eq!(p.specs[1].files, ["b/README.md", "b/S0.md", "b/S1.md"]);
        assert_eq!(p.specs[2].load, LoadMode::ReadmeOnly);
        assert_eq!(p.tokens, 1000 + 500 + 800 + 300);
    }
}
