//! The texts the clients send: distinct ~N-byte windows of a corpus, each with the
//! count the reply must carry (computed here with the engine, so a wrong answer from
//! either server is an error, not a data point). Distinct texts keep a server-side
//! cache from flattering anyone.

use context_budget::Catalog;

/// Used when no corpus file is given: this repository's own documentation.
const BUILTIN_CORPUS: &str = concat!(
    include_str!("../../../../README.md"),
    include_str!("../../../../docs/tools.md"),
    include_str!("../../../../docs/deploy.md"),
    include_str!("../../../../docs/counting.md"),
    include_str!("../../../../ARCHITECTURE.md")
);

pub struct Sample {
    pub text: String,
    pub expected_tokens: u64,
}

/// Up to `limit` consecutive windows of about `bytes` bytes (cut at UTF-8 character
/// boundaries), with their token counts for `model`.
pub fn samples(
    corpus: Option<&str>,
    bytes: usize,
    limit: usize,
    model: &str,
) -> Result<Vec<Sample>, String> {
    let tokenizer = Catalog::builtin()
        .resolve(model)
        .ok_or_else(|| format!("unknown model `{model}`"))?
        .tokenizer();
    let corpus = corpus.unwrap_or(BUILTIN_CORPUS);
    let mut out = Vec::new();
    let mut start = 0;
    while out.len() < limit && start < corpus.len() {
        let mut end = (start + bytes.max(1)).min(corpus.len());
        while !corpus.is_char_boundary(end) {
            end += 1;
        }
        let text = &corpus[start..end];
        if !text.trim().is_empty() {
            out.push(Sample {
                text: text.to_string(),
                expected_tokens: tokenizer.count(text) as u64,
            });
        }
        start = end;
    }
    if out.is_empty() {
        return Err("the corpus has no text to send".into());
    }
    Ok(out)
}
