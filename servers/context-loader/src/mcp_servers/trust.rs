//! Whether a project's config may run its servers. A file found in the working folder
//! came with the repository, so whoever wrote the repository chose its commands, URLs
//! and headers: like Claude Code, we run them only once the user approved them. An
//! approval counts only where the user keeps it, never in the project itself (a
//! cloned `.claude/settings.json` could approve its own `.mcp.json`):
//!
//! - `.mcp.json`: Claude Code's choices in `~/.claude.json` (this project's
//!   `enabledMcpjsonServers`, `disabledMcpjsonServers`, `enableAllProjectMcpServers`)
//!   and in `~/.claude/settings.json` (the same keys);
//! - `.gemini/settings.json`: a Gemini CLI trust rule in `~/.gemini/trustedFolders.json`
//!   (`TRUST_FOLDER`, `TRUST_PARENT`, `DO_NOT_TRUST`; the most specific rule decides);
//! - `.vscode/mcp.json`, `.cursor/mcp.json`: their editors keep trust in databases we
//!   do not read; only `--trust-project` runs them.

use std::io::Read;
use std::path::{Path, PathBuf};

use serde_json::Value;

/// Largest user file read for an approval (`~/.claude.json` keeps a history).
const MAX_APPROVALS_BYTES: u64 = 16 * 1024 * 1024;

/// Which servers of `file` (a project's config) the user approved, by name; `None`
/// entries are not approved, with how to allow them.
pub fn approvals(
    file: &Path,
    project: &Path,
    home: Option<&Path>,
    names: &[String],
) -> Vec<Result<(), String>> {
    let kind = Kind::of(file, project);
    let decided: Vec<Option<bool>> = match (kind, home) {
        (Kind::ClaudeCode, Some(home)) => {
            let choices = [
                claude_project_choices(&home.join(".claude.json"), project),
                json(&home.join(".claude/settings.json")),
            ];
            names
                .iter()
                .map(|name| claude_choice(&choices, name))
                .collect()
        }
        (Kind::GeminiCli, Some(home)) => {
            let rules = std::env::var_os("GEMINI_CLI_TRUSTED_FOLDERS_PATH")
                .map_or_else(|| home.join(".gemini/trustedFolders.json"), PathBuf::from);
            let trusted = gemini_trusted(json(&rules).as_ref(), project);
            vec![trusted; names.len()]
        }
        _ => vec![None; names.len()],
    };
    decided
        .into_iter()
        .map(|approved| match approved {
            Some(true) => Ok(()),
            Some(false) => Err(kind.refused(file, project)),
            None => Err(kind.unapproved(file, project)),
        })
        .collect()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    ClaudeCode,
    GeminiCli,
    /// VS Code, Cursor.
    Editor,
}

impl Kind {
    fn of(file: &Path, project: &Path) -> Kind {
        match file.strip_prefix(project).ok().and_then(Path::to_str) {
            Some(".mcp.json") => Kind::ClaudeCode,
            Some(".gemini/settings.json") => Kind::GeminiCli,
            _ => Kind::Editor,
        }
    }

    fn unapproved(self, file: &Path, project: &Path) -> String {
        let file = file.strip_prefix(project).unwrap_or(file).display();
        match self {
            Kind::ClaudeCode => format!(
                "not run: this project's {file}, not approved in Claude Code; approve it \
                 there (/mcp) or pass --trust-project"
            ),
            Kind::GeminiCli => format!(
                "not run: this project's {file}, a folder Gemini CLI does not trust; trust \
                 it there (/permissions) or pass --trust-project"
            ),
            Kind::Editor => format!(
                "not run: this project's {file}; pass --trust-project, or name the file \
                 with --config"
            ),
        }
    }

    fn refused(self, file: &Path, project: &Path) -> String {
        format!(
            "not run: this project's {}, turned down in {}; pass --trust-project to run it \
             anyway",
            file.strip_prefix(project).unwrap_or(file).display(),
            match self {
                Kind::ClaudeCode => "Claude Code",
                Kind::GeminiCli => "Gemini CLI",
                Kind::Editor => "your editor",
            }
        )
    }
}

