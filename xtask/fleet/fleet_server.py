"""The loopback fleet `cargo xtask mcp-tokens` measures: MCP servers written with the
official Python SDK (low-level `Server`, so each schema is exactly what is written
here), one behaviour per mode:

  small      3 tools, instructions
  big        60 tools whose arguments repeat the same deep nested objects inline
  paginated  25 tools served 10 per tools/list page, 12 resources 5 per page
  hangs      never answers
  exits      writes to stderr and exits at once
  needs-env  refuses to start unless FLEET_SECRET is set (its config passes it)
  order      7 tools written byte for byte (no SDK): schema keys in unusual orders, a
             tool without description or properties, a name with characters
             clients replace; what a client does to them is what it sends

Usage: fleet_server.py MODE [COPY]  (COPY names a copy: the benchmark runs 20)."""

import os
import sys
import time

# Before the SDK's imports (about a second of CPU): these modes never get that far.
if __name__ == "__main__" and sys.argv[1] == "exits":
    print("fleet: cannot open the database (exiting)", file=sys.stderr)
    sys.exit(3)
if __name__ == "__main__" and sys.argv[1] == "hangs":
    time.sleep(3600)
    sys.exit(0)

# Raw JSON text, not dicts: any SDK re-serialises (pydantic sorts the top-level keys
# of a schema), and the order of keys on the wire is what this mode is about.
ORDER_TOOLS = (
    '[{"name":"mixed","description":"Keys in an unusual order.","inputSchema":'
    '{"additionalProperties":false,"properties":{"a":{"description":"An a","type":"string"}},'
    '"title":"Mixed","required":["a"],"type":"object","description":"Top-level description",'
    '"$defs":{"x":{"type":"string"}}}},'
    '{"name":"bare","inputSchema":{"type":"object"}},'
    '{"name":"schema.first","description":"Dotted name.","inputSchema":'
    '{"type":"object","$schema":"https://json-schema.org/draft/2020-12/schema",'
    '"required":[],"properties":{"n":{"type":"integer"}}}},'
    '{"inputSchema":{"properties":{"z":{"type":"boolean"}},"type":"object"},'
    '"description":"Name last.","name":"name_last"},'
    '{"name":"sorted_keys","description":"Keys sorted, $schema first.","inputSchema":'
    '{"$schema":"https://json-schema.org/draft/2020-12/schema",'
    '"properties":{"q":{"type":"string"}},"required":["q"],"type":"object"}},'
    '{"name":"draft7","description":"Draft 7.","inputSchema":'
    '{"$schema":"http://json-schema.org/draft-07/schema#","type":"object",'
    '"properties":{"q":{"type":"string"}}}},'
    '{"name":"title_first","description":"Title first.","inputSchema":'
    '{"title":"T","$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",'
    '"properties":{"q":{"type":"string"}}}}]'
)


def serve_raw(tools_json):
    """A minimal MCP server over stdio that answers with `tools_json` as written."""
    import json

    for line in sys.stdin:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        method, ident = message.get("method"), message.get("id")
        if ident is None:
            continue
        if method == "initialize":
            # Of the `initialize` era: a newer version asked for gets its latest.
            version = message.get("params", {}).get("protocolVersion", "")
            if version not in ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"):
                version = "2025-11-25"
            result = ('{"protocolVersion":%s,"capabilities":{"tools":{}},'
                      '"serverInfo":{"name":"fleet-order","version":"1"}}' % json.dumps(version))
        elif method == "tools/list":
            result = '{"tools":%s}' % tools_json
        elif method == "ping":
            result = "{}"
        else:
            error = {"code": -32601, "message": f"no method {method}"}
            reply = {"jsonrpc": "2.0", "id": ident, "error": error}
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()
            continue
        sys.stdout.write('{"jsonrpc":"2.0","id":%s,"result":%s}\n' % (json.dumps(ident), result))
        sys.stdout.flush()
    sys.exit(0)


if __name__ == "__main__" and sys.argv[1] == "order":
    serve_raw(ORDER_TOOLS)

