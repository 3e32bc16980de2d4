//! The one tool registry. Both transports serve this handler and nothing else, so a
//! tool added here is on stdio and HTTP at once.

use context_budget::spec::{SpecBudget, SpecTokens};
use context_budget::{AssembledContext, FittedMessages, ModelListing, TokenCount};
use mcp_common::metrics::MeteredToolRouter;
use mcp_common::{Structured, ToolError, input_schema, output_schema, parse_params, run_blocking};
use rmcp::RoleServer;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{Implementation, JsonObject, ServerCapabilities, ServerConfig};
use rmcp::service::RequestContext;
use rmcp::{ServerHandler, tool, tool_handler, tool_router};

use crate::scan::RequestScan;
use crate::tools::{
    AppState, assemble_context, count_tokens, fit_messages, list_models, spec_budget, spec_tokens,
};

/// Texts above this size are counted on the blocking pool rather than inline.
const INLINE_COUNT_BYTES: usize = 64 * 1024;

#[derive(Clone)]
pub struct ContextLoader {
    state: AppState,
    tool_router: MeteredToolRouter<Self>,
}

impl ContextLoader {
    pub fn new(state: AppState) -> Self {
        ContextLoader {
            state,
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
    ) -> Result<Structured<TokenCount>, ToolError> {
        let params: count_tokens::CountTokensParams = parse_params(count_tokens::NAME, Some(args))?;
        let state = self.state.clone();
        let (count, params) = if params.text.len() <= INLINE_COUNT_BYTES {
            (count_tokens::run(&state, &params)?, params)
        } else {
            let worker_state = state.clone();
            run_blocking(move || count_tokens::run(&worker_state, &params).map(|c| (c, params)))
                .await?
        };
        Ok(Structured(
            count_tokens::run_exact(&state, &params, count).await,
        ))
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
        let params: list_models::ListModelsParams = parse_params(list_models::NAME, Some(args))?;
        list_models::run(&self.state, &params).map(Structured)
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
        let params: spec_tokens::SpecTokensParams = parse_params(spec_tokens::NAME, Some(args))?;
        let (state, scan) = (self.state.clone(), RequestScan::new(&context));
        // File reads and tokenizing: on the blocking pool, never on async workers.
        run_blocking(move || spec_tokens::run(&state, &params, &scan))
            .await
            .map(Structured)
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
        let params: spec_budget::SpecBudgetParams = parse_params(spec_budget::NAME, Some(args))?;
        let (state, scan) = (self.state.clone(), RequestScan::new(&context));
        run_blocking(move || spec_budget::run(&state, &params, &scan))
            .await
            .map(Structured)
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
    ) -> Result<Structured<FittedMessages>, ToolError> {
        let params: fit_messages::FitMessagesParams = parse_params(fit_messages::NAME, Some(args))?;
        fit_messages::run(&self.state, params).await.map(Structured)
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
    ) -> Result<Structured<AssembledContext>, ToolError> {
        let params: assemble_context::AssembleContextParams =
            parse_params(assemble_context::NAME, Some(args))?;
        let state = self.state.clone();
        run_blocking(move || assemble_context::run(&state, &params))
            .await
            .map(Structured)
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
