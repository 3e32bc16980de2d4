//! LiteLLM's model list (`model_prices_and_context_window.json`, MIT) read as a
//! catalog: which entries become models, under which name, family and tokenizer.
//!
//! The same rules build the shipped catalog (`cargo xtask catalog --from <json>`)
//! and read a LiteLLM file given as `--models-file`, so a user can drop in the newest
//! file without waiting for a release and get exactly what a regeneration would give.
//!
//! Rules:
//! - **Entries**: `mode` `chat` or `responses`, from the providers in [`PROVIDERS`]
//!   (OpenAI, Anthropic, Google Gemini and Vertex Gemini, xAI, Mistral, DeepSeek,
//!   Meta), with `max_input_tokens`; `sample_spec` and fine-tune ids (`ft:`) skipped.
//! - **Names**: lower case, provider prefix (`gemini/`, `xai/`, `vertex_ai/`, ...)
//!   removed. When two entries give the same name, the first provider in
//!   [`PROVIDERS`] wins (Gemini's API over Vertex AI). A dated id (`<name>-<date>`, 4+
//!   digits and dashes, first group 4+ digits) with the same figures as `<name>` is dropped: it
//!   resolves to `<name>` by prefix.
//! - **Window**: `context_window` = `max_input_tokens`, the most input the API
//!   accepts (for GPT-5, 272,000 of its 400,000 total), so a budget never exceeds
//!   it; `max_output_tokens` (or `max_tokens`) capped at the window.
//! - **Prices**: `input_cost_per_token` / `output_cost_per_token` x 1,000,000, rounded
//!   to 6 decimals; 0 when LiteLLM gives none.
//! - **Tokenizer**: OpenAI: tiktoken's model table (`cl100k_base` / `o200k_base`),
//!   else an estimate. Anthropic: the Claude generation by version (see
//!   [`crate::ClaudeGeneration::of_model`]). Gemini 2.x and 3.x and Gemma 3: the Gemma 3
//!   vocabulary (exact; Google's SDK counts these models with it). Everything else
//!   (xAI, Mistral, DeepSeek, Meta, other Google models): the labelled `estimate`.
//! - **Family**: `claude-<major>[.<minor>]`, `gpt-4o`, `gpt-4.1`, `gpt-3.5`,
//!   `gpt-<major>`, `o-series`, `gemini-<major>[.<minor>]`, `gemma-<n>`,
//!   `grok-<major>`, `llama-<version>`, else the provider (`mistral`, `deepseek`, ...).

use std::collections::BTreeMap;

use serde::Deserialize;
use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::{Value, json};

use crate::ClaudeGeneration;

/// LiteLLM `litellm_provider` values taken, in priority order for duplicate names.
pub const PROVIDERS: [&str; 9] = [
    "openai",
    "anthropic",
    "gemini",
    "vertex_ai-language-models",
    "xai",
    "mistral",
    "deepseek",
    "meta_llama",
    "codestral",
];

/// Tokenizer names this module assigns (the catalog's `tokenizer` values).
pub const CL100K: &str = "cl100k_base";
pub const O200K: &str = "o200k_base";
pub const CLAUDE3: &str = "claude_estimate";
pub const CLAUDE47: &str = "claude_4_7_estimate";
pub const GEMMA3: &str = "gemma3";
pub const ESTIMATE: &str = "estimate";

/// One LiteLLM entry, the fields we read (others are ignored).
#[derive(Debug, Deserialize)]
struct Entry {
    litellm_provider: Option<String>,
    mode: Option<String>,
    max_input_tokens: Option<u64>,
    max_output_tokens: Option<u64>,
    max_tokens: Option<u64>,
    input_cost_per_token: Option<f64>,
    output_cost_per_token: Option<f64>,
}

/// The whole file: name -> entry, with `sample_spec` (a description of the fields,
/// whose values are prose) skipped. A bad field elsewhere is an error with its path.
struct Entries(Vec<(String, Entry)>);

impl<'de> Deserialize<'de> for Entries {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Entries, D::Error> {
        struct EntriesVisitor;
        impl<'de> Visitor<'de> for EntriesVisitor {
            type Value = Entries;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a LiteLLM model map (model name -> object)")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Entries, A::Error> {
                let mut entries = Vec::new();
                while let Some(name) = map.next_key::<String>()? {
                    if name == "sample_spec" {
                        map.next_value::<IgnoredAny>()?;
                    } else {
                        entries.push((name, map.next_value::<Entry>()?));
                    }
                }
                Ok(Entries(entries))
            }
        }
        deserializer.deserialize_map(EntriesVisitor)
    }
}

