//! Connecting to one configured server through rmcp's client and listing what it
//! advertises, within a time limit; a spawned server's whole process group is ended
//! whatever happened.

use std::process::Stdio;
use std::time::Duration;

use context_budget::tool_defs::{
    Listed, MeasuredServer, ServerDefinitions, legacy_client_key_order, measure_until,
    tool_definitions,
};
use process_wrap::tokio::{CommandWrap, ProcessGroup};
use rmcp::RoleClient;
use rmcp::model::{PaginatedRequestParams, ProtocolVersion};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use tokio::io::AsyncReadExt;

use super::Counting;
use super::config::{Held, ServerConfig, Transport};
use super::unreadable::{self, Found};

/// The end of a failed server's stderr shown with its error.
const STDERR_TAIL_BYTES: usize = 2048;
/// Most characters of a server's error as we report it (`--json` too): the server
/// writes much of it (its messages, its stderr).
pub const MAX_ERROR_CHARS: usize = 1_000;

/// One server's clock: `timeout` (`--timeout`) from its start covers connecting,
/// listing and `counting` what it listed.
pub struct Clock {
    pub timeout: Duration,
    pub counting: Option<std::sync::Arc<Counting>>,
}

/// Measure `config` within its clock; a stdio server starts with `inherited` of our
/// environment and what its config names, nothing else.
pub async fn measure(
    config: ServerConfig,
    clock: Clock,
    inherited: &[(String, std::ffi::OsString)],
    bounds: Bounds,
) -> MeasuredServer {
    let timeout = clock.timeout;
    let name = config.name.clone();
    let source = config.source.clone();
    let failed = |error: String| MeasuredServer::failed(name.clone(), source.clone(), error);
    match &config.held {
        Some(Held::Unset(variable)) => {
            return failed(format!(
                "its config names ${{{variable}}}, which is not set"
            ));
        }
        Some(Held::NotApproved(how)) => {
            return MeasuredServer {
                held: true,
                ..failed(how.clone())
            };
        }
        None => {}
    }
    let deadline = tokio::time::Instant::now() + timeout;
    // As Claude Code connects: `server/discover`, falling back to `initialize` on the
    // same connection when the server is of the older protocol (rmcp's auto mode).
    // What a server lists can differ by protocol (the Python SDK orders schema keys
    // differently), so the handshake Claude Code makes is the one measured. A probe
    // answered late (auto mode gives up on it after 10 s) can break that fallback; then
    // each handshake is tried alone on a new connection.
    let mut result = Err(String::new());
    let mut refused = Vec::new();
    for lifecycle in [Handshake::Auto, Handshake::Initialize, Handshake::Discover] {
        result = match &config.transport {
            Transport::Stdio {
                command,
                args,
                env,
                cwd,
            } => {
                let child = Child {
                    command,
                    args,
                    inherited,
                    env,
                    cwd: cwd.as_deref(),
                };
                stdio(&child, deadline, lifecycle, bounds).await
            }
            Transport::Http { url, headers } => {
                http(url, headers, deadline, lifecycle, bounds).await
            }
        };
        match &result {
            Err(error) if error.starts_with(REFUSED) => {
                refused.push((lifecycle, error.replacen(REFUSED, "", 1)));
            }
            _ => break,
        }
    }
    // Every handshake refused: say what each answered alone.
    if let [
        _,
        (Handshake::Initialize, initialize),
        (Handshake::Discover, discover),
    ] = refused.as_slice()
    {
        result = Err(format!(
            "speaks neither handshake: `initialize` was refused ({initialize}), and so was \
             `server/discover` ({discover})"
        ));
    }
    let result = match (result, clock.counting) {
        (Ok((definitions, listed)), Some(counting)) => {
            let definitions = ServerDefinitions {
                name: Some(name.clone()),
                ..definitions
            };
            count_before(definitions, &counting, deadline)
                .await
                .map(|definitions| (definitions, listed))
        }
        (result, _) => result,
    };
    let result = result.map_err(|e| {
        e.replacen(REFUSED, "", 1)
            .replacen(TIME_LIMIT, &format!("{} s", timeout.as_secs_f64()), 1)
    });
    match result {
        Ok((definitions, listed)) => MeasuredServer {
            definitions: ServerDefinitions {
                name: Some(name),
                ..definitions
            },
            error: None,
            held: false,
            listed: Some(listed),
            source,
        },
        Err(error) => {
            // Redacted before capping: a cut must not leave half a token.
            let urls: Vec<&str> = match &config.transport {
                Transport::Http { url, .. } => vec![url.as_str()],
                Transport::Stdio { .. } => Vec::new(),
            };
            let error = super::config::redact(&error, &config.secrets, &urls);
            failed(crate::outside::cap(&error, MAX_ERROR_CHARS).into_owned())
        }
    }
}

