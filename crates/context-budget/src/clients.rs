//! The MCP clients we have measured: how each passes our answers to its model, where
//! it cuts them, and the limit we hold answers to for it. One row per client, named
//! with the version measured; every figure comes from a request the client sent to a
//! loopback stand-in for its model API (`cargo xtask clients` records them again on
//! every run, and fails when a client no longer behaves as its row says).
//!
//! A server learns its client from `clientInfo` (at `initialize`, or in a request's
//! `_meta` under 2026-07-28). A client the table does not hold, or a session that
//! never said (stateless HTTP under the `initialize`-era protocol), gets
//! [`strictest`]: the lowest bound of every row in every unit.

use crate::answer::{
    AnswerLimit, DEFAULT_MAX_ANSWER_CHARS, DEFAULT_MAX_ANSWER_TOKENS, LimitSource,
};

/// One measured client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Client {
    /// How we name it (`--client`, answers, the README).
    pub id: &'static str,
    pub product: &'static str,
    /// The `clientInfo.name` it sends.
    pub info_name: &'static str,
    /// The version measured.
    pub version: &'static str,
    /// Which part of a tool result its model reads, and how it is wrapped.
    pub reads: &'static str,
    /// Where it stops passing an answer whole, and what the model gets instead.
    pub cut: &'static str,
    /// The limit we hold answers to for it: under its cut, with a margin for what it
    /// adds around our text.
    pub limit: AnswerLimit,
    /// A stricter cut it applies in some of its configurations, which the server
    /// cannot see (Codex with a model it does not know), and the limit for it.
    pub stricter: Option<(&'static str, AnswerLimit)>,
    /// How it puts a server's tools and instructions in front of its model
    /// (`mcp-tokens --client`); `None` for a client whose answer limit was measured
    /// but whose rendering of tools `mcp-tokens` does not model (not in [`IDS`]).
    pub tools: Option<ToolRules>,
}

/// How a client sends MCP tool definitions to its model: each rule as recorded from
/// the client's own requests (`crates/test-support/fixtures/clients/`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolRules {
    /// Names, schema rewrites and extras of each definition.
    pub shape: ToolShape,
    /// Where the server's `instructions` go.
    pub instructions: InstructionsPlace,
    /// When the definitions stay out of the request until the model searches.
    pub deferral: Deferral,
    /// The model counted with when `--model` is not given: the client's default.
    pub default_model: &'static str,
    /// The config files it reads, under the home folder and under the project.
    pub user_configs: &'static [&'static str],
    pub project_configs: &'static [&'static str],
}

/// The shape of one tool definition as the client sends it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolShape {
    /// `{"name":"mcp__<server>__<tool>","description","input_schema"}`, the schema as
    /// listed (`$schema` included).
    ClaudeCode,
    /// One namespace `mcp__<server>` (characters outside `A-Za-z0-9_` as `_`) holding
    /// `{"type":"function","name":<tool, same rule>,"description","strict":false,
    /// "parameters"}` (and `"defer_loading":true` when deferred); the schema
    /// rewritten: `$schema`, `$id`, `title`, `$comment`, `default`, `format`,
    /// `minimum`/`maximum`, `pattern`, `examples` and `x-*` dropped, `const` as a
    /// one-value `enum` (with the `type` of its value when none is given), properties
    /// sorted, keys ordered `type`, `description`, `enum`, `items`, `properties`,
    /// `required`, `additionalProperties`, `anyOf`, and an array without `items`
    /// given `{"type":"string"}`.
    Codex,
    /// `{"name":"mcp_<server>_<tool>","description","parametersJsonSchema"}`: the
    /// schema's `type`, `properties`, `required` first, a `wait_for_previous` boolean
    /// added to every object schema's properties.
    GeminiCli,
    /// `{"name":"<server>-<tool>","description","parameters","strict":false,
    /// "type":"function"}` straight in `tools` (names: ASCII outside `A-Za-z0-9_-` as
    /// `-`, cut to 64 characters): the schema's keys sorted at every level (as its Rust
    /// runtime's JSON maps write them; `required` keeps its order), then in every schema
    /// the validation keywords (`minimum`, `maximum`, `pattern`, `format`, `minLength`,
    /// `minItems`, `not`, `contains` and the like) moved into the description as
    /// `{minimum: 0, pattern: "^a"}` (after a blank line, or as a new last key), an
    /// array without `items` given `"items":{}`, and the top level given
    /// `"type":"object"` and `"properties":{}` when missing; `$schema`, `title`,
    /// `default`, `examples`, `const`, `enum`, `anyOf`, `$ref`/`$defs` kept.
    CopilotCli,
}

