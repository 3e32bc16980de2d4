//! "Did you mean …?" for names a user mistyped: model names and spec names.

/// Up to `limit` candidates closest to `query`, best first.
///
/// Closeness is the edit distance between lower-cased strings, with candidates that
/// contain the query (or are contained in it) ranked first: `sonnet` should suggest
/// `claude-sonnet-4-5` even though that is many edits away.
pub fn closest_names<'a, I>(query: &str, candidates: I, limit: usize) -> Vec<String>
where
    I: IntoIterator<Item = &'a str>,
{
    let query = query.to_lowercase();
    let mut scored: Vec<(usize, usize, &str)> = candidates
        .into_iter()
        .map(|candidate| {
            let lower = candidate.to_lowercase();
            let contains = lower.contains(&query) || query.contains(&lower);
            (
                usize::from(!contains),
                edit_distance(&query, &lower),
                candidate,
            )
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

/// Levenshtein distance over chars, two rows of memory.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut current = vec![0; b.len() + 1];
    for (i, ca) in a.chars().enumerate() {
        current[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != cb);
            current[j + 1] = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        std::mem::swap(&mut previous, &mut current);
    }
    previous[b.len()]
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
    }

    #[test]
    fn typo_suggests_the_intended_model_first() {
        let names = ["gpt-4", "gpt-4o", "gpt-4o-mini", "claude-sonnet-4-5", "o3"];
        assert_eq!(closest_names("gpt4o", names, 2), vec!["gpt-4o", "gpt-4"]);
        assert_eq!(closest_names("Sonnet", names, 1), vec!["claude-sonnet-4-5"]);
        assert!(closest_names("anything", names, 0).is_empty());
    }
}