/// Count `server`'s definitions as the answer will, on the blocking pool, stopping at
/// `deadline`: past it, the server is an error naming `--timeout`, as a listing past
/// it is. Given back for the answer, which counts them again with every other
/// server's (the totals and savings span servers); a server that fits its clock
/// costs that count twice, one that does not is cut at the clock.
async fn count_before(
    server: ServerDefinitions,
    counting: &Counting,
    deadline: tokio::time::Instant,
) -> Result<ServerDefinitions, String> {
    let counting = counting.clone();
    let deadline = deadline.into_std();
    let tools = server.tools.len();
    let counted = tokio::task::spawn_blocking(move || {
        let (render, model) = context_budget::tool_defs::rendering_and_model(
            counting.client,
            counting.render,
            counting.model.as_deref(),
        );
        let Ok(model) = counting.counter.resolve(Some(model)) else {
            // An unknown model: the answer's count says so, for every server.
            return (server, true);
        };
        let settings = (
            model.name(),
            model.tokenizer(),
            model.entry().map(|e| e.context_window),
            render,
            counting.counter.limits().hoist_work_factor,
        );
        let stop = || std::time::Instant::now() >= deadline;
        let servers = [server];
        let done = measure_until(&servers, settings, &stop).is_ok();
        let [server] = servers;
        (server, done)
    })
    .await;
    match counted {
        Ok((server, true)) => Ok(server),
        Ok((_, false)) => Err(format!(
            "its {tools} tools were listed, but not counted within {TIME_LIMIT} (--timeout \
             covers connecting, listing and counting)"
        )),
        Err(e) => Err(format!("counting its tools failed: {e}")),
    }
}

/// Marks a handshake that failed in a way worth the next handshake.
const REFUSED: &str = "refused: ";

#[derive(Debug, Clone, Copy)]
enum Handshake {
    /// `server/discover`, falling back to `initialize` on the same connection.
    Auto,
    Initialize,
    Discover,
}

/// A stdio server to start.
struct Child<'a> {
    command: &'a str,
    args: &'a [String],
    /// Of our environment, what it may have.
    inherited: &'a [(String, std::ffi::OsString)],
    /// What its config names.
    env: &'a std::collections::BTreeMap<String, String>,
    cwd: Option<&'a std::path::Path>,
}

