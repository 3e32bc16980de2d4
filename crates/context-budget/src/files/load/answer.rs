//! A `load-files` answer measured as the model receives it, without building it:
//! its count for the model, which the answer itself states (`answer_tokens`, counted
//! again until it is its own count), its highest estimate, characters and bytes;
//! and how many rows its lists show.

use super::attribution::COUNT_CHUNK_BYTES;
use crate::Tokenizer;
use crate::answer::{
    HIGHEST_ESTIMATE, answer_text, count_itself_until, js_length, json_escaped, json_escaped_len,
};
use crate::files::measure::max_tokens_of_bytes;
use crate::files::output::LoadedFiles;
use crate::files::query::{DEFAULT_LOAD_ROWS, LoadRequest};
use crate::scan_control::ScanControl;

/// Rows listed per list: `rows`, [`DEFAULT_LOAD_ROWS`] when not given, every row
/// (`usize::MAX`) for 0.
pub(super) fn list_rows(request: &LoadRequest) -> usize {
    match request.rows.unwrap_or(DEFAULT_LOAD_ROWS) {
        0 => usize::MAX,
        n => n,
    }
}

/// What the model receives of a `load-files` answer (the string [`answer_text`]
/// gives): its tokens by [`HIGHEST_ESTIMATE`] (or a bound on them under the answer
/// limit, see [`measure_in_parts`]), characters (UTF-16) and bytes. Its tokens for
/// the model are what `answer_tokens` states.
pub(super) struct AnswerSize {
    pub(super) high: u64,
    pub(super) chars: usize,
    pub(super) bytes: usize,
}

/// Set `answer.answer_tokens` to the count of the answer as the model receives it
/// (counted again until the number it states is its own count, as
/// [`crate::answer::count_itself`] does) and measure that string; `None` once the
/// call is cancelled.
///
/// The string is not built: the packed text, almost all of it, is escaped and
/// counted in parts of about [`COUNT_CHUNK_BYTES`] on all cores, each cut between
/// words, a cut that escaping keeps ([`Tokenizer::escape_stable_cut`]); only the
/// fields before the text and its first word are counted again while
/// `answer_tokens` settles. Built, a 400 MB answer was held three times (the text,
/// a JSON value, the string) and each of its three counts ran a megabyte at a time.
/// A family without that cut (gemma3, a tokenizer.json) counts the built string
/// ([`measure_whole`]).
pub(super) fn measure_answer(
    answer: &mut LoadedFiles,
    tokenizer: Tokenizer,
    high_limit: u64,
    control: &dyn ScanControl,
) -> Option<AnswerSize> {
    let text = std::mem::take(&mut answer.text);
    let measured = match tokenizer.escape_stable_cut(&text, 1) {
        Some(first_cut) => {
            let parts = (tokenizer, high_limit, control);
            measure_in_parts(answer, &text, first_cut, parts)
        }
        None => Err(NoParts),
    };
    answer.text = text;
    match measured {
        Ok(size) => size,
        Err(NoParts) => measure_whole(answer, tokenizer, &|| control.is_cancelled()),
    }
}

/// [`measure_in_parts`] cannot cut this answer: measure it whole.
struct NoParts;