/// Whether a parsed JSON document looks like LiteLLM's file rather than ours: an
/// object without `models`, whose values are objects, one with `litellm_provider`.
pub fn is_litellm_shape(document: &Value) -> bool {
    let Some(object) = document.as_object() else {
        return false;
    };
    !object.contains_key("models")
        && object.values().all(Value::is_object)
        && object
            .values()
            .any(|entry| entry.get("litellm_provider").is_some())
}

/// A bad LiteLLM file: where, and why.
#[derive(Debug)]
pub struct ShapeError {
    pub line: usize,
    pub column: usize,
    pub field: String,
    pub reason: String,
}

/// Read a LiteLLM file into models in our models-file format (`{"models": [...]}`
/// entries as JSON objects), in the file's order.
pub fn models_from_litellm(json: &str) -> Result<Vec<Value>, ShapeError> {
    let shape_error = |field: String, error: serde_json::Error| {
        // serde_json's message ends with " at line L column C"; we report those apart.
        let reason = error.to_string();
        let reason = reason
            .rsplit_once(" at line ")
            .map_or(reason.as_str(), |(head, _)| head)
            .to_string();
        ShapeError {
            line: error.line(),
            column: error.column(),
            field,
            reason,
        }
    };
    let mut deserializer = serde_json::Deserializer::from_str(json);
    let entries: Entries = serde_path_to_error::deserialize(&mut deserializer)
        .map_err(|e| shape_error(e.path().to_string(), e.into_inner()))?;
    deserializer
        .end()
        .map_err(|e| shape_error(".".to_string(), e))?;
    Ok(select(entries.0))
}

/// A model as the rules make it, before serialization.
#[derive(Debug, Clone, PartialEq)]
struct Model {
    name: String,
    family: String,
    tokenizer: &'static str,
    context_window: u64,
    max_output_tokens: u64,
    input_usd_per_mtok: f64,
    output_usd_per_mtok: f64,
    provider_rank: usize,
}

fn select(entries: Vec<(String, Entry)>) -> Vec<Value> {
    let mut models: Vec<Model> = Vec::new();
    let mut index: BTreeMap<String, usize> = BTreeMap::new();
    for (key, entry) in entries {
        let Some(model) = to_model(&key, &entry) else {
            continue;
        };
        match index.get(&model.name) {
            Some(&at) if models[at].provider_rank <= model.provider_rank => {}
            Some(&at) => models[at] = model,
            None => {
                index.insert(model.name.clone(), models.len());
                models.push(model);
            }
        }
    }
    // Dated ids with the same figures as their base resolve to it by prefix.
    let kept: Vec<&Model> = models
        .iter()
        .filter(|m| {
            !dated_base(&m.name).is_some_and(|base| {
                index
                    .get(base)
                    .is_some_and(|&at| same_figures(&models[at], m))
            })
        })
        .collect();
    kept.into_iter()
        .map(|m| {
            json!({
                "name": m.name,
                "family": m.family,
                "tokenizer": m.tokenizer,
                "context_window": m.context_window,
                "max_output_tokens": m.max_output_tokens,
                "input_usd_per_mtok": m.input_usd_per_mtok,
                "output_usd_per_mtok": m.output_usd_per_mtok,
            })
        })
        .collect()
}

fn same_figures(a: &Model, b: &Model) -> bool {
    a.tokenizer == b.tokenizer
        && a.context_window == b.context_window
        && a.max_output_tokens == b.max_output_tokens
        && a.input_usd_per_mtok == b.input_usd_per_mtok
        && a.output_usd_per_mtok == b.output_usd_per_mtok
}

/// `<base>` of `<base>-<date>`: digits and dashes, the first group 4+ digits long
/// (`-20250514`, `-2024-08-06`, `-0613`; not the version in `claude-sonnet-5-5`).
fn dated_base(name: &str) -> Option<&str> {
    let bytes = name.as_bytes();
    let mut cut = None;
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'-' {
            let suffix = &name[i + 1..];
            if !suffix.is_empty()
                && suffix.bytes().all(|c| c.is_ascii_digit() || c == b'-')
                && suffix
                    .split('-')
                    .next()
                    .is_some_and(|group| group.len() >= 4)
            {
                cut = Some(i);
                break;
            }
        }
    }
    cut.map(|i| &name[..i])
}

