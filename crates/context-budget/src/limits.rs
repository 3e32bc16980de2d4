//! Every bound on a caller's input, checked before any work: a 1 GB paste or a
//! 100,000-spec plan must fail fast with the numbers, not stall the server. A new
//! limit goes here, with the check that enforces it.

use crate::assemble::Section;
use crate::counter::CountError;
use crate::messages::Message;

/// Default largest text accepted in one call: 8 MiB, about 2M tokens — well past any
/// context window, and under a second to count.
pub const DEFAULT_MAX_INPUT_BYTES: usize = 8 * 1024 * 1024;

/// Most specs one spec-budget plan accepts: a plan is for a handful of specs, not a
/// repository.
pub const MAX_SPECS_PER_PLAN: usize = 200;

/// The input-size check every tool runs: `bytes` of text to tokenize against the
/// process's `limit`.
pub fn check_input_bytes(bytes: usize, limit: usize) -> Result<(), CountError> {
    if bytes > limit {
        return Err(CountError::InputTooLarge { bytes, limit });
    }
    Ok(())
}

/// Bytes a chat history puts through the tokenizer (what the input limit measures).
pub fn messages_bytes(messages: &[Message]) -> usize {
    messages.iter().map(Message::text_bytes).sum()
}

/// Bytes of the sections' contents (what the input limit measures).
pub fn sections_bytes(sections: &[Section]) -> usize {
    sections.iter().map(|s| s.content.len()).sum()
}

/// A spec-budget request names between 1 and [`MAX_SPECS_PER_PLAN`] specs.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("`specs` has {count} entries; give between 1 and {MAX_SPECS_PER_PLAN}")]
pub struct SpecCountError {
    pub count: usize,
}

pub fn check_spec_count(count: usize) -> Result<(), SpecCountError> {
    if count == 0 || count > MAX_SPECS_PER_PLAN {
        return Err(SpecCountError { count });
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
            Err(CountError::InputTooLarge {
                bytes: 11,
                limit: 10
            })
        );
        assert_eq!(check_spec_count(0), Err(SpecCountError { count: 0 }));
        assert_eq!(check_spec_count(MAX_SPECS_PER_PLAN), Ok(()));
        assert!(check_spec_count(MAX_SPECS_PER_PLAN + 1).is_err());
    }
}
