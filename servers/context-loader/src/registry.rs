//! The one tool registry. Both transports serve this handler and nothing else, so a
//! tool added here is on stdio and HTTP at once. Each entry is the tool's metadata
//! and one line handing the arguments to its adapter in `tools/`.

use context_budget::files::{FileTokens, LoadedFiles};
use context_budget::spec::{SpecBudget, SpecTokens};
use context_budget::{AssembledContext, FittedMessages, ModelListing, TokenCount};
use mcp_common::metrics::MeteredToolRouter;
use mcp_common::{Structured, ToolError, input_schema, output_schema};
use rmcp::RoleServer;
use rmcp::handler::server::wrapper::Parameters;
#[allow(deprecated)] // MCP logging: see client_log.
use rmcp::model::SetLevelRequestParams;
use rmcp::model::{Implementation, JsonObject, ServerCapabilities, ServerConfig};
use rmcp::service::RequestContext;
use rmcp::{ServerHandler, tool, tool_handler, tool_router};

use crate::client_log::ClientLog;
use crate::service::Service;
use crate::tools::{
    assemble_context, count_tokens, file_tokens, fit_messages, list_models, load_files,
    spec_budget, spec_tokens,
};

#[derive(Clone)]
pub struct ContextLoader {
    service: Service,
    tool_router: MeteredToolRouter<Self>,
    /// This session's `logging/setLevel` (a handler is made per session).
    log: ClientLog,
}

impl ContextLoader {
    pub fn new(service: Service) -> Self {
        ContextLoader {
            service,
            tool_router: MeteredToolRouter::new(Self::tool_router()),
            log: ClientLog::default(),
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
        let result = count_tokens::call(&self.service, args, &context).await;
        self.log
            .forward(&context, count_tokens::NAME, &result)
            .await;
        result
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
        name = "file-tokens",
        description = file_tokens::DESCRIPTION,
        input_schema = input_schema::<file_tokens::FileTokensParams>(),
        output_schema = output_schema::<FileTokens>(),
        annotations(title = "Measure files", read_only_hint = true, idempotent_hint = true, destructive_hint = false, open_world_hint = false)
    )]
    async fn file_tokens(
        &self,
        Parameters(args): Parameters<JsonObject>,
        context: RequestContext<RoleServer>,
    ) -> Result<Structured<FileTokens>, ToolError> {
        file_tokens::call(&self.service, args, &context).await
    }

    #[tool(
        name = "load-files",
        description = load_files::DESCRIPTION,
        input_schema = input_schema::<load_files::LoadFilesParams>(),
        output_schema = output_schema::<LoadedFiles>(),
        annotations(title = "Load files within a budget", read_only_hint = true, idempotent_hint = true, destructive_hint = false, open_world_hint = false)
    )]
    async fn load_files(
        &self,
        Parameters(args): Parameters<JsonObject>,
        context: RequestContext<RoleServer>,
    ) -> Result<Structured<LoadedFiles>, ToolError> {
        load_files::call(&self.service, args, &context).await
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
        let result = spec_tokens::call(&self.service, args, &context).await;
        self.log.forward(&context, spec_tokens::NAME, &result).await;
        result
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
        let result = spec_budget::call(&self.service, args, &context).await;
        self.log.forward(&context, spec_budget::NAME, &result).await;
        result
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
        let result = fit_messages::call(&self.service, args, &context).await;
        self.log
            .forward(&context, fit_messages::NAME, &result)
            .await;
        result
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
    #[allow(deprecated)] // enable_logging: see client_log
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_logging()
                .build(),
        )
            .with_server_info(Implementation::new("context-loader", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Plan a context window before loading anything into it: count-tokens tells what a text \
                 costs for a model (exact for OpenAI, an estimate that errs high for Claude); list-models \
                 gives windows and prices; file-tokens measures files, folders and globs under the \
                 server's roots without loading them, and load-files packs them into a budget it never \
                 exceeds; spec-tokens measures spec documents (one spec by number or \
                 name, or all of them) and spec-budget plans several specs into one budget; \
                 fit-messages trims a chat history to the window without breaking tool-call pairs; \
                 assemble-context builds a prompt from prioritized sections within their budgets.",
            )
    }

    /// Warnings (exact-count fallbacks, skipped files, broken specs) are sent as
    /// `notifications/message` at or above this level; see `client_log`.
    #[allow(deprecated)]
    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), rmcp::ErrorData> {
        self.log.set_level(request.level);
        Ok(())
    }
}
