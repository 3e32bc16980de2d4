"""The official Python MCP SDK client (mcp 2.3) against context-loader.

Usage: python_sdk.py stdio BINARY | python_sdk.py http URL

Connects twice: mode "auto" (probes server/discover, falls back to initialize on a
legacy server) and mode "legacy" (initialize handshake), then lists tools and calls
count-tokens (success and a structured tool error) on each. Prints one line per mode
and exits non-zero on any mismatch. Run by `cargo xtask ci` from its own venv.
"""

import asyncio
import json
import sys

from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters


def check(condition, message):
    if not condition:
        raise AssertionError(message)


def structured(result):
    data = result.structured_content
    if data is None:  # clients that only read text get the same JSON there
        data = json.loads(result.content[0].text)
    return data


async def exercise(target, mode):
    async with Client(target, mode=mode) as client:
        discovered = client.session.discover_result is not None
        version = client.protocol_version
        info = client.server_info
        check(info is None or info.name == "context-loader", f"server name {info}")
        tools = await client.list_tools()
        names = sorted(t.name for t in tools.tools)
        check({"count-tokens", "list-models"} <= set(names), f"tools/list gave {names}")

        ok = await client.call_tool("count-tokens", {"text": "hello world", "model": "gpt-4o"})
        check(not ok.is_error, f"count-tokens failed: {ok}")
        count = structured(ok)
        check(count["token_count"] == 2 and count["exact"] is True, f"count {count}")
        check(count["encoding"] == "o200k_base", f"encoding {count}")

        refused = await client.call_tool("count-tokens", {"text": "hi", "model": "gpt-4.5"})
        check(refused.is_error, f"unknown model must be a tool error: {refused}")
        error = structured(refused)
        check(error["error_code"] == "UNSUPPORTED_MODEL", f"error {error}")
        check("gpt-4" in error.get("did_you_mean", []), f"suggestions {error}")

        models = await client.call_tool("list-models", {"filter": "gpt-4.1"})
        check(not models.is_error and structured(models)["count"] >= 1, f"list-models {models}")
        path = "server/discover" if discovered else "initialize"
        return f"mode={mode}: handshake via {path} (protocol {version}); {len(names)} tools; count-tokens ok and UNSUPPORTED_MODEL"


async def main():
    kind, where = sys.argv[1], sys.argv[2]
    target = StdioServerParameters(command=where, args=["stdio"]) if kind == "stdio" else where
    for mode in ("auto", "legacy"):
        print(f"python mcp SDK over {kind}: " + await exercise(target, mode), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
