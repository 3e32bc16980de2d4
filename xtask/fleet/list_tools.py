"""Every tool a stdio server lists (all pages), with the Python SDK's own client, as
a JSON array of MCP tool objects: the independent listing `cargo xtask mcp-tokens`
counts mcp-tokens' numbers against.

Usage: list_tools.py '{"command": ..., "args": [...], "env": {...}}'"""

import asyncio
import json
import os
import sys

from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters


async def main():
    config = json.loads(sys.argv[1])
    env = dict(os.environ)
    for key, value in (config.get("env") or {}).items():
        # The fleet's one variable reference, expanded as the clients do.
        env[key] = os.environ.get("FLEET_SECRET", "") if value.startswith("${") else value
    target = StdioServerParameters(command=config["command"], args=config.get("args", []), env=env)
    tools, cursor = [], None
    # As Claude Code connects: server/discover, falling back to initialize.
    async with Client(target, mode="auto") as client:
        while True:
            page = await client.list_tools(cursor=cursor)
            tools.extend(t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in page.tools)
            cursor = page.next_cursor
            if not cursor:
                break
    print(json.dumps(tools))


if __name__ == "__main__":
    asyncio.run(main())
