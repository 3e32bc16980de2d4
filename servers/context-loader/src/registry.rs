//! The one tool registry. Both transports serve this handler and nothing else, so a
//! tool is on stdio and HTTP at once. Its routes come from [`crate::tools::register`],
//! and every tool is served by the one path in [`serve`]: arguments checked the same
//! way, warnings forwarded to the client's log the same way.

use std::time::Duration;

use mcp_common::metrics::MeteredToolRouter;
use mcp_common::{Structured, ToolError, input_schema, output_schema, parse_params};
use rmcp::RoleServer;
use rmcp::handler::server::router::tool::{ToolRoute, ToolRouter};
use rmcp::handler::server::tool::{IntoCallToolResult, ToolCallContext};
#[allow(deprecated)] // MCP logging: see client_log.
use rmcp::model::SetLevelRequestParams;
use rmcp::model::{
    CacheScope, DiscoverResult, Implementation, InitializeRequestParams, InitializeResult,
    JsonObject, ListResourcesResult, ListToolsResult, PaginatedRequestParams, ProtocolVersion,
    ReadResourceRequestParams, ReadResourceResponse, ResultType, ServerCapabilities, ServerConfig,
    ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ServerHandler, tool_handler};

use crate::client_log::ClientLog;
use crate::roots::SessionRoots;
use crate::service::Service;
use crate::tool::{Call, Register, Tool};
use crate::toolset::Toolset;

#[derive(Clone)]
pub struct ContextLoader {
    service: Service,
    tool_router: MeteredToolRouter<Self>,
    /// This session's `logging/setLevel` (a handler is made per session).
    log: ClientLog,
    /// Whether this session's client left `roots/list` unanswered.
    roots: SessionRoots,
    /// What `initialize` tells the client, naming only the exposed tools.
    instructions: String,
    /// How long one call may run (HTTP's `--request-timeout`); past it the call is
    /// dropped, which stops its work, and answered with a JSON-RPC error.
    call_timeout: Option<Duration>,
}

impl ContextLoader {
    /// The handler for `tools` (`--tools`): only they are listed and routed, so a
    /// call to a hidden tool gets the JSON-RPC error of an unknown tool.
    pub fn new(service: Service, tools: &Toolset) -> Self {
        let mut routes = Routes {
            router: ToolRouter::new(),
            tools,
            names: Vec::new(),
        };
        crate::tools::register(&mut routes);
        ContextLoader {
            service,
            tool_router: MeteredToolRouter::new(routes.router),
            log: ClientLog::default(),
            roots: SessionRoots::default(),
            instructions: instructions(&routes.names),
            call_timeout: None,
        }
    }

    /// Stop every call after `timeout` (HTTP: its request timeout also covers calls
    /// whose answer streams, which the HTTP layer's timer no longer bounds once the
    /// stream has started).
    pub fn with_call_timeout(mut self, timeout: Duration) -> Self {
        self.call_timeout = Some(timeout);
        self
    }

    /// A handler for one more session: the same routes (built once per process, with
    /// their schemas: over stateless HTTP every request is a session), its own log level
    /// and its own knowledge of the client's roots.
    pub fn for_new_session(&self) -> Self {
        ContextLoader {
            log: ClientLog::default(),
            roots: SessionRoots::default(),
            ..self.clone()
        }
    }
}

/// The server's `instructions`: the workflow, and the tools there are for it. Each
/// tool's description says what it does; this is sent once per session (Claude Code
/// puts it in the system prompt), so it stays short.
fn instructions(tools: &[&str]) -> String {
    format!(
        "Plan a context window before loading anything into it: measure what text, files or \
         specs cost for a model, then load or trim them within a token budget. Tools: {}.",
        tools.join(", ")
    )
}

/// The router being filled with the exposed tools.
struct Routes<'a> {
    router: ToolRouter<ContextLoader>,
    tools: &'a Toolset,
    names: Vec<&'static str>,
}

