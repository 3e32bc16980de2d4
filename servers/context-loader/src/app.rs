//! The MCP App: one page (`assets/report.html`) that draws a measuring tool's
//! result, served as the `ui://` resource of the `io.modelcontextprotocol/ui`
//! extension (SEP-1865) and written by the CLI's `--html` as a standalone report.
//!
//! Only a client that declares the extension (with the page's MIME type) is told
//! about it: its `initialize` (and `server/discover`) answer adds the resources
//! capability and the extension, its `tools/list` links the measuring tools to the
//! page through `_meta.ui.resourceUri`, and its `resources/list` lists the page.
//! Every other client gets exactly what it got before. What the model reads (a
//! tool's text result, and the name, description and schema a client sends it) is
//! never touched: the page reads the result's `structuredContent`.

use std::borrow::Cow;

use rmcp::ErrorData;
use rmcp::model::{
    ClientCapabilities, JsonObject, MetaObject, ReadResourceResult, Resource, ResourceContents,
    ResourcesCapability, ServerCapabilities,
};
use serde::Serialize;
use serde_json::{Value, json};

use crate::tool::Tool;
use crate::tools::{assemble_context, file_tokens, fit_messages, load_files, mcp_tokens};

/// The extension's identifier in `capabilities.extensions`.
pub const EXTENSION: &str = "io.modelcontextprotocol/ui";
/// The MIME type of an MCP App's HTML (the spec's only one so far).
pub const MIME_TYPE: &str = "text/html;profile=mcp-app";
/// The page's resource URI.
pub const URI: &str = "ui://context-loader/report.html";
/// The page: hand-written HTML, CSS and JavaScript, no network, no library.
pub const PAGE: &str = include_str!("../assets/report.html");

/// The tools whose results the page draws (and the CLI commands that take `--html`).
pub const VIEWS: [&str; 5] = [
    file_tokens::FileTokensTool::NAME,
    load_files::LoadFilesTool::NAME,
    mcp_tokens::McpTokensTool::NAME,
    assemble_context::AssembleContextTool::NAME,
    fit_messages::FitMessagesTool::NAME,
];

/// The empty data block of the page, which a standalone report fills.
const DATA_SLOT: &str = r#"<script type="application/json" id="report-data"></script>"#;

/// Characters of a requested URI echoed back in an error.
const MAX_ECHOED_URI_CHARS: usize = 200;

/// Whether the page draws `tool`'s results.
pub fn has_view(tool: &str) -> bool {
    VIEWS.contains(&tool)
}

/// Whether a client renders MCP Apps: it declares the extension with the page's MIME
/// type (`{"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": [...]}}}`).
pub fn renders_apps(capabilities: Option<&ClientCapabilities>) -> bool {
    capabilities
        .and_then(|c| c.extensions.as_ref())
        .and_then(|extensions| extensions.get(EXTENSION))
        .and_then(|settings| settings.get("mimeTypes"))
        .and_then(Value::as_array)
        .is_some_and(|types| types.iter().any(|t| t.as_str() == Some(MIME_TYPE)))
}

/// The server's capabilities for such a client: resources (the page), and the
/// extension with the MIME type it serves.
pub fn capabilities(mut capabilities: ServerCapabilities) -> ServerCapabilities {
    capabilities
        .resources
        .get_or_insert_with(ResourcesCapability::default);
    let mut settings = JsonObject::new();
    settings.insert("mimeTypes".into(), json!([MIME_TYPE]));
    capabilities
        .extensions
        .get_or_insert_with(Default::default)
        .insert(EXTENSION.into(), settings);
    capabilities
}

/// Link every tool the page draws to it (`_meta.ui.resourceUri`), keeping any other
/// `_meta` the tool has.
pub fn link(tools: &mut [rmcp::model::Tool]) {
    for tool in tools.iter_mut().filter(|t| has_view(&t.name)) {
        let meta = tool
            .meta
            .get_or_insert_with(|| MetaObject(JsonObject::new()));
        meta.0.insert("ui".into(), json!({ "resourceUri": URI }));
    }
}

/// The page's `_meta.ui`: it loads and connects to nothing (empty CSP lists: the
/// host's most restrictive policy), and asks for the host's border.
fn resource_meta() -> MetaObject {
    let mut meta = JsonObject::new();
    meta.insert(
        "ui".into(),
        json!({
            "csp": { "connectDomains": [], "resourceDomains": [] },
            "prefersBorder": true,
        }),
    );
    MetaObject(meta)
}

/// The page as `resources/list` lists it.
pub fn resource() -> Resource {
    Resource::new(URI, "report")
        .with_title("Where the tokens go")
        .with_description(
            "Draws the result of file-tokens, load-files, mcp-tokens, assemble-context and \
             fit-messages: a treemap of files, tool costs per server, budget layers.",
        )
        .with_mime_type(MIME_TYPE)
        .with_size(PAGE.len() as u64)
        .with_meta(resource_meta())
}

