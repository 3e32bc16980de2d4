//! Turning what a caller typed (`59`, `059-token-engine/DESIGN.md`, ...) into a spec
//! or one of its files. The order is documented in docs/tools.md and tested below;
//! numbers match numerically and exactly, never as substrings (`59` is never 1593).

use std::path::{Component, Path};

use super::layout::{SpecFile, SpecFolder, parse_folder_name};
use super::{Closeness, SpecError};

/// What a query names: a spec (its index in the list) and maybe one of its files.
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    pub spec: usize,
    /// A file name as typed (`design.md`); see [`find_file`].
    pub file: Option<String>,
}

/// Resolve `query` against `specs` found under `root` (canonical).
///
/// 1. Paths must stay inside the root: `..` anywhere, or an absolute path outside
///    the root, is refused (an absolute path inside it is made relative).
/// 2. A trailing `NAME.md` after a spec part names one file of that spec.
/// 3. The spec part is tried as, in order: a number (`59`, `059`: the spec whose
///    number equals it); the id (`archived/012-old`); the full folder name
///    (`059-token-engine`); the name without its number (`token-engine`); then the
///    last two case-insensitively. Two or more matches at the first rule that
///    matches anything → ambiguous; none at all → not found, with the closest names.
pub fn resolve(specs: &[SpecFolder], root: &Path, query: &str) -> Result<Target, SpecError> {
    let relative = relative_query(root, query)?;
    let parts: Vec<&str> = relative
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    let Some(last) = parts.last() else {
        return Err(SpecError::InvalidQuery {
            query: query.to_string(),
            reason: "it is empty".into(),
        });
    };
    let names_a_file = parts.len() >= 2
        && Path::new(last)
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("md"));
    let spec_part = if names_a_file {
        parts[..parts.len() - 1].join("/")
    } else {
        parts.join("/")
    };
    let spec = find_spec(specs, &spec_part, query)?;
    Ok(Target {
        spec,
        file: names_a_file.then(|| last.to_string()),
    })
}

/// The file of `spec` (files loaded) named `name`, case-insensitively.
pub fn find_file<'a>(spec: &'a SpecFolder, name: &str) -> Result<&'a SpecFile, SpecError> {
    spec.files
        .iter()
        .find(|f| f.name.eq_ignore_ascii_case(name))
        .ok_or_else(|| SpecError::FileNotFound {
            spec: spec.id.clone(),
            file: name.to_string(),
            available: spec.files.iter().map(|f| f.name.clone()).collect(),
        })
}

/// The query as a `/`-separated path relative to the root, or why it is refused.
fn relative_query(root: &Path, query: &str) -> Result<String, SpecError> {
    let trimmed = query.trim();
    if trimmed.is_empty() {
        return Err(SpecError::InvalidQuery {
            query: query.to_string(),
            reason: "it is empty".into(),
        });
    }
    let path = Path::new(trimmed);
    if path.components().any(|c| c == Component::ParentDir) {
        return Err(SpecError::OutsideRoot {
            query: query.to_string(),
        });
    }
    if path.is_absolute() {
        // Compare canonical forms so `/tmp/specs` and a symlinked `/private/tmp/specs`
        // agree; a path that does not exist is compared as written.
        let absolute = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        let inside = absolute
            .strip_prefix(root)
            .map_err(|_| SpecError::OutsideRoot {
                query: query.to_string(),
            })?;
        return Ok(inside.to_string_lossy().replace('\\', "/"));
    }
    Ok(trimmed.replace('\\', "/"))
}

