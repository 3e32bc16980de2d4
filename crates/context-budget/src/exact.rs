//! Counts that equal what a provider bills, from outside the engine.
//!
//! Some models have no local tokenizer that matches the provider (Claude): their
//! counts are estimates unless a provider API counts them. The engine stays
//! synchronous and I/O-free by defining the interface ([`ExactCounter`]) and the
//! refinement that uses it ([`refine`]); a server implements the interface over its
//! API client. Every failure becomes the local estimate plus a warning, never an error.

use crate::messages::Message;
use crate::{ModelEntry, ResolvedModel};

/// Exact counts before giving up on confirming a result (each round shrinks it).
pub const MAX_EXACT_ROUNDS: usize = 4;

/// A provider's own token count. Calls may block on the network: callers run the
/// engine on a thread that may block (never an async worker).
pub trait ExactCounter: Send + Sync {
    /// The id to send for `entry` when this counter counts that model, e.g. the
    /// caller's dated id `claude-sonnet-4-5-20250929`; `None` for models it does not
    /// count (then the local count stands).
    fn provider_model(&self, requested: &str, entry: &ModelEntry) -> Option<String>;
    /// Tokens of `messages` sent as one chat request to `model`.
    fn count_messages(&self, model: &str, messages: &[Message]) -> Result<u64, ExactCountFailure>;
    /// Tokens of `text` sent as one user message to `model`.
    fn count_text(&self, model: &str, text: &str) -> Result<u64, ExactCountFailure>;
    /// Tokens of one request to `model` carrying `tools` (Anthropic tool entries,
    /// `{name, description, input_schema}`; none: no `tools` parameter), `system`
    /// when given, and one short user message: the provider's whole count, its
    /// tool-use system prompt included. A counter that cannot send tools says so.
    fn count_request(
        &self,
        model: &str,
        system: Option<&str>,
        tools: &[serde_json::Value],
    ) -> Result<u64, ExactCountFailure> {
        let _ = (model, system, tools);
        Err(ExactCountFailure::new(
            "exact Claude count unavailable: this counter sends no tool definitions; using the \
             local estimate",
        ))
    }
    /// Shown as `encoding` on an exact count (no local tokenizer was used).
    fn encoding(&self) -> &'static str;
    /// Shown as `method` on an exact count.
    fn method(&self) -> &'static str;
}

/// Why an exact count was not obtained; the result keeps the estimate and carries
/// `warning`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{warning}")]
pub struct ExactCountFailure {
    /// The sentence a response shows as `warning`.
    pub warning: String,
    /// The provider refused this request's content (HTTP 400), not the requests:
    /// another request may still be answered.
    pub request_refused: bool,
}

impl ExactCountFailure {
    pub fn new(warning: impl Into<String>) -> Self {
        ExactCountFailure {
            warning: warning.into(),
            request_refused: false,
        }
    }

    /// A failure of this request's content alone (see `request_refused`).
    pub fn refused(warning: impl Into<String>) -> Self {
        ExactCountFailure {
            request_refused: true,
            ..ExactCountFailure::new(warning)
        }
    }
}

/// The exact counter that applies to a model, with the id to send it (made from the
/// name the caller sent); `None` when there is none (no counter, a bare encoding, or
/// a model it does not count).
pub fn exact_for<'a>(
    exact: Option<&'a dyn ExactCounter>,
    model: &ResolvedModel<'_>,
) -> Option<(&'a dyn ExactCounter, String)> {
    // A local tokenizer that is exact already equals the bill.
    if model.tokenizer().is_exact() {
        return None;
    }
    let (exact, entry) = (exact?, model.entry()?);
    exact
        .provider_model(model.requested(), entry)
        .map(|id| (exact, id))
}

/// What [`refine`] settled on.
#[derive(Debug, Clone, PartialEq)]
pub enum Refined<T> {
    /// The provider counted `value` at `total`, within the budget (an empty value is
    /// 0 without asking).
    Exact { value: T, total: u64 },
    /// The provider could not be asked: the local result, and why.
    Estimated { value: T, warning: String },
    /// Still over the budget after [`MAX_EXACT_ROUNDS`] exact counts.
    NotConfirmed,
}

/// Confirm a locally budgeted result with exact counts. `candidate(local_budget)`
/// builds the result within a budget in local units; `local_total` is what it used
/// locally; `exact_total` asks the provider. When the provider's total is over
/// `budget`, the local budget shrinks by the overshoot (scaled to local units) and a
/// new candidate is built — at most [`MAX_EXACT_ROUNDS`] counts in all.
pub fn refine<T, E>(
    budget: u64,
    mut candidate: impl FnMut(u64) -> Result<T, E>,
    local_total: impl Fn(&T) -> u64,
    mut exact_total: impl FnMut(&T) -> Result<u64, ExactCountFailure>,
) -> Result<Refined<T>, E> {
    let mut value = candidate(budget)?;
    for _ in 0..MAX_EXACT_ROUNDS {
        let local = local_total(&value);
        if local == 0 {
            return Ok(Refined::Exact { value, total: 0 });
        }
        match exact_total(&value) {
            Err(failure) => {
                return Ok(Refined::Estimated {
                    value,
                    warning: failure.warning,
                });
            }
            Ok(total) if total <= budget => return Ok(Refined::Exact { value, total }),
            Ok(total) => {
                let over = total - budget;
                let scaled = (over as f64 * local as f64 / total as f64).ceil() as u64;
                // Take the overshoot, in local units, off what this candidate used.
                value = candidate(local.saturating_sub(scaled.max(1)))?;
            }
        }
    }
    Ok(Refined::NotConfirmed)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A candidate of `n` units costs `n` locally and `2n` exactly: each round must
    /// shrink it until the exact total fits.
    #[test]
    fn an_exact_total_over_budget_shrinks_the_local_budget_until_it_fits() {
        let mut asked = Vec::new();
        let refined: Result<Refined<u64>, ()> = refine(
            100,
            |local_budget| {
                asked.push(local_budget);
                Ok(local_budget)
            },
            |n| *n,
            |n| Ok(2 * n),
        );
        assert_eq!(
            refined,
            Ok(Refined::Exact {
                value: 50,
                total: 100
            })
        );
        assert_eq!(asked, [100, 50]);
    }

    #[test]
    fn a_failure_keeps_the_local_result_and_an_empty_one_costs_nothing() {
        let failed: Result<Refined<u64>, ()> =
            refine(10, Ok, |n| *n, |_| Err(ExactCountFailure::new("offline")));
        assert_eq!(
            failed,
            Ok(Refined::Estimated {
                value: 10,
                warning: "offline".into()
            })
        );
        let empty: Result<Refined<u64>, ()> =
            refine(10, |_| Ok(0), |n| *n, |_| panic!("nothing to count"));
        assert_eq!(empty, Ok(Refined::Exact { value: 0, total: 0 }));
    }

    #[test]
    fn a_provider_that_stays_over_budget_is_not_confirmed_after_the_last_round() {
        let mut rounds = 0;
        let refined: Result<Refined<u64>, ()> = refine(
            10,
            |_| Ok(10),
            |n| *n,
            |_| {
                rounds += 1;
                Ok(1000)
            },
        );
        assert_eq!(refined, Ok(Refined::NotConfirmed));
        assert_eq!(rounds, MAX_EXACT_ROUNDS);
    }
}
