// Drives the test host in a running headless Chromium over the DevTools protocol
// (Node >= 22: its global WebSocket; no package). Serves, on loopback only:
//   - the host origin, 127.0.0.1:A: host.html, the esbuild bundle host.js, and /mcp,
//     a proxy to context-loader's streamable HTTP endpoint (same origin: no CORS);
//   - the sandbox origin, 127.0.0.1:B: sandbox.html (with the CSP as a header) and
//     sandbox.js.
// For each case it opens the host on a tool and its arguments, waits for the host to
// have sent the result through the AppBridge, then reads the DOM inside the app's
// frame (cross-origin to the host page; read here through an isolated world in that
// frame), and saves a screenshot of the frame.
//
//   node drive.mjs CONFIG.json   (prints one JSON report on stdout)
//
// CONFIG: {"mcp": URL, "devtools": ws URL, "dir": folder with host.html, host.js,
//          sandbox.html, sandbox.js, "shots": folder, "cases": [{"name", "tool",
//          "arguments", "ready": CSS selector the drawn view has}], "timeout_ms"}
import { createServer, request as httpRequest } from "node:http";
import { readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";

const config = JSON.parse(readFileSync(process.argv[2], "utf8"));
setTimeout(() => fail(`the drive took over ${config.timeout_ms} ms`), config.timeout_ms);

function fail(reason) {
  process.stderr.write(`drive.mjs: ${reason}\n`);
  process.exit(1);
}

const upstream = new URL(config.mcp);
const file = (name) => readFileSync(join(config.dir, name));

function listen(handler) {
  return new Promise((resolve, reject) => {
    const server = createServer(handler);
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => resolve(server));
  });
}

const origin = (server) => `http://127.0.0.1:${server.address().port}`;

/** The MCP App's default CSP (the spec's), widened only by the resource's lists. */
function cspFor(csp) {
  const list = (key) => (Array.isArray(csp && csp[key]) ? csp[key].filter((d) => /^https?:\/\/[\w.:*-]+$/.test(d)) : []);
  const resources = list("resourceDomains").join(" ");
  const connect = list("connectDomains").join(" ");
  return [
    "default-src 'none'",
    `script-src 'self' 'unsafe-inline' ${resources}`.trim(),
    `style-src 'self' 'unsafe-inline' ${resources}`.trim(),
    `img-src 'self' data: ${resources}`.trim(),
    `font-src 'self' data: ${resources}`.trim(),
    `connect-src ${connect || "'none'"}`,
    "frame-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
  ].join("; ");
}

const hostServer = await listen((req, res) => {
  const path = new URL(req.url, "http://x").pathname;
  if (path === "/favicon.ico") { res.writeHead(204); res.end(); return; }
  if (path === "/mcp") {
    // Same-origin proxy: the browser's Origin stays here; the server sees a plain
    // loopback client.
    const headers = { ...req.headers, host: upstream.host };
    delete headers.origin;
    delete headers.referer;
    const forward = httpRequest(
      { host: upstream.hostname, port: upstream.port, path: upstream.pathname, method: req.method, headers },
      (answer) => {
        res.writeHead(answer.statusCode, answer.headers);
        answer.pipe(res);
      },
    );
    forward.on("error", (e) => { res.writeHead(502); res.end(String(e)); });
    req.pipe(forward);
    return;
  }
  const files = { "/": ["host.html", "text/html"], "/host.js": ["host.js", "text/javascript"] };
  if (!files[path]) { res.writeHead(404); res.end(); return; }
  res.writeHead(200, { "content-type": `${files[path][1]}; charset=utf-8`, "cache-control": "no-store" });
  res.end(file(files[path][0]));
});

/** What the sandbox origin last served, for the report. */
const served = { sandboxCsp: null };

const sandboxServer = await listen((req, res) => {
  const url = new URL(req.url, "http://x");
  if (url.pathname === "/favicon.ico") {
    res.writeHead(204);
    res.end();
  } else if (url.pathname === "/sandbox.html") {
    let csp = null;
    try { csp = JSON.parse(url.searchParams.get("csp") || "null"); } catch { csp = null; }
    served.sandboxCsp = cspFor(csp);
    res.writeHead(200, {
      "content-type": "text/html; charset=utf-8",
      "content-security-policy": served.sandboxCsp,
      "cache-control": "no-store",
    });
    res.end(file("sandbox.html"));
  } else if (url.pathname === "/sandbox.js") {
    res.writeHead(200, { "content-type": "text/javascript; charset=utf-8", "cache-control": "no-store" });
    res.end(file("sandbox.js"));
  } else {
    res.writeHead(404);
    res.end();
  }
});

