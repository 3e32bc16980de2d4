//! The MCP client config files people have, read into one [`ServerConfig`] shape:
//! Claude Desktop and Claude Code (`mcpServers`, `~/.claude.json` with per-project
//! servers), VS Code (`servers`), Cursor, Gemini CLI (`mcpServers`, `httpUrl`) and
//! Codex (`config.toml`, `[mcp_servers.NAME]`). In a file the user stands behind,
//! `${VAR}`, `${env:VAR}` and `${VAR:-default}` are expanded as the clients do; in a
//! project's file nobody approved, never (the servers are not run either, see
//! [`super::trust`]).

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

/// Largest config file read: real ones are a few KiB (`~/.claude.json` holds a
/// history and can reach a few MiB).
pub const MAX_CONFIG_BYTES: u64 = 16 * 1024 * 1024;
/// Most servers measured in one run.
pub const MAX_SERVERS: usize = 200;

/// One configured server.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerConfig {
    pub name: String,
    pub transport: Transport,
    /// The file it came from (`None`: the command line).
    pub source: Option<PathBuf>,
    /// Why it is reported but not run.
    pub held: Option<Held>,
    /// The values put into its config from the environment, by variable name: never
    /// printed (see [`redact`]).
    pub secrets: Vec<(String, String)>,
}

/// Why a configured server is not run.
#[derive(Debug, Clone, PartialEq)]
pub enum Held {
    /// A variable its config names is not set.
    Unset(String),
    /// It comes from a project's config that nobody approved; says how to allow it.
    NotApproved(String),
}

/// Who stands behind a config file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Found in the working folder: whoever wrote the repository wrote it.
    Project,
    /// The user's own (in the home folder), or named with `--config`.
    User,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Transport {
    Stdio {
        command: String,
        args: Vec<String>,
        env: BTreeMap<String, String>,
        cwd: Option<PathBuf>,
    },
    Http {
        url: String,
        headers: Vec<(String, String)>,
    },
}

/// The config files a client would read for this project and user, that exist; with
/// `client`, only that client's (`mcp-tokens --client`). A project file that is also
/// the user's (started in the home folder) is the user's.
pub fn discover(
    project: &Path,
    home: Option<&Path>,
    client: Option<&context_budget::clients::Client>,
) -> Vec<(PathBuf, Scope)> {
    let mut candidates: Vec<(PathBuf, Scope)> = Vec::new();
    if let Some(rules) = client.and_then(|client| client.tools) {
        let codex_home = std::env::var_os("CODEX_HOME").map(PathBuf::from);
        if let Some(home) = home {
            for file in rules.user_configs {
                let path = match (file.strip_prefix(".codex/"), &codex_home) {
                    (Some(rest), Some(codex_home)) => codex_home.join(rest),
                    _ => home.join(file),
                };
                candidates.push((path, Scope::User));
            }
        }
        for file in rules.project_configs {
            candidates.push((project.join(file), Scope::Project));
        }
    } else if let Some(home) = home {
        candidates.extend(
            [
                home.join(".claude.json"),
                home.join(".cursor/mcp.json"),
                home.join(".gemini/settings.json"),
                std::env::var_os("CODEX_HOME")
                    .map_or_else(|| home.join(".codex"), PathBuf::from)
                    .join("config.toml"),
                home.join(".config/Claude/claude_desktop_config.json"),
                home.join("Library/Application Support/Claude/claude_desktop_config.json"),
            ]
            .map(|path| (path, Scope::User)),
        );
    }
    candidates.extend(
        [
            project.join(".mcp.json"),
            project.join(".vscode/mcp.json"),
            project.join(".cursor/mcp.json"),
            project.join(".gemini/settings.json"),
        ]
        .map(|path| (path, Scope::Project)),
    );
    let mut found: Vec<(PathBuf, Scope)> = Vec::new();
    for (path, scope) in candidates {
        if path.is_file() && !found.iter().any(|(p, _)| *p == path) {
            found.push((path, scope));
        }
    }
    // Project files first, as a client lists them.
    found.sort_by_key(|(_, scope)| *scope != Scope::Project);
    found
}

