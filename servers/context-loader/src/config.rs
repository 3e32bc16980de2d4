//! Wiring, in one named step (as ripgrep's `hiargs`): the flags and environment every
//! mode shares turned into a configured [`Service`] — the catalog (built in, or
//! extended by `--models-file`), the specs root, the file roots, the per-call limits
//! and the exact Claude counter. stdio, HTTP and the CLI all start from
//! [`GlobalArgs::service`].

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use context_budget::clients::AnswerOverrides;
use context_budget::files::FileLimits;
use context_budget::files::roots::Roots;
use context_budget::limits::{DEFAULT_MAX_MESSAGES, DEFAULT_MAX_NAME_BYTES, DEFAULT_MAX_SECTIONS};
use context_budget::spec::SpecStore;
use context_budget::{
    ADR_LAYERED, Catalog, CatalogError, DEFAULT_MAX_INPUT_BYTES, DEFAULT_MAX_MODELS_FILE_BYTES,
    DEFAULT_MAX_MODELS_FILE_ENTRIES, InputLimits, LayerBudgets, TokenCounter, read_models_file,
};

use crate::anthropic::{self, AnthropicConfig, AnthropicCounter};
use crate::service::Service;
use crate::toolset::Toolset;

/// A flag or a file it names is wrong: the process exits with 2, as clap does for a
/// usage error (1 is a tool's error on the command line, or a server's failure).
#[derive(Debug)]
pub struct ConfigError(pub anyhow::Error);

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:#}", self.0)
    }
}

impl std::error::Error for ConfigError {}

/// The heading of the global flags a tool command's help shows (the rest are server
/// flags, shown under `stdio` and `http`).
pub const TOOL_FLAGS_HEADING: &str = "Configuration";

