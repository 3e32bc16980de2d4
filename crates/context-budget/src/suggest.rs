//! "Did you mean …?" for names a user mistyped: model names and spec names; and
//! [`squash`], the one reading of "the same name but for case and separators" that
//! the catalog and the tool-schema savings share with it.
//!
//! Bounded: a query of over [`MAX_QUERY_CHARS`] characters gets no suggestions (no
//! one mistypes a name that long), candidates are compared only on their first
//! [`MAX_QUERY_CHARS`] x 2 characters, and a candidate whose length differs from the
//! query's by more than the cut-off is not compared at all. 10,000 spec names cost a
//! few milliseconds.

/// Up to `limit` candidates closest to `query`, best first.
///
/// Ranked by what a name means before how it is spelt:
/// 1. the same name but for case and separators (`claude-3.5-sonnet` is
///    `claude-3-5-sonnet`, `claude-sonnet-4.5` is `claude-sonnet-4-5`);
/// 2. the same family (first word) and generation (the same numbers in the same
///    order) within typo distance (`claude-sonet-4-5` → `claude-sonnet-4-5`, not
///    bare `claude`);
/// 3. candidates that contain the query or are contained in it: `sonnet` should
///    suggest `claude-sonnet-4-5` even though that is many edits away;
/// 4. the same family within typo distance (`gpt-4.5` → `gpt-4.1` before
///    `grok-4.5`);
/// 5. any other within typo distance.
///
/// Then by edit distance between lower-cased strings. An empty query has no
/// suggestion (every name would "contain" it).
pub fn closest_names<'a, I>(query: &str, candidates: I, limit: usize) -> Vec<String>
where
    I: IntoIterator<Item = &'a str>,
{
    if limit == 0 || query.trim().is_empty() || query.chars().nth(MAX_QUERY_CHARS).is_some() {
        return Vec::new();
    }
    let query = query.to_lowercase();
    let squashed = squash(&query);
    let generation = numbers(&query);
    let query_family = family(&query);
    // Further than this is no longer a typo of the query.
    let cutoff = (query.chars().count() / 2).max(3);
    let mut scored: Vec<(usize, usize, &str)> = candidates
        .into_iter()
        .filter_map(|candidate| {
            let lower: String = candidate
                .chars()
                .take(MAX_QUERY_CHARS * 2)
                .collect::<String>()
                .to_lowercase();
            let contains = lower.contains(&query) || query.contains(&lower);
            let distance = edit_distance_within(&query, &lower, cutoff);
            let tier = if !squashed.is_empty() && squash(&lower) == squashed {
                0
            } else if !generation.is_empty()
                && (contains || distance.is_some())
                && family(&lower) == query_family
                && numbers(&lower) == generation
            {
                1
            } else if contains {
                2
            } else if distance.is_some() && family(&lower) == query_family {
                3
            } else if distance.is_some() {
                4
            } else {
                return None;
            };
            Some((tier, distance.unwrap_or(cutoff + 1), candidate))
        })
        .collect();
    scored.sort();
    scored.dedup_by(|a, b| a.2 == b.2);
    scored
        .into_iter()
        .take(limit)
        .map(|(_, _, name)| name.to_string())
        .collect()
}

/// A name without case or separators, for "is this the same name?": letters and
/// digits only, lower-cased (`Claude-3.5-Sonnet` → `claude35sonnet`, `Max Results` →
/// `maxresults`). Every script's letters count, so two names in another script are
/// not equal merely for having no ASCII letters.
pub fn squash(name: &str) -> String {
    name.to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric())
        .collect()
}

/// The first word of a name (its family): `claude-sonnet-4-5` → `claude`, `gpt-4o` →
/// `gpt`, `o3-mini` → `o`.
fn family(name: &str) -> &str {
    name.split(|c: char| !c.is_alphabetic())
        .find(|word| !word.is_empty())
        .unwrap_or_default()
}

/// The numbers in a name, in order (its generation): `claude-sonnet-4-5` → [4, 5],
/// `claude-3.5-sonnet` → [3, 5]; leading zeros do not count (`059` is 59).
fn numbers(name: &str) -> Vec<&str> {
    name.split(|c: char| !c.is_ascii_digit())
        .filter(|run| !run.is_empty())
        .map(|run| {
            let trimmed = run.trim_start_matches('0');
            if trimmed.is_empty() { "0" } else { trimmed }
        })
        .collect()
}