/// The servers of one config file; `project` picks `~/.claude.json`'s per-project
/// servers. `expand`: put the environment's values into `${VAR}`s (a file the user
/// stands behind); else they stay as written.
pub fn read(path: &Path, project: &Path, expand: bool) -> Result<Vec<ServerConfig>, String> {
    // O_NONBLOCK: a FIFO (or device) is refused at once instead of waiting for a
    // writer; a regular file reads as usual.
    let file = {
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(path)
            .map_err(|e| format!("{}: {e}", path.display()))?
    };
    if !file.metadata().is_ok_and(|m| m.is_file()) {
        return Err(format!("{}: not a regular file", path.display()));
    }
    let mut text = String::new();
    file.take(MAX_CONFIG_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    if text.len() as u64 > MAX_CONFIG_BYTES {
        return Err(format!(
            "{}: over {MAX_CONFIG_BYTES} bytes; not a client config",
            path.display()
        ));
    }
    let toml = path.extension().is_some_and(|e| e == "toml");
    let document = match toml {
        true => toml_to_json(&text).map_err(|e| format!("{}: not TOML: {e}", path.display()))?,
        false => serde_json::from_str::<Value>(&text)
            .map_err(|e| format!("{}: not JSON: {e}", path.display()))?,
    };
    let mut servers = Vec::new();
    let mut add = |table: Option<&Value>| -> Result<(), String> {
        if let Some(table) = table {
            let table = table
                .as_object()
                .ok_or_else(|| format!("{}: the servers entry is not an object", path.display()))?;
            for (name, entry) in table {
                servers.push(server(name, entry, path, expand)?);
            }
        }
        Ok(())
    };
    if toml {
        add(document.get("mcp_servers"))?;
    } else {
        add(document.get("mcpServers"))?;
        // VS Code.
        add(document.get("servers"))?;
        // ~/.claude.json: the servers of this project too.
        if let Some(projects) = document.get("projects").and_then(Value::as_object) {
            let key = project.to_string_lossy();
            add(projects.get(key.as_ref()).and_then(|p| p.get("mcpServers")))?;
        }
    }
    Ok(servers)
}

fn server(name: &str, entry: &Value, path: &Path, expand: bool) -> Result<ServerConfig, String> {
    let bad = |what: &str| format!("{}: server `{name}`: {what}", path.display());
    let entry = entry.as_object().ok_or_else(|| bad("not an object"))?;
    let string = |key: &str| entry.get(key).and_then(Value::as_str).map(str::to_string);
    let mut expansion = Expansion {
        from_environment: expand,
        ..Expansion::default()
    };
    let url = string("url")
        .or_else(|| string("httpUrl"))
        .or_else(|| string("serverUrl"));
    let transport = match (string("command"), url) {
        (Some(command), _) => {
            let args = match entry.get("args") {
                None => Vec::new(),
                Some(Value::Array(args)) => args
                    .iter()
                    .map(|a| a.as_str().map(str::to_string))
                    .collect::<Option<Vec<_>>>()
                    .ok_or_else(|| bad("`args` holds a non-string"))?,
                Some(_) => return Err(bad("`args` is not an array")),
            };
            Transport::Stdio {
                command: expansion.expand(&command),
                args: args.iter().map(|a| expansion.expand(a)).collect(),
                env: strings(entry.get("env"))
                    .map_err(|e| bad(&e))?
                    .into_iter()
                    .map(|(k, v)| (k, expansion.expand(&v)))
                    .collect(),
                cwd: string("cwd").map(|c| PathBuf::from(expansion.expand(&c))),
            }
        }
        (None, Some(url)) => {
            let mut headers: Vec<(String, String)> =
                strings(entry.get("headers").or_else(|| entry.get("http_headers")))
                    .map_err(|e| bad(&e))?
                    .into_iter()
                    .map(|(k, v)| (k, expansion.expand(&v)))
                    .collect();
            // Codex: headers and a bearer token from variables.
            for (header, variable) in strings(entry.get("env_http_headers")).map_err(|e| bad(&e))? {
                headers.push((header, expansion.variable(&variable)));
            }
            if let Some(variable) = string("bearer_token_env_var") {
                let token = expansion.variable(&variable);
                headers.push(("Authorization".into(), format!("Bearer {token}")));
            }
            Transport::Http {
                url: expansion.expand(&url),
                headers,
            }
        }
        (None, None) => return Err(bad("neither `command` nor `url`")),
    };
    Ok(ServerConfig {
        name: name.to_string(),
        transport,
        source: Some(path.to_path_buf()),
        held: expansion.unset.map(Held::Unset),
        secrets: expansion.expanded,
    })
}

/// A string map (`env`, `headers`).
fn strings(value: Option<&Value>) -> Result<BTreeMap<String, String>, String> {
    let Some(value) = value else {
        return Ok(BTreeMap::new());
    };
    let map = value
        .as_object()
        .ok_or("`env`/`headers` is not an object")?;
    map.iter()
        .map(|(k, v)| match v {
            Value::String(s) => Ok((k.clone(), s.clone())),
            Value::Number(n) => Ok((k.clone(), n.to_string())),
            Value::Bool(b) => Ok((k.clone(), b.to_string())),
            _ => Err(format!("`{k}` is not a string")),
        })
        .collect()
}

/// `${VAR}`, `${env:VAR}` and `${VAR:-default}` from the environment; the first
/// variable that is not set (and has no default) is remembered. Off
/// (`from_environment: false`), text is kept as written and nothing is read.
pub struct Expansion {
    pub unset: Option<String>,
    pub from_environment: bool,
    /// Each variable read, with its value.
    pub expanded: Vec<(String, String)>,
}

impl Default for Expansion {
    fn default() -> Expansion {
        Expansion {
            unset: None,
            from_environment: true,
            expanded: Vec::new(),
        }
    }
}

impl Expansion {
    pub fn expand(&mut self, text: &str) -> String {
        if !self.from_environment {
            return text.to_string();
        }
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(start) = rest.find("${") {
            out.push_str(&rest[..start]);
            let Some(end) = rest[start..].find('}') else {
                out.push_str(&rest[start..]);
                return out;
            };
            let inner = &rest[start + 2..start + end];
            let inner = inner.strip_prefix("env:").unwrap_or(inner);
            let (name, default) = match inner.split_once(":-") {
                Some((name, default)) => (name, Some(default)),
                None => (inner, None),
            };
            match (std::env::var(name), default) {
                (Ok(value), _) => {
                    out.push_str(&value);
                    self.expanded.push((name.to_string(), value));
                }
                (Err(_), Some(default)) => out.push_str(default),
                (Err(_), None) => {
                    self.unset.get_or_insert_with(|| name.to_string());
                }
            }
            rest = &rest[start + end + 1..];
        }
        out.push_str(rest);
        out
    }

    /// A variable named outright (Codex's `bearer_token_env_var`).
    fn variable(&mut self, name: &str) -> String {
        if !self.from_environment {
            return format!("${{{name}}}");
        }
        match std::env::var(name) {
            Ok(value) => {
                self.expanded.push((name.to_string(), value.clone()));
                value
            }
            Err(_) => {
                self.unset.get_or_insert_with(|| name.to_string());
                String::new()
            }
        }
    }
}

/// `text` (a server's error) with nothing secret in it: each value the environment
/// put into its config shown as `${NAME}` (values under 4 characters are left, they
/// would mask ordinary text), and the URLs it names without user info or query
/// values. An error printed to a CI log must not carry a token.
pub fn redact(text: &str, secrets: &[(String, String)], urls: &[&str]) -> String {
    let mut text = text.to_string();
    // URLs first, in every form an error may print them (reqwest drops user info).
    for url in urls {
        let Ok(parsed) = reqwest::Url::parse(url) else {
            continue;
        };
        let mut clean = parsed.clone();
        let mut bare = parsed.clone();
        let _ = bare.set_username("");
        let _ = bare.set_password(None);
        if !clean.username().is_empty() {
            let _ = clean.set_username("***");
        }
        if clean.password().is_some() {
            let _ = clean.set_password(Some("***"));
        }
        if clean.query().is_some() {
            let masked: Vec<(String, String)> = parsed
                .query_pairs()
                .map(|(key, _)| (key.into_owned(), "***".to_string()))
                .collect();
            clean.query_pairs_mut().clear().extend_pairs(masked);
        }
        for shown in [url.to_string(), parsed.to_string(), bare.to_string()] {
            text = text.replace(&shown, clean.as_str());
        }
    }
    let mut secrets: Vec<&(String, String)> = secrets
        .iter()
        .filter(|(_, value)| value.len() >= 4)
        .collect();
    // Longest first: a value that contains another is replaced whole.
    secrets.sort_by_key(|(_, value)| std::cmp::Reverse(value.len()));
    for (name, value) in secrets {
        text = text.replace(value.as_str(), &format!("${{{name}}}"));
    }
    text
}

/// A TOML document as JSON (tables, arrays, strings, numbers, booleans; dates as
/// strings).
fn toml_to_json(text: &str) -> Result<Value, String> {
    use toml_edit::{DocumentMut, Item};
    let document: DocumentMut = text
        .parse()
        .map_err(|e: toml_edit::TomlError| e.to_string())?;
    fn value(v: &toml_edit::Value) -> Value {
        use toml_edit::Value as T;
        match v {
            T::String(s) => Value::String(s.value().clone()),
            T::Integer(i) => Value::from(*i.value()),
            T::Float(f) => {
                serde_json::Number::from_f64(*f.value()).map_or(Value::Null, Value::Number)
            }
            T::Boolean(b) => Value::Bool(*b.value()),
            T::Datetime(d) => Value::String(d.value().to_string()),
            T::Array(a) => Value::Array(a.iter().map(value).collect()),
            T::InlineTable(t) => {
                Value::Object(t.iter().map(|(k, v)| (k.to_string(), value(v))).collect())
            }
        }
    }
    fn item(i: &Item) -> Value {
        match i {
            Item::None => Value::Null,
            Item::Value(v) => value(v),
            Item::Table(t) => Value::Object(
                t.iter()
                    .map(|(k, v)| (k.to_string(), item(v)))
                    .collect::<Map<_, _>>(),
            ),
            Item::ArrayOfTables(a) => Value::Array(
                a.iter()
                    .map(|t| {
                        Value::Object(t.iter().map(|(k, v)| (k.to_string(), item(v))).collect())
                    })
                    .collect(),
            ),
        }
    }
    Ok(item(document.as_item()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let path = dir.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn every_format_reads_to_the_same_servers() {
        let dir = std::env::temp_dir().join(format!("mcp-configs-{}", std::process::id()));
        let project = Path::new("/work/project");
        // SAFETY: tests in this module are the only readers of this variable.
        unsafe { std::env::set_var("MCP_CONFIG_TEST_TOKEN", "s3cret") };
        let json_servers = r#"{"docs": {"command": "uvx", "args": ["docs-mcp", "--token", "${MCP_CONFIG_TEST_TOKEN}"], "env": {"LEVEL": "${env:MCP_CONFIG_TEST_TOKEN}"}},
            "api": {"type": "http", "url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": "Bearer ${MCP_CONFIG_TEST_TOKEN}"}}}"#;
        let files = [
            write(
                &dir,
                "claude_desktop_config.json",
                &format!(r#"{{"mcpServers": {json_servers}}}"#),
            ),
            write(
                &dir,
                ".vscode/mcp.json",
                &format!(r#"{{"servers": {json_servers}, "inputs": []}}"#),
            ),
            write(
                &dir,
                ".claude.json",
                &format!(
                    r#"{{"numStartups": 3, "projects": {{"/work/project": {{"mcpServers": {json_servers}}}, "/elsewhere": {{"mcpServers": {{"x": {{"command": "x"}}}}}}}}}}"#
                ),
            ),
            write(
                &dir,
                ".gemini/settings.json",
                &format!(
                    r#"{{"mcpServers": {}}}"#,
                    json_servers.replace("\"url\"", "\"httpUrl\"")
                ),
            ),
            write(
                &dir,
                "config.toml",
                "model = \"o3\"\n[mcp_servers.docs]\ncommand = \"uvx\"\nargs = [\"docs-mcp\", \"--token\", \"${MCP_CONFIG_TEST_TOKEN}\"]\nenv = { LEVEL = \"${env:MCP_CONFIG_TEST_TOKEN}\" }\n\n[mcp_servers.api]\nurl = \"http://127.0.0.1:9/mcp\"\nbearer_token_env_var = \"MCP_CONFIG_TEST_TOKEN\"\n",
            ),
        ];
        for file in &files {
            let mut servers = read(file, project, true).unwrap_or_else(|e| panic!("{e}"));
            servers.sort_by(|a, b| a.name.cmp(&b.name));
            let summary: Vec<(String, Transport)> =
                servers.into_iter().map(|s| (s.name, s.transport)).collect();
            assert_eq!(
                summary,
                [
                    (
                        "api".to_string(),
                        Transport::Http {
                            url: "http://127.0.0.1:9/mcp".into(),
                            headers: vec![("Authorization".into(), "Bearer s3cret".into())],
                        }
                    ),
                    (
                        "docs".to_string(),
                        Transport::Stdio {
                            command: "uvx".into(),
                            args: vec!["docs-mcp".into(), "--token".into(), "s3cret".into()],
                            env: BTreeMap::from([("LEVEL".into(), "s3cret".into())]),
                            cwd: None,
                        }
                    ),
                ],
                "{}",
                file.display()
            );
        }
        std::fs::remove_dir_all(&dir).ok();
    }

    /// M4: a token put into a URL's query, path or a header by `${VAR}`, or written
    /// into the URL's user info or query, is never in the printed error.
    #[test]
    fn errors_name_the_variable_not_its_value() {
        let secrets = vec![("API_TOKEN".to_string(), "TOPSECRET789".to_string())];
        let url = "http://user:pw@127.0.0.1:9/v/TOPSECRET789/mcp?token=TOPSECRET789&k=lit3ral";
        let error = format!("error sending request for url ({url}); header X-Key: TOPSECRET789");
        let shown = redact(&error, &secrets, &[url]);
        for secret in ["TOPSECRET789", "lit3ral", "pw@"] {
            assert!(!shown.contains(secret), "{shown}");
        }
        assert!(shown.contains("${API_TOKEN}"), "{shown}");
    }

    #[test]
    fn an_unset_variable_is_named_and_a_default_applies() {
        let mut expansion = Expansion::default();
        assert_eq!(expansion.expand("a${MCP_CONFIG_TEST_UNSET:-b}c"), "abc");
        assert_eq!(expansion.unset, None);
        assert_eq!(expansion.expand("x${MCP_CONFIG_TEST_UNSET}y"), "xy");
        assert_eq!(expansion.unset.as_deref(), Some("MCP_CONFIG_TEST_UNSET"));
    }
}
