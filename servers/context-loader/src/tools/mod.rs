//! The tools, one file each, as tokio's mini-redis has one file per command: a tool's
//! parameters, its work and the shaping of its answer live together (see
//! [`crate::tool::Tool`]). [`register`] is the one list of them: the MCP registry and
//! the CLI both take their tools from it (the CLI's help lists them in this order;
//! rmcp sorts `tools/list` by name).
//!
//! A new tool: copy the closest tool file, add its `mod` line and its line in
//! [`register`], and describe it in the README.

pub mod assemble_context;
pub mod count_tokens;
pub mod file_tokens;
pub mod fit_messages;
pub mod list_models;
pub mod load_files;
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
}