/// A JSON file of the user's, if it is a plain file that reads and parses.
fn json(path: &Path) -> Option<Value> {
    let file = std::fs::File::open(path).ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut text = String::new();
    file.take(MAX_APPROVALS_BYTES)
        .read_to_string(&mut text)
        .ok()?;
    serde_json::from_str(&text).ok()
}

/// `~/.claude.json`'s entry for this project.
fn claude_project_choices(path: &Path, project: &Path) -> Option<Value> {
    let mut document = json(path)?;
    let projects = document.get_mut("projects")?.as_object_mut()?;
    projects.remove(project.to_str()?)
}

/// Claude Code's choice for `name`: turned down anywhere wins, then approved anywhere.
fn claude_choice(choices: &[Option<Value>], name: &str) -> Option<bool> {
    let listed = |choice: &Value, key: &str| {
        choice
            .get(key)
            .and_then(Value::as_array)
            .is_some_and(|names| names.iter().any(|n| n.as_str() == Some(name)))
    };
    let choices: Vec<&Value> = choices.iter().flatten().collect();
    if choices.iter().any(|c| listed(c, "disabledMcpjsonServers")) {
        return Some(false);
    }
    choices
        .iter()
        .any(|c| {
            listed(c, "enabledMcpjsonServers")
                || c.get("enableAllProjectMcpServers") == Some(&Value::Bool(true))
        })
        .then_some(true)
}

/// Gemini CLI's trust for `project`: the rule for the longest folder that holds it.
/// `TRUST_PARENT` on a folder trusts the folder that holds it.
fn gemini_trusted(rules: Option<&Value>, project: &Path) -> Option<bool> {
    let rules = rules?.as_object()?;
    let mut best: Option<(usize, bool)> = None;
    for (path, level) in rules {
        let (root, trusted) = match level.as_str().unwrap_or_default() {
            "TRUST_FOLDER" => (PathBuf::from(path), true),
            "TRUST_PARENT" => (Path::new(path).parent()?.to_path_buf(), true),
            "DO_NOT_TRUST" => (PathBuf::from(path), false),
            _ => continue,
        };
        let depth = root.components().count();
        if project.starts_with(&root) && best.is_none_or(|(d, _)| depth >= d) {
            best = Some((depth, trusted));
        }
    }
    best.map(|(_, trusted)| trusted)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn claude_code_choices_turned_down_win_and_project_keys_are_exact() {
        let yes = Some(json!({"enabledMcpjsonServers": ["a"]}));
        let no = Some(json!({"disabledMcpjsonServers": ["a"]}));
        let all = Some(json!({"enableAllProjectMcpServers": true}));
        assert_eq!(claude_choice(&[yes.clone(), None], "a"), Some(true));
        assert_eq!(claude_choice(&[yes.clone(), None], "b"), None);
        assert_eq!(claude_choice(&[yes, no.clone()], "a"), Some(false));
        assert_eq!(claude_choice(&[None, all.clone()], "b"), Some(true));
        assert_eq!(claude_choice(&[no, all], "a"), Some(false));
    }

    #[test]
    fn gemini_rules_the_most_specific_folder_decides() {
        let rules = json!({"/work": "TRUST_FOLDER", "/work/cloned": "DO_NOT_TRUST",
            "/src/app/sub": "TRUST_PARENT", "/x": "UNKNOWN"});
        let trusted = |p: &str| gemini_trusted(Some(&rules), Path::new(p));
        assert_eq!(trusted("/work/mine"), Some(true));
        assert_eq!(trusted("/work/cloned/deep"), Some(false));
        assert_eq!(trusted("/src/app"), Some(true));
        assert_eq!(trusted("/srcx"), None);
        assert_eq!(trusted("/x"), None);
    }
}