/// Flags every mode takes: limits, where specs are, the catalog, exact counting.
#[derive(Debug, Args)]
pub struct GlobalArgs {
    /// Largest text accepted in one call, in bytes; larger gets INPUT_TOO_LARGE.
    #[arg(
        long,
        global = true,
        hide_env_values = true,
        help_heading = "Limits",
        env = "CONTEXT_LOADER_MAX_INPUT_BYTES",
        default_value_t = DEFAULT_MAX_INPUT_BYTES
    )]
    pub max_input_bytes: usize,
    /// Longest model name or spec path accepted, in bytes; longer gets INPUT_TOO_LARGE.
    #[arg(
        long,
        global = true,
        hide_env_values = true,
        help_heading = "Limits",
        env = "CONTEXT_LOADER_MAX_NAME_BYTES",
        default_value_t = DEFAULT_MAX_NAME_BYTES
    )]
    pub max_name_bytes: usize,
    /// Most chat messages one fit-messages call accepts; more gets INPUT_TOO_LARGE.
    #[arg(
        long,
        global = true,
        hide_env_values = true,
        help_heading = "Limits",
        env = "CONTEXT_LOADER_MAX_MESSAGES",
        default_value_t = DEFAULT_MAX_MESSAGES
    )]
    pub max_messages: usize,
    /// Most sections one assemble-context call accepts; more gets INPUT_TOO_LARGE.
    #[arg(
        long,
        global = true,
        hide_env_values = true,
        help_heading = "Limits",
        env = "CONTEXT_LOADER_MAX_SECTIONS",
        default_value_t = DEFAULT_MAX_SECTIONS
    )]
    pub max_sections: usize,
    /// mcp-tokens: the work the hoisting search may do per call, as a multiple of
    /// the tool schemas' bytes (at least 8 MiB); past it the hoisting saving is
    /// partial and the answer says so.
    #[arg(
        long,
        global = true,
        hide_env_values = true,
        help_heading = "Limits",
        env = "CONTEXT_LOADER_MAX_HOIST_WORK",
        default_value_t = context_budget::limits::DEFAULT_HOIST_WORK_FACTOR
    )]
    pub max_hoist_work: usize,
    /// mcp-tokens: most tool definitions one call's `tools` may hold; more gets
    /// INPUT_TOO_LARGE.
    #[arg(
        long,
        global = true,
        hide_env_values = true,
        help_heading = "Limits",
        env = "CONTEXT_LOADER_MAX_TOOL_DEFINITIONS",
        default_value_t = context_budget::limits::DEFAULT_MAX_TOOL_DEFINITIONS
    )]
    pub max_tool_definitions: usize,
    /// Most tokens of one answer, by the highest local estimate (Claude Opus 4.7's):
    /// load-files' default budget is capped by it, listings page under it, and an
    /// answer over it becomes ANSWER_TOO_LARGE. Default: 20,000 for every client
    /// (under Claude Code's 25,000-token refusal). Given, it holds for every client.
    #[arg(long, global = true, env = "CONTEXT_LOADER_MAX_ANSWER_TOKENS")]
    pub max_answer_tokens: Option<u64>,
    /// Most characters of one answer (as JavaScript counts them: UTF-16 code units).
    /// Default: the client's (Claude Code 45,000, under the ~50,000 past which it
    /// saves an answer to a file; Gemini CLI 39,000; a client not in the README's
    /// table 39,000; the command line 45,000). Given, it holds for every client.
    #[arg(long, global = true, env = "CONTEXT_LOADER_MAX_ANSWER_CHARS")]
    pub max_answer_chars: Option<usize>,
    /// Most UTF-8 bytes of one answer. Default: the client's (Codex 47,000, under the
    /// 48,000 past which it cuts the middle out; a client not in the README's table
    /// 11,000; none for Claude Code, Gemini CLI and the command line). Codex with a
    /// model it does not know cuts at 12,000: give 11000 in that server's args.
    #[arg(long, global = true, env = "CONTEXT_LOADER_MAX_ANSWER_BYTES")]
    pub max_answer_bytes: Option<usize>,
    /// Folder holding the specs (`NNN-name/README.md`, ...), for spec-tokens and spec-budget.
    #[arg(
        long,
        global = true,
        hide_env_values = true,
        help_heading = TOOL_FLAGS_HEADING,
        env = "CONTEXT_LOADER_SPECS_DIR",
        default_value = "specs"
    )]
    pub specs_dir: PathBuf,
    /// Server log format on stderr: text or json (one object per line).
    #[arg(
        long,
        global = true,
        hide_env_values = true,
        help_heading = "Server",
        env = "CONTEXT_LOADER_LOG_FORMAT",
        default_value = "text"
    )]
    pub log_format: mcp_common::transport::LogFormat,
    /// JSON file of models that extends or overrides the built-in catalog (same format
    /// as data/models.json).
    #[arg(
        long,
        global = true,
        hide_env_values = true,
        help_heading = TOOL_FLAGS_HEADING,
        env = "CONTEXT_LOADER_MODELS_FILE"
    )]
    pub models_file: Option<PathBuf>,
    /// Largest --models-file read, in bytes; a larger one (or a FIFO, device or
    /// folder) stops start-up with an error.
    #[arg(
        long,
        global = true,
        hide_env_values = true,
        help_heading = "Limits",
        env = "CONTEXT_LOADER_MAX_MODELS_FILE_BYTES",
        default_value_t = DEFAULT_MAX_MODELS_FILE_BYTES
    )]
    pub max_models_file_bytes: u64,
    /// Most models one --models-file may list; more stops start-up with an error.
    #[arg(
        long,
        global = true,
        hide_env_values = true,
        help_heading = "Limits",
        env = "CONTEXT_LOADER_MAX_MODELS_FILE_ENTRIES",
        default_value_t = DEFAULT_MAX_MODELS_FILE_ENTRIES
    )]
    pub max_models_file_entries: usize,
    /// Command line: where `files` and `load` keep file measures between runs (paths,
    /// file stamps and counts, never contents), so a second run over unchanged files
    /// reads and counts none of them. Default: $XDG_CACHE_HOME/context-loader, else
    /// ~/.cache/context-loader. Servers keep theirs in memory.
    #[arg(
        long,
        global = true,
        hide_env_values = true,
        help_heading = TOOL_FLAGS_HEADING,
        env = "CONTEXT_LOADER_CACHE_DIR",
        value_name = "DIR"
    )]
    pub cache_dir: Option<PathBuf>,
    /// Command line: keep no file measures between runs (every run reads and counts
    /// every file, and nothing is written).
    #[arg(
        long,
        global = true,
        hide_env_values = true,
        help_heading = TOOL_FLAGS_HEADING,
        env = "CONTEXT_LOADER_NO_CACHE"
    )]
    pub no_cache: bool,
    /// Count Claude models exactly with Anthropic's count_tokens API (needs
    /// ANTHROPIC_API_KEY; falls back to the estimate, with a warning, on any failure).
    #[arg(
        long,
        global = true,
        hide_env_values = true,
        help_heading = TOOL_FLAGS_HEADING,
        env = "CONTEXT_LOADER_EXACT_CLAUDE"
    )]
    pub exact_claude: bool,
    /// Base URL of the Anthropic API.
    #[arg(
        long,
        global = true,
        hide_env_values = true,
        help_heading = "Anthropic API",
        env = "ANTHROPIC_BASE_URL",
        default_value = anthropic::DEFAULT_BASE_URL
    )]
    pub anthropic_base_url: String,
    /// Give up on a count_tokens request after this many milliseconds (then estimate).
    #[arg(
        long,
        global = true,
        hide_env_values = true,
        help_heading = "Anthropic API",
        env = "CONTEXT_LOADER_ANTHROPIC_TIMEOUT_MS",
        default_value_t = 5000
    )]
    pub anthropic_timeout_ms: u64,
    /// A folder file-tokens and load-files may read (repeatable; the env variable is
    /// a path list, `:`-separated). Default: the working directory over stdio and on
    /// the command line, unless it is `/`, a home folder or a folder directly under `/`;
    /// none over HTTP (file tools then answer ROOTS_NOT_CONFIGURED).
    #[arg(
        long = "root",
        global = true,
        hide_env_values = true,
        help_heading = TOOL_FLAGS_HEADING,
        env = "CONTEXT_LOADER_ROOTS",
        value_delimiter = PATH_LIST_SEPARATOR
    )]
    pub roots: Vec<PathBuf>,
    /// File tools: most files measured or loaded per call (more: FILE_LIMIT_EXCEEDED).
    #[arg(
        long,
        global = true,
        hide_env_values = true,
        help_heading = "Limits",
        env = "CONTEXT_LOADER_MAX_FILES",
        default_value_t = FileLimits::default().max_files
    )]
    pub max_files: usize,
    /// File tools: larger files are skipped as `too_large`.
    #[arg(
        long,
        global = true,
        hide_env_values = true,
        help_heading = "Limits",
        env = "CONTEXT_LOADER_MAX_FILE_BYTES",
        default_value_t = FileLimits::default().max_file_bytes
    )]
    pub max_file_bytes: u64,
    /// File tools: most bytes read per call, all files together.
    #[arg(
        long,
        global = true,
        hide_env_values = true,
        help_heading = "Limits",
        env = "CONTEXT_LOADER_MAX_TOTAL_BYTES",
        default_value_t = FileLimits::default().max_total_bytes
    )]
    pub max_total_bytes: u64,
    /// File tools: most folder entries one call's walk visits.
    #[arg(
        long,
        global = true,
        hide_env_values = true,
        help_heading = "Limits",
        env = "CONTEXT_LOADER_MAX_WALK_ENTRIES",
        default_value_t = FileLimits::default().max_walk_entries
    )]
    pub max_walk_entries: usize,
    /// File tools: longest time one call's walk may take, in milliseconds.
    #[arg(
        long,
        global = true,
        hide_env_values = true,
        help_heading = "Limits",
        env = "CONTEXT_LOADER_WALK_TIMEOUT_MS",
        default_value_t = FileLimits::default().walk_timeout.as_millis() as u64
    )]
    pub walk_timeout_ms: u64,
    /// File tools: most paths and globs per call (`paths`, `include` and `exclude`
    /// together); more gets INPUT_TOO_LARGE.
    #[arg(
        long,
        global = true,
        hide_env_values = true,
        help_heading = "Limits",
        env = "CONTEXT_LOADER_MAX_PATTERNS",
        default_value_t = FileLimits::default().max_patterns
    )]
    pub max_patterns: usize,
    /// File tools: longest path or glob accepted, in bytes; longer gets INPUT_TOO_LARGE.
    #[arg(
        long,
        global = true,
        hide_env_values = true,
        help_heading = "Limits",
        env = "CONTEXT_LOADER_MAX_PATTERN_BYTES",
        default_value_t = FileLimits::default().max_pattern_bytes
    )]
    pub max_pattern_bytes: usize,
    /// File tools: bytes of all `.gitignore`, `.ignore` and `.git/info/exclude` files
    /// one call applies, together; more stops the call with FILE_LIMIT_EXCEEDED.
    #[arg(
        long,
        global = true,
        hide_env_values = true,
        help_heading = "Limits",
        env = "CONTEXT_LOADER_MAX_IGNORE_BYTES",
        default_value_t = FileLimits::default().max_ignore_bytes
    )]
    pub max_ignore_bytes: u64,
    /// File tools: most patterns of all ignore files one call reads together; more
    /// stops the call with FILE_LIMIT_EXCEEDED.
    #[arg(
        long,
        global = true,
        hide_env_values = true,
        help_heading = "Limits",
        env = "CONTEXT_LOADER_MAX_IGNORE_PATTERNS",
        default_value_t = FileLimits::default().max_ignore_patterns
    )]
    pub max_ignore_patterns: usize,
    /// Layer budgets of the `adr-layered` preset, replacing the ADR's defaults (the ADR
    /// makes them configurable): `layer=tokens,...`, e.g.
    /// `working_memory=30000,semantic_search=20000`; layers not named keep theirs.
    #[arg(
        long,
        global = true,
        hide_env_values = true,
        help_heading = "Assembly",
        env = "CONTEXT_LOADER_ADR_LAYER_BUDGETS",
        value_name = "LAYER=TOKENS,...",
        conflicts_with = "adr_layer_budgets_file"
    )]
    pub adr_layer_budgets: Option<String>,
    /// The same as a JSON file: `{"working_memory": 30000, ...}`.
    #[arg(
        long,
        global = true,
        hide_env_values = true,
        help_heading = "Assembly",
        env = "CONTEXT_LOADER_ADR_LAYER_BUDGETS_FILE",
        value_name = "FILE"
    )]
    pub adr_layer_budgets_file: Option<PathBuf>,
    /// Tools the server exposes (stdio and HTTP): `all`, a toolset (`minimal`:
    /// count-tokens, file-tokens, load-files; `files`, `specs`, `chat`), or a comma
    /// list of toolsets and tool names. Hidden tools are not listed and cannot be
    /// called; every tool a client lists costs tokens on each of its requests.
    #[arg(
        long,
        global = true,
        env = "CONTEXT_LOADER_TOOLS",
        default_value = "all",
        value_name = "TOOLSET|TOOL,..."
    )]
    pub tools: Toolset,
    /// Do not load the vocabularies in the background at start (servers then load
    /// them on the first count). Only for `cargo xtask bench`'s unwarmed variant.
    #[arg(long, global = true, hide = true)]
    pub no_warm_up: bool,
}

