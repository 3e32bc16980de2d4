//! The tools, one file each, as tokio's mini-redis has one file per command: a tool's
//! parameters, its work and the shaping of its answer live together (see
//! [`crate::tool::Tool`]). [`register`] is the one list of them: the MCP registry and
//! the CLI both take their tools from it (the CLI's help lists them in this order;
//! rmcp sorts `tools/list` by name).
//!
//! A new tool: copy the closest tool file, add its `mod` line and its line in
//! [`register`], and describe it in docs/tools.md (and in a line of the README's table).

pub mod assemble_context;
pub mod count_tokens;
pub mod file_tokens;
pub mod fit_messages;
pub mod list_models;
pub mod load_files;
pub mod mcp_tokens;
pub mod spec_budget;
pub mod spec_tokens;

use crate::tool::Register;

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

#[cfg(test)]
mod tests {
    use mcp_common::tool::{accepted_names, input_schema};
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
        schema_and_parser_agree::<super::count_tokens::CountTokensParams>();
        schema_and_parser_agree::<super::list_models::ListModelsParams>();
        schema_and_parser_agree::<super::file_tokens::FileTokensParams>();
        schema_and_parser_agree::<super::load_files::LoadFilesParams>();
        schema_and_parser_agree::<super::spec_tokens::SpecTokensParams>();
        schema_and_parser_agree::<super::spec_budget::SpecBudgetParams>();
        schema_and_parser_agree::<super::fit_messages::FitMessagesParams>();
        schema_and_parser_agree::<super::assemble_context::AssembleContextParams>();
        schema_and_parser_agree::<super::mcp_tokens::McpTokensParams>();
    }
}