async fn stdio(
    child: &Child<'_>,
    deadline: tokio::time::Instant,
    handshake: Handshake,
    bounds: Bounds,
) -> Result<(ServerDefinitions, Listed), String> {
    let command = child.command;
    let mut wrapped = CommandWrap::with_new(command, |c| {
        // Not our environment: API keys and cloud credentials stay with us.
        c.env_clear()
            .envs(child.inherited.iter().map(|(k, v)| (k, v)))
            .envs(child.env)
            .args(child.args)
            .stdin(Stdio::piped())
            .kill_on_drop(true);
        if let Some(cwd) = child.cwd {
            c.current_dir(cwd);
        }
    });
    // Its own process group: a server's children are ended with it.
    wrapped.wrap(ProcessGroup::leader());
    wrapped
        .command_mut()
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // Started and recorded under one lock, which `end_every_group` also takes: a
    // server started while we were being interrupted was neither ended nor recorded
    // in time, and outlived us (seen under load in CI).
    let mut child = {
        let mut groups = GROUPS.lock().unwrap_or_else(|e| e.into_inner());
        if groups.ending {
            return Err(format!("not started: `{command}` (interrupted)"));
        }
        let child = wrapped
            .spawn()
            .map_err(|e| format!("cannot start `{command}`: {e}"))?;
        groups.running.extend(child.id());
        child
    };
    let group = child.id();
    let (Some(stdin), Some(stdout), stderr) = (
        child.inner_mut().stdin().take(),
        child.inner_mut().stdout().take(),
        child.inner_mut().stderr().take(),
    ) else {
        return Err(format!("cannot start `{command}`: no pipes"));
    };
    // Every line looked at before rmcp reads it: one it cannot read ends the session.
    let found = Found::new();
    let transport = (unreadable::tap(stdout, found.clone()), stdin);

    // Drained all along, so a chatty server never blocks on a full pipe.
    let stderr_tail = tokio::spawn(async move {
        let mut tail = Vec::new();
        if let Some(mut stderr) = stderr {
            let mut buf = [0u8; 4096];
            while let Ok(n) = stderr.read(&mut buf).await {
                if n == 0 {
                    break;
                }
                tail.extend_from_slice(&buf[..n]);
                if tail.len() > STDERR_TAIL_BYTES {
                    tail.drain(..tail.len() - STDERR_TAIL_BYTES);
                }
            }
        }
        String::from_utf8_lossy(&tail).trim().to_string()
    });
    let result = checked(deadline, session(transport, handshake, bounds), &found).await;
    if let Some(pid) = group {
        end_group(pid);
    }
    // Reaped: it was killed with its group.
    let _ = tokio::time::timeout(Duration::from_secs(1), child.wait()).await;
    let tail = tokio::time::timeout(Duration::from_secs(1), stderr_tail)
        .await
        .ok()
        .and_then(Result::ok)
        .unwrap_or_default();
    result.map_err(|error| with_stderr(error, &tail))
}

async fn http(
    url: &str,
    headers: &[(String, String)],
    deadline: tokio::time::Instant,
    handshake: Handshake,
    bounds: Bounds,
) -> Result<(ServerDefinitions, Listed), String> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut custom = std::collections::HashMap::new();
    for (key, value) in headers {
        let parsed = (
            reqwest::header::HeaderName::from_bytes(key.as_bytes()),
            reqwest::header::HeaderValue::from_str(value),
        );
        match parsed {
            (Ok(k), Ok(v)) => {
                custom.insert(k, v);
            }
            _ => return Err(format!("header `{key}` is not a valid HTTP header")),
        }
    }
    let mut transport_config = StreamableHttpClientTransportConfig::with_uri(url);
    transport_config.custom_headers = custom;
    let found = Found::new();
    let client = unreadable::Checked {
        client: reqwest::Client::default(),
        found: found.clone(),
    };
    let transport = StreamableHttpClientTransport::with_client(client, transport_config);
    checked(deadline, session(transport, handshake, bounds), &found).await
}

/// `session` until `deadline`, or until the server sent what cannot be read: then at
/// once, saying what.
async fn checked(
    deadline: tokio::time::Instant,
    session: impl Future<Output = Result<(ServerDefinitions, Listed), String>>,
    found: &Found,
) -> Result<(ServerDefinitions, Listed), String> {
    let result = tokio::select! {
        result = tokio::time::timeout_at(deadline, session) => match result {
            Ok(result) => result,
            Err(_) => Err(timed_out()),
        },
        why = found.first() => Err(unreadable::error(&why)),
    };
    // A session that failed because of it (rmcp saw the stream end) says so too.
    match (result, found.get()) {
        (Err(_), Some(why)) => Err(unreadable::error(&why)),
        (result, _) => result,
    }
}

/// Said of a timeout until `measure` knows its length.
const TIME_LIMIT: &str = "the time limit";

fn timed_out() -> String {
    format!("no answer within {TIME_LIMIT} (--timeout)")
}

fn with_stderr(error: String, tail: &str) -> String {
    match tail.is_empty() {
        true => error,
        false => format!("{error}; its stderr: {tail}"),
    }
}

/// The process groups of the stdio servers started and not yet ended: on SIGINT or
/// SIGTERM they are ended before we exit ([`end_every_group`]), since each lives in
/// a group of its own that the terminal's signal does not reach.
static GROUPS: std::sync::Mutex<Groups> = std::sync::Mutex::new(Groups {
    running: Vec::new(),
    ending: false,
});

struct Groups {
    running: Vec<u32>,
    /// Set once we are interrupted: no server starts after that.
    ending: bool,
}