fn find_spec(specs: &[SpecFolder], part: &str, query: &str) -> Result<usize, SpecError> {
    let rules: [&dyn Fn(&SpecFolder) -> bool; 6] = [
        &|s| part.bytes().all(|b| b.is_ascii_digit()) && part.parse::<u32>().ok() == Some(s.number),
        &|s| s.id == part,
        &|s| s.folder == part,
        &|s| s.name == part,
        &|s| s.id.eq_ignore_ascii_case(part) || s.folder.eq_ignore_ascii_case(part),
        &|s| s.name.eq_ignore_ascii_case(part),
    ];
    for rule in rules {
        let matches: Vec<usize> = (0..specs.len()).filter(|&i| rule(&specs[i])).collect();
        match matches.as_slice() {
            [] => continue,
            [one] => return Ok(*one),
            many => {
                return Err(SpecError::Ambiguous {
                    query: query.to_string(),
                    candidates: many.iter().map(|&i| specs[i].id.clone()).collect(),
                });
            }
        }
    }
    // A number is best answered with the nearest numbers, not similar spellings.
    let (closest, by) = match part.parse::<u32>() {
        Ok(n) if part.bytes().all(|b| b.is_ascii_digit()) => {
            let mut by_distance: Vec<&SpecFolder> = specs.iter().collect();
            by_distance.sort_by_key(|s| (s.number.abs_diff(n), s.number));
            let ids = by_distance.iter().take(MAX_SUGGESTIONS);
            (ids.map(|s| s.id.clone()).collect(), Closeness::Number)
        }
        _ => (closest_by_name(specs, part), Closeness::Name),
    };
    Err(SpecError::NotFound {
        query: query.to_string(),
        closest,
        by,
    })
}

/// Specs offered when a name matches nothing.
const MAX_SUGGESTIONS: usize = 5;
/// Characters of the query and of a name compared: past this a suggestion is no
/// help, and it bounds the work to 64 × 64 steps per spec.
const MAX_COMPARED_CHARS: usize = 64;

/// The specs whose names are spelled most like `part`, best first; none when no
/// name is close (a third of the query's length in edits, at least one).
///
/// What is compared is what the caller typed against the same kind of name: the
/// name without its number (`programatic` vs `programmatic-spec-management`), the
/// folder name when the query starts with a number (`059-programatic`), the id
/// when it has a group (`archived/12-old`). Closeness is the edit distance to the
/// closest *part* of the name, so a long name is not penalized for its length
/// (whole-string distance would rank `1593-other-thing` above it).
fn closest_by_name(specs: &[SpecFolder], part: &str) -> Vec<String> {
    let query: Vec<char> = part
        .to_lowercase()
        .chars()
        .take(MAX_COMPARED_CHARS)
        .collect();
    let limit = (query.len() / 3).max(1);
    let compared = |spec: &SpecFolder| -> String {
        if part.contains('/') {
            spec.id.to_lowercase()
        } else if parse_folder_name(part).is_some() {
            spec.folder.to_lowercase()
        } else {
            spec.name.to_lowercase()
        }
    };
    let mut scored: Vec<(usize, usize, &str)> = specs
        .iter()
        .filter_map(|spec| {
            let name: Vec<char> = compared(spec).chars().take(MAX_COMPARED_CHARS).collect();
            let distance = substring_distance(&query, &name, limit)?;
            Some((distance, name.len().abs_diff(query.len()), spec.id.as_str()))
        })
        .collect();
    scored.sort_unstable();
    scored
        .into_iter()
        .take(MAX_SUGGESTIONS)
        .map(|(_, _, id)| id.to_string())
        .collect()
}

