//! Our fast counter (`tiktoken` 4.1.2, vendored with an ASCII whitespace fast path and
//! anchored regex searches: vendor/tiktoken/PATCH.md) against the reference
//! (`tiktoken-rs`, whose regex has the real lookahead), on both
//! OpenAI encodings: a corpus of awkward text, this repository's own sources, and generated
//! strings. Any difference is a wrong count shipped to users, so the two must agree
//! exactly.

use std::path::Path;

use context_budget::Tokenizer;
use proptest::prelude::*;

fn reference(tokenizer: Tokenizer, text: &str) -> usize {
    let bpe = match tokenizer {
        Tokenizer::Cl100kBase => tiktoken_rs::cl100k_base_singleton(),
        Tokenizer::O200kBase => tiktoken_rs::o200k_base_singleton(),
        other => unreachable!("no tiktoken reference for {other:?}"),
    };
    bpe.encode_ordinary(text).len()
}

fn assert_same(text: &str, what: &str) {
    for tokenizer in Tokenizer::OPENAI {
        assert_eq!(
            tokenizer.count(text),
            reference(tokenizer, text),
            "{} disagrees with tiktoken-rs on {what}",
            tokenizer.name()
        );
    }
}

/// Long runs of one character (or a short pattern) are one huge pre-token piece,
/// counted by the linear-time encoder: still exactly tiktoken-rs's counts, by
/// `count` and token by token (what spec breakdowns and truncation use). Lengths
/// straddle the switch-over and stay small enough for the reference's quadratic merge.
#[test]
fn pathological_runs_match_reference() {
    let runs = [
        "a",
        "Z",
        " ",
        "\n",
        "\t",
        " \n",
        "1",
        "0123456789",
        "=",
        "-",
        ".",
        "é",
        "가",
        "漢",
        "🦊",
        "ab",
        "aé",
        "a b",
        "!?",
        "\r\n",
        "\"\u{2002}\"",
        "\u{3000}\u{3000}x",
    ];
    for run in runs {
        for bytes in [2_000, 16_000, 16_384, 16_500, 24_000] {
            let body = run.repeat(bytes / run.len());
            for text in [
                body.clone(),
                format!("Intro words {body} and after."),
                format!("{body}\nNext line {body}"),
            ] {
                let what = format!("{} x {run:?}", body.len() / run.len());
                assert_same(&text, &what);
                for tokenizer in Tokenizer::OPENAI {
                    let mut tokens = 0;
                    tokenizer.for_each_token(&text, |_, _| tokens += 1);
                    assert_eq!(tokens, reference(tokenizer, &text), "tokens of {what}");
                }
            }
        }
    }
}

#[test]
fn corpus_counts_match_reference() {
    let corpus = include_str!("corpus/mixed.txt");
    assert_same(corpus, "the whole corpus");
    // Line by line too: short inputs take different paths than long ones.
    for (n, line) in corpus.split_inclusive('\n').enumerate() {
        assert_same(line, &format!("corpus line {}", n + 1));
    }
}

/// Large texts are counted in parts on all cores; the parts must add up to the
/// reference count of the whole, on every kind of text.
#[test]
fn large_texts_counted_in_parallel_match_reference() {
    let corpus = include_str!("corpus/mixed.txt");
    let repeats = context_budget::PARALLEL_MIN_BYTES / corpus.len() + 2;
    assert_same(
        &corpus.repeat(repeats),
        "the corpus repeated past the parallel threshold",
    );
    // Every line start of the corpus as a possible cut: rotate so cuts land everywhere.
    let lines: Vec<&str> = corpus.split_inclusive('\n').collect();
    for shift in (0..lines.len()).step_by(7) {
        let rotated: String = lines[shift..]
            .iter()
            .chain(&lines[..shift])
            .copied()
            .collect();
        assert_same(
            &rotated.repeat(repeats),
            &format!("the corpus rotated by {shift} lines"),
        );
    }
}

