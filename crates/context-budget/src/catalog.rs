//! The model catalog: which tokenizer, window and prices a model name means.
//!
//! The built-in catalog is data (`data/models.json`, dated, with its sources),
//! generated from LiteLLM's model list by `cargo xtask catalog` (rules in
//! [`crate::litellm`], hand-kept overrides in `data/catalog-overrides.json`). A
//! user's models file — ours, or LiteLLM's file as it is — extends it at startup.

use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::LazyLock;

use serde::{Deserialize, Serialize, Serializer};

use crate::Tokenizer;
use crate::huggingface::{self, HuggingFaceError};
use crate::litellm;
use crate::suggest::squash;

/// One model as the catalog describes it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelEntry {
    /// Canonical id, e.g. `gpt-4o` or `claude-sonnet-4-5`.
    pub name: String,
    /// Group used for filtering, e.g. `gpt-4o`, `o-series`, `claude-4.5`.
    pub family: String,
    #[serde(serialize_with = "tokenizer_name")]
    pub tokenizer: Tokenizer,
    /// The `tokenizer.json` of a `huggingface` tokenizer, as the models file gave it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tokenizer_file: Option<String>,
    /// Total tokens the model accepts (input + output; for catalog entries from
    /// LiteLLM, its `max_input_tokens`).
    pub context_window: u64,
    /// Most tokens of one reply; unknown when a models file leaves it out.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u64>,
    /// List price of input tokens; unknown (no cost shown) when a models file leaves
    /// it out.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_usd_per_mtok: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_usd_per_mtok: Option<f64>,
    /// Other exact names for this model (no prefix matching on these).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aliases: Vec<String>,
}

fn tokenizer_name<S: Serializer>(tokenizer: &Tokenizer, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(tokenizer.name())
}

/// A model as a file spells it; the tokenizer is resolved when the file is loaded.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEntry {
    name: String,
    family: String,
    tokenizer: String,
    #[serde(default)]
    tokenizer_file: Option<String>,
    context_window: u64,
    #[serde(default)]
    max_output_tokens: Option<u64>,
    #[serde(default)]
    input_usd_per_mtok: Option<f64>,
    #[serde(default)]
    output_usd_per_mtok: Option<f64>,
    #[serde(default)]
    aliases: Vec<String>,
}

/// How a file's tokenizer names are taken (every name must be known in both).
#[derive(Clone, Copy)]
enum Names<'a> {
    /// The built-in catalog.
    Strict,
    /// A user's models file: `huggingface` files resolve against this folder.
    User(&'a Path),
}

impl RawEntry {
    fn resolve(self, names: Names<'_>) -> Result<ModelEntry, CatalogError> {
        let tokenizer = match (Tokenizer::from_name(&self.tokenizer), names) {
            (Some(tokenizer), _) => tokenizer,
            (None, Names::User(folder)) if self.tokenizer == "huggingface" => {
                let Some(file) = &self.tokenizer_file else {
                    return Err(CatalogError::InvalidField {
                        name: self.name,
                        field: "tokenizer_file",
                        reason: "is required with \"tokenizer\": \"huggingface\"",
                    });
                };
                let tokenizer = huggingface::load_shared(&folder.join(file)).map_err(|source| {
                    CatalogError::TokenizerFile {
                        name: self.name.clone(),
                        source,
                    }
                })?;
                Tokenizer::HuggingFace(tokenizer)
            }
            // A misspelt name (`cl100k-base`) silently counted as a ×1.5 estimate
            // is a wrong answer nobody sees; `"estimate"` asks for that on purpose.
            (None, _) => {
                let known: Vec<&'static str> = Tokenizer::NAMED
                    .iter()
                    .map(|t| t.name())
                    .chain(["huggingface"])
                    .collect();
                let did_you_mean = crate::closest_names(&self.tokenizer, known.iter().copied(), 1)
                    .into_iter()
                    .next();
                return Err(CatalogError::UnknownTokenizer {
                    name: self.name,
                    tokenizer: self.tokenizer,
                    did_you_mean,
                    known,
                });
            }
        };
        Ok(ModelEntry {
            name: self.name,
            family: self.family,
            tokenizer,
            tokenizer_file: self.tokenizer_file,
            context_window: self.context_window,
            max_output_tokens: self.max_output_tokens,
            input_usd_per_mtok: self.input_usd_per_mtok,
            output_usd_per_mtok: self.output_usd_per_mtok,
            aliases: self.aliases,
        })
    }
}

/// One row of a catalog listing: the catalog entry plus what a caller needs to know about
/// its counts.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct ModelInfo {
    pub name: String,
    pub family: String,
    /// The tokenizer: `cl100k_base`, `o200k_base`, `gemma3`, `huggingface`
    /// (exact), or `claude_estimate`, `claude_4_7_estimate`, `estimate`.
    pub encoding: &'static str,
    /// True when local counts equal what the provider bills.
    pub exact: bool,
    pub context_window: u64,
    /// Absent when the models file does not give it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u64>,
    /// Absent when the models file gives no price.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_usd_per_mtok: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_usd_per_mtok: Option<f64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub aliases: Vec<String>,
}

/// The catalog, or the part of it a filter selects.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct ModelListing {
    /// The date the figures were checked (YYYY-MM-DD).
    pub as_of: String,
    pub source: String,
    /// Models matching the filter (all of them, not only this page).
    pub count: usize,
    /// This page of `models`: cut by `limit` and by the server's answer limit;
    /// `next` is the `offset` for the rows after it.
    #[serde(flatten)]
    pub page: crate::answer::Page,
    pub models: Vec<ModelInfo>,
    /// Every family in the catalog, to refine a filter that matched nothing.
    pub families: Vec<String>,
    /// Encoding names that can be used as a model for exact counts without a window.
    pub encodings: Vec<&'static str>,
}

