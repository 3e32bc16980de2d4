//! Every bound on a caller's input, checked before any work: a 1 GB paste or a
//! 100,000-spec plan must fail fast with the numbers, not stall the server. A new
//! limit goes here, with the check that enforces it.
//!
//! A leaf: every counting module checks these, so this module imports nothing of
//! the engine (the byte totals of messages and sections live with their types).

/// Default largest text accepted in one call: 8 MiB, about 2M tokens — well past any
/// context window, and under a second to count.
pub const DEFAULT_MAX_INPUT_BYTES: usize = 8 * 1024 * 1024;

/// Default longest model name or spec path, in bytes. Real ones are under 100 (a spec
/// path under the root a few hundred); a 16 MB "name" once cost 15 s of CPU and a
/// 67 MB answer echoing it.
pub const DEFAULT_MAX_NAME_BYTES: usize = 1024;

/// Default most chat messages one fit-messages call accepts: long agent sessions
/// have a few thousand; 900k tiny messages once held a gigabyte.
pub const DEFAULT_MAX_MESSAGES: usize = 20_000;

/// Default most sections one assemble-context call accepts: prompts have tens.
pub const DEFAULT_MAX_SECTIONS: usize = 1_000;

/// Default work of mcp-tokens' hoisting search per call, as a multiple of the tool
/// schemas' bytes (at least 8 MiB): a hostile list (deep chains over wide blobs, many
/// near-duplicates) would otherwise cost size x depth x hoists, gigabytes of JSON.
pub const DEFAULT_HOIST_WORK_FACTOR: usize = 16;

/// Default most tool definitions one mcp-tokens call accepts: real servers list tens
/// to a few hundred; 120,000 minimal tools (6.6 MB) once held 470 MB.
pub const DEFAULT_MAX_TOOL_DEFINITIONS: usize = 2_000;

/// The bounds on how many things, and how long a name, one call may send. Each is a
/// server flag; the error names the field and the limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InputLimits {
    /// Largest text (sum of texts) tokenized in one call.
    pub max_input_bytes: usize,
    /// Longest `model` or spec path.
    pub max_name_bytes: usize,
    pub max_messages: usize,
    pub max_sections: usize,
    /// mcp-tokens: the hoisting search's work, as a multiple of the schemas' bytes
    /// (`tool_defs::HoistWork`).
    pub hoist_work_factor: usize,
    /// mcp-tokens: most tool definitions in one call's `tools`.
    pub max_tool_definitions: usize,
}

impl Default for InputLimits {
    fn default() -> Self {
        InputLimits {
            max_input_bytes: DEFAULT_MAX_INPUT_BYTES,
            max_name_bytes: DEFAULT_MAX_NAME_BYTES,
            max_messages: DEFAULT_MAX_MESSAGES,
            max_sections: DEFAULT_MAX_SECTIONS,
            hoist_work_factor: DEFAULT_HOIST_WORK_FACTOR,
            max_tool_definitions: DEFAULT_MAX_TOOL_DEFINITIONS,
        }
    }
}

/// A call over one of the bounds on its input: the one "input too large" error,
/// whichever bound it crossed. Counting, fitting and assembling carry it (through
/// [`crate::CountError::Limit`]), so an adapter maps it in one place.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LimitError {
    /// More text to tokenize than [`InputLimits::max_input_bytes`].
    #[error("input is {bytes} bytes, over the limit of {limit} bytes")]
    TextTooLarge { bytes: usize, limit: usize },
    /// More text than the limit, read from a stream whose size was not measured (the
    /// reader stopped one byte past the limit): "over", never that byte count.
    #[error("input is over the limit of {limit} bytes")]
    TextOverLimit { limit: usize },
    /// `preview` is the start of the name (at most [`PREVIEW_CHARS`] characters and an
    /// ellipsis): an answer never echoes an unbounded input.
    #[error("`{field}` is {bytes} bytes long (`{preview}`); at most {limit} bytes are accepted")]
    NameTooLong {
        field: &'static str,
        bytes: usize,
        limit: usize,
        preview: String,
    },
    #[error("`{field}` has {count} entries; at most {limit} are accepted per call")]
    TooMany {
        field: &'static str,
        count: usize,
        limit: usize,
    },
    /// A spec-budget plan names between 1 and [`MAX_SPECS_PER_PLAN`] specs (none is
    /// refused here too: a plan of nothing is a mistake, not a tiny plan).
    #[error("`specs` has {count} entries; give between 1 and {MAX_SPECS_PER_PLAN}")]
    SpecCount { count: usize },
}