impl Register for Routes<'_> {
    fn tool<T: Tool>(&mut self) {
        if !self.tools.exposes(T::NAME) {
            return;
        }
        self.names.push(T::NAME);
        // Every tool only reads: files under its roots, the catalog, text it is sent.
        let annotations = ToolAnnotations::with_title(T::TITLE)
            .read_only(true)
            .destructive(false)
            .idempotent(true)
            .open_world(false);
        let attr = rmcp::model::Tool::new(T::NAME, T::DESCRIPTION, input_schema::<T::Params>())
            .with_raw_output_schema(output_schema::<T::Output>())
            .with_annotations(annotations);
        self.router.add_route(ToolRoute::new_dyn(
            attr,
            |context: ToolCallContext<'_, ContextLoader>| {
                Box::pin(async move {
                    let ToolCallContext {
                        request_context,
                        service: server,
                        arguments,
                        ..
                    } = context;
                    let served = serve::<T>(server, arguments, &request_context);
                    let Some(limit) = server.call_timeout else {
                        return served.await.into_call_tool_result();
                    };
                    // Dropping the call on time-out drops its work's guard, which
                    // cancels the work on the blocking pool.
                    match tokio::time::timeout(limit, served).await {
                        Ok(result) => result.into_call_tool_result(),
                        Err(_) => Err(timed_out(T::NAME, limit)),
                    }
                })
            },
        ));
    }
}

/// One call of tool `T`: parse the arguments (an unknown name is refused), run the
/// tool, check its answer against the answer limit, and send its warnings to the
/// client's log before the result.
///
/// The answer measured is the string the model receives (`answer_text`: the
/// compact JSON of structuredContent, which is also the text content). Tools are
/// built to stay under the limit by themselves (pages, bounded lists, budgets
/// capped by it); this check makes sure no answer, present or future, goes out
/// larger: it becomes ANSWER_TOO_LARGE saying what to ask instead.
async fn serve<T: Tool>(
    server: &ContextLoader,
    arguments: Option<JsonObject>,
    request: &RequestContext<RoleServer>,
) -> Result<Structured<T::Output>, ToolError> {
    // A large call's arguments come parked past rmcp's parse (`mcp_common::parked`).
    let arguments = mcp_common::parked::unpark(arguments);
    let params: T::Params = parse_params(T::NAME, arguments)?;
    // The client named itself at `initialize` (or in this request's `_meta`, under
    // 2026-07-28); stateless HTTP under the older protocol never says.
    let client = request.client_info().map(|info| info.name);
    let limit = server.service.answer_limit_for(client.as_deref());
    let call = Call::request(request, limit, server.roots.clone());
    // Every answer, an error too, leaves after the progress its call reported.
    let progress = call.clone();
    let output = T::call(&server.service, params, call).await;
    progress.progress_sent().await;
    let output = output?;
    let size = limit.measure(&context_budget::answer::answer_text(&output));
    if !limit.admits(size) {
        return Err(crate::errors::answer_too_large(T::NAME, size, limit));
    }
    server
        .log
        .forward(request, T::NAME, T::warnings(&output))
        .await;
    Ok(Structured(output))
}

/// JSON-RPC's "request timed out" (as the MCP SDKs number it).
const REQUEST_TIMEOUT: i32 = -32001;

/// The error a call gets when it runs past the request timeout.
fn timed_out(tool: &str, limit: Duration) -> rmcp::ErrorData {
    rmcp::ErrorData::new(
        rmcp::model::ErrorCode(REQUEST_TIMEOUT),
        format!(
            "{tool} ran past the request timeout ({} s, set by --request-timeout) and was \
             stopped; ask for less in one call, or raise the server's --request-timeout",
            limit.as_secs_f64()
        ),
        None,
    )
}

/// Whether this request's client renders MCP Apps (see [`crate::app`]): from the
/// request's own `_meta` under 2026-07-28, else from the session's `initialize`.
fn renders_apps(context: &RequestContext<RoleServer>) -> bool {
    crate::app::renders_apps(context.client_capabilities().as_ref())
}