/// The model a requested name resolved to, with the name as the caller sent it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ResolvedModel<'a> {
    /// As sent (or [`crate::DEFAULT_MODEL`]): a provider bills the caller's dated id,
    /// not our canonical name, so exact counting asks with this.
    requested: &'a str,
    target: Target<'a>,
}

/// What a name resolves to.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Target<'a> {
    /// A catalog entry (by exact name, alias, or dated/suffixed id).
    Model(&'a ModelEntry),
    /// A bare encoding name such as `cl100k_base`: exact counts, no window or prices.
    Encoding(Tokenizer),
}

impl<'a> ResolvedModel<'a> {
    pub fn tokenizer(&self) -> Tokenizer {
        match self.target {
            Target::Model(entry) => entry.tokenizer,
            Target::Encoding(tokenizer) => tokenizer,
        }
    }

    /// The name actually used: the catalog's canonical name or the encoding name.
    pub fn name(&self) -> &'a str {
        match self.target {
            Target::Model(entry) => &entry.name,
            Target::Encoding(tokenizer) => tokenizer.name(),
        }
    }

    /// The name the caller asked for, as sent (a dated id such as
    /// `claude-sonnet-4-5-20250929`, or the default model's name).
    pub fn requested(&self) -> &'a str {
        self.requested
    }

    /// The name asked for, when it is not the model used (a dated id, an alias, a
    /// vendor suffix): answers show both, so a swap is never silent.
    pub fn requested_if_other(&self) -> Option<String> {
        let requested = self.requested.trim();
        (!requested.eq_ignore_ascii_case(self.name())).then(|| requested.to_string())
    }

    /// The catalog entry (window, prices); `None` for a bare encoding name.
    pub fn entry(&self) -> Option<&'a ModelEntry> {
        match self.target {
            Target::Model(entry) => Some(entry),
            Target::Encoding(_) => None,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    #[error("model catalog is not valid JSON: {0}")]
    Parse(#[from] serde_json::Error),
    #[error("{origin}: line {line}, column {column}, at `{field}`: {reason}")]
    Malformed {
        origin: String,
        line: usize,
        column: usize,
        /// Path of the offending field, e.g. `models[2].context_window` (`.` for the root).
        field: String,
        reason: String,
    },
    #[error("model catalog names `{0}` twice")]
    DuplicateName(String),
    #[error("model `{name}` has an invalid field `{field}`: {reason}")]
    InvalidField {
        name: String,
        field: &'static str,
        reason: &'static str,
    },
    #[error("model `{name}`: tokenizer `{tokenizer}` is not known{}; known: {}",
        did_you_mean.as_ref().map(|d| format!(" (did you mean `{d}`?)")).unwrap_or_default(),
        known.join(", "))]
    UnknownTokenizer {
        name: String,
        tokenizer: String,
        did_you_mean: Option<String>,
        known: Vec<&'static str>,
    },
    #[error("model `{name}`: {source}")]
    TokenizerFile {
        name: String,
        source: HuggingFaceError,
    },
    #[error("{origin}: cannot read: {reason}")]
    Unreadable { origin: String, reason: String },
    #[error("{origin}: {size} bytes, more than the limit of {max}")]
    FileTooLarge { origin: String, size: u64, max: u64 },
    #[error("{origin}: {count} models, more than the limit of {max}")]
    TooManyModels {
        origin: String,
        count: usize,
        max: usize,
    },
}

/// Largest models file read at start-up, by default (LiteLLM's whole list is ~1.5 MB):
/// the file is parsed whole, so this bounds start-up memory.
pub const DEFAULT_MAX_MODELS_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// Most models one models file may list, by default (LiteLLM lists ~2,600): each is
/// resolved and checked at start-up and searched by every call's model lookup.
pub const DEFAULT_MAX_MODELS_FILE_ENTRIES: usize = 50_000;

/// Read a models file: opened without blocking as a regular file (a FIFO or a device
/// such as `/dev/zero` is refused, never waited on or read without end), at most
/// `max_bytes` (checked on the handle's size, and again while reading, for a file
/// that grows), and UTF-8. `origin` names it in errors.
pub fn read_models_file(path: &Path, origin: &str, max_bytes: u64) -> Result<String, CatalogError> {
    use std::io::Read;
    let unreadable = |reason: String| CatalogError::Unreadable {
        origin: origin.to_string(),
        reason,
    };
    let too_large = |size| CatalogError::FileTooLarge {
        origin: origin.to_string(),
        size,
        max: max_bytes,
    };
    let (file, metadata) =
        crate::safe_open::open_named_regular(path).map_err(|e| unreadable(e.to_string()))?;
    if metadata.len() > max_bytes {
        return Err(too_large(metadata.len()));
    }
    let mut bytes = Vec::with_capacity(metadata.len() as usize);
    file.take(max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| unreadable(e.to_string()))?;
    if bytes.len() as u64 > max_bytes {
        return Err(too_large(bytes.len() as u64));
    }
    String::from_utf8(bytes).map_err(|e| unreadable(format!("not UTF-8 ({e})")))
}

/// A dated list of models.
#[derive(Debug, Clone, Serialize)]
pub struct Catalog {
    /// The date the figures were checked (YYYY-MM-DD).
    pub as_of: String,
    /// Where the figures come from.
    pub source: String,
    pub models: Vec<ModelEntry>,
}