/// Kill the process group `pid` leads (the server and anything it started).
fn end_group(pid: u32) {
    GROUPS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .running
        .retain(|p| *p != pid);
    kill_group(pid);
}

/// Kill every server group still running, and start no more (we were interrupted).
pub fn end_every_group() {
    let mut groups = GROUPS.lock().unwrap_or_else(|e| e.into_inner());
    groups.ending = true;
    for pid in std::mem::take(&mut groups.running) {
        kill_group(pid);
    }
}

fn kill_group(pid: u32) {
    if let Ok(pid) = i32::try_from(pid) {
        // SAFETY: kill(2) with a negative pid signals that process group; no memory
        // is shared.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
}

/// Handshake, then every page of
/// tools, prompts, resources and resource templates the server says it has.
async fn session<T, E, A>(
    transport: T,
    handshake: Handshake,
    bounds: Bounds,
) -> Result<(ServerDefinitions, Listed), String>
where
    T: rmcp::transport::IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    let lifecycle = match handshake {
        Handshake::Auto => ClientLifecycleMode::Auto {
            preferred_versions: vec![ProtocolVersion::LATEST],
            legacy_version: Some(ProtocolVersion::LATEST_WITH_INITIALIZE),
        },
        Handshake::Initialize => ClientLifecycleMode::Initialize,
        Handshake::Discover => ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::LATEST],
        },
    };
    let client: RunningService<RoleClient, ()> =
        ().serve_with_lifecycle(transport, lifecycle)
            .await
            .map_err(|e| match (handshake, e) {
                // Auto mode's fallback broke: each handshake alone is still worth a try.
                (Handshake::Auto, e) => format!("{REFUSED}handshake failed: {e}"),
                (_, e @ rmcp::service::ClientInitializeError::JsonRpcError(_)) => {
                    format!("{REFUSED}handshake failed: {e}")
                }
                (_, e) => format!("handshake failed: {e}"),
            })?;
    let found = list(&client, bounds).await;
    let _ = client.cancel().await;
    found
}

/// What one server's listings may hold: `--max-pages` per listing, `--max-tools`, and
/// `--max-server-bytes` of everything listed (tools, prompts, resources, templates and
/// cursors, as JSON). Past any of them the server is an error naming the flag; a
/// cursor the server already gave stops the listing at once.
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    pub max_pages: usize,
    pub max_tools: usize,
    pub max_bytes: usize,
}

/// Default `--max-pages`: a real server pages its tools in tens at most.
pub const DEFAULT_MAX_PAGES: usize = 100;
/// Default `--max-tools`: real servers list tens to a few hundred tools.
pub const DEFAULT_MAX_TOOLS: usize = 2_000;
/// Default `--max-server-bytes`: the MCP tool's `--max-input-bytes` default.
pub const DEFAULT_MAX_SERVER_BYTES: usize = 8 * 1024 * 1024;

/// Why a listing stopped.
enum Stopped {
    Service(rmcp::ServiceError),
    Bound(String),
}

/// A listing's state against its server's [`Bounds`]: bytes are the server's total.
struct Pager<'a> {
    bounds: Bounds,
    bytes: &'a mut usize,
}

impl Pager<'_> {
    /// Every page of `method`, fetched by `page` (items, next cursor), within the
    /// bounds; `items` counts toward `--max-tools` when `tools`.
    async fn all<T, F, Fut>(
        &mut self,
        method: &str,
        tools: bool,
        mut page: F,
    ) -> Result<Vec<T>, Stopped>
    where
        T: serde::Serialize,
        F: FnMut(Option<String>) -> Fut,
        Fut: std::future::Future<Output = Result<(Vec<T>, Option<String>), rmcp::ServiceError>>,
    {
        let mut items = Vec::new();
        let mut seen = std::collections::HashSet::new();
        let mut cursor = None;
        for pages in 1.. {
            let (found, next) = page(cursor.take()).await.map_err(Stopped::Service)?;
            *self.bytes = self.bytes.saturating_add(
                serde_json::to_vec(&found).map_or(0, |json| json.len())
                    + next.as_ref().map_or(0, String::len),
            );
            if *self.bytes > self.bounds.max_bytes {
                return Err(Stopped::Bound(format!(
                    "{method}: the server listed over {} bytes (--max-server-bytes)",
                    self.bounds.max_bytes
                )));
            }
            items.extend(found);
            if tools && items.len() > self.bounds.max_tools {
                return Err(Stopped::Bound(format!(
                    "{method}: the server listed over {} tools (--max-tools)",
                    self.bounds.max_tools
                )));
            }
            let Some(next) = next else { break };
            if !seen.insert(next.clone()) {
                return Err(Stopped::Bound(format!(
                    "{method}: page {pages} gave a cursor an earlier page gave: the listing \
                     would never end"
                )));
            }
            if pages >= self.bounds.max_pages {
                return Err(Stopped::Bound(format!(
                    "{method}: more than {} pages (--max-pages)",
                    self.bounds.max_pages
                )));
            }
            cursor = Some(next);
        }
        Ok(items)
    }
}

