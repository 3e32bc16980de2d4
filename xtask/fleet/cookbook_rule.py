"""OpenAI's cookbook function-calling token rule ("How to count tokens with
tiktoken", num_tokens_for_tools, gpt-4o settings), written from the cookbook with
tiktoken, over a tool list file (tools/list result or array). Prints {"total": N}:
the tools plus the 12 tokens closing the list, as `mcp-tokens --render openai`'s
request_tokens. tiktoken reads its vocabulary from TIKTOKEN_CACHE_DIR (offline).

Names are the tools' own (no server prefix); a missing description or type counts as
empty, where the cookbook would raise."""

import json
import sys

import tiktoken


def num_tokens_for_tools(functions, encoding):
    func_init, prop_init, prop_key, enum_init, enum_item, func_end = 7, 3, 3, -3, 3, 12
    count = 0
    for function in functions:
        count += func_init
        desc = function.get("description") or ""
        if desc.endswith("."):
            desc = desc[:-1]
        count += len(encoding.encode(function["name"] + ":" + desc))
        properties = function["parameters"].get("properties") or {}
        if len(properties) > 0:
            count += prop_init
            for key, prop in properties.items():
                count += prop_key
                p_type = prop.get("type", "")
                if not isinstance(p_type, str):
                    p_type = json.dumps(p_type, separators=(",", ":"))
                p_desc = prop.get("description") or ""
                if "enum" in prop:
                    count += enum_init
                    for item in prop["enum"]:
                        count += enum_item
                        item = item if isinstance(item, str) else json.dumps(item, separators=(",", ":"))
                        count += len(encoding.encode(item))
                if p_desc.endswith("."):
                    p_desc = p_desc[:-1]
                count += len(encoding.encode(f"{key}:{p_type}:{p_desc}"))
    if functions:
        count += func_end
    return count


def main():
    data = json.load(open(sys.argv[1]))
    tools = data["tools"] if isinstance(data, dict) else data
    functions = [
        {"name": t["name"], "description": t.get("description"), "parameters": t.get("inputSchema") or t.get("input_schema") or {}}
        for t in tools
    ]
    encoding = tiktoken.get_encoding("o200k_base")
    print(json.dumps({"total": num_tokens_for_tools(functions, encoding)}))


if __name__ == "__main__":
    main()