/// Characters of an over-long name shown back in an error.
pub const PREVIEW_CHARS: usize = 40;

/// `name` if it is short, else its first [`PREVIEW_CHARS`] characters and `…`.
pub fn preview(name: &str) -> String {
    match name.char_indices().nth(PREVIEW_CHARS) {
        None => name.to_string(),
        Some((cut, _)) => format!("{}…", &name[..cut]),
    }
}

/// `name` (the value of `field`) is at most `limit` bytes.
pub fn check_name(field: &'static str, name: &str, limit: usize) -> Result<(), LimitError> {
    if name.len() > limit {
        return Err(LimitError::NameTooLong {
            field,
            bytes: name.len(),
            limit,
            preview: preview(name),
        });
    }
    Ok(())
}

/// `count` entries of `field` are at most `limit`.
pub fn check_count(field: &'static str, count: usize, limit: usize) -> Result<(), LimitError> {
    if count > limit {
        return Err(LimitError::TooMany {
            field,
            count,
            limit,
        });
    }
    Ok(())
}

/// Most specs one spec-budget plan accepts: a plan is for a handful of specs, not a
/// repository.
pub const MAX_SPECS_PER_PLAN: usize = 200;

/// The input-size check every tool runs: `bytes` of text to tokenize against the
/// process's `limit`.
pub fn check_input_bytes(bytes: usize, limit: usize) -> Result<(), LimitError> {
    if bytes > limit {
        return Err(LimitError::TextTooLarge { bytes, limit });
    }
    Ok(())
}

/// A spec-budget request names between 1 and [`MAX_SPECS_PER_PLAN`] specs.
pub fn check_spec_count(count: usize) -> Result<(), LimitError> {
    if count == 0 || count > MAX_SPECS_PER_PLAN {
        return Err(LimitError::SpecCount { count });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limit_itself_is_accepted_and_one_byte_more_is_not() {
        assert_eq!(check_input_bytes(10, 10), Ok(()));
        assert_eq!(
            check_input_bytes(11, 10),
            Err(LimitError::TextTooLarge {
                bytes: 11,
                limit: 10
            })
        );
        assert_eq!(check_spec_count(0), Err(LimitError::SpecCount { count: 0 }));
        assert_eq!(check_spec_count(MAX_SPECS_PER_PLAN), Ok(()));
        assert!(check_spec_count(MAX_SPECS_PER_PLAN + 1).is_err());
        assert_eq!(check_count("messages", 3, 3), Ok(()));
        assert_eq!(
            check_count("messages", 4, 3),
            Err(LimitError::TooMany {
                field: "messages",
                count: 4,
                limit: 3
            })
        );
    }

    #[test]
    fn long_names_are_refused_with_a_bounded_preview() {
        assert_eq!(check_name("model", "gpt-4o", 6), Ok(()));
        let long = "é".repeat(1_000_000);
        let Err(LimitError::NameTooLong {
            bytes,
            limit,
            preview,
            ..
        }) = check_name("model", &long, 1024)
        else {
            panic!("a 2 MB name must be refused");
        };
        assert_eq!((bytes, limit), (2_000_000, 1024));
        assert_eq!(preview.chars().count(), PREVIEW_CHARS + 1);
        assert!(preview.ends_with('…'));
        let message = check_name("model", &long, 1024)
            .expect_err("refused")
            .to_string();
        assert!(message.len() < 200, "{message}");
    }
}