fn params(cursor: Option<String>) -> Option<PaginatedRequestParams> {
    Some(PaginatedRequestParams::default().with_cursor(cursor))
}

async fn list(
    client: &RunningService<RoleClient, ()>,
    bounds: Bounds,
) -> Result<(ServerDefinitions, Listed), String> {
    let info = client.peer_info();
    let capabilities = info
        .as_ref()
        .map(|i| i.capabilities.clone())
        .unwrap_or_default();
    let mut bytes = 0;
    let mut pager = Pager {
        bounds,
        bytes: &mut bytes,
    };
    let tools = pager
        .all("tools/list", true, |cursor| async move {
            let page = client.list_tools(params(cursor)).await?;
            Ok((page.tools, page.next_cursor))
        })
        .await
        .map_err(|stopped| match stopped {
            Stopped::Service(e) => format!("tools/list failed: {e}"),
            Stopped::Bound(bound) => bound,
        })?;
    let mut tools = serde_json::to_value(&tools).map_err(|e| e.to_string())?;
    // Claude Code's client of the `initialize` era rewrites each schema's key order.
    if info
        .as_ref()
        .is_some_and(|i| i.protocol_version.has_initialize())
    {
        for tool in tools.as_array_mut().into_iter().flatten() {
            if let Some(schema) = tool.get_mut("inputSchema") {
                *schema = legacy_client_key_order(schema);
            }
        }
    }
    let tools = tool_definitions(tools).map_err(|e| format!("tools/list: {e}"))?;
    // Listed for the record (clients do not send them with every request); a server
    // that declares a capability but not every method of it (-32601) has none.
    let mut listed = Listed::default();
    if capabilities.prompts.is_some() {
        let prompts = pager
            .all("prompts/list", false, |cursor| async move {
                let page = client.list_prompts(params(cursor)).await?;
                Ok((page.prompts, page.next_cursor))
            })
            .await;
        listed.prompts = optional(prompts, "prompts/list")?;
    }
    if capabilities.resources.is_some() {
        let resources = pager
            .all("resources/list", false, |cursor| async move {
                let page = client.list_resources(params(cursor)).await?;
                Ok((page.resources, page.next_cursor))
            })
            .await;
        listed.resources = optional(resources, "resources/list")?;
        let templates = pager
            .all("resources/templates/list", false, |cursor| async move {
                let page = client.list_resource_templates(params(cursor)).await?;
                Ok((page.resource_templates, page.next_cursor))
            })
            .await;
        listed.resource_templates = optional(templates, "resources/templates/list")?;
    }
    Ok((
        ServerDefinitions {
            name: None,
            tools,
            instructions: info.and_then(|i| i.instructions.clone()),
        },
        listed,
    ))
}

/// How many items a listing returned; none when the server has no such method.
fn optional<T>(listed: Result<Vec<T>, Stopped>, method: &str) -> Result<usize, String> {
    match listed {
        Ok(items) => Ok(items.len()),
        Err(Stopped::Service(rmcp::ServiceError::McpError(error)))
            if error.code == rmcp::model::ErrorCode::METHOD_NOT_FOUND =>
        {
            Ok(0)
        }
        Err(Stopped::Service(error)) => Err(format!("{method} failed: {error}")),
        Err(Stopped::Bound(bound)) => Err(bound),
    }
}