/// Edits that turn `query` into some substring of `name` (Sellers' algorithm:
/// skipping the start and end of `name` is free), or `None` once it is certain to
/// exceed `limit` (a row's minimum never decreases, so most names stop after a few
/// rows). Two rows of memory.
fn substring_distance(query: &[char], name: &[char], limit: usize) -> Option<usize> {
    let mut previous = vec![0usize; name.len() + 1];
    let mut current = vec![0usize; name.len() + 1];
    for (i, &q) in query.iter().enumerate() {
        current[0] = i + 1;
        for (j, &c) in name.iter().enumerate() {
            current[j + 1] = (previous[j] + usize::from(q != c))
                .min(previous[j + 1] + 1)
                .min(current[j] + 1);
        }
        std::mem::swap(&mut previous, &mut current);
        if previous.iter().min().is_some_and(|&m| m > limit) {
            return None;
        }
    }
    previous.into_iter().min().filter(|&d| d <= limit)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn folder(id: &str, files: &[&str]) -> SpecFolder {
        let folder = id.rsplit('/').next().unwrap_or(id).to_string();
        let (number, name) = super::super::layout::parse_folder_name(&folder).unwrap_or_default();
        SpecFolder {
            id: id.into(),
            folder,
            number,
            name,
            dir: PathBuf::from("/specs").join(id),
            files: files
                .iter()
                .map(|f| SpecFile {
                    name: f.to_string(),
                    path: PathBuf::from("/specs").join(id).join(f),
                    size: 1,
                    stamp: None,
                })
                .collect(),
            skipped: Vec::new(),
        }
    }

    fn specs() -> Vec<SpecFolder> {
        vec![
            folder(
                "059-token-engine",
                &["README.md", "DESIGN.md", "TESTING.md"],
            ),
            folder("066-spec-tokens", &["README.md"]),
            folder("1593-big-one", &["README.md"]),
            folder("159-other", &["README.md"]),
            folder("archived/012-old-plan", &["README.md"]),
            folder("archived/070-shared-name", &["README.md"]),
            folder("071-shared-name", &["README.md"]),
            folder("080-dup", &["README.md"]),
            folder("archived/080-dup-too", &["README.md"]),
        ]
    }

    fn id(query: &str) -> Result<String, SpecError> {
        let specs = specs();
        let target = resolve(&specs, Path::new("/specs"), query)?;
        let spec = &specs[target.spec];
        match target.file {
            None => Ok(spec.id.clone()),
            Some(name) => find_file(spec, &name).map(|f| format!("{}#{}", spec.id, f.name)),
        }
    }

    #[test]
    fn numbers_match_exactly_never_by_substring() {
        assert_eq!(id("59").ok().as_deref(), Some("059-token-engine"));
        assert_eq!(id("059").ok().as_deref(), Some("059-token-engine"));
        assert_eq!(id("0059").ok().as_deref(), Some("059-token-engine"));
        assert_eq!(id("1593").ok().as_deref(), Some("1593-big-one"));
        assert_eq!(id("159").ok().as_deref(), Some("159-other"));
        assert_eq!(id("12").ok().as_deref(), Some("archived/012-old-plan"));
        assert!(matches!(id("5"), Err(SpecError::NotFound { .. })));
        assert!(matches!(id("593"), Err(SpecError::NotFound { .. })));
    }

    #[test]
    fn names_ids_and_folder_names() {
        assert_eq!(
            id("059-token-engine").ok().as_deref(),
            Some("059-token-engine")
        );
        assert_eq!(id("token-engine").ok().as_deref(), Some("059-token-engine"));
        assert_eq!(id("Token-Engine").ok().as_deref(), Some("059-token-engine"));
        assert_eq!(
            id("archived/012-old-plan").ok().as_deref(),
            Some("archived/012-old-plan")
        );
        assert_eq!(
            id("012-old-plan").ok().as_deref(),
            Some("archived/012-old-plan")
        );
        assert_eq!(
            id("./066-spec-tokens/").ok().as_deref(),
            Some("066-spec-tokens")
        );
        // The absolute path of a spec inside the root.
        assert_eq!(
            id("/specs/066-spec-tokens").ok().as_deref(),
            Some("066-spec-tokens")
        );
    }

    #[test]
    fn sub_spec_files_in_every_form() {
        for query in [
            "059/DESIGN.md",
            "59/design.md",
            "059-token-engine/DESIGN.md",
            "token-engine/DESIGN.md",
            "/specs/059-token-engine/DESIGN.md",
        ] {
            assert_eq!(
                id(query).ok().as_deref(),
                Some("059-token-engine#DESIGN.md"),
                "{query}"
            );
        }
        assert_eq!(
            id("archived/012-old-plan/README.md").ok().as_deref(),
            Some("archived/012-old-plan#README.md")
        );
        let Err(SpecError::FileNotFound { available, .. }) = id("059/NOPE.md") else {
            panic!("missing file must be reported");
        };
        assert_eq!(available, ["README.md", "DESIGN.md", "TESTING.md"]);
    }

    #[test]
    fn ambiguity_lists_the_candidates() {
        let Err(SpecError::Ambiguous { candidates, .. }) = id("shared-name") else {
            panic!("two specs share the name");
        };
        assert_eq!(candidates, ["archived/070-shared-name", "071-shared-name"]);
        let Err(SpecError::Ambiguous { candidates, .. }) = id("80") else {
            panic!("two specs share the number");
        };
        assert_eq!(candidates.len(), 2);
        // The full id is never ambiguous.
        assert_eq!(
            id("071-shared-name").ok().as_deref(),
            Some("071-shared-name")
        );
    }

    #[test]
    fn not_found_offers_the_closest_names() {
        let Err(SpecError::NotFound { closest, by, .. }) = id("token-engin") else {
            panic!("no such spec");
        };
        assert_eq!(by, Closeness::Name);
        assert_eq!(
            closest.first().map(String::as_str),
            Some("059-token-engine")
        );
    }

    #[test]
    fn a_misspelled_name_suggests_by_spelling_not_by_number_or_length() {
        let mut specs = specs();
        specs.push(folder("059-programmatic-spec-management", &["README.md"]));
        specs.push(folder("1593-other-thing", &["README.md"]));
        let not_found = |query: &str| match resolve(&specs, Path::new("/specs"), query) {
            Err(SpecError::NotFound { closest, by, .. }) => (closest, by),
            other => panic!("{query}: {other:?}"),
        };
        let (closest, by) = not_found("programatic");
        assert_eq!(by, Closeness::Name);
        assert_eq!(closest, ["059-programmatic-spec-management"]);
        // With its number, compared against folder names.
        let (closest, _) = not_found("059-programatic-spec");
        assert_eq!(
            closest.first().map(String::as_str),
            Some("059-programmatic-spec-management")
        );
        // Nothing spelled alike: no suggestion rather than a random one.
        let (closest, _) = not_found("zzzzqqqq");
        assert!(closest.is_empty(), "{closest:?}");
        // A number gets the nearest numbers.
        let (closest, by) = not_found("1590");
        assert_eq!(by, Closeness::Number);
        assert_eq!(closest[..2], ["1593-big-one", "1593-other-thing"]);
    }

    #[test]
    fn substring_distance_ignores_the_rest_of_a_long_name() {
        let chars = |s: &str| s.chars().collect::<Vec<_>>();
        let within = |q: &str, n: &str, limit| substring_distance(&chars(q), &chars(n), limit);
        assert_eq!(
            within("programatic", "programmatic-spec-management", 3),
            Some(1)
        );
        assert_eq!(within("engine", "token-engine", 0), Some(0));
        assert_eq!(within("", "x", 0), Some(0));
        assert_eq!(within("abc", "", 3), Some(3));
        assert_eq!(within("abc", "", 2), None, "over the limit");
        assert_eq!(within("zzzzzz", "token-engine", 2), None);
    }

    #[test]
    fn paths_outside_the_root_are_refused() {
        for query in [
            "../etc/passwd",
            "059/../../secret.md",
            "/etc/passwd",
            "/specs-other/059-x",
        ] {
            assert!(
                matches!(id(query), Err(SpecError::OutsideRoot { .. })),
                "{query}"
            );
        }
        assert!(matches!(id("  "), Err(SpecError::InvalidQuery { .. })));
    }
}