/// Smallest accepted answer limit: room for any error answer and a small listing.
const MIN_ANSWER_TOKENS: u64 = 1_000;
const MIN_ANSWER_CHARS: usize = 4_000;
/// An error answer is at most 1,000 characters, at most 3 bytes each.
const MIN_ANSWER_BYTES: usize = 4_000;

/// How CONTEXT_LOADER_ROOTS separates folders (as PATH does).
#[cfg(unix)]
const PATH_LIST_SEPARATOR: char = ':';
#[cfg(not(unix))]
const PATH_LIST_SEPARATOR: char = ';';

/// A models file that stops start-up, and what to do about it in command-line words.
fn models_file_error(error: &CatalogError) -> anyhow::Error {
    let what_to_do = match error {
        CatalogError::Unreadable { .. } => {
            "; pass --models-file a readable regular JSON file (not a FIFO, device or folder)"
        }
        CatalogError::FileTooLarge { .. } => {
            "; raise --max-models-file-bytes, or keep only the models you use in the file"
        }
        CatalogError::TooManyModels { .. } => {
            "; raise --max-models-file-entries, or keep only the models you use in the file"
        }
        CatalogError::TokenizerFile { .. } => {
            "; point its tokenizer_file at a readable regular tokenizer.json (relative to the \
             models file's folder)"
        }
        _ => "",
    };
    anyhow::anyhow!("invalid --models-file: {error}{what_to_do}")
}