// ---- DevTools protocol over one WebSocket, flat sessions ----
const socket = new WebSocket(config.devtools);
await new Promise((resolve, reject) => {
  socket.addEventListener("open", resolve, { once: true });
  socket.addEventListener("error", () => reject(new Error(`cannot connect to ${config.devtools}`)), { once: true });
}).catch((e) => fail(e.message));
let nextId = 1;
const pending = new Map();
const exceptions = [];
const consoleErrors = [];
socket.addEventListener("message", (event) => {
  const m = JSON.parse(event.data);
  if (m.id !== undefined && pending.has(m.id)) {
    const { resolve, reject, method } = pending.get(m.id);
    pending.delete(m.id);
    if (m.error) { reject(new Error(`${method}: ${m.error.message}`)); } else { resolve(m.result); }
  } else if (m.method === "Runtime.exceptionThrown") {
    const d = m.params.exceptionDetails;
    exceptions.push(`${d.text} ${d.exception ? d.exception.description || "" : ""} (${d.url || ""})`);
  } else if (m.method === "Log.entryAdded" && m.params.entry.level === "error") {
    consoleErrors.push(`${m.params.entry.text} (${m.params.entry.url || ""})`);
  }
});
function send(method, params = {}, sessionId) {
  const id = nextId++;
  socket.send(JSON.stringify({ id, method, params, sessionId }));
  return new Promise((resolve, reject) => pending.set(id, { resolve, reject, method }));
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function until(what, ms, probe) {
  const deadline = Date.now() + ms;
  let last;
  while (Date.now() < deadline) {
    last = await probe();
    if (last.done) { return last.value; }
    await sleep(50);
  }
  throw new Error(`${what}: not within ${ms} ms (last seen: ${JSON.stringify(last && last.value).slice(0, 2000)})`);
}

const { targetId } = await send("Target.createTarget", { url: "about:blank" });
const { sessionId } = await send("Target.attachToTarget", { targetId, flatten: true });
const page = (method, params) => send(method, params, sessionId);
await page("Page.enable");
await page("Runtime.enable");
await page("Log.enable");
await page("Emulation.setDeviceMetricsOverride", { width: 860, height: 1000, deviceScaleFactor: 1, mobile: false });

async function evaluate(expression, contextId) {
  const { result, exceptionDetails } = await page("Runtime.evaluate", {
    expression, contextId, returnByValue: true, awaitPromise: true,
  });
  if (exceptionDetails) { throw new Error(`evaluate: ${exceptionDetails.text}`); }
  return result.value;
}

/** The app's frame: the host's frame (the sandbox proxy) holds it. */
async function appFrame() {
  const { frameTree } = await page("Page.getFrameTree");
  const proxy = (frameTree.childFrames || [])[0];
  const app = proxy && (proxy.childFrames || [])[0];
  return app ? { proxy: proxy.frame, app: app.frame } : null;
}

const PROBE = `(() => {
  const all = (s) => document.querySelectorAll(s).length;
  const h1 = document.querySelector("h1");
  const root = document.getElementById("app");
  return {
    origin: self.origin,
    ready: READY ? all(READY) > 0 : false,
    files: all(".tile.file"),
    tools: all(".row.tool"),
    layers: all(".row.layer"),
    kept: all(".msg.st-loaded.kept"),
    dropped: all(".msg.st-cut.dropped"),
    images: document.images.length,
    scripts: all("script"),
    title: h1 ? h1.textContent : null,
    theme: document.documentElement.dataset.theme || null,
    text: root ? root.textContent : "",
  };
})()`;

const report = { host_origin: origin(hostServer), sandbox_origin: origin(sandboxServer), cases: [] };
mkdirSync(config.shots, { recursive: true });
try {
  for (const c of config.cases) {
    const started = Date.now();
    const url = new URL("/", origin(hostServer));
    url.searchParams.set("tool", c.tool);
    url.searchParams.set("args", JSON.stringify(c.arguments));
    url.searchParams.set("sandbox", `${origin(sandboxServer)}/sandbox.html`);
    const run = `${c.name}-${report.cases.length}`;
    url.searchParams.set("run", run);
    await page("Page.navigate", { url: url.href });
    const state = await until(`${c.name}: the host sends the result`, 20000, async () => {
      const value = await evaluate("window.hostState ? JSON.parse(JSON.stringify(window.hostState)) : null").catch(() => null);
      const mine = !!value && value.run === run;
      return { done: mine && (value.phase === "result sent" || value.phase === "failed"), value };
    });
    if (state.phase === "failed") { throw new Error(`${c.name}: the host failed: ${state.error}`); }
    const hostCanRead = await evaluate(`(() => { try { return document.getElementById("app").contentDocument !== null; } catch (e) { return false; } })()`);
    const probe = PROBE.replace("READY", JSON.stringify(c.ready)).replace("READY", JSON.stringify(c.ready));
    const dom = await until(`${c.name}: the app draws the result`, 10000, async () => {
      const frames = await appFrame();
      if (!frames) { return { done: false, value: "no app frame yet" }; }
      const { executionContextId } = await page("Page.createIsolatedWorld", { frameId: frames.app.id, worldName: "probe" });
      const value = await evaluate(probe, executionContextId).catch((e) => String(e));
      return { done: !!value && value.ready === true, value };
    });
    // Let the host's resize from the app's size-changed land before the picture.
    await sleep(150);
    const rect = await evaluate(`(() => { const r = document.getElementById("app").getBoundingClientRect(); return { x: r.x, y: r.y, width: r.width, height: r.height }; })()`);
    const shot = await page("Page.captureScreenshot", {
      format: "png",
      captureBeyondViewport: true,
      clip: { ...rect, scale: 1 },
    });
    const path = join(config.shots, `${c.name}.png`);
    writeFileSync(path, Buffer.from(shot.data, "base64"));
    const frames = await appFrame();
    report.cases.push({
      name: c.name,
      tool: c.tool,
      ms: Date.now() - started,
      host: state,
      host_can_read_app: hostCanRead,
      proxy_url: frames.proxy.url,
      sandbox_csp: served.sandboxCsp,
      dom,
      screenshot: path,
    });
  }
  report.exceptions = exceptions;
  report.console_errors = consoleErrors;
  await send("Target.closeTarget", { targetId }).catch(() => {});
  // Exit at once: the proxy's kept-alive connections would hold the loop open.
  process.stdout.write(JSON.stringify(report), () => process.exit(0));
} catch (e) {
  report.exceptions = exceptions;
  report.console_errors = consoleErrors;
  fail(`${e.message}\nexceptions: ${JSON.stringify(exceptions)}\nconsole errors: ${JSON.stringify(consoleErrors)}`);
}