/// `resources/read`: the page, or a resource-not-found error naming the one there is.
pub fn read(uri: &str) -> Result<ReadResourceResult, ErrorData> {
    if uri != URI {
        let shown = capped(uri);
        return Err(ErrorData::resource_not_found(
            format!("no resource {shown:?} on this server"),
            Some(json!({
                "uri": shown,
                "suggestion": format!("Read {URI}, the one resource this server has (resources/list lists it)."),
                "resources": [URI],
            })),
        ));
    }
    Ok(ReadResourceResult::new(vec![
        ResourceContents::TextResourceContents {
            uri: URI.into(),
            mime_type: Some(MIME_TYPE.into()),
            text: PAGE.into(),
            meta: Some(resource_meta()),
        },
    ]))
}

/// A caller's string as an error may echo it: at most [`MAX_ECHOED_URI_CHARS`].
fn capped(text: &str) -> Cow<'_, str> {
    match text.char_indices().nth(MAX_ECHOED_URI_CHARS) {
        Some((end, _)) => Cow::Owned(format!("{}…", &text[..end])),
        None => Cow::Borrowed(text),
    }
}

/// The page with `tool`'s result embedded: a report that opens in any browser,
/// offline. The JSON sits in a `<script type="application/json">` block with every
/// `<`, `>` and `&` (and U+2028/U+2029) written as a `\u` escape, so no string in
/// the result (a file named `</script>`) can end the block or open a tag.
pub fn standalone(tool: &str, result: &impl Serialize) -> Result<String, serde_json::Error> {
    let data = serde_json::to_string(&json!({ "tool": tool, "result": result }))?;
    let block = format!(
        r#"<script type="application/json" id="report-data">{}</script>"#,
        script_safe(&data)
    );
    Ok(PAGE.replacen(DATA_SLOT, &block, 1))
}

/// JSON text made safe inside a script element. The escaped characters can only
/// stand inside JSON strings, where `\uXXXX` means the same character.
fn script_safe(json: &str) -> String {
    let mut out = String::with_capacity(json.len() + json.len() / 16);
    for c in json.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_has_one_empty_data_slot() {
        assert_eq!(PAGE.matches(DATA_SLOT).count(), 1);
    }

    #[test]
    fn embedded_json_cannot_end_its_script_block_and_reads_back_the_same() {
        let hostile = json!({
            "files": [{"path": "x</script><img src=x onerror=alert(1)>&amp;\u{2028}\u{2029}", "tokens": 7}]
        });
        let page = standalone("file-tokens", &hostile).expect("serializable");
        let start =
            page.find(r#"id="report-data">"#).expect("the block") + r#"id="report-data">"#.len();
        let end = start + page[start..].find("</script>").expect("its end");
        let block = &page[start..end];
        for raw in ['<', '>', '&', '\u{2028}', '\u{2029}'] {
            assert!(!block.contains(raw), "{raw:?} raw in {block}");
        }
        let read: Value = serde_json::from_str(block).expect("JSON");
        assert_eq!(read, json!({"tool": "file-tokens", "result": hostile}));
        // Only the page's own two script ends remain.
        assert_eq!(
            page.matches("</script>").count(),
            PAGE.matches("</script>").count()
        );
    }

    #[test]
    fn only_a_client_declaring_the_extension_with_the_mime_type_renders_apps() {
        let with = |settings: Value| {
            let mut extensions = rmcp::model::ExtensionCapabilities::new();
            extensions.insert(
                EXTENSION.into(),
                settings.as_object().cloned().expect("object"),
            );
            let mut capabilities = ClientCapabilities::default();
            capabilities.extensions = Some(extensions);
            capabilities
        };
        assert!(renders_apps(Some(&with(json!({"mimeTypes": [MIME_TYPE]})))));
        assert!(!renders_apps(Some(&with(
            json!({"mimeTypes": ["text/html"]})
        ))));
        assert!(!renders_apps(Some(&with(json!({})))));
        assert!(!renders_apps(Some(&ClientCapabilities::default())));
        assert!(!renders_apps(None));
    }

    #[test]
    fn an_unknown_uri_is_refused_naming_the_page_and_echoing_at_most_a_bounded_part() {
        let long = format!("ui://{}", "x".repeat(5_000));
        let error = read(&long).expect_err("unknown");
        assert_eq!(error.code, rmcp::model::ErrorCode::RESOURCE_NOT_FOUND);
        let data = error.data.expect("data");
        assert!(data["uri"].as_str().expect("uri").chars().count() <= MAX_ECHOED_URI_CHARS + 1);
        assert_eq!(data["resources"], json!([URI]));
        assert!(error.message.len() < 400, "{}", error.message);
    }

    #[test]
    fn linking_touches_only_the_tools_with_a_view() {
        let schema = std::sync::Arc::new(JsonObject::new());
        let mut tools: Vec<rmcp::model::Tool> = ["count-tokens", "file-tokens", "fit-messages"]
            .into_iter()
            .map(|name| rmcp::model::Tool::new(name, "d", schema.clone()))
            .collect();
        link(&mut tools);
        assert!(tools[0].meta.is_none());
        for tool in &tools[1..] {
            let meta = tool.meta.as_ref().expect("linked");
            assert_eq!(meta.0["ui"]["resourceUri"], URI);
        }
    }
}