impl GlobalArgs {
    /// The service the global flags describe: the catalog (built-in, or extended by
    /// --models-file), the specs root, the file roots (the working directory when none is
    /// given and `cwd_by_default`: stdio and the CLI, where the server runs where its
    /// user works; never over HTTP), and the optional exact Claude counter.
    pub fn service(&self, cwd_by_default: bool) -> anyhow::Result<Service> {
        let catalog = match &self.models_file {
            None => Catalog::builtin().clone(),
            Some(path) => {
                let origin = path.display().to_string();
                let json = read_models_file(path, &origin, self.max_models_file_bytes)
                    .map_err(|e| models_file_error(&e))?;
                // A `tokenizer_file` in it is relative to the file's own folder.
                let folder = path.parent().unwrap_or(std::path::Path::new("."));
                Catalog::builtin()
                    .with_models_file_limited(&json, &origin, folder, self.max_models_file_entries)
                    .map_err(|e| models_file_error(&e))?
            }
        };
        let mut root_dirs = self.roots.clone();
        let mut refused_root = None;
        if root_dirs.is_empty() && cwd_by_default {
            let cwd = std::env::current_dir().context("cannot read the working directory")?;
            match too_wide_for_an_implicit_root(&cwd) {
                Some(why) => refused_root = Some(format!("`{}` ({why})", cwd.display())),
                None => root_dirs.push(cwd),
            }
        }
        let roots = match root_dirs.is_empty() {
            true => None,
            false => {
                Some(Roots::new(&root_dirs).map_err(|e| anyhow::anyhow!("invalid --root: {e}"))?)
            }
        };
        let mut service = Service::new(
            TokenCounter::with_limits(
                Arc::new(catalog),
                InputLimits {
                    max_input_bytes: self.max_input_bytes,
                    max_name_bytes: self.max_name_bytes,
                    max_messages: self.max_messages,
                    max_sections: self.max_sections,
                    hoist_work_factor: self.max_hoist_work,
                    max_tool_definitions: self.max_tool_definitions,
                },
            ),
            SpecStore::new(&self.specs_dir).with_name_limit(self.max_name_bytes),
        )
        .with_files(roots, self.file_limits())
        .with_refused_root(refused_root)
        .with_layer_budgets(self.layer_budgets()?)
        .with_answer_overrides(self.answer_overrides()?);
        if self.no_warm_up {
            service = service.without_warm_up();
        }
        if !self.exact_claude {
            return Ok(service);
        }
        let api_key = std::env::var("ANTHROPIC_API_KEY").unwrap_or_default();
        if api_key.trim().is_empty() {
            anyhow::bail!(
                "--exact-claude (CONTEXT_LOADER_EXACT_CLAUDE) needs ANTHROPIC_API_KEY in the environment"
            );
        }
        let counter = AnthropicCounter::new(AnthropicConfig {
            api_key,
            base_url: self.anthropic_base_url.clone(),
            timeout: Duration::from_millis(self.anthropic_timeout_ms),
        })?;
        Ok(service.with_exact(Arc::new(counter)))
    }