import anyio  # noqa: E402
import mcp_types as types  # noqa: E402
from mcp.server.lowlevel import Server  # noqa: E402
from mcp.server.stdio import stdio_server  # noqa: E402


def address(depth):
    node = {
        "type": "object",
        "description": "A postal address",
        "properties": {
            "street": {"type": "string", "description": "Street and number"},
            "city": {"type": "string", "description": "City"},
            "country": {"type": "string", "description": "ISO 3166-1 alpha-2 code"},
        },
        "required": ["street", "city"],
    }
    if depth > 0:
        node["properties"]["forward_to"] = address(depth - 1)
    return node


def filter_schema():
    return {
        "type": "object",
        "description": "Which records to match",
        "properties": {
            "field": {"type": "string", "description": "Field name"},
            "op": {"type": "string", "enum": ["eq", "ne", "lt", "gt", "in", "contains"]},
            "value": {
                "type": "object",
                "properties": {
                    "text": {"type": "string"},
                    "number": {"type": "number"},
                    "list": {"type": "array", "items": {"type": "string"}},
                },
            },
        },
        "required": ["field", "op"],
    }


def tools_for(mode):
    if mode == "small":
        return [
            types.Tool(name="echo", description="Echo the text back.",
                       input_schema={"type": "object", "properties": {"text": {"type": "string", "description": "Text to echo"}}, "required": ["text"]}),
            types.Tool(name="add", description="Add two numbers.",
                       input_schema={"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}, "required": ["a", "b"]}),
            types.Tool(name="now", description="The current time (UTC, ISO 8601).", input_schema={"type": "object", "properties": {}}),
        ]
    if mode == "big":
        return [
            types.Tool(
                name=f"shipment_{i:02d}",
                description=f"Create shipment kind {i}: sender, recipient and return addresses, filters for the carriers to consider.",
                input_schema={
                    "$schema": "https://json-schema.org/draft/2020-12/schema",
                    "type": "object",
                    "properties": {
                        "sender": address(2),
                        "recipient": address(2),
                        "return_to": address(2),
                        "carriers": {"type": "array", "items": filter_schema()},
                        "exclude": {"type": "array", "items": filter_schema()},
                        "weight_kg": {"type": "number"},
                    },
                    "required": ["sender", "recipient"],
                },
            )
            for i in range(60)
        ]
    if mode == "paginated":
        return [
            types.Tool(name=f"page_tool_{i:02d}", description=f"Paged tool number {i}.",
                       input_schema={"type": "object", "properties": {"n": {"type": "integer", "description": "A count"}}})
            for i in range(25)
        ]
    return [types.Tool(name="whoami", description="Say which secret the server was started with.",
                       input_schema={"type": "object", "properties": {}})]


PAGE = 10


def page(items, params, size):
    start = int(params.cursor) if params and params.cursor else 0
    end = start + size
    return items[start:end], (str(end) if end < len(items) else None)


def main():
    mode = sys.argv[1]
    if mode == "needs-env" and not os.environ.get("FLEET_SECRET"):
        print("fleet: FLEET_SECRET is not set", file=sys.stderr)
        sys.exit(2)
    tools = tools_for(mode)
    resources = [types.Resource(uri=f"fleet://doc/{i}", name=f"doc-{i}") for i in range(12)]

    async def list_tools(ctx, params):
        size = PAGE if mode == "paginated" else len(tools)
        shown, cursor = page(tools, params, size)
        return types.ListToolsResult(tools=shown, next_cursor=cursor)

    async def list_resources(ctx, params):
        shown, cursor = page(resources, params, 5)
        return types.ListResourcesResult(resources=shown, next_cursor=cursor)

    async def call_tool(ctx, params):
        return types.CallToolResult(content=[types.TextContent(type="text", text="ok")])

    extra = {"on_list_resources": list_resources} if mode == "paginated" else {}
    server = Server(
        f"fleet-{mode}",
        instructions="Fleet server for mcp-tokens tests." if mode == "small" else None,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        **extra,
    )

    async def run():
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(run)


if __name__ == "__main__":
    main()
