//! The tools, one file each, as tokio's mini-redis has one file per command: a tool's
//! parameters, its work and the shaping of its answer live together (see
//! [`crate::tool::Tool`]). [`register`] is the one list of them: the MCP registry and
//! the CLI both take their tools from it (the CLI's help lists them in this order;
//! rmcp sorts `tools/list` by name).
//!
//! A new tool: copy the closest tool file, add its `mod` line and its line in
//! [`register`], and describe it in docs/tools.md (and in a line of the README's
//! table). Everything else that lists tools (the tests, the toolsets' check, xtask's
//! real-client check) derives from [`register`] and names a tool it has no case for.

pub mod assemble_context;
pub mod count_tokens;
pub mod file_tokens;
pub mod fit_messages;
pub mod list_models;
pub mod load_files;
pub mod mcp_tokens;
pub mod spec_budget;
pub mod spec_tokens;

use crate::tool::{Register, Tool};

/// Every tool, in order.
pub fn register(tools: &mut impl Register) {
    tools.tool::<count_tokens::CountTokensTool>();
    tools.tool::<list_models::ListModelsTool>();
    tools.tool::<file_tokens::FileTokensTool>();
    tools.tool::<load_files::LoadFilesTool>();
    tools.tool::<spec_tokens::SpecTokensTool>();
    tools.tool::<spec_budget::SpecBudgetTool>();
    tools.tool::<fit_messages::FitMessagesTool>();
    tools.tool::<assemble_context::AssembleContextTool>();
    tools.tool::<mcp_tokens::McpTokensTool>();
}

/// Every tool's MCP name and CLI command, in [`register`]'s order.
pub fn commands() -> Vec<(&'static str, &'static str)> {
    struct Commands(Vec<(&'static str, &'static str)>);
    impl Register for Commands {
        fn tool<T: Tool>(&mut self) {
            self.0.push((T::NAME, T::COMMAND));
        }
    }
    let mut commands = Commands(Vec::new());
    register(&mut commands);
    commands.0
}

#[cfg(test)]
mod tests {
    use mcp_common::input_schema;
    use mcp_common::params::accepted_names;
    use schemars::JsonSchema;
    use serde::de::DeserializeOwned;

    /// The names a tool accepts are exactly the ones its input schema lists: an alias
    /// the schema does not list is an argument a schema-checking client refuses
    /// (`additionalProperties: false`) while the server takes it (issue 23).
    fn schema_and_parser_agree<T: DeserializeOwned + JsonSchema + 'static>() {
        let schema = input_schema::<T>();
        let mut listed: Vec<&str> = schema["properties"]
            .as_object()
            .expect("properties")
            .keys()
            .map(String::as_str)
            .collect();
        let mut accepted = accepted_names::<T>().expect("a plain struct").to_vec();
        listed.sort_unstable();
        accepted.sort_unstable();
        assert_eq!(accepted, listed, "{}", std::any::type_name::<T>());
    }

    #[test]
    fn every_tool_accepts_exactly_the_arguments_its_schema_lists() {
        struct Check;
        impl super::Register for Check {
            fn tool<T: super::Tool>(&mut self) {
                schema_and_parser_agree::<T::Params>();
            }
        }
        super::register(&mut Check);
    }
}