    /// The `adr-layered` layer budgets from `--adr-layer-budgets` or its file, checked
    /// now (a misspelt layer is a start-up error, not a budget silently ignored).
    fn layer_budgets(&self) -> anyhow::Result<LayerBudgets> {
        match (&self.adr_layer_budgets, &self.adr_layer_budgets_file) {
            (Some(text), _) => LayerBudgets::parse(&ADR_LAYERED, text)
                .map_err(|e| anyhow::anyhow!("invalid --adr-layer-budgets: {e}")),
            (None, Some(path)) => {
                let json = std::fs::read_to_string(path).map_err(|e| {
                    anyhow::anyhow!(
                        "cannot read --adr-layer-budgets-file {}: {e}",
                        path.display()
                    )
                })?;
                LayerBudgets::from_json(&ADR_LAYERED, &json).map_err(|e| {
                    anyhow::anyhow!("invalid --adr-layer-budgets-file {}: {e}", path.display())
                })
            }
            (None, None) => Ok(LayerBudgets::default()),
        }
    }

    /// The answer-limit flags given, over each client's limit. A limit too small for
    /// an error answer would make every refusal unreadable, so it is refused at start.
    fn answer_overrides(&self) -> anyhow::Result<AnswerOverrides> {
        let too_small = self
            .max_answer_tokens
            .is_some_and(|n| n < MIN_ANSWER_TOKENS)
            || self.max_answer_chars.is_some_and(|n| n < MIN_ANSWER_CHARS)
            || self.max_answer_bytes.is_some_and(|n| n < MIN_ANSWER_BYTES);
        if too_small {
            anyhow::bail!(
                "--max-answer-tokens must be at least {MIN_ANSWER_TOKENS}, --max-answer-chars at least \
                 {MIN_ANSWER_CHARS} and --max-answer-bytes at least {MIN_ANSWER_BYTES} (an error \
                 answer must fit)"
            );
        }
        Ok(AnswerOverrides {
            tokens: self.max_answer_tokens,
            chars: self.max_answer_chars,
            bytes: self.max_answer_bytes,
        })
    }

