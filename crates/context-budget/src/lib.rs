//! The context-window planning engine behind the `context-loader` MCP server.
//!
//! It answers "how many tokens is this for model X?" and everything built on that:
//! which model a name means ([`Catalog`]), how a model's text is tokenized
//! ([`Tokenizer`]), a counter with input limits ([`TokenCounter`]), spec documents
//! measured by part ([`spec::SpecStore`]), and any files under a set of roots
//! measured or packed into a budget ([`files::FileStore`]).
//!
//! The spec and file tools share leaf modules rather than each other's internals:
//! `read` (a bounded read, binary sniff, UTF-8 check and line count, and
//! [`SkipReason`], why a file was not counted), `fan_out` (the one parallel for-each
//! over cores), `scan_control` ([`ScanControl`]: progress and cancellation) and
//! [`safe_open`] (the race-free open).
//!
//! Pure, synchronous library: no MCP, no async. The only I/O is reading files
//! under a specs root or file roots the caller names ([`files`]); counts a provider's API makes (exact Claude
//! counts) come in through a trait a server implements ([`ExactCounter`]). Errors are
//! typed ([`CountError`], [`FitError`], [`AssembleError`], [`CatalogError`], ...) so
//! adapters can map them onto their own error codes.

pub mod answer;
mod assemble;
pub mod cache;
mod catalog;
mod claude;
pub mod clients;
mod counter;
pub mod exact;
mod fan_out;
pub mod files;
mod fit;
mod huggingface;
pub mod limits;
pub mod litellm;
mod messages;
pub mod outline;
mod read;
pub mod safe_open;
mod scan_control;
pub mod sentencepiece;
pub mod spec;
mod suggest;
mod tokenizer;
pub mod tool_defs;
pub mod wire;

pub use answer::{AnswerLimit, AnswerSize, HIGHEST_ESTIMATE, LimitSource, Page};
pub use assemble::{
    ADR_LAYERED, AssembleError, AssembleOptions, AssembledContext, DEFAULT_PRIORITY,
    DEFAULT_SECTIONS, LayerBudgets, LayerBudgetsError, PRESETS, Preset, SECTION_SEPARATOR, Section,
    SectionReport, TRUNCATION_MARK, assemble_context, preset, ratio,
};
pub use exact::{ExactCountFailure, ExactCounter};
pub use fit::{
    DEFAULT_MARGIN, FitError, FitOptions, FittedMessages, Selection, Strategy, count_messages,
    fit_messages, input_budget, select,
};
pub use limits::{DEFAULT_MAX_INPUT_BYTES, InputLimits, LimitError};
pub use messages::{
    ChatOverhead, ContentBlock, FunctionCall, Message, MessageContent, Role, ToolCall,
    conversation_tokens, message_tokens, messages_bytes, overhead_method,
};

pub use catalog::{
    Catalog, CatalogError, DEFAULT_MAX_MODELS_FILE_BYTES, DEFAULT_MAX_MODELS_FILE_ENTRIES,
    ModelEntry, ModelInfo, ModelListing, ResolvedModel, read_models_file,
};
pub use claude::ClaudeGeneration;
pub use counter::{CountError, TokenCount, TokenCounter, Usd, cost, usd};
pub use huggingface::{HuggingFaceError, HuggingFaceTokenizer, MAX_TOKENIZER_FILE_BYTES};
pub use read::SkipReason;
pub use scan_control::{ScanControl, Unobserved};
pub use sentencepiece::{GEMMA3_MODEL_SHA256, gemma3_model_bytes};
pub use suggest::closest_names;
pub use tokenizer::{ClaudeEstimate, Estimate, PARALLEL_MIN_BYTES, Tokenizer};

/// The model used when a caller does not name one.
pub const DEFAULT_MODEL: &str = "gpt-4";
