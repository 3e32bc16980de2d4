// The test host: the official AppBridge of @modelcontextprotocol/ext-apps between
// context-loader (over streamable HTTP, through the same-origin /mcp of drive.mjs)
// and our MCP App in a sandboxed frame on a second origin. esbuild bundles this file
// with its packages into one script (`cargo xtask app`). The page's query names the
// tool, its arguments and the sandbox's URL; what happened is kept in
// `window.hostState`, which drive.mjs reads over the DevTools protocol.
import {
  AppBridge,
  PostMessageTransport,
  RESOURCE_MIME_TYPE,
  getToolUiResourceUri,
} from "@modelcontextprotocol/ext-apps/app-bridge";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

const EXTENSION = "io.modelcontextprotocol/ui";
const HOST_INFO = { name: "context-loader-test-host", version: "1.0.0" };

const state = {
  // Which page this is: drive.mjs waits for its own, never the previous one's state.
  run: new URLSearchParams(location.search).get("run"),
  phase: "starting",
  events: [],
  heights: [],
};
window.hostState = state;

function step(phase) {
  state.phase = phase;
  state.events.push(phase);
}

/** Resolve with `promise`, or reject naming `what` after `ms`. */
function within(ms, what, promise) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

async function main() {
  const query = new URLSearchParams(location.search);
  const tool = query.get("tool");
  const args = JSON.parse(query.get("args") || "{}");
  const sandbox = query.get("sandbox");

  const client = new Client(HOST_INFO, {
    capabilities: { extensions: { [EXTENSION]: { mimeTypes: [RESOURCE_MIME_TYPE] } } },
  });
  const transport = new StreamableHTTPClientTransport(new URL("/mcp", location.href));
  await within(10000, "connect", client.connect(transport));
  state.protocolVersion = transport.protocolVersion || null;
  step("connected");
  const serverCaps = client.getServerCapabilities() || {};
  state.serverExtension = (serverCaps.extensions || {})[EXTENSION] || null;

  const { tools } = await within(10000, "tools/list", client.listTools());
  state.tools = tools;
  const definition = tools.find((t) => t.name === tool);
  if (!definition) { throw new Error(`the server lists no tool ${tool}`); }
  const uri = getToolUiResourceUri(definition);
  if (!uri) { throw new Error(`${tool} links no UI resource for this host`); }
  state.resourceUri = uri;

  // As a host does: the call goes out at once, the page is read beside it.
  const resultPromise = within(20000, "tools/call", client.callTool({ name: tool, arguments: args }));
  const read = await within(10000, "resources/read", client.readResource({ uri }));
  const content = read.contents[0];
  if (content.mimeType !== RESOURCE_MIME_TYPE) {
    throw new Error(`the resource's MIME type is ${content.mimeType}`);
  }
  const ui = (content._meta && content._meta.ui) || {};
  state.resourceCsp = ui.csp || null;
  step("resource read");

  const iframe = document.getElementById("app");
  iframe.setAttribute("sandbox", "allow-scripts allow-same-origin");
  const proxyReady = new Promise((resolve) => {
    window.addEventListener("message", function listener(event) {
      if (event.source === iframe.contentWindow
        && event.data && event.data.method === "ui/notifications/sandbox-proxy-ready") {
        window.removeEventListener("message", listener);
        resolve();
      }
    });
  });
  // The sandbox serves itself under the resource's CSP (a response header, which
  // the app's srcdoc frame inherits), so the lists travel in its URL.
  const proxyUrl = new URL(sandbox);
  proxyUrl.searchParams.set("csp", JSON.stringify(ui.csp || {}));
  iframe.src = proxyUrl.href;
  await within(10000, "sandbox-proxy-ready", proxyReady);
  step("sandbox ready");

  const bridge = new AppBridge(
    client,
    HOST_INFO,
    { openLinks: {}, serverTools: serverCaps.tools, serverResources: serverCaps.resources, logging: {} },
    {
      hostContext: {
        theme: "light",
        displayMode: "inline",
        availableDisplayModes: ["inline"],
        toolInfo: { tool: definition },
      },
    },
  );
  const initialized = new Promise((resolve) => { bridge.oninitialized = resolve; });
  bridge.onsizechange = ({ height }) => {
    if (typeof height === "number") {
      state.heights.push(height);
      iframe.style.height = `${Math.min(Math.max(height, 120), 2000)}px`;
    }
  };
  bridge.onloggingmessage = (params) => state.events.push(`log: ${JSON.stringify(params)}`);
  await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
  await bridge.sendSandboxResourceReady({ html: content.text, csp: ui.csp });
  await within(10000, "ui/notifications/initialized", initialized);
  state.appVersion = bridge.getAppVersion() || null;
  step("app initialized");

  await bridge.sendToolInput({ arguments: args });
  const result = await resultPromise;
  state.result = result;
  await bridge.sendToolResult(result);
  step("result sent");
}

main().catch((error) => {
  state.error = String((error && error.stack) || error);
  step("failed");
});