    /// The file tools' per-call bounds from the flags.
    fn file_limits(&self) -> FileLimits {
        FileLimits {
            max_files: self.max_files,
            max_file_bytes: self.max_file_bytes,
            max_total_bytes: self.max_total_bytes,
            max_walk_entries: self.max_walk_entries,
            walk_timeout: std::time::Duration::from_millis(self.walk_timeout_ms),
            max_patterns: self.max_patterns,
            max_pattern_bytes: self.max_pattern_bytes,
            max_ignore_bytes: self.max_ignore_bytes,
            max_ignore_patterns: self.max_ignore_patterns,
        }
    }
}

/// Why `dir` is never taken as the file tools' root when nobody named it: clients
/// start servers where they please (Claude Desktop and Cline in `/`, the Claude Code
/// desktop app in the home folder), and serving the whole disk, a home folder or a
/// folder holding one is never what a user meant. The home folder is the user's
/// entry in the password database as well as `$HOME` (which may be unset, or point
/// elsewhere). `None` for an ordinary folder (a project).
fn too_wide_for_an_implicit_root(dir: &Path) -> Option<&'static str> {
    too_wide_with(dir, &home_folders())
}

fn too_wide_with(dir: &Path, homes: &[PathBuf]) -> Option<&'static str> {
    let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    match dir.parent() {
        None => Some("the root of the filesystem"),
        _ if homes.contains(&dir) => Some("a home folder"),
        _ if homes.iter().any(|home| home.starts_with(&dir)) => {
            Some("a folder holding a home folder")
        }
        // `/home`, `/Users`, `/tmp`, `/usr`, `/etc`, ...: shared by the whole system.
        Some(parent) if parent.parent().is_none() => Some("a system-wide folder"),
        Some(_) => None,
    }
}