fn to_model(key: &str, entry: &Entry) -> Option<Model> {
    let provider = entry.litellm_provider.as_deref()?;
    let provider_rank = PROVIDERS.iter().position(|p| *p == provider)?;
    if !matches!(entry.mode.as_deref(), Some("chat" | "responses")) {
        return None;
    }
    let key = key.to_ascii_lowercase();
    if key.starts_with("ft:") {
        return None;
    }
    let name = key.rsplit('/').next().unwrap_or(&key).to_string();
    let context_window = entry.max_input_tokens.filter(|&w| w > 0)?;
    let max_output_tokens = entry
        .max_output_tokens
        .or(entry.max_tokens)
        .unwrap_or(context_window)
        .min(context_window);
    let per_mtok = |cost: Option<f64>| {
        let value = cost.filter(|c| c.is_finite() && *c >= 0.0).unwrap_or(0.0) * 1e6;
        (value * 1e6).round() / 1e6
    };
    Some(Model {
        tokenizer: tokenizer_for(provider, &name),
        family: family_for(provider, &name),
        name,
        context_window,
        max_output_tokens,
        input_usd_per_mtok: per_mtok(entry.input_cost_per_token),
        output_usd_per_mtok: per_mtok(entry.output_cost_per_token),
        provider_rank,
    })
}

/// The tokenizer rule (see the module documentation).
pub fn tokenizer_for(provider: &str, name: &str) -> &'static str {
    match provider {
        "openai" => match tiktoken::model_to_encoding(name) {
            Some("cl100k_base") => CL100K,
            Some("o200k_base") => O200K,
            _ => ESTIMATE,
        },
        "anthropic" => match ClaudeGeneration::of_model(name) {
            ClaudeGeneration::Claude3 => CLAUDE3,
            ClaudeGeneration::Claude47 => CLAUDE47,
        },
        _ if uses_gemma3(name) => GEMMA3,
        _ => ESTIMATE,
    }
}

/// Gemini 2.x and 3.x (what Google's genai SDK counts with the Gemma 3 vocabulary)
/// and Gemma 3 models themselves.
fn uses_gemma3(name: &str) -> bool {
    if name.starts_with("gemma-3-") {
        return true;
    }
    let Some(rest) = name.strip_prefix("gemini-") else {
        return false;
    };
    let major = rest.split(['.', '-']).next().unwrap_or("");
    matches!(major, "2" | "3")
}

/// The family rule (see the module documentation).
pub fn family_for(provider: &str, name: &str) -> String {
    let version = |rest: &str| -> Option<String> {
        let mut parts = rest.split(['-', '.']);
        let major: u32 = parts.next()?.parse().ok()?;
        Some(major.to_string())
    };
    match provider {
        "anthropic" => {
            let generation_version = name
                .split('-')
                .filter_map(|p| p.parse::<u32>().ok().filter(|_| p.len() <= 2))
                .take(2)
                .collect::<Vec<_>>();
            match generation_version.as_slice() {
                [major, 0] | [major] => format!("claude-{major}"),
                [major, minor] => format!("claude-{major}.{minor}"),
                _ => "claude".into(),
            }
        }
        "openai" => {
            for line in ["gpt-4o", "gpt-4.1", "gpt-4.5", "gpt-3.5"] {
                if name.starts_with(line) {
                    return line.into();
                }
            }
            if name.starts_with("chatgpt-4o") {
                return "gpt-4o".into();
            }
            if name.len() > 1 && name.starts_with('o') && name.as_bytes()[1].is_ascii_digit() {
                return "o-series".into();
            }
            name.strip_prefix("gpt-")
                .and_then(version)
                .map_or_else(|| "openai".into(), |v| format!("gpt-{v}"))
        }
        "gemini" | "vertex_ai-language-models" => {
            if let Some(rest) = name.strip_prefix("gemma-") {
                return format!("gemma-{}", rest.split('-').next().unwrap_or(""));
            }
            let Some(rest) = name.strip_prefix("gemini-") else {
                return "google".into();
            };
            let mut parts = rest.split('-');
            match parts.next() {
                Some(v) if v.split('.').all(|p| p.parse::<u32>().is_ok()) => {
                    format!("gemini-{v}")
                }
                _ => "gemini".into(),
            }
        }
        "xai" => name
            .strip_prefix("grok-")
            .and_then(version)
            .map_or_else(|| "grok".into(), |v| format!("grok-{v}")),
        "meta_llama" => name
            .strip_prefix("llama-")
            .and_then(|rest| rest.split('-').next())
            .map_or_else(|| "llama".into(), |v| format!("llama-{v}")),
        "codestral" => "mistral".into(),
        other => other.into(),
    }
}