/// The longest query that gets suggestions.
pub const MAX_QUERY_CHARS: usize = 64;

/// Levenshtein distance over chars (insert, delete, substitute; a swap of two
/// neighbours is two edits).
#[cfg(test)]
fn edit_distance(a: &str, b: &str) -> usize {
    edit_distance_within(a, b, usize::MAX).unwrap_or(usize::MAX)
}

/// Levenshtein distance over chars if it is at most `max`, else `None`; lengths
/// further apart than `max` are not compared (that difference alone is more edits).
fn edit_distance_within(a: &str, b: &str, max: usize) -> Option<usize> {
    if a.chars().count().abs_diff(b.chars().count()) > max {
        return None;
    }
    Some(strsim::levenshtein(a, b)).filter(|&d| d <= max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_distance_counts_single_edits() {
        assert_eq!(edit_distance("", ""), 0);
        assert_eq!(edit_distance("gpt-4", "gpt-4"), 0);
        assert_eq!(edit_distance("gpt4", "gpt-4"), 1);
        assert_eq!(edit_distance("gpt-4o", "gpt-4"), 1);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("한국어", "한국"), 1);
        // Plain Levenshtein, not Damerau: a transposition is two edits.
        assert_eq!(edit_distance("ab", "ba"), 2);
    }

    #[test]
    fn typo_suggests_the_intended_model_first() {
        let names = ["gpt-4", "gpt-4o", "gpt-4o-mini", "claude-sonnet-4-5", "o3"];
        assert_eq!(closest_names("gpt4o", names, 2), vec!["gpt-4o", "gpt-4"]);
        assert_eq!(closest_names("Sonnet", names, 1), vec!["claude-sonnet-4-5"]);
        assert!(closest_names("anything", names, 0).is_empty());
    }

    #[test]
    fn family_and_generation_rank_before_spelling() {
        // Issue 23: each of these suggested bare `claude` or the wrong generation.
        let names = [
            "claude",
            "claude-sonnet-4",
            "claude-sonnet-4-5",
            "claude-haiku-4-5",
            "claude-opus-4-5",
            "claude-3-5-sonnet",
            "claude-3-7-sonnet",
            "gpt-4o",
            "gpt-4.1",
            "grok-4.5",
            "o1",
        ];
        for (query, meant) in [
            ("claude-sonet-4-5", "claude-sonnet-4-5"),
            ("claude-3.5-sonnet", "claude-3-5-sonnet"),
            ("claude-sonnet-4.5", "claude-sonnet-4-5"),
            ("Claude-Sonnet-4.5", "claude-sonnet-4-5"),
            ("gpt-4-o", "gpt-4o"),
            ("gpt-4.5", "gpt-4.1"),
        ] {
            assert_eq!(
                closest_names(query, names, 3).first().map(String::as_str),
                Some(meant),
                "{query}"
            );
        }
        // Nothing to suggest for nothing (every name contains the empty string).
        assert!(closest_names("", names, 3).is_empty());
        assert!(closest_names("  ", names, 3).is_empty());
    }

    #[test]
    fn distance_gives_up_past_its_cutoff() {
        assert_eq!(edit_distance_within("kitten", "sitting", 3), Some(3));
        assert_eq!(edit_distance_within("kitten", "sitting", 2), None);
        assert_eq!(edit_distance_within("a", &"b".repeat(100), 5), None);
    }

    #[test]
    fn huge_queries_and_candidate_lists_stay_cheap() {
        // The hostile case: a 1M-character name against 10,000 spec names.
        let names: Vec<String> = (0..10_000)
            .map(|i| format!("{i:04}-spec-number-{i}"))
            .collect();
        let huge = "x".repeat(1_000_000);
        assert!(closest_names(&huge, names.iter().map(String::as_str), 5).is_empty());
        let near = closest_names("0042-spec-numbr-42", names.iter().map(String::as_str), 1);
        assert_eq!(near, vec!["0042-spec-number-42"]);
        // Nothing close: no suggestion rather than a random one.
        assert!(closest_names("zzzzzzzzzzzz", ["gpt-4o", "o3"], 3).is_empty());
    }
}