/// Where a client puts a server's instructions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InstructionsPlace {
    /// The system prompt, as given.
    SystemPrompt,
    /// The description of the server's tool namespace; deferred, one line per
    /// server up front: `- mcp__<server>: ` and the instructions, cut to
    /// `line_chars` characters (the last three `...`) when longer.
    Namespace { line_chars: usize },
    /// The first user message, inside `The following are instructions provided by
    /// the tool server '<server>':` and start/end markers.
    UserMessage,
    /// In no request: the client does not pass them to its model.
    NotSent,
}

/// When a client keeps tool definitions out of the request until the model asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Deferral {
    /// Claude Code's tool search: on by default; `ENABLE_TOOL_SEARCH=auto[:N]` defers
    /// only once the tools pass N % (default `auto_percent`) of the window; `false`
    /// never defers.
    ToolSearch { auto_percent: u8 },
    /// Codex: its own models (names starting with one of `prefixes`) get the tools
    /// through `tool_search`; a model it does not know gets them in `tools`.
    OwnModels { prefixes: &'static [&'static str] },
    /// Every definition in every request.
    Never,
}

/// Every answer is also held to this many tokens by the highest estimate, whatever
/// the client: Claude Code refuses an answer over 25,000 tokens, and no client
/// profits from one answer taking a fifth of a 100k window.
const TOKENS: u64 = DEFAULT_MAX_ANSWER_TOKENS;