/// Cache hints for a listing under 2026-07-28 (absent before it): fresh for no
/// time, as rmcp's own listing says, and private when the listing depends on the
/// client (an app-rendering client's list is not another client's).
fn cache_hints(
    context: &RequestContext<RoleServer>,
    per_client: bool,
) -> (Option<u64>, Option<CacheScope>) {
    let hints = context
        .protocol_version()
        .is_some_and(|version| version >= ProtocolVersion::V_2026_07_28);
    let scope = match per_client {
        true => CacheScope::Private,
        false => CacheScope::Public,
    };
    (hints.then_some(0), hints.then_some(scope))
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
        .with_server_info(Implementation::new(
            "context-loader",
            env!("CARGO_PKG_VERSION"),
        ))
        .with_instructions(self.instructions.clone())
    }

    /// The client's roots changed: ask it again (see `roots`), even if it once left
    /// `roots/list` unanswered.
    async fn on_roots_list_changed(&self, _: rmcp::service::NotificationContext<RoleServer>) {
        self.roots.list_changed();
    }

    /// The handshake; a client that renders MCP Apps also learns of the page (the
    /// resources capability and the extension).
    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, rmcp::ErrorData> {
        context.peer.set_peer_info(request.clone());
        let mut result = self.negotiate_initialize(&request)?;
        if crate::app::renders_apps(Some(&request.capabilities)) {
            result.capabilities = crate::app::capabilities(result.capabilities);
        }
        Ok(result)
    }

    /// `server/discover` (2026-07-28), with the page for a client that renders apps.
    async fn discover(
        &self,
        context: RequestContext<RoleServer>,
    ) -> Result<DiscoverResult, rmcp::ErrorData> {
        let mut result = DiscoverResult::from_server_info(
            self.supported_protocol_versions().into_owned(),
            self.get_info(),
        );
        if renders_apps(&context) {
            result.capabilities = crate::app::capabilities(result.capabilities);
            result.cache_scope = CacheScope::Private;
        }
        Ok(result)
    }

    /// Every exposed tool; for a client that renders MCP Apps, the measuring tools
    /// carry the page's link in `_meta` (which no client sends to the model).
    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, rmcp::ErrorData> {
        let apps = renders_apps(&context);
        let mut tools = self.tool_router.list_all();
        if apps {
            crate::app::link(&mut tools);
        }
        let (ttl_ms, cache_scope) = cache_hints(&context, apps);
        Ok(ListToolsResult {
            result_type: Some(ResultType::COMPLETE),
            tools,
            meta: None,
            next_cursor: None,
            ttl_ms,
            cache_scope,
        })
    }

    /// The page, listed to a client that renders MCP Apps; nothing to any other.
    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, rmcp::ErrorData> {
        let apps = renders_apps(&context);
        let resources = match apps {
            true => vec![crate::app::resource()],
            false => Vec::new(),
        };
        let (ttl_ms, cache_scope) = cache_hints(&context, apps);
        Ok(ListResourcesResult {
            result_type: Some(ResultType::COMPLETE),
            resources,
            meta: None,
            next_cursor: None,
            ttl_ms,
            cache_scope,
        })
    }

    /// The page, to whoever asks for its URI (a host that saw the link reads it,
    /// possibly on another connection); any other URI is not found.
    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, rmcp::ErrorData> {
        crate::app::read(&request.uri).map(Into::into)
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

#[cfg(test)]
mod tests {
    #![allow(deprecated)] // MCP logging: see client_log.

    use context_budget::TokenCounter;
    use context_budget::spec::SpecStore;
    use rmcp::model::LoggingLevel;

    use super::*;

    #[test]
    fn a_new_session_shares_the_routes_but_not_the_log_level() {
        let service = Service::new(TokenCounter::default(), SpecStore::new("specs"));
        let first = ContextLoader::new(service, &Toolset::default());
        let second = first.for_new_session();
        first.log.set_level(LoggingLevel::Error);
        assert!(!first.log.enabled(LoggingLevel::Warning));
        assert!(second.log.enabled(LoggingLevel::Warning), "its own level");
        assert_eq!(
            second.tool_router.list_all().len(),
            first.tool_router.list_all().len()
        );
    }
}
