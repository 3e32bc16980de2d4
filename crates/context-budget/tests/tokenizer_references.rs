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
    assert_all_equal(name, |text| tokenizer.count(text));
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