/// A text with no newline (a JSON-escaped answer) that holds a long run is counted
/// in stretches cut between words, only the run's by the linear encoder: still
/// tiktoken-rs's count, across every kind of text of the corpus.
#[test]
fn json_escaped_texts_with_a_long_run_match_reference() {
    let corpus = include_str!("corpus/mixed.txt");
    let tricky = "don't stop it's OK I'M here we'LL go x y fooBar Baz ÉCOLE a b \
                  a\u{301} b x  y 1a b2 c_d e.f g-h i's j's\tk l m";
    let run = "y".repeat(20_000);
    let text = format!("{corpus}{tricky} {run} {corpus}").repeat(20);
    let escaped = serde_json::to_string(&text).unwrap();
    assert!(!escaped.contains('\n'));
    assert_same(&escaped, "the JSON-escaped corpus with a long run");
}

/// `count` answers pieces of 3..=24 bytes from a per-thread memo of 8,192 slots
/// (vendor/tiktoken/src/count_memo.rs). Far more distinct pieces than slots, so
/// entries collide and are evicted, each seen again after its eviction, with both
/// encodings alternating on one thread (each has its own memo): every count must
/// still be tiktoken-rs's, whose pieces are of every length around the limit.
#[test]
fn counts_through_the_piece_memo_match_reference() {
    let mut lines = Vec::new();
    for i in 0..30_000u32 {
        lines.push(format!(
            "    let value_{i} = compute_{}(x{i}) + 0x{i:x};\n\tname{}Éé→{} end\n",
            i % 977,
            "z".repeat((i % 27) as usize),
            "q".repeat((i % 30) as usize),
        ));
    }
    for round in 0..2 {
        for (n, chunk) in lines.chunks(1000).enumerate() {
            // not split in halves on two threads: one thread's memo sees it all
            let chunk = chunk.concat();
            assert!(chunk.len() < context_budget::PARALLEL_MIN_BYTES);
            assert_same(&chunk, &format!("memo round {round}, chunk {n}"));
        }
    }
}

/// The memo a thread leaves when it exits is adopted by the next thread that counts
/// with the same encoding (vendor/tiktoken/PATCH.md section 8): texts counted on a
/// chain of short-lived threads, each with both encodings and pieces the previous
/// threads stored (Korean syllables among them, PATCH.md section 9), must count as
/// tiktoken-rs does on every thread, and as the first thread did.
#[test]
fn counts_through_memos_adopted_from_exited_threads_match_reference() {
    let text: String = (0..3_000u32)
        .map(|i| {
            format!(
                "fn item_{}(x: u{}) {{ \"한국어 문장 {}는\" }} The word{}'s end.\n",
                i % 211,
                8 << (i % 4),
                ["가나다", "힣힣", "안녕하세요"][(i % 3) as usize],
                i % 97,
            )
        })
        .collect();
    let chunks: Vec<&str> = text.split_inclusive('\n').collect();
    let chunks: Vec<String> = chunks.chunks(200).map(|c| c.concat()).collect();
    let expected: Vec<[usize; 2]> = chunks
        .iter()
        .map(|c| [Tokenizer::Cl100kBase, Tokenizer::O200kBase].map(|t| reference(t, c)))
        .collect();
    for thread in 0..4 {
        let counted = std::thread::scope(|scope| {
            scope
                .spawn(|| {
                    chunks
                        .iter()
                        .map(|c| [Tokenizer::Cl100kBase, Tokenizer::O200kBase].map(|t| t.count(c)))
                        .collect::<Vec<_>>()
                })
                .join()
                .expect("counting thread")
        });
        assert_eq!(counted, expected, "thread {thread}");
    }
}

#[test]
fn repository_sources_match_reference() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = 0;
    let mut stack = vec![root];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name();
            if name == "target" || name.to_string_lossy().starts_with('.') {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
            } else if matches!(
                path.extension().and_then(|e| e.to_str()),
                Some("rs" | "md" | "toml" | "json" | "txt")
            ) && let Ok(text) = std::fs::read_to_string(&path)
            {
                assert_same(&text, &path.display().to_string());
                files += 1;
            }
        }
    }
    assert!(
        files >= 10,
        "expected the repository's sources, found {files} files"
    );
}