/// The measured clients.
pub const CLIENTS: [Client; 4] = [
    Client {
        id: "claude-code",
        product: "Claude Code",
        info_name: "claude-code",
        version: "2.1.328",
        reads: "structuredContent, as its JSON (content is dropped)",
        cut: "over ~50,000 characters: saved to a file, the model gets a preview; \
              over 25,000 tokens: refused",
        limit: AnswerLimit {
            tokens: TOKENS,
            chars: DEFAULT_MAX_ANSWER_CHARS,
            bytes: usize::MAX,
            source: LimitSource::Client("claude-code"),
        },
        stricter: None,
        tools: Some(ToolRules {
            shape: ToolShape::ClaudeCode,
            instructions: InstructionsPlace::SystemPrompt,
            deferral: Deferral::ToolSearch { auto_percent: 10 },
            default_model: "claude",
            user_configs: &[".claude.json"],
            project_configs: &[".mcp.json"],
        }),
    },
    Client {
        id: "codex",
        product: "Codex CLI",
        info_name: "codex-mcp-client",
        version: "0.169.0",
        reads: "structuredContent, as compact JSON after a `Wall time: N seconds\\nOutput:\\n` \
                line (content is dropped)",
        cut: "over 48,000 bytes: the middle is replaced by `…N tokens truncated…` \
              (12,000 bytes with a model it does not know)",
        // 1,000 bytes under the cut: its `Wall time` line is about 40.
        limit: AnswerLimit {
            tokens: TOKENS,
            chars: usize::MAX,
            bytes: 47_000,
            source: LimitSource::Client("codex"),
        },
        stricter: Some((
            "a model Codex does not know (a custom provider's): start the server with \
             --max-answer-bytes 11000",
            AnswerLimit {
                tokens: TOKENS,
                chars: usize::MAX,
                bytes: 11_000,
                source: LimitSource::Client("codex"),
            },
        )),
        tools: Some(ToolRules {
            shape: ToolShape::Codex,
            instructions: InstructionsPlace::Namespace { line_chars: 250 },
            deferral: Deferral::OwnModels {
                prefixes: &["gpt-5", "codex"],
            },
            default_model: "gpt-5.5",
            user_configs: &[".codex/config.toml"],
            project_configs: &[],
        }),
    },
    Client {
        id: "gemini-cli",
        product: "Gemini CLI",
        info_name: "gemini-cli-mcp-client",
        version: "0.61.0",
        reads: "the text content only, each block wrapped in <untrusted_context> \
                (structuredContent is ignored)",
        cut: "a text block over 40,000 characters, wrapper included: saved to a file, \
              the model gets the first 8,000 and the last 32,000",
        // 1,000 characters under the cut: the wrapper is 42.
        limit: AnswerLimit {
            tokens: TOKENS,
            chars: 39_000,
            bytes: usize::MAX,
            source: LimitSource::Client("gemini-cli"),
        },
        stricter: None,
        tools: Some(ToolRules {
            shape: ToolShape::GeminiCli,
            instructions: InstructionsPlace::UserMessage,
            deferral: Deferral::Never,
            default_model: "gemini-2.5-pro",
            user_configs: &[".gemini/settings.json"],
            project_configs: &[".gemini/settings.json"],
        }),
    },
    Client {
        id: "copilot-cli",
        product: "GitHub Copilot CLI",
        info_name: "copilot-cli",
        version: "1.0.102",
        reads: "the text content, as it is (an error's after `MCP server 'NAME': `)",
        cut: "over 20,480 bytes (20 KiB), in any script: saved to a file, the model gets \
              a preview of about 850 characters naming it",
        // 20,480 bytes passed whole and 20,481 did not, in ASCII and in Chinese (the
        // same 7,100 characters on both sides of the cut): held 1,480 under it.
        limit: AnswerLimit {
            tokens: TOKENS,
            chars: usize::MAX,
            bytes: 19_000,
            source: LimitSource::Client("copilot-cli"),
        },
        stricter: None,
        // Recorded by `cargo xtask clients`: our tools as top-level functions of every
        // request, our instructions in none.
        tools: Some(ToolRules {
            shape: ToolShape::CopilotCli,
            instructions: InstructionsPlace::NotSent,
            deferral: Deferral::Never,
            // Copilot CLI picks its default model at run time (an account's feature
            // flags, `GPT_DEFAULT_MODEL`); the recording asked for gpt-5
            // (`COPILOT_MODEL`), an o200k model like its GPT defaults.
            default_model: "gpt-5",
            user_configs: &[".copilot/mcp-config.json"],
            project_configs: &[],
        }),
    },
];

/// The row of the client that calls itself `info_name` in `clientInfo`.
pub fn by_info_name(info_name: &str) -> Option<&'static Client> {
    CLIENTS.iter().find(|c| c.info_name == info_name)
}

/// The row named `id` (`--client`).
pub fn by_id(id: &str) -> Option<&'static Client> {
    CLIENTS.iter().find(|c| c.id == id)
}

/// Every row's `id`, in the table's order (`--client`'s values).
pub const IDS: [&str; 4] = [CLIENTS[0].id, CLIENTS[1].id, CLIENTS[2].id, CLIENTS[3].id];

/// The lowest bound of every row in every unit, stricter configurations included:
/// what an answer is held to when its client is not in the table, so that it passes
/// whole in every client that is.
pub fn strictest() -> AnswerLimit {
    let every = CLIENTS
        .iter()
        .flat_map(|c| std::iter::once(c.limit).chain(c.stricter.map(|(_, l)| l)));
    every.fold(
        AnswerLimit {
            tokens: u64::MAX,
            chars: usize::MAX,
            bytes: usize::MAX,
            source: LimitSource::UnknownClient,
        },
        |low, l| AnswerLimit {
            tokens: low.tokens.min(l.tokens),
            chars: low.chars.min(l.chars),
            bytes: low.bytes.min(l.bytes),
            source: LimitSource::UnknownClient,
        },
    )
}

