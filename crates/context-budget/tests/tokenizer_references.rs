//! Differential tests of the non-OpenAI tokenizers against their reference
//! libraries, on the same vocabulary files: Gemini (Gemma 3) against Python
//! `sentencepiece` with the `.model` this crate embeds; Llama 3.1, Qwen3 and
//! DeepSeek V3 against Python `tokenizers` with each model's `tokenizer.json`.
//!
//! The reference counts are made by `cargo xtask tokenizer-refs` (run by `cargo
//! xtask ci`, which then runs these with `--ignored`) into the directory named by
//! `CONTEXT_BUDGET_TOKENIZER_REFS`, default target/xtask/tokenizer-refs. Ignored in
//! a plain `cargo test` (they need Python and npm downloads); when run, missing
//! fixtures are a failure, never a skip.

use std::path::PathBuf;

use context_budget::{Catalog, HuggingFaceTokenizer, Tokenizer};

fn refs_dir() -> PathBuf {
    std::env::var_os("CONTEXT_BUDGET_TOKENIZER_REFS")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/xtask/tokenizer-refs")
        })
}

/// `[[text, count], ...]` made by the reference library.
fn cases(name: &str) -> Vec<(String, usize)> {
    let path = refs_dir().join(format!("{name}.cases.json"));
    let json = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} — run `cargo xtask tokenizer-refs` first",
            path.display()
        )
    });
    let cases: Vec<(String, usize)> = serde_json::from_str(&json).expect("reference cases");
    assert!(cases.len() > 3000, "{name}: only {} cases", cases.len());
    cases
}

/// Every case equal; on failure, the first few differences.
fn assert_all_equal(name: &str, count: impl Fn(&str) -> usize) {
    let cases = cases(name);
    let differences: Vec<String> = cases
        .iter()
        .filter_map(|(text, expected)| {
            let ours = count(text);
            (ours != *expected).then(|| {
                let shown: String = text.chars().take(60).collect();
                format!("{shown:?}: ours {ours}, reference {expected}")
            })
        })
        .collect();
    assert!(
        differences.is_empty(),
        "{name}: {} of {} counts differ, e.g.\n{}",
        differences.len(),
        cases.len(),
        differences[..differences.len().min(8)].join("\n")
    );
}

#[test]
#[ignore = "needs `cargo xtask tokenizer-refs` (Python sentencepiece); run by cargo xtask ci"]
fn gemini_equals_python_sentencepiece() {
    // The reference ran on the file written from the embedded model: same bytes.
    let written = std::fs::read(refs_dir().join("gemma3.spiece.model")).expect("model file");
    assert_eq!(written, context_budget::gemma3_model_bytes());
    assert_all_equal("gemma3", |text| Tokenizer::Gemma3.count(text));
}

fn assert_huggingface(name: &str) {
    let path = refs_dir().join(format!("{name}.tokenizer.json"));
    let tokenizer = HuggingFaceTokenizer::from_file(&path).expect("tokenizer.json loads");
    // These files are counted piece by piece (bounded memory, cancellable), never
    // through `encode_fast` whole: the reference counts check that path.
    assert!(tokenizer.counts_in_pieces(), "{name}");
    assert_all_equal(name, |text| tokenizer.count(text));
    // Hostile shapes at a size the references' cases do not reach: equal to the
    // library's own count of the whole text.
    for text in hostile_texts() {
        assert_eq!(
            tokenizer.count(&text),
            tokenizer.count_whole(&text),
            "{name}: {:?}...",
            text.chars().take(10).collect::<String>()
        );
    }
}

/// Texts of a few hundred kilobytes that stress piece boundaries and limits: one
/// digit run, code points from every plane, letter and space runs, added-token
/// text back to back, combining marks (NFC), long mixed lines.
fn hostile_texts() -> Vec<String> {
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let code_points: String = std::iter::from_fn(|| char::from_u32((next() % 0x11_0000) as u32))
        .take(100_000)
        .collect();
    vec![
        "7".repeat(300_000),
        "1234567890".repeat(30_000),
        code_points,
        "a".repeat(20_000),
        " ".repeat(50_000) + "x",
        "\n\n \t".repeat(20_000),
        "<|im_start|><|eot_id|><｜User｜>".repeat(5_000),
        "e\u{301}\u{327}a\u{30A}\u{1100}\u{1161}\u{11A8} ".repeat(20_000),
        "fn main() { let x = \"한국어 🦊\"; println!(\"{x}\"); }\n".repeat(5_000),
    ]
}

#[test]
#[ignore = "needs `cargo xtask tokenizer-refs` (Python tokenizers, npm); run by cargo xtask ci"]
fn llama_3_1_equals_python_tokenizers() {
    assert_huggingface("llama-3.1");
}

#[test]
#[ignore = "needs `cargo xtask tokenizer-refs` (Python tokenizers, npm); run by cargo xtask ci"]
fn qwen3_equals_python_tokenizers() {
    assert_huggingface("qwen3");
}

#[test]
#[ignore = "needs `cargo xtask tokenizer-refs` (Python tokenizers, npm); run by cargo xtask ci"]
fn deepseek_v3_equals_python_tokenizers() {
    assert_huggingface("deepseek-v3");
}

/// The same counts through what a user writes: a models file naming the
/// tokenizer.json relative to its own folder.
#[test]
#[ignore = "needs `cargo xtask tokenizer-refs` (npm); run by cargo xtask ci"]
fn a_models_file_declares_a_huggingface_tokenizer() {
    let dir = refs_dir();
    let models_file = r#"{"models": [{"name": "llama-3.1-8b-instruct", "family": "llama-3.1",
        "tokenizer": "huggingface", "tokenizer_file": "llama-3.1.tokenizer.json",
        "context_window": 131072, "max_output_tokens": 4096,
        "input_usd_per_mtok": 0.0, "output_usd_per_mtok": 0.0}]}"#;
    let catalog = Catalog::builtin()
        .with_models_file(models_file, "models.json", &dir)
        .expect("models file loads");
    let model = catalog.resolve("llama-3.1-8b-instruct").expect("declared");
    let tokenizer = model.tokenizer();
    assert!(tokenizer.is_exact());
    assert!(tokenizer.method().contains("llama-3.1.tokenizer.json"));
    let cases = cases("llama-3.1");
    for (text, expected) in cases.iter().take(200) {
        assert_eq!(tokenizer.count(text), *expected, "{text:?}");
    }
}