/// Pieces that have tripped BPE implementations: scripts without spaces, combining
/// marks, ZWJ sequences, whitespace runs before words, special-token markers, digits
/// of many scripts, contractions, CRLF.
fn awkward_piece() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-zA-Z]{1,12}",
        "[가-힣]{1,10}",
        "[ぁ-んァ-ン一-龥]{1,10}",
        "[0-9٠-٩०-९０-９]{1,14}",
        "[ \t\r\n]{1,8}",
        Just("<|endoftext|>".to_string()),
        Just("<|fim_prefix|>".to_string()),
        Just("<|im_start|>".to_string()),
        Just("👩‍👩‍👧‍👦".to_string()),
        Just("🏳️‍🌈".to_string()),
        Just("e\u{301}".to_string()),
        Just("'s".to_string()),
        Just("'LL".to_string()),
        Just("\r\n".to_string()),
        "[!-/:-@\\[-`{-~]{1,4}",
        any::<char>().prop_map(String::from),
    ]
}

/// Text made mostly of whitespace, where the pre-tokenizers' rules interlock: the
/// newline rule, the lookahead that leaves a run's last space to the next word, a
/// space or tab before a letter, a space before punctuation, and Unicode spaces
/// next to ASCII ones (the vendored tiktoken's ASCII whitespace fast path must
/// hand those to its regex).
fn whitespace_heavy() -> impl Strategy<Value = String> {
    let atom = prop_oneof![
        4 => Just(" "),
        2 => Just("\t"),
        3 => Just("\n"),
        2 => Just("\r"),
        1 => Just("\x0B"),
        1 => Just("\x0C"),
        1 => Just("\u{a0}"),
        1 => Just("\u{3000}"),
        1 => Just("\u{85}"),
        1 => Just("\u{2028}"),
        2 => Just("a"),
        1 => Just("Z"),
        1 => Just("5"),
        1 => Just("{"),
        1 => Just("é"),
        1 => Just("가"),
        1 => Just("'s"),
        1 => Just("\u{1}"),
    ];
    prop::collection::vec(atom, 0..48).prop_map(|atoms| atoms.concat())
}

/// Lines of code-like atoms, each text written twice (the second pass runs with
/// the piece memos warm): indentation, punctuation ending a line, slashes and `'s`
/// opening the next (o200k_base's punctuation piece runs on through `[\r\n/]*`),
/// CRLF, Unicode spaces.
fn code_lines() -> impl Strategy<Value = String> {
    let atom = prop_oneof![
        3 => Just(" "),
        1 => Just("\t"),
        1 => Just("\r"),
        1 => Just("\u{a0}"),
        1 => Just("\u{3000}"),
        2 => Just("/"),
        1 => Just("//"),
        1 => Just("."),
        1 => Just("}"),
        1 => Just(";"),
        1 => Just("#"),
        1 => Just("*"),
        1 => Just("'s"),
        3 => Just("a"),
        1 => Just("Zo"),
        1 => Just("5"),
        1 => Just("é"),
    ];
    let line = prop::collection::vec(atom, 0..8).prop_map(|atoms| atoms.concat());
    prop::collection::vec(line, 1..12).prop_map(|lines| {
        let text = lines.join("\n");
        format!("{text}\n{text}")
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn code_lines_match_reference(text in code_lines()) {
        for tokenizer in Tokenizer::OPENAI {
            prop_assert_eq!(tokenizer.count(&text), reference(tokenizer, &text), "{:?} on {:?}", tokenizer, text);
        }
    }

    #[test]
    fn whitespace_heavy_strings_match_reference(text in whitespace_heavy()) {
        for tokenizer in Tokenizer::OPENAI {
            prop_assert_eq!(tokenizer.count(&text), reference(tokenizer, &text), "{:?} on {:?}", tokenizer, text);
        }
    }

    #[test]
    fn generated_strings_match_reference(pieces in prop::collection::vec(awkward_piece(), 0..24)) {
        let text: String = pieces.concat();
        for tokenizer in Tokenizer::OPENAI {
            prop_assert_eq!(tokenizer.count(&text), reference(tokenizer, &text), "{:?} on {:?}", tokenizer, text);
        }
    }

    #[test]
    fn arbitrary_unicode_matches_reference(text in "\\PC{0,64}") {
        for tokenizer in Tokenizer::OPENAI {
            prop_assert_eq!(tokenizer.count(&text), reference(tokenizer, &text), "{:?} on {:?}", tokenizer, text);
        }
    }
}