/// A catalog file in our format (`as_of` and `source` optional in a user's file).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCatalog {
    as_of: Option<String>,
    source: Option<String>,
    models: Vec<RawEntry>,
}

static BUILTIN: LazyLock<Catalog> = LazyLock::new(|| {
    // The file is part of the crate and checked by a unit test, so a failure here
    // is a build defect, not bad user input.
    Catalog::from_json(include_str!("../data/models.json"))
        .unwrap_or_else(|e| panic!("built-in data/models.json is invalid: {e}"))
});

impl Catalog {
    /// The catalog shipped with this crate, parsed once per process.
    pub fn builtin() -> &'static Catalog {
        &BUILTIN
    }

    /// Parse and validate a catalog: known tokenizers, unique names, positive
    /// windows, sane prices.
    pub fn from_json(json: &str) -> Result<Catalog, CatalogError> {
        let raw: RawCatalog = serde_json::from_str(json)?;
        let catalog = Catalog {
            as_of: raw.as_of.unwrap_or_default(),
            source: raw.source.unwrap_or_default(),
            models: raw
                .models
                .into_iter()
                .map(|m| m.resolve(Names::Strict))
                .collect::<Result<_, _>>()?,
        };
        catalog.validate()?;
        Ok(catalog)
    }

    fn validate(&self) -> Result<(), CatalogError> {
        let mut seen = HashSet::new();
        for model in &self.models {
            for name in std::iter::once(&model.name).chain(&model.aliases) {
                if !seen.insert(name.to_ascii_lowercase())
                    || Tokenizer::from_encoding_name(name).is_some()
                {
                    return Err(CatalogError::DuplicateName(name.clone()));
                }
            }
            let invalid = |field, reason| CatalogError::InvalidField {
                name: model.name.clone(),
                field,
                reason,
            };
            if model.context_window == 0 {
                return Err(invalid("context_window", "must be positive"));
            }
            if model
                .max_output_tokens
                .is_some_and(|max| max > model.context_window)
            {
                return Err(invalid("max_output_tokens", "exceeds context_window"));
            }
            for (field, price) in [
                ("input_usd_per_mtok", model.input_usd_per_mtok),
                ("output_usd_per_mtok", model.output_usd_per_mtok),
            ] {
                if let Some(price) = price
                    && (!price.is_finite() || price < 0.0)
                {
                    return Err(invalid(field, "must be a finite, non-negative number"));
                }
            }
        }
        Ok(())
    }

    /// [`Self::with_models_file`] with `huggingface` tokenizer files resolved against
    /// the current directory: shorthand for tests, which have no models file folder.
    #[cfg(test)]
    pub fn with_overrides(&self, json: &str, origin: &str) -> Result<Catalog, CatalogError> {
        self.with_models_file(json, origin, Path::new("."))
    }

    /// This catalog extended by a user's models file: our format (as
    /// `data/models.json`; `as_of` and `source` optional) or LiteLLM's
    /// `model_prices_and_context_window.json` as it is (recognised by its shape, read
    /// by the rules that build the built-in catalog, [`crate::litellm`]). A model whose
    /// name is already in the catalog replaces it; any other is added. The result is
    /// validated like the built-in catalog.
    ///
    /// `origin` (e.g. the path) names the file in errors, which carry the line,
    /// column and field of the problem. A `huggingface` tokenizer's `tokenizer_file`
    /// resolves against `folder` (the models file's folder) and is read and built now,
    /// once per file for the process; a missing or invalid file is an error naming it.
    /// An unknown tokenizer name is an error suggesting the closest known one
    /// (`"estimate"` asks for the labelled estimate). `max_output_tokens` and the
    /// prices may be left out: no cost is shown for such a model.
    pub fn with_models_file(
        &self,
        json: &str,
        origin: &str,
        folder: &Path,
    ) -> Result<Catalog, CatalogError> {
        self.with_models_file_limited(json, origin, folder, DEFAULT_MAX_MODELS_FILE_ENTRIES)
    }

    /// [`Self::with_models_file`] refusing a file of more than `max_entries` models
    /// (`TooManyModels`) before any is resolved.
    pub fn with_models_file_limited(
        &self,
        json: &str,
        origin: &str,
        folder: &Path,
        max_entries: usize,
    ) -> Result<Catalog, CatalogError> {
        let malformed = |field: String, error: serde_json::Error| {
            // serde_json's message ends with " at line L column C"; we report those apart.
            let reason = error.to_string();
            let reason = reason
                .rsplit_once(" at line ")
                .map_or(reason.as_str(), |(head, _)| head)
                .to_string();
            CatalogError::Malformed {
                origin: origin.to_string(),
                line: error.line(),
                column: error.column(),
                field,
                reason,
            }
        };
        let document: serde_json::Value =
            serde_json::from_str(json).map_err(|e| malformed(".".to_string(), e))?;
        let (as_of, source, raw_models) = if litellm::is_litellm_shape(&document) {
            let models =
                litellm::models_from_litellm(json).map_err(|e| CatalogError::Malformed {
                    origin: origin.to_string(),
                    line: e.line,
                    column: e.column,
                    field: e.field,
                    reason: e.reason,
                })?;
            let count = models.len();
            let raw: Vec<RawEntry> = models
                .into_iter()
                .map(serde_json::from_value)
                .collect::<Result<_, _>>()?;
            (
                None,
                Some(format!("LiteLLM model list, {count} chat models")),
                raw,
            )
        } else {
            let mut deserializer = serde_json::Deserializer::from_str(json);
            let file: RawCatalog = serde_path_to_error::deserialize(&mut deserializer)
                .map_err(|e| malformed(e.path().to_string(), e.into_inner()))?;
            (file.as_of, file.source, file.models)
        };
        if raw_models.len() > max_entries {
            return Err(CatalogError::TooManyModels {
                origin: origin.to_string(),
                count: raw_models.len(),
                max: max_entries,
            });
        }
        let mut merged = self.clone();
        // Indexed by name, so merging n models is linear (a search per model was
        // quadratic: 100k models took 18 s).
        let mut index: HashMap<String, usize> = merged
            .models
            .iter()
            .enumerate()
            .map(|(i, m)| (m.name.to_ascii_lowercase(), i))
            .collect();
        for raw in raw_models {
            let model = raw.resolve(Names::User(folder))?;
            match index.entry(model.name.to_ascii_lowercase()) {
                Entry::Occupied(at) => merged.models[*at.get()] = model,
                Entry::Vacant(slot) => {
                    slot.insert(merged.models.len());
                    merged.models.push(model);
                }
            }
        }
        merged.source = format!(
            "{} Extended by {origin}{}{}",
            merged.source,
            as_of.map(|d| format!(" (as of {d})")).unwrap_or_default(),
            source.map(|s| format!(": {s}")).unwrap_or_default(),
        );
        // Validate the whole: an added alias may collide with a built-in name.
        merged.validate()?;
        Ok(merged)
    }

    /// Resolve a user-supplied model name, the way tiktoken's model table does:
    ///
    /// 1. an exact canonical name or alias (case-insensitive);
    /// 2. an exact encoding name (`cl100k_base`, `o200k_base`, `gemma3`);
    /// 3. the longest canonical name that is a prefix of the id and is followed by
    ///    `-`, `:` or `@` and a suffix of the vendors' own ([`vendor_suffix`]: dated
    ///    snapshots, versions, `latest`/`preview`/`exp` tags) — so
    ///    `gpt-4o-2024-08-06` is `gpt-4o`, `gpt-4-0613` is `gpt-4`, and
    ///    `claude-sonnet-4-5-20250929` is `claude-sonnet-4-5`, while `gpt-4o` never
    ///    matches `gpt-4`, and `gpt-4-oo` or `gpt-4o-mini-typo` match nothing (they
    ///    counted as `gpt-4`'s 8K window and `gpt-4o-mini`, silently). A leading `ft:`
    ///    (fine-tune) is ignored.
    ///    A prefix match whose suffix crosses into another model is none: `gpt-4-o`
    ///    reads as `gpt-4o` with a stray separator, not as a dated `gpt-4`
    ///    ([`Self::crossed_into`] names that model).
    pub fn resolve<'a>(&'a self, requested: &'a str) -> Option<ResolvedModel<'a>> {
        let resolved = |target| ResolvedModel { requested, target };
        let wanted = requested.trim().to_ascii_lowercase();
        let wanted = wanted.strip_prefix("ft:").unwrap_or(&wanted);
        if let Some(model) = self.models.iter().find(|m| {
            m.name.eq_ignore_ascii_case(wanted)
                || m.aliases.iter().any(|a| a.eq_ignore_ascii_case(wanted))
        }) {
            return Some(resolved(Target::Model(model)));
        }
        if let Some(tokenizer) = Tokenizer::from_encoding_name(wanted) {
            return Some(resolved(Target::Encoding(tokenizer)));
        }
        let fine_tune = requested.trim().to_ascii_lowercase().starts_with("ft:");
        let model = self.longest_prefix(wanted, |suffix| {
            // OpenAI's fine-tunes: `ft:<base>:<org>:<name>:<id>`.
            vendor_suffix(suffix)
                || fine_tune && wanted.as_bytes()[wanted.len() - suffix.len() - 1] == b':'
        })?;
        if self.crossing(wanted, model).is_some() {
            return None;
        }
        Some(resolved(Target::Model(model)))
    }

    /// The catalog model whose name is the longest prefix of `wanted` (lower case)
    /// ending at a separator, followed by a suffix `suffix_ok` accepts.
    fn longest_prefix(
        &self,
        wanted: &str,
        suffix_ok: impl Fn(&str) -> bool,
    ) -> Option<&ModelEntry> {
        self.models
            .iter()
            .filter(|m| {
                let name = m.name.to_ascii_lowercase();
                wanted.len() > name.len()
                    && wanted.starts_with(&name)
                    && matches!(wanted.as_bytes()[name.len()], b'-' | b':' | b'@')
                    && suffix_ok(&wanted[name.len() + 1..])
            })
            .max_by_key(|m| m.name.len())
    }

    /// Another model that `wanted`, read without its separators, names beyond
    /// `prefix`'s name: at a separator boundary of `wanted`, the squashed text equals
    /// a longer squashed catalog name (`gpt-4-o` → `gpt4o` = `gpt-4o`, `gpt-4-1-mini`
    /// → `gpt-4.1-mini`), while a date or tag (`gpt-4-0613`, `gpt-4-1106-preview`)
    /// names none.
    fn crossing<'a>(&'a self, wanted: &str, prefix: &ModelEntry) -> Option<&'a str> {
        let own = squash(&prefix.name).len();
        let mut read = String::new();
        let mut boundaries = Vec::new();
        for part in wanted.split(['-', ':', '@', '.', '_']) {
            read.push_str(part);
            if !part.is_empty() && read.len() > own {
                boundaries.push(read.clone());
            }
        }
        self.models
            .iter()
            .filter(|m| !std::ptr::eq(*m, prefix))
            .flat_map(|m| std::iter::once(&m.name).chain(&m.aliases))
            .map(|name| (squash(name), name))
            .filter(|(squashed, _)| squashed.len() > own && boundaries.contains(squashed))
            // The most it reads as: `gpt-4-1-mini` is gpt-4.1-mini, not gpt-4.1.
            .max_by_key(|(squashed, _)| squashed.len())
            .map(|(_, name)| name.as_str())
    }

    /// The model `requested` was refused as, when a prefix match crossed into it
    /// (`gpt-4-o` → `gpt-4o`); for "did you mean".
    pub fn crossed_into(&self, requested: &str) -> Option<&str> {
        let wanted = requested.trim().to_ascii_lowercase();
        let wanted = wanted.strip_prefix("ft:").unwrap_or(&wanted);
        // Any suffix: `gpt-4-o` is refused as gpt-4 with a typo, but it means gpt-4o.
        let model = self.longest_prefix(wanted, |_| true)?;
        self.crossing(wanted, model)
    }

    /// Every name `resolve` accepts exactly: canonical names, aliases, encodings.
    pub fn names(&self) -> Vec<&str> {
        self.models
            .iter()
            .flat_map(|m| {
                std::iter::once(m.name.as_str()).chain(m.aliases.iter().map(String::as_str))
            })
            .chain(Tokenizer::EXACT.iter().map(|t| t.name()))
            .collect()
    }

    /// The listing `list-models` returns: models matching `filter` (see [`Self::filter`]).
    pub fn listing(&self, filter: Option<&str>) -> ModelListing {
        let models: Vec<ModelInfo> = self
            .filter(filter)
            .map(|m| ModelInfo {
                name: m.name.clone(),
                family: m.family.clone(),
                encoding: m.tokenizer.name(),
                exact: m.tokenizer.is_exact(),
                context_window: m.context_window,
                max_output_tokens: m.max_output_tokens,
                input_usd_per_mtok: m.input_usd_per_mtok,
                output_usd_per_mtok: m.output_usd_per_mtok,
                aliases: m.aliases.clone(),
            })
            .collect();
        let mut families: Vec<String> = Vec::new();
        for model in &self.models {
            if !families.contains(&model.family) {
                families.push(model.family.clone());
            }
        }
        ModelListing {
            as_of: self.as_of.clone(),
            source: self.source.clone(),
            count: models.len(),
            page: crate::answer::Page::of(0, models.len(), models.len()),
            models,
            families,
            encodings: Tokenizer::EXACT.iter().map(|t| t.name()).collect(),
        }
    }

    /// Models whose name or family starts with `filter` (case-insensitive); all when `None`.
    pub fn filter<'a>(
        &'a self,
        filter: Option<&'a str>,
    ) -> impl Iterator<Item = &'a ModelEntry> + 'a {
        let filter = filter.map(str::to_ascii_lowercase);
        self.models.iter().filter(move |m| match &filter {
            None => true,
            Some(f) => {
                m.name.to_ascii_lowercase().starts_with(f.as_str())
                    || m.family.to_ascii_lowercase().starts_with(f.as_str())
            }
        })
    }
}