/// The limit for a call from the client that named itself `info_name` (`None`: it
/// did not say).
pub fn answer_limit_for(info_name: Option<&str>) -> AnswerLimit {
    info_name
        .and_then(by_info_name)
        .map_or_else(strictest, |c| c.limit)
}

/// The server's `--max-answer-tokens`, `--max-answer-chars` and `--max-answer-bytes`:
/// each unit given overrides the client's, for every client.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AnswerOverrides {
    pub tokens: Option<u64>,
    pub chars: Option<usize>,
    pub bytes: Option<usize>,
}

impl AnswerOverrides {
    /// `base` with the units given here in its place.
    pub fn over(&self, base: AnswerLimit) -> AnswerLimit {
        if *self == AnswerOverrides::default() {
            return base;
        }
        AnswerLimit {
            tokens: self.tokens.unwrap_or(base.tokens),
            chars: self.chars.unwrap_or(base.chars),
            bytes: self.bytes.unwrap_or(base.bytes),
            source: LimitSource::Flags,
        }
    }

    /// The limit of a call from the client named `info_name` (`clientInfo.name`).
    pub fn for_client(&self, info_name: Option<&str>) -> AnswerLimit {
        self.over(answer_limit_for(info_name))
    }

    /// The limit of a command-line run ([`AnswerLimit::default`]).
    pub fn for_command_line(&self) -> AnswerLimit {
        self.over(AnswerLimit::default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_client_flag_offers_exactly_the_rows_with_tool_rules() {
        let rendered: Vec<&str> = CLIENTS
            .iter()
            .filter(|c| c.tools.is_some())
            .map(|c| c.id)
            .collect();
        assert_eq!(rendered, IDS);
    }

    #[test]
    fn an_unknown_client_gets_the_lowest_bound_of_every_row() {
        let low = strictest();
        assert_eq!((low.tokens, low.chars, low.bytes), (TOKENS, 39_000, 11_000));
        assert_eq!(answer_limit_for(Some("cursor-vscode")), low);
        assert_eq!(answer_limit_for(None), low);
        // Whatever passes the strictest limit passes every client's.
        for client in CLIENTS {
            assert!(low.tokens <= client.limit.tokens);
            assert!(low.chars <= client.limit.chars && low.bytes <= client.limit.bytes);
        }
    }

    #[test]
    fn a_client_is_known_by_the_name_it_sends() {
        assert_eq!(answer_limit_for(Some("codex-mcp-client")).bytes, 47_000);
        assert_eq!(
            answer_limit_for(Some("gemini-cli-mcp-client")).chars,
            39_000
        );
        assert_eq!(
            answer_limit_for(Some("claude-code")),
            AnswerLimit {
                source: LimitSource::Client("claude-code"),
                ..AnswerLimit::default()
            }
        );
        assert_eq!(
            by_id("codex").map(|c| c.info_name),
            Some("codex-mcp-client")
        );
        // Names are matched whole: a prefix is somebody else.
        assert_eq!(by_info_name("claude"), None);
    }

    #[test]
    fn a_flag_overrides_its_unit_for_every_client() {
        let flags = AnswerOverrides {
            bytes: Some(11_000),
            ..AnswerOverrides::default()
        };
        let codex = flags.for_client(Some("codex-mcp-client"));
        assert_eq!((codex.bytes, codex.tokens), (11_000, TOKENS));
        assert_eq!(codex.source, LimitSource::Flags);
        let gemini = flags.for_client(Some("gemini-cli-mcp-client"));
        assert_eq!((gemini.chars, gemini.bytes), (39_000, 11_000));
        // No flag: the client's own limit, and the command line's default.
        let none = AnswerOverrides::default();
        assert_eq!(
            none.for_client(Some("codex-mcp-client")).source,
            LimitSource::Client("codex")
        );
        assert_eq!(none.for_command_line(), AnswerLimit::default());
    }
}
