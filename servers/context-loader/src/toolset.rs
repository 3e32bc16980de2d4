//! Which tools a server exposes (`--tools`). A client sends every exposed tool's name,
//! description and input schema to the model on every request, so a client that
//! needs three tools should not pay for eight. A toolset is named (`all`, `minimal`,
//! ...) or a comma list of tool names and toolset names; a hidden tool is not in
//! `tools/list` and a call to it gets the JSON-RPC error of an unknown tool.

use std::collections::BTreeSet;
use std::fmt;
use std::str::FromStr;

use crate::tool::{Register, Tool};

/// The named toolsets, each with the tools it holds (`all` is every tool).
pub const TOOLSETS: &[(&str, &[&str])] = &[
    ("minimal", &["count-tokens", "file-tokens", "load-files"]),
    (
        "files",
        &["count-tokens", "list-models", "file-tokens", "load-files"],
    ),
    ("specs", &["count-tokens", "spec-tokens", "spec-budget"]),
    (
        "chat",
        &[
            "count-tokens",
            "list-models",
            "fit-messages",
            "assemble-context",
        ],
    ),
];

/// The tools a server exposes: every tool, or the named ones.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Toolset {
    /// `None`: every tool.
    only: Option<BTreeSet<String>>,
}

impl Toolset {
    /// Every tool.
    pub fn all() -> Toolset {
        Toolset::default()
    }

    /// Whether the tool named `name` is exposed.
    pub fn exposes(&self, name: &str) -> bool {
        self.only.as_ref().is_none_or(|only| only.contains(name))
    }
}

/// Every tool's MCP name, in [`crate::tools::register`]'s order.
pub fn tool_names() -> Vec<&'static str> {
    struct Names(Vec<&'static str>);
    impl Register for Names {
        fn tool<T: Tool>(&mut self) {
            self.0.push(T::NAME);
        }
    }
    let mut names = Names(Vec::new());
    crate::tools::register(&mut names);
    names.0
}

/// A `--tools` value that names no tool or toolset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownTool(String);

impl fmt::Display for UnknownTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sets: Vec<&str> = TOOLSETS.iter().map(|(name, _)| *name).collect();
        write!(
            f,
            "`{}` is neither a tool nor a toolset; toolsets: all, {}; tools: {}",
            self.0,
            sets.join(", "),
            tool_names().join(", ")
        )
    }
}

impl std::error::Error for UnknownTool {}

impl FromStr for Toolset {
    type Err = UnknownTool;

    /// `all`, a toolset name, a tool name, or a comma list of them (`minimal,spec-tokens`).
    fn from_str(list: &str) -> Result<Toolset, UnknownTool> {
        let tools = tool_names();
        let mut only = BTreeSet::new();
        for name in list.split(',').map(str::trim) {
            if name == "all" {
                return Ok(Toolset::all());
            }
            if let Some((_, members)) = TOOLSETS.iter().find(|(set, _)| *set == name) {
                only.extend(members.iter().map(|m| m.to_string()));
            } else if tools.contains(&name) {
                only.insert(name.to_string());
            } else {
                return Err(UnknownTool(name.to_string()));
            }
        }
        Ok(Toolset { only: Some(only) })
    }
}

impl fmt::Display for Toolset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.only {
            None => f.write_str("all"),
            Some(only) => {
                let names: Vec<&str> = only.iter().map(String::as_str).collect();
                f.write_str(&names.join(","))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_toolset_names_real_tools_and_minimal_is_the_file_workflow() {
        let tools = tool_names();
        for (set, members) in TOOLSETS {
            for member in *members {
                assert!(tools.contains(member), "{set} names unknown tool {member}");
            }
        }
        let minimal: Toolset = "minimal".parse().expect("a toolset");
        assert_eq!(minimal.to_string(), "count-tokens,file-tokens,load-files");
        assert!(!minimal.exposes("fit-messages"));
    }

    #[test]
    fn a_list_mixes_toolsets_and_tools_and_all_wins() {
        let mixed: Toolset = "minimal, spec-tokens".parse().expect("a list");
        assert!(mixed.exposes("spec-tokens") && mixed.exposes("load-files"));
        assert!(!mixed.exposes("spec-budget"));
        let all: Toolset = "minimal,all".parse().expect("all");
        assert_eq!(all, Toolset::all());
        assert!(all.exposes("fit-messages"));
    }

    #[test]
    fn an_unknown_name_is_refused_with_the_choices() {
        let error = "minimal,count_tokens"
            .parse::<Toolset>()
            .expect_err("unknown");
        let message = error.to_string();
        assert!(
            message.starts_with("`count_tokens` is neither"),
            "{message}"
        );
        assert!(message.contains("minimal") && message.contains("count-tokens"));
        assert!(
            "".parse::<Toolset>().is_err(),
            "an empty list names nothing"
        );
    }
}
