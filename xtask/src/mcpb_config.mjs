// What Claude Desktop would start for an installed bundle: the manifest's mcp_config
// with `${__dirname}` and `${user_config.KEY}` substituted by @anthropic-ai/mcpb's own
// getMcpConfigForManifest (the library Claude Desktop uses). Prints the resolved
// config as JSON, or `null` when the bundle would not start (a required value unset).
// Usage: node mcpb_config.mjs MCPB_PACKAGE_DIR EXTENSION_DIR USER_CONFIG_JSON
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [packageDir, extensionDir, userConfigJson] = process.argv.slice(2);
const mcpb = await import(pathToFileURL(join(packageDir, "dist/node.js")).href);
const manifest = JSON.parse(readFileSync(join(extensionDir, "manifest.json"), "utf8"));
const config = await mcpb.getMcpConfigForManifest({
  manifest,
  extensionPath: extensionDir,
  systemDirs: {},
  userConfig: JSON.parse(userConfigJson),
  pathSeparator: process.platform === "win32" ? ";" : ":",
  logger: { warn: (message) => console.error(message) },
});
console.log(JSON.stringify(config ?? null));
