"""A stdio MCP server with no tools that writes each `initialize` request's params
(the client's clientInfo, protocol version and capabilities) as one JSON line to the
file named by its first argument. `cargo xtask clients` adds it beside
context-loader to learn what a real client announces."""

import json
import sys

LISTS = {
    "tools/list": "tools",
    "prompts/list": "prompts",
    "resources/list": "resources",
    "resources/templates/list": "resourceTemplates",
}

with open(sys.argv[1], "a", encoding="utf-8") as log:
    for line in sys.stdin:
        message = json.loads(line)
        method = message.get("method")
        if method == "initialize":
            params = message.get("params", {})
            log.write(json.dumps(params) + "\n")
            log.flush()
            result = {
                "protocolVersion": params.get("protocolVersion", "2025-06-18"),
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "init-probe", "version": "1"},
            }
        elif method in LISTS:
            result = {LISTS[method]: []}
        elif "id" in message and method is not None:
            result = {}
        else:
            continue
        reply = {"jsonrpc": "2.0", "id": message["id"], "result": result}
        print(json.dumps(reply), flush=True)
