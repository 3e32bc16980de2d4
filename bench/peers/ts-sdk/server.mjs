// Benchmark peer for `cargo xtask bench`: the same `count-tokens` tool on the stack an
// agent developer reaches for first — the official TypeScript SDK with js-tiktoken —
// served the way the SDK's own stateless example serves it (a fresh McpServer and
// transport per POST, createMcpExpressApp for the loopback Host check).
//
//   node server.mjs stdio
//   node server.mjs http [--port N]   (0 = a free port; the URL is logged to stderr)
//
// Steelmanned where it costs nothing in realism: encoders are built once per encoding
// and reused (js-tiktoken's getEncoding builds a new one on every call, ~100 ms), and
// replies are plain JSON (enableJsonResponse), the same framing our stateless mode uses.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { createMcpExpressApp } from "@modelcontextprotocol/sdk/server/express.js";
import { getEncoding, getEncodingNameForModel } from "js-tiktoken";
import * as z from "zod/v4";

const encoders = new Map();
function encoderFor(encodingName) {
  let encoder = encoders.get(encodingName);
  if (!encoder) {
    encoder = getEncoding(encodingName);
    encoders.set(encodingName, encoder);
  }
  return encoder;
}

function buildServer() {
  const server = new McpServer({ name: "ts-sdk-peer", version: "0.0.0" });
  server.registerTool(
    "count-tokens",
    {
      description: "Count the tokens of a text for an OpenAI model (js-tiktoken).",
      inputSchema: {
        text: z.string().describe("The text to count"),
        model: z.string().optional().describe("Model name, default gpt-4"),
      },
      outputSchema: {
        token_count: z.number(),
        model: z.string(),
        encoding: z.string(),
      },
      annotations: { readOnlyHint: true, idempotentHint: true },
    },
    async ({ text, model = "gpt-4" }) => {
      let encodingName;
      try {
        encodingName = getEncodingNameForModel(model);
      } catch {
        return {
          isError: true,
          content: [{ type: "text", text: `model \`${model}\` is not supported` }],
        };
      }
      // No special tokens: marker text counts as plain characters, as in context-loader.
      const tokenCount = encoderFor(encodingName).encode(text, [], []).length;
      const result = { token_count: tokenCount, model, encoding: encodingName };
      return {
        content: [{ type: "text", text: JSON.stringify(result) }],
        structuredContent: result,
      };
    },
  );
  return server;
}

async function serveStdio() {
  await buildServer().connect(new StdioServerTransport());
}

function serveHttp(port) {
  const app = createMcpExpressApp();
  app.post("/mcp", async (req, res) => {
    const server = buildServer();
    try {
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: true,
      });
      res.on("close", () => {
        transport.close();
        server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(req, res, req.body);
    } catch (error) {
      console.error("error handling MCP request:", error);
      if (!res.headersSent) {
        res.status(500).json({
          jsonrpc: "2.0",
          error: { code: -32603, message: "Internal server error" },
          id: null,
        });
      }
    }
  });
  const listener = app.listen(port, "127.0.0.1", (error) => {
    if (error) {
      console.error(`cannot listen: ${error}`);
      process.exit(1);
    }
    const { port: bound } = listener.address();
    // The same line context-loader logs: the harness reads the URL from it.
    console.error(`listening on http://127.0.0.1:${bound}/mcp`);
  });
  const stop = () => listener.close(() => process.exit(0));
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}

const [mode = "http", ...rest] = process.argv.slice(2);
if (mode === "stdio") {
  await serveStdio();
} else if (mode === "http") {
  const at = rest.indexOf("--port");
  serveHttp(at >= 0 ? Number(rest[at + 1]) : 0);
} else {
  console.error("usage: node server.mjs stdio | http [--port N]");
  process.exit(2);
}
