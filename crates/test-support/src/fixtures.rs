//! Files that tests of more than one crate load, kept once in
//! `crates/test-support/fixtures/` (the engine's unit tests, the server's end-to-end
//! tests).

/// A tiny word-level Hugging Face `tokenizer.json`: every whitespace-separated word
/// is one token (`a`, `b`, anything else `[UNK]`), and `<|eot|>` is an added special
/// token.
pub const TINY_TOKENIZER: &str = include_str!("../fixtures/tiny-tokenizer.json");

/// A byte-level BPE `tokenizer.json` shaped like Qwen3's: NFC, its regex split (one
/// digit per piece), the byte-level alphabet and a few merges, a special added token
/// (`<|im_start|>`, matched raw) and a normalized one (`<think>`).
pub const BYTE_LEVEL_TOKENIZER: &str = include_str!("../fixtures/byte-level-tokenizer.json");

/// What four clients sent their model for this server's tools, and the listing they
/// were made from (`fixtures/clients/README.md`).
pub mod clients {
    /// `context-loader stdio`'s `instructions` and `tools/list` tools.
    pub const CONTEXT_LOADER_TOOLS_LIST: &str =
        include_str!("../fixtures/clients/context-loader-tools-list.json");
    pub const CODEX_FIRST_REQUEST: &str =
        include_str!("../fixtures/clients/codex-first-request-excerpt.json");
    pub const CODEX_DIRECT: &str = include_str!("../fixtures/clients/codex-mcp-tools-direct.json");
    pub const CODEX_SEARCHED: &str =
        include_str!("../fixtures/clients/codex-mcp-tools-tool_search_output.json");
    pub const GEMINI_TOOLS: &str = include_str!("../fixtures/clients/gemini-mcp-tools.json");
    /// The later listing (commit 39569b8) GitHub Copilot CLI's recording was made from.
    pub const CONTEXT_LOADER_TOOLS_LIST_39569B8: &str =
        include_str!("../fixtures/clients/context-loader-tools-list-39569b8.json");
    pub const COPILOT_TOOLS: &str = include_str!("../fixtures/clients/copilot-cli-mcp-tools.json");
    /// A probe server's tools (every JSON Schema keyword, odd names) and what Copilot
    /// CLI sent for them.
    pub const COPILOT_PROBE_TOOLS_LIST: &str =
        include_str!("../fixtures/clients/copilot-cli-probe-tools-list.json");
    pub const COPILOT_PROBE_SENT: &str =
        include_str!("../fixtures/clients/copilot-cli-probe-sent.json");
}
