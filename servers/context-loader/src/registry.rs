//! The one tool registry. Both transports serve this handler and nothing else, so a
//! tool added here is on stdio and HTTP at once. Each entry is the tool's metadata
//! and one line handing the arguments to its adapter in `tools/`.

use context_budget::spec::{SpecBudget, SpecTokens};
use context_budget::{AssembledContext, FittedMessages, ModelListing, TokenCount};
use mcp_common::metrics::MeteredToolRouter;
use mcp_common::{Structured, ToolError, input_schema, output_schema};
use rmcp::RoleServer;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{Implementation, JsonObject, ServerCapabilities, ServerConfig};
use rmcp::service::RequestContext;
use rmcp::{ServerHandler, tool, tool_handler, tool_router};

use crate::service::Service;
use crate::tools::{
    assemble_context, count_tokens, fit_messages, list_models, spec_budget, spec_tokens,
};

#[derive(Clone)]
pub struct ContextLoader {
    service: Service,
    tool_router: MeteredToolRouter<Self>,
}

impl ContextLoader {
    pub fn new(service: Service) -> Self {
        ContextLoader {
            service,
            tool_router: MeteredToolRouter::new(Self::tool_router()),
        }
    }
}

#[tool_router]
impl ContextLoader {
    #[tool(
        name = "count-tokens",
        description = count_tokens::DESCRIPTION,
        input_schema = input_schema::<count_tokens::CountTokensParams>(),
        output_schema = output_schema::<TokenCount>(),
        annotations(title = "Count tokens", read_only_hint = true, idempotent_hint = true, destructive_hint = false, open_world_hint = false)
    )]
    async fn count_tokens(
        &self,
        Parameters(args): Parameters<JsonObject>,
        context: RequestContext<RoleServer>,
    ) -> Result<Structured<TokenCount>, ToolError> {
        count_tokens::call(&self.service, args, &context).await
    }

    #[tool(
        name = "list-models",
        description = list_models::DESCRIPTION,
        input_schema = input_schema::<list_models::ListModelsParams>(),
        output_schema = output_schema::<ModelListing>(),
        annotations(title = "List models", read_only_hint = true, idempotent_hint = true, destructive_hint = false, open_world_hint = false)
    )]
    async fn list_models(
        &self,
        Parameters(args): Parameters<JsonObject>,
    ) -> Result<Structured<ModelListing>, ToolError> {
        list_models::call(&self.service, args).await
    }

    #[tool(
        name = "spec-tokens",
        description = spec_tokens::DESCRIPTION,
        input_schema = input_schema::<spec_tokens::SpecTokensParams>(),
        output_schema = output_schema::<SpecTokens>(),
        annotations(title = "Measure specs", read_only_hint = true, idempotent_hint = true, destructive_hint = false, open_world_hint = false)
    )]
    async fn spec_tokens(
        &self,
        Parameters(args): Parameters<JsonObject>,
        context: RequestContext<RoleServer>,
    ) -> Result<Structured<SpecTokens>, ToolError> {
        spec_tokens::call(&self.service, args, &context).await
    }

    #[tool(
        name = "spec-budget",
        description = spec_budget::DESCRIPTION,
        input_schema = input_schema::<spec_budget::SpecBudgetParams>(),
        output_schema = output_schema::<SpecBudget>(),
        annotations(title = "Plan specs into a budget", read_only_hint = true, idempotent_hint = true, destructive_hint = false, open_world_hint = false)
    )]
    async fn spec_budget(
        &self,
        Parameters(args): Parameters<JsonObject>,
        context: RequestContext<RoleServer>,
    ) -> Result<Structured<SpecBudget>, ToolError> {
        spec_budget::call(&self.service, args, &context).await
    }

    #[tool(
        name = "fit-messages",
        description = fit_messages::DESCRIPTION,
        input_schema = input_schema::<fit_messages::FitMessagesParams>(),
        output_schema = output_schema::<FittedMessages>(),
        annotations(title = "Fit messages", read_only_hint = true, idempotent_hint = true, destructive_hint = false, open_world_hint = false)
    )]
    async fn fit_messages(
        &self,
        Parameters(args): Parameters<JsonObject>,
        context: RequestContext<RoleServer>,
    ) -> Result<Structured<FittedMessages>, ToolError> {
        fit_messages::call(&self.service, args, &context).await
    }

    #[tool(
        name = "assemble-context",
        description = assemble_context::DESCRIPTION,
        input_schema = input_schema::<assemble_context::AssembleContextParams>(),
        output_schema = output_schema::<AssembledContext>(),
        annotations(title = "Assemble context", read_only_hint = true, idempotent_hint = true, destructive_hint = false, open_world_hint = false)
    )]
    async fn assemble_context(
        &self,
        Parameters(args): Parameters<JsonObject>,
        context: RequestContext<RoleServer>,
    ) -> Result<Structured<AssembledContext>, ToolError> {
        assemble_context::call(&self.service, args, &context).await
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for ContextLoader {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("context-loader", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Plan a context window before loading anything into it: count-tokens tells what a text \
                 costs for a model (exact for OpenAI, an estimate that errs high for Claude); list-models \
                 gives windows and prices; spec-tokens measures spec documents (one spec by number or \
                 name, or all of them) and spec-budget plans several specs into one budget; \
                 fit-messages trims a chat history to the window without breaking tool-call pairs; \
                 assemble-context builds a prompt from prioritized sections within their budgets.",
            )
    }
}