/// [`measure_answer`] of `answer` (its text taken out: `text`) in parts, the first
/// ending at `first_cut`.
///
/// The highest estimate matters only against the answer's token limit
/// (`high_limit`): when the answer's escaped bytes alone keep it under, its tokens
/// are only counted for the model, and the bound stands for the estimate. Weighing
/// each token for it needs the tokens themselves, encoded, where counting is about
/// twice as fast.
fn measure_in_parts(
    answer: &mut LoadedFiles,
    text: &str,
    first_cut: usize,
    (tokenizer, high_limit, control): (Tokenizer, u64, &dyn ScanControl),
) -> Result<Option<AnswerSize>, NoParts> {
    // `text` is the last field: the answer is `{…,"text":"` + escaped text + `"}`.
    const EMPTY_TEXT_END: &str = r#","text":""}"#;
    let shell = answer_text(answer);
    if !shell.ends_with(EMPTY_TEXT_END) {
        return Err(NoParts);
    }
    let suffix = &shell[shell.len() - 2..];
    // The parts after the first word, escaped and counted once; the last one holds
    // the closing `"}` (the text's last piece may run into it).
    let mut starts = vec![first_cut];
    while let Some(cut) =
        tokenizer.escape_stable_cut(text, starts[starts.len() - 1] + COUNT_CHUNK_BYTES)
    {
        starts.push(cut);
    }
    let ends: Vec<usize> = starts.iter().skip(1).copied().chain([text.len()]).collect();
    let spans: Vec<(usize, usize)> = starts.into_iter().zip(ends).collect();
    // The shell's numbers may grow while `answer_tokens` settles: 20 digits at most.
    let high_bound = max_tokens_of_bytes(
        HIGHEST_ESTIMATE,
        shell.len() as u64 + 20 + json_escaped_len(text),
    );
    let high_differs = tokenizer != HIGHEST_ESTIMATE;
    let weigh_high = high_differs && high_bound > high_limit;
    let parts = crate::fan_out::map(
        spans.iter().copied(),
        crate::fan_out::cores(),
        |(from, to)| {
            if control.is_cancelled() {
                return None;
            }
            let mut escaped = json_escaped(&text[from..to]);
            if to == text.len() {
                escaped.push_str(suffix);
            }
            let (tenths, high) = match weigh_high {
                true => tokenizer.tenths_with_here(HIGHEST_ESTIMATE, &escaped),
                false => (tokenizer.tenths_here(&escaped), 0),
            };
            Some([
                tenths,
                high,
                js_length(&escaped) as u64,
                escaped.len() as u64,
            ])
        },
    );
    let mut body = [0u64; 4];
    for part in parts {
        // A part is missing only when the call was cancelled (or its worker panicked,
        // a bug): either way there is no answer to give.
        let Some(part) = part else {
            return Ok(None);
        };
        for (sum, value) in body.iter_mut().zip(part) {
            *sum += value;
        }
    }
    let [body_tenths, body_high, body_chars, body_bytes] = body;
    // The fields before the text, and its first word, as the answer now states.
    let head = |answer: &LoadedFiles| {
        let shell = answer_text(answer);
        let mut head = shell[..shell.len() - suffix.len()].to_string();
        head.push_str(&json_escaped(&text[..first_cut]));
        head
    };
    let mut highest = 0;
    for round in 0..8 {
        let tenths = tokenizer.tenths_here(&head(answer)) + body_tenths;
        let count = crate::ClaudeEstimate::tokens_from_tenths(tenths) as u64;
        let stated = answer.answer_tokens;
        if count == stated || (round > 4 && count < stated) {
            break;
        }
        highest = highest.max(count);
        answer.answer_tokens = if round < 4 { count } else { highest };
    }
    let head = head(answer);
    let high = match (high_differs, weigh_high) {
        (true, true) => crate::ClaudeEstimate::tokens_from_tenths(
            HIGHEST_ESTIMATE.tenths_here(&head) + body_high,
        ) as u64,
        (true, false) => high_bound,
        (false, _) => answer.answer_tokens,
    };
    Ok(Some(AnswerSize {
        high,
        chars: js_length(&head) + body_chars as usize,
        bytes: head.len() + body_bytes as usize,
    }))
}