/// Whether `suffix` (what follows a model name and a separator) is one the vendors
/// put on a model's own name: its parts (split at `-`, `:`, `@`, `.`, `_`) are all
/// numbers (dates `2024-08-06`, `20250929`, `0613`; versions `001`), versions
/// (`v1`, `v2:0`), sizes (`8b`), or the release words `latest`, `preview`, `exp`,
/// `experimental`, `beta`, `alpha`, `free`. Anything else names another model or a
/// typo, and is not read as this one.
fn vendor_suffix(suffix: &str) -> bool {
    const WORDS: &[&str] = &[
        "latest",
        "preview",
        "exp",
        "experimental",
        "beta",
        "alpha",
        "free",
    ];
    let number = |p: &str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit());
    !suffix.is_empty()
        && suffix.split(['-', ':', '@', '.', '_']).all(|part| {
            number(part)
                || WORDS.contains(&part)
                || part.strip_prefix('v').is_some_and(number)
                || part.strip_suffix('b').is_some_and(number)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolved(name: &str) -> Option<String> {
        Catalog::builtin()
            .resolve(name)
            .map(|r| r.name().to_string())
    }

    #[test]
    fn builtin_catalog_parses_and_covers_the_required_models() {
        let catalog = Catalog::builtin();
        for name in [
            "gpt-4",
            "gpt-4-turbo",
            "gpt-3.5-turbo",
            "gpt-4o",
            "gpt-4o-mini",
            "gpt-4.1",
            "gpt-4.1-mini",
            "gpt-4.1-nano",
            "o1",
            "o3",
            "o3-mini",
            "o4-mini",
            "gpt-5",
            "gpt-5-mini",
            "gpt-5-nano",
            "gpt-5.1",
            "gpt-5.2",
            "claude-3-haiku",
            "claude-3-opus",
            "claude-3-5-sonnet",
            "claude-3-5-haiku",
            "claude-3-7-sonnet",
            "claude-sonnet-4",
            "claude-opus-4",
            "claude-sonnet-4-5",
            "claude-haiku-4-5",
            "claude-opus-4-5",
            "claude",
            // Current models, by their published names (LiteLLM 1.109.1).
            "claude-sonnet-4-6",
            "claude-opus-4-6",
            "claude-opus-4-7",
            "claude-opus-4-8",
            "claude-opus-5",
            "gpt-5.5",
            "gemini-2.5-pro",
            "gemini-2.5-flash",
            "gemini-3-flash-preview",
            "grok-4.3",
            "mistral-large-3",
            "deepseek-v4-pro",
            "llama-3.3-70b-instruct",
        ] {
            assert!(catalog.resolve(name).is_some(), "{name} is missing");
        }
        for (name, tokenizer) in [
            ("claude-sonnet-4-6", Tokenizer::ClaudeEstimate),
            ("claude-3-5-sonnet", Tokenizer::ClaudeEstimate),
            ("claude-opus-4-7-20260416", Tokenizer::Claude47Estimate),
            ("claude-opus-5", Tokenizer::Claude47Estimate),
            ("claude", Tokenizer::Claude47Estimate),
            ("gemini-2.5-pro", Tokenizer::Gemma3),
            ("gemini-pro-latest", Tokenizer::Gemma3),
            ("gpt-5.5-2026-04-23", Tokenizer::O200kBase),
            ("grok-4.3", Tokenizer::Estimate),
        ] {
            assert_eq!(
                catalog.resolve(name).map(|r| r.tokenizer()),
                Some(tokenizer),
                "{name}"
            );
        }
        assert!(catalog.source.contains("LiteLLM 1.109.1"));
        assert_eq!(catalog.as_of.len(), 10, "as_of must be a YYYY-MM-DD date");
    }

    #[test]
    fn dated_and_suffixed_ids_resolve_by_longest_prefix() {
        for (id, model) in [
            ("gpt-4o-2024-08-06", "gpt-4o"),
            ("gpt-4o-mini-2024-07-18", "gpt-4o-mini"),
            ("gpt-4-0613", "gpt-4"),
            ("gpt-4-turbo-2024-04-09", "gpt-4-turbo"),
            ("gpt-4.1-mini-2025-04-14", "gpt-4.1-mini"),
            ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
            ("claude-sonnet-4-20250514", "claude-sonnet-4"),
            ("claude-3-5-sonnet-latest", "claude-3-5-sonnet"),
            ("ft:gpt-4o-mini:acme::abc123", "gpt-4o-mini"),
            ("GPT-4O", "gpt-4o"),
        ] {
            assert_eq!(resolved(id).as_deref(), Some(model), "{id}");
        }
    }

    #[test]
    fn prefixes_only_match_at_a_separator() {
        // `gpt-4o` must not be read as `gpt-4` + "o", nor `gpt-5.3` as `gpt-5`.
        assert_eq!(resolved("gpt-4o").as_deref(), Some("gpt-4o"));
        assert_eq!(resolved("gpt-5.3"), None);
        assert_eq!(resolved("gpt-40"), None);
        // Aliases are exact: `claude` is a name, not a prefix for every `claude-*` id.
        assert_eq!(resolved("claude").as_deref(), Some("claude-opus-4-7"));
        assert_eq!(resolved("claude-banana"), None);
        assert_eq!(resolved(""), None);
    }

    #[test]
    fn a_prefix_that_crosses_into_another_model_is_refused() {
        // `gpt-4-o` counted as gpt-4 (cl100k, 8K window): it means gpt-4o.
        let catalog = Catalog::builtin();
        for (id, meant) in [
            ("gpt-4-o", "gpt-4o"),
            ("gpt-4-o-2024-08-06", "gpt-4o"),
            ("gpt-4-1-mini", "gpt-4.1-mini"),
            ("GPT-4-O-mini", "gpt-4o-mini"),
        ] {
            assert_eq!(resolved(id), None, "{id}");
            assert_eq!(catalog.crossed_into(id), Some(meant), "{id}");
        }
        // Dates and tags cross into nothing.
        for (id, model) in [
            ("gpt-4-0613", "gpt-4"),
            ("gpt-4-0314-preview", "gpt-4"),
            ("gpt-4o-2024-08-06", "gpt-4o"),
            ("claude-sonnet-4-20250514", "claude-sonnet-4"),
        ] {
            assert_eq!(resolved(id).as_deref(), Some(model), "{id}");
            assert_eq!(catalog.crossed_into(id), None, "{id}");
        }
    }

    #[test]
    fn encoding_names_are_models_without_window() {
        let catalog = Catalog::builtin();
        let cl100k = catalog.resolve("cl100k_base").expect("encoding resolves");
        assert_eq!(cl100k.tokenizer(), Tokenizer::Cl100kBase);
        assert!(cl100k.entry().is_none());
        assert_eq!(
            catalog.resolve("o200k_base").map(|r| r.tokenizer()),
            Some(Tokenizer::O200kBase)
        );
        assert!(catalog.names().contains(&"cl100k_base"));
    }

    #[test]
    fn tokenizers_match_tiktoken_model_table() {
        for (model, encoding) in [
            ("gpt-4", "cl100k_base"),
            ("gpt-3.5-turbo", "cl100k_base"),
            ("gpt-4-turbo", "cl100k_base"),
            ("gpt-4o", "o200k_base"),
            ("gpt-4.1", "o200k_base"),
            ("o1", "o200k_base"),
            ("o3-mini", "o200k_base"),
            ("gpt-5", "o200k_base"),
        ] {
            let resolved = Catalog::builtin().resolve(model).expect("model resolves");
            assert_eq!(resolved.tokenizer().name(), encoding, "{model}");
            assert_eq!(
                tiktoken::model_to_encoding(model),
                Some(encoding),
                "{model} per tiktoken"
            );
        }
    }

    #[test]
    fn filter_matches_name_or_family_prefix() {
        let catalog = Catalog::builtin();
        let claude: Vec<_> = catalog
            .filter(Some("claude-4.5"))
            .map(|m| m.name.as_str())
            .collect();
        assert_eq!(
            claude,
            ["claude-haiku-4-5", "claude-opus-4-5", "claude-sonnet-4-5"]
        );
        let gpt41: Vec<_> = catalog
            .filter(Some("GPT-4.1"))
            .map(|m| m.name.as_str())
            .collect();
        assert_eq!(gpt41, ["gpt-4.1", "gpt-4.1-mini", "gpt-4.1-nano"]);
        assert_eq!(catalog.filter(None).count(), catalog.models.len());
        assert_eq!(catalog.filter(Some("nothing-like-this")).count(), 0);
        assert!(
            catalog
                .filter(Some("llama"))
                .all(|m| m.family.starts_with("llama"))
        );
    }

    #[test]
    fn listing_reports_encoding_and_exactness() {
        let listing = Catalog::builtin().listing(Some("claude-3-5"));
        assert_eq!(listing.count, 2);
        assert!(
            listing
                .models
                .iter()
                .all(|m| m.encoding == "claude_estimate" && !m.exact)
        );
        let gpt4o = Catalog::builtin().listing(Some("gpt-4o-mini"));
        assert_eq!(gpt4o.models[0].encoding, "o200k_base");
        assert!(gpt4o.models[0].exact);
        assert!(gpt4o.families.contains(&"claude-4.5".to_string()));
        assert_eq!(Catalog::builtin().listing(Some("nothing")).count, 0);
    }

    const USER_FILE: &str = r#"{
  "as_of": "2026-01-10",
  "models": [
    { "name": "gpt-4o", "family": "gpt-4o", "tokenizer": "o200k_base", "context_window": 128000,
      "max_output_tokens": 16384, "input_usd_per_mtok": 1.25, "output_usd_per_mtok": 5.0 },
    { "name": "acme-chat", "family": "acme", "tokenizer": "cl100k_base", "context_window": 32000,
      "max_output_tokens": 4000, "input_usd_per_mtok": 0.1, "output_usd_per_mtok": 0.2,
      "aliases": ["acme"] }
  ]
}"#;

    #[test]
    fn a_models_file_overrides_prices_and_adds_models() {
        let builtin = Catalog::builtin();
        let merged = builtin
            .with_overrides(USER_FILE, "my-models.json")
            .expect("valid file");
        assert_eq!(merged.models.len(), builtin.models.len() + 1);
        let gpt4o = merged
            .resolve("gpt-4o-2024-08-06")
            .and_then(|r| r.entry().cloned());
        assert_eq!(gpt4o.and_then(|s| s.input_usd_per_mtok), Some(1.25));
        assert_eq!(
            merged
                .resolve("acme")
                .map(|r| r.name().to_string())
                .as_deref(),
            Some("acme-chat")
        );
        assert!(merged.source.contains("my-models.json (as of 2026-01-10)"));
        assert_eq!(merged.as_of, builtin.as_of);
    }

    #[test]
    fn malformed_models_files_name_line_column_and_field() {
        let wrong_type =
            USER_FILE.replace("\"context_window\": 32000", "\"context_window\": \"big\"");
        let err = Catalog::builtin()
            .with_overrides(&wrong_type, "m.json")
            .expect_err("string window");
        let CatalogError::Malformed {
            line,
            field,
            reason,
            ..
        } = &err
        else {
            panic!("{err}");
        };
        assert_eq!((*line, field.as_str()), (6, "models[1].context_window"));
        assert!(reason.contains("expected u64"), "{reason}");
        assert!(
            err.to_string().starts_with("m.json: line 6, column "),
            "{err}"
        );

        let typo = USER_FILE.replace("\"max_output_tokens\": 4000", "\"max_output\": 4000");
        let err = Catalog::builtin()
            .with_overrides(&typo, "m.json")
            .expect_err("typo");
        assert!(
            err.to_string().contains("unknown field `max_output`"),
            "{err}"
        );

        let syntax = USER_FILE.replace("\"acme\"]", "\"acme\",]");
        let err = Catalog::builtin()
            .with_overrides(&syntax, "m.json")
            .expect_err("syntax");
        assert!(
            matches!(err, CatalogError::Malformed { line: 8, .. }),
            "{err}"
        );

        let clash = USER_FILE.replace("[\"acme\"]", "[\"gpt-4\"]");
        assert!(matches!(
            Catalog::builtin().with_overrides(&clash, "m.json"),
            Err(CatalogError::DuplicateName(n)) if n == "gpt-4"
        ));
    }

    #[test]
    fn invalid_catalogs_are_rejected_with_the_field() {
        let dup = r#"{"as_of":"2025-01-01","source":"t","models":[
            {"name":"a","family":"f","tokenizer":"cl100k_base","context_window":10,"max_output_tokens":5,"input_usd_per_mtok":1,"output_usd_per_mtok":1},
            {"name":"a","family":"f","tokenizer":"cl100k_base","context_window":10,"max_output_tokens":5,"input_usd_per_mtok":1,"output_usd_per_mtok":1}]}"#;
        assert!(matches!(Catalog::from_json(dup), Err(CatalogError::DuplicateName(n)) if n == "a"));
        let negative = r#"{"as_of":"2025-01-01","source":"t","models":[
            {"name":"a","family":"f","tokenizer":"cl100k_base","context_window":10,"max_output_tokens":5,"input_usd_per_mtok":-1,"output_usd_per_mtok":1}]}"#;
        assert!(matches!(
            Catalog::from_json(negative),
            Err(CatalogError::InvalidField {
                field: "input_usd_per_mtok",
                ..
            })
        ));
        let unknown_tokenizer = r#"{"as_of":"2025-01-01","source":"t","models":[
            {"name":"a","family":"f","tokenizer":"p50k","context_window":10,"max_output_tokens":5,"input_usd_per_mtok":1,"output_usd_per_mtok":1}]}"#;
        assert!(matches!(
            Catalog::from_json(unknown_tokenizer),
            Err(CatalogError::UnknownTokenizer { .. })
        ));
    }

    #[test]
    fn a_litellm_file_is_a_models_file_by_its_shape() {
        let litellm = r#"{
  "sample_spec": {"max_input_tokens": "max input tokens, if the provider specifies it"},
  "claude-opus-9": {"litellm_provider": "anthropic", "mode": "chat", "max_input_tokens": 2000000,
    "max_output_tokens": 256000, "input_cost_per_token": 5e-06, "output_cost_per_token": 2.5e-05},
  "gpt-4o": {"litellm_provider": "openai", "mode": "chat", "max_input_tokens": 128000,
    "max_output_tokens": 16384, "input_cost_per_token": 1e-06, "output_cost_per_token": 4e-06}
}"#;
        let merged = Catalog::builtin()
            .with_overrides(litellm, "litellm.json")
            .expect("a LiteLLM file loads");
        let opus = merged.resolve("claude-opus-9").expect("added");
        assert_eq!(opus.tokenizer(), Tokenizer::Claude47Estimate);
        assert_eq!(opus.entry().map(|e| e.context_window), Some(2_000_000));
        let gpt4o = merged.resolve("gpt-4o").and_then(|r| r.entry().cloned());
        assert_eq!(gpt4o.and_then(|e| e.input_usd_per_mtok), Some(1.0));
        assert!(
            merged
                .source
                .contains("litellm.json: LiteLLM model list, 2 chat models")
        );

        let bad = litellm.replace(
            "\"max_input_tokens\": 2000000",
            "\"max_input_tokens\": \"big\"",
        );
        let err = Catalog::builtin()
            .with_overrides(&bad, "litellm.json")
            .expect_err("string window");
        assert!(
            err.to_string().starts_with(
                "litellm.json: line 3, column 94, at `claude-opus-9.max_input_tokens`"
            ),
            "{err}"
        );
    }

    #[test]
    fn unknown_tokenizers_in_a_models_file_are_errors_with_the_closest_name() {
        // Issue 23: `cl100k-base` was silently counted as a ×1.5 estimate.
        let file = USER_FILE.replace("\"cl100k_base\"", "\"cl100k-base\"");
        let err = Catalog::builtin()
            .with_overrides(&file, "m.json")
            .expect_err("a misspelt tokenizer is refused");
        let CatalogError::UnknownTokenizer {
            name,
            tokenizer,
            did_you_mean,
            known,
        } = &err
        else {
            panic!("{err}");
        };
        assert_eq!(
            (name.as_str(), tokenizer.as_str()),
            ("acme-chat", "cl100k-base")
        );
        assert_eq!(did_you_mean.as_deref(), Some("cl100k_base"));
        assert!(known.contains(&"estimate"));
        assert!(
            err.to_string().contains("did you mean `cl100k_base`?"),
            "{err}"
        );
        // The estimate is there for whoever asks for it by name.
        let file = USER_FILE.replace("\"cl100k_base\"", "\"estimate\"");
        let merged = Catalog::builtin()
            .with_overrides(&file, "m.json")
            .expect("estimate by name");
        let acme = merged.resolve("acme").expect("added");
        assert_eq!(acme.tokenizer(), Tokenizer::Estimate);
        assert!(acme.tokenizer().method().contains("not known"));
    }

    #[test]
    fn prices_and_the_output_limit_are_optional_in_a_models_file() {
        let file = r#"{"models": [
            {"name": "acme-local", "family": "acme", "tokenizer": "cl100k_base", "context_window": 32000}
        ]}"#;
        let merged = Catalog::builtin()
            .with_overrides(file, "m.json")
            .expect("no prices needed");
        let entry = merged
            .resolve("acme-local")
            .and_then(|r| r.entry().cloned())
            .expect("added");
        assert_eq!(
            (
                entry.max_output_tokens,
                entry.input_usd_per_mtok,
                entry.output_usd_per_mtok
            ),
            (None, None, None)
        );
        let listed = merged.listing(Some("acme-local"));
        let row = serde_json::to_value(&listed.models[0]).expect("json");
        assert_eq!(row.get("input_usd_per_mtok"), None, "{row}");
        assert_eq!(row.get("max_output_tokens"), None, "{row}");
    }

    #[test]
    fn a_huggingface_tokenizer_needs_a_readable_file() {
        let file = USER_FILE.replace(
            "\"tokenizer\": \"cl100k_base\"",
            "\"tokenizer\": \"huggingface\", \"tokenizer_file\": \"no/such/tokenizer.json\"",
        );
        let err = Catalog::builtin()
            .with_models_file(&file, "m.json", Path::new("/nonexistent-folder"))
            .expect_err("missing file");
        assert!(matches!(err, CatalogError::TokenizerFile { .. }), "{err}");
        assert!(err.to_string().contains("no/such/tokenizer.json"), "{err}");
        let without = USER_FILE.replace(
            "\"tokenizer\": \"cl100k_base\"",
            "\"tokenizer\": \"huggingface\"",
        );
        assert!(matches!(
            Catalog::builtin().with_overrides(&without, "m.json"),
            Err(CatalogError::InvalidField {
                field: "tokenizer_file",
                ..
            })
        ));
    }
}