/// The hand-kept part of the shipped catalog (`data/catalog-overrides.json`), merged
/// over what the rules give.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Overrides {
    /// Why the file exists, for the reader; not used.
    #[allow(dead_code)]
    comment: Option<String>,
    /// When the catalog was last regenerated (YYYY-MM-DD).
    as_of: String,
    /// Alias -> the model it names.
    #[serde(default)]
    aliases: BTreeMap<String, String>,
    /// Model -> tokenizer, where a name carries no version the rules can read.
    #[serde(default)]
    tokenizers: BTreeMap<String, String>,
    /// Whole entries (our format): added, or replacing a generated one by name.
    #[serde(default)]
    models: Vec<serde_json::Map<String, Value>>,
    /// Anthropic's tool-use system prompt per model: read by `tool_defs`, not part of
    /// the generated catalog.
    #[allow(dead_code)]
    tool_use_system_prompt: Option<Value>,
}

/// Why a catalog could not be generated.
#[derive(Debug, thiserror::Error)]
pub enum GenerateError {
    #[error("LiteLLM file: line {line}, column {column}, at `{field}`: {reason}", line = .0.line, column = .0.column, field = .0.field, reason = .0.reason)]
    LiteLlm(ShapeError),
    #[error("overrides file: {0}")]
    Overrides(serde_json::Error),
    #[error("overrides file: {0} names `{1}`, which is not in the catalog")]
    UnknownTarget(&'static str, String),
}

/// The shipped catalog's text: LiteLLM's models by the rules, the overrides merged
/// on top, sorted by name, one model per line. Deterministic: the same inputs give
/// the same bytes (a test regenerates the shipped file and compares).
pub fn catalog_document(
    litellm_json: &str,
    overrides_json: &str,
    source: &str,
) -> Result<String, GenerateError> {
    let overrides: Overrides =
        serde_json::from_str(overrides_json).map_err(GenerateError::Overrides)?;
    let mut models: Vec<serde_json::Map<String, Value>> = models_from_litellm(litellm_json)
        .map_err(GenerateError::LiteLlm)?
        .into_iter()
        .filter_map(|m| m.as_object().cloned())
        .collect();
    let position = |models: &[serde_json::Map<String, Value>], name: &str| {
        models
            .iter()
            .position(|m| m.get("name").and_then(Value::as_str) == Some(name))
    };
    for (name, tokenizer) in &overrides.tokenizers {
        let at = position(&models, name)
            .ok_or_else(|| GenerateError::UnknownTarget("tokenizers", name.clone()))?;
        models[at].insert("tokenizer".into(), Value::String(tokenizer.clone()));
    }
    for model in overrides.models {
        let name = model
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        match position(&models, &name) {
            Some(at) => models[at] = model,
            None => models.push(model),
        }
    }
    for (alias, target) in &overrides.aliases {
        let at = position(&models, target)
            .ok_or_else(|| GenerateError::UnknownTarget("aliases", target.clone()))?;
        let aliases = models[at]
            .entry("aliases")
            .or_insert_with(|| Value::Array(Vec::new()));
        if let Value::Array(list) = aliases {
            list.push(Value::String(alias.clone()));
        }
    }
    models.sort_by(|a, b| {
        let name = |m: &serde_json::Map<String, Value>| {
            m.get("name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        name(a).cmp(&name(b))
    });
    let mut out = String::from("{\n");
    out += &format!("  \"as_of\": {},\n", Value::String(overrides.as_of));
    out += &format!("  \"source\": {},\n", Value::String(source.to_string()));
    out += "  \"models\": [\n";
    for (i, model) in models.iter().enumerate() {
        let fields: Vec<String> = model
            .iter()
            .map(|(key, value)| format!("{}: {}", Value::String(key.clone()), value))
            .collect();
        let comma = if i + 1 < models.len() { "," } else { "" };
        out += &format!("    {{ {} }}{comma}\n", fields.join(", "));
    }
    out += "  ]\n}\n";
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = r#"{
  "sample_spec": { "max_input_tokens": "max input tokens, if the provider specifies it" },
  "gpt-4o": { "litellm_provider": "openai", "mode": "chat", "max_input_tokens": 128000,
              "max_output_tokens": 16384, "input_cost_per_token": 2.5e-06, "output_cost_per_token": 1e-05 },
  "gpt-4o-2024-08-06": { "litellm_provider": "openai", "mode": "chat", "max_input_tokens": 128000,
              "max_output_tokens": 16384, "input_cost_per_token": 2.5e-06, "output_cost_per_token": 1e-05 },
  "gpt-4o-2024-05-13": { "litellm_provider": "openai", "mode": "chat", "max_input_tokens": 128000,
              "max_output_tokens": 4096, "input_cost_per_token": 5e-06, "output_cost_per_token": 1.5e-05 },
  "ft:gpt-4o-2024-08-06": { "litellm_provider": "openai", "mode": "chat", "max_input_tokens": 128000 },
  "text-embedding-3-small": { "litellm_provider": "openai", "mode": "embedding", "max_input_tokens": 8191 },
  "claude-opus-4-7": { "litellm_provider": "anthropic", "mode": "chat", "max_input_tokens": 1000000,
              "max_output_tokens": 128000, "input_cost_per_token": 5e-06, "output_cost_per_token": 2.5e-05 },
  "claude-sonnet-4-6": { "litellm_provider": "anthropic", "mode": "chat", "max_input_tokens": 1000000,
              "max_output_tokens": 128000, "input_cost_per_token": 3e-06, "output_cost_per_token": 1.5e-05 },
  "vertex_ai/gemini-2.5-pro": { "litellm_provider": "vertex_ai-language-models", "mode": "chat",
              "max_input_tokens": 1048576, "max_output_tokens": 65535, "input_cost_per_token": 1.25e-06 },
  "gemini/gemini-2.5-pro": { "litellm_provider": "gemini", "mode": "chat", "max_input_tokens": 1048576,
              "max_output_tokens": 65536, "input_cost_per_token": 1.25e-06, "output_cost_per_token": 1e-05 },
  "bedrock/us.anthropic.claude-opus-4-7": { "litellm_provider": "bedrock", "mode": "chat", "max_input_tokens": 1000000 },
  "xai/grok-4.3": { "litellm_provider": "xai", "mode": "chat", "max_input_tokens": 1000000,
              "max_output_tokens": 1000000, "input_cost_per_token": 1.25e-06, "output_cost_per_token": 2.5e-06 },
  "meta_llama/Llama-3.3-70B-Instruct": { "litellm_provider": "meta_llama", "mode": "chat",
              "max_input_tokens": 128000, "max_output_tokens": 4028 }
}"#;

    fn by_name(models: &[Value]) -> BTreeMap<String, Value> {
        models
            .iter()
            .map(|m| {
                (
                    m["name"].as_str().unwrap_or_default().to_string(),
                    m.clone(),
                )
            })
            .collect()
    }

    #[test]
    fn chat_models_of_major_providers_with_rules_applied() {
        let models = models_from_litellm(FILE).expect("valid file");
        let models = by_name(&models);
        let names: Vec<&str> = models.keys().map(String::as_str).collect();
        assert_eq!(
            names,
            [
                "claude-opus-4-7",
                "claude-sonnet-4-6",
                "gemini-2.5-pro",
                "gpt-4o",
                "gpt-4o-2024-05-13",
                "grok-4.3",
                "llama-3.3-70b-instruct"
            ]
        );
        let tokenizer = |n: &str| models[n]["tokenizer"].as_str().map(str::to_string);
        assert_eq!(tokenizer("gpt-4o").as_deref(), Some(O200K));
        assert_eq!(tokenizer("claude-opus-4-7").as_deref(), Some(CLAUDE47));
        assert_eq!(tokenizer("claude-sonnet-4-6").as_deref(), Some(CLAUDE3));
        assert_eq!(tokenizer("gemini-2.5-pro").as_deref(), Some(GEMMA3));
        assert_eq!(tokenizer("grok-4.3").as_deref(), Some(ESTIMATE));
        // Gemini's own API entry wins over Vertex AI's (65,536 vs 65,535 output).
        assert_eq!(models["gemini-2.5-pro"]["max_output_tokens"], 65536);
        assert_eq!(models["gpt-4o"]["input_usd_per_mtok"], 2.5);
        assert_eq!(models["claude-opus-4-7"]["output_usd_per_mtok"], 25.0);
        assert_eq!(models["grok-4.3"]["max_output_tokens"], 1000000);
        assert_eq!(models["llama-3.3-70b-instruct"]["input_usd_per_mtok"], 0.0);
        assert_eq!(models["llama-3.3-70b-instruct"]["family"], "llama-3.3");
        assert_eq!(models["claude-opus-4-7"]["family"], "claude-4.7");
        assert_eq!(models["gemini-2.5-pro"]["family"], "gemini-2.5");
        assert_eq!(models["grok-4.3"]["family"], "grok-4");
    }

    #[test]
    fn families_by_rule() {
        for (provider, name, family) in [
            ("anthropic", "claude-3-5-sonnet", "claude-3.5"),
            ("anthropic", "claude-sonnet-4-20250514", "claude-4"),
            ("anthropic", "claude-opus-5", "claude-5"),
            ("anthropic", "claude-haiku-4-5", "claude-4.5"),
            ("openai", "gpt-5.5", "gpt-5"),
            ("openai", "o3-mini", "o-series"),
            ("openai", "gpt-4-turbo", "gpt-4"),
            ("openai", "chatgpt-4o-latest", "gpt-4o"),
            ("openai", "computer-use-preview", "openai"),
            ("gemini", "gemini-3.1-pro-preview", "gemini-3.1"),
            ("gemini", "gemini-flash-latest", "gemini"),
            ("gemini", "gemma-3-27b-it", "gemma-3"),
            ("mistral", "mistral-large-3", "mistral"),
        ] {
            assert_eq!(family_for(provider, name), family, "{name}");
        }
    }

    #[test]
    fn tokenizers_by_rule() {
        for (provider, name, tokenizer) in [
            ("openai", "gpt-5.5", O200K),
            ("openai", "gpt-4", CL100K),
            ("openai", "gpt-6-sol", ESTIMATE),
            ("anthropic", "claude-opus-4-8", CLAUDE47),
            ("anthropic", "claude-haiku-4-5", CLAUDE3),
            ("gemini", "gemini-3-flash-preview", GEMMA3),
            ("gemini", "gemini-2.0-flash", GEMMA3),
            ("gemini", "gemini-1.5-pro", ESTIMATE),
            ("gemini", "gemini-4-argon", ESTIMATE),
            ("gemini", "gemma-3-27b-it", GEMMA3),
            ("deepseek", "deepseek-v4-pro", ESTIMATE),
        ] {
            assert_eq!(tokenizer_for(provider, name), tokenizer, "{name}");
        }
    }

    #[test]
    fn dated_ids() {
        assert_eq!(dated_base("gpt-4o-2024-08-06"), Some("gpt-4o"));
        assert_eq!(dated_base("claude-opus-4-20250514"), Some("claude-opus-4"));
        assert_eq!(dated_base("gpt-4-0613"), Some("gpt-4"));
        assert_eq!(dated_base("claude-sonnet-5-5"), None);
        assert_eq!(dated_base("gemini-2.0-flash-001"), None);
    }

    #[test]
    fn shape_is_recognised() {
        let ours: Value = serde_json::from_str(r#"{"models": []}"#).expect("json");
        let theirs: Value = serde_json::from_str(FILE).expect("json");
        assert!(!is_litellm_shape(&ours));
        assert!(is_litellm_shape(&theirs));
        assert!(!is_litellm_shape(&json!([])));
    }

    #[test]
    fn bad_fields_name_line_column_and_path() {
        let bad = FILE.replace("\"max_input_tokens\": 1000000,\n              \"max_output_tokens\": 128000, \"input_cost_per_token\": 3e-06", "\"max_input_tokens\": \"a lot\",\n              \"max_output_tokens\": 128000, \"input_cost_per_token\": 3e-06");
        let error = models_from_litellm(&bad).expect_err("string window");
        assert_eq!(error.field, "claude-sonnet-4-6.max_input_tokens");
        assert_eq!(error.line, 13);
        assert!(error.reason.contains("expected u64"), "{}", error.reason);
        let error = models_from_litellm("{\"a\": {\"mode\": \"chat\",}}").expect_err("syntax");
        assert_eq!(error.line, 1);
        assert!(error.field.starts_with('a'), "{}", error.field);
    }
}