/// [`measure_answer`] by building the answer's string: [`crate::answer::count_itself`]
/// with each count in parts of about a megabyte that each look at `cancelled` first.
fn measure_whole(
    answer: &mut LoadedFiles,
    tokenizer: Tokenizer,
    cancelled: &dyn Fn() -> bool,
) -> Option<AnswerSize> {
    let serialized = count_itself_until(answer, tokenizer, |a| &mut a.answer_tokens, cancelled)?;
    let high = match tokenizer == HIGHEST_ESTIMATE {
        true => answer.answer_tokens,
        false => HIGHEST_ESTIMATE.count_until(&serialized, cancelled)? as u64,
    };
    Some(AnswerSize {
        high,
        chars: js_length(&serialized),
        bytes: serialized.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::files::output::{Excluded, FilesModel, IncludedFile};
    use crate::files::pack::{PackFormat, PackOrder};
    use crate::scan_control::Unobserved;

    fn answer(text: String, tokenizer: Tokenizer) -> LoadedFiles {
        let included: Vec<IncludedFile> = (0..40)
            .map(|i| IncludedFile {
                path: format!("src/\"odd\\name\"-{i}.rs"),
                root: None,
                tokens: 1234 + i,
                truncated: i % 7 == 0,
                detail: None,
                no_outline: None,
            })
            .collect();
        LoadedFiles {
            model: FilesModel {
                model: "gpt-4o".into(),
                requested_model: None,
                encoding: tokenizer.name(),
                exact: tokenizer.is_exact(),
                method: "test",
            },
            roots: vec!["/tmp/root".into()],
            budget: 1 << 40,
            budget_source: "request",
            answer_limit: None,
            answer_tokens: 0,
            tokens: 98_765,
            format: PackFormat::Xml,
            order: PackOrder::Given,
            detail: crate::files::pack::Detail::Full,
            levels: None,
            window: None,
            included_files: included.len(),
            omitted_files: 0,
            omitted_tokens: 0,
            rows: 50,
            truncated: false,
            included,
            omitted: Vec::new(),
            skipped: Vec::new(),
            skipped_counts: Default::default(),
            excluded: Excluded::default(),
            text,
        }
    }

    #[test]
    fn an_answer_measured_in_parts_is_the_string_the_model_receives() {
        let code = include_str!("answer.rs");
        // Several parts, escapes of every kind, words at both ends of the text, and a
        // last piece that runs into the closing quote.
        let tricky =
            "\"quoted\" back\\slash \u{1}\u{7}\u{7f} tab\there\r\n é 🦊 한국어 문장 end.\"";
        let long = format!(
            "{}{tricky}",
            code.repeat(3 * COUNT_CHUNK_BYTES / code.len() + 1)
        );
        let texts = [
            long.clone(),
            // Words at both ends in one text: each long text is ~40 counts of 3 MB.
            format!("a b {long} x y"),
            "a b".to_string(),
            // No cut between words anywhere: measured whole.
            "{}[]();\n".repeat(1000),
            String::new(),
        ];
        for tokenizer in [
            Tokenizer::O200kBase,
            Tokenizer::Cl100kBase,
            Tokenizer::ClaudeEstimate,
            Tokenizer::Claude47Estimate,
            Tokenizer::Estimate,
            Tokenizer::Gemma3,
        ] {
            for text in &texts {
                // Gemma 3 is always measured whole (its counter is slow unoptimized).
                if tokenizer == Tokenizer::Gemma3 && text.len() > COUNT_CHUNK_BYTES {
                    continue;
                }
                let mut parts = answer(text.clone(), tokenizer);
                // Under a limit of 0 the highest estimate is always weighed.
                let size = measure_answer(&mut parts, tokenizer, 0, &Unobserved).unwrap();
                let built = answer_text(&parts);
                // Under no limit it may be bounded instead, never below the count.
                let mut unlimited = answer(text.clone(), tokenizer);
                let bounded =
                    measure_answer(&mut unlimited, tokenizer, u64::MAX, &Unobserved).unwrap();
                assert_eq!(unlimited.answer_tokens, parts.answer_tokens);
                assert!(
                    bounded.high >= size.high,
                    "{tokenizer:?}: a bound, not below"
                );
                assert_eq!((bounded.chars, bounded.bytes), (size.chars, size.bytes));
                let what = format!("{tokenizer:?} on {} bytes", text.len());
                assert_eq!(
                    tokenizer.count(&built) as u64,
                    parts.answer_tokens,
                    "{what}"
                );
                assert_eq!(HIGHEST_ESTIMATE.count(&built) as u64, size.high, "{what}");
                assert_eq!(js_length(&built), size.chars, "{what}");
                assert_eq!(built.len(), size.bytes, "{what}");
                assert_eq!(parts.text, *text, "the text is put back");
                let mut whole = answer(text.clone(), tokenizer);
                measure_whole(&mut whole, tokenizer, &|| false).unwrap();
                assert_eq!(whole.answer_tokens, parts.answer_tokens, "{what}");
            }
        }
    }

    #[test]
    fn measuring_a_large_answer_stops_when_cancelled() {
        struct Cancelled;
        impl ScanControl for Cancelled {
            fn is_cancelled(&self) -> bool {
                true
            }
        }
        let code = include_str!("answer.rs");
        let text = code.repeat(3 * COUNT_CHUNK_BYTES / code.len() + 1);
        let mut answer = answer(text.clone(), Tokenizer::O200kBase);
        assert!(measure_answer(&mut answer, Tokenizer::O200kBase, 0, &Cancelled).is_none());
        assert_eq!(answer.text, text);
    }
}