/// This user's home folders: `$HOME` and the password database's, canonical.
fn home_folders() -> Vec<PathBuf> {
    let from_env = std::env::var_os(if cfg!(windows) { "USERPROFILE" } else { "HOME" })
        .filter(|home| !home.is_empty())
        .map(PathBuf::from);
    let mut homes: Vec<PathBuf> = from_env
        .into_iter()
        .chain(password_database_home())
        .map(|home| home.canonicalize().unwrap_or(home))
        .collect();
    homes.dedup();
    homes
}

/// The current user's home folder in the password database (`getpwuid_r`).
#[cfg(unix)]
fn password_database_home() -> Option<PathBuf> {
    use std::ffi::CStr;
    use std::os::unix::ffi::OsStrExt;
    let mut buffer = vec![0 as libc::c_char; 16 * 1024];
    // SAFETY: `passwd` is plain data filled by getpwuid_r; the strings it points to
    // live in `buffer`, which outlives their use below.
    unsafe {
        let mut entry: libc::passwd = std::mem::zeroed();
        let mut found: *mut libc::passwd = std::ptr::null_mut();
        let status = libc::getpwuid_r(
            libc::getuid(),
            &mut entry,
            buffer.as_mut_ptr(),
            buffer.len(),
            &mut found,
        );
        if status != 0 || found.is_null() || entry.pw_dir.is_null() {
            return None;
        }
        let dir = CStr::from_ptr(entry.pw_dir).to_bytes();
        (!dir.is_empty()).then(|| PathBuf::from(std::ffi::OsStr::from_bytes(dir)))
    }
}

#[cfg(not(unix))]
fn password_database_home() -> Option<PathBuf> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_disk_system_folders_and_home_are_never_implicit_roots() {
        assert_eq!(
            too_wide_for_an_implicit_root(Path::new("/")),
            Some("the root of the filesystem")
        );
        assert_eq!(
            too_wide_for_an_implicit_root(Path::new("/usr")),
            Some("a system-wide folder")
        );
        assert_eq!(
            too_wide_for_an_implicit_root(Path::new("/usr/share/doc")),
            None
        );
        // M5: the password database's home counts whatever `$HOME` says, and so
        // does every folder above it.
        let home = password_database_home().expect("this user has a home folder");
        let home = home.canonicalize().unwrap_or(home);
        if home.parent().is_some_and(|p| p.parent().is_some()) {
            assert_eq!(too_wide_for_an_implicit_root(&home), Some("a home folder"));
        }
        assert!(too_wide_for_an_implicit_root(home.parent().unwrap()).is_some());
        // A home deeper than `/home/me` (this machine's is `/root`): the folders
        // above it are refused too, projects below it are not.
        let homes = [PathBuf::from("/srv/users/team/me")];
        assert_eq!(
            too_wide_with(Path::new("/srv/users/team/me"), &homes),
            Some("a home folder")
        );
        for above in ["/srv/users/team", "/srv/users"] {
            assert_eq!(
                too_wide_with(Path::new(above), &homes),
                Some("a folder holding a home folder"),
                "{above}"
            );
        }
        assert_eq!(
            too_wide_with(Path::new("/srv/users/team/me/app"), &homes),
            None
        );
        assert_eq!(too_wide_with(Path::new("/srv/other/app"), &homes), None);
    }
}
