"""A minimal MCP server on stdio (stdlib only) with one tool, `fetch_log`, that returns a file
whole: the large tool result of the Claude Code end-to-end test (the large-observation store's 89 KB log), which
the plugin's PostToolUse hook offloads.

Usage: python3 log_server.py FILE
"""

import json
import sys


def answer(id, result):
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": id, "result": result}) + "\n")
    sys.stdout.flush()


def main(path):
    for line in sys.stdin:
        if not line.strip():
            continue
        message = json.loads(line)
        method, id = message.get("method"), message.get("id")
        if id is None:
            continue  # a notification
        if method == "initialize":
            answer(id, {
                "protocolVersion": message["params"].get("protocolVersion", "2025-06-18"),
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "logs", "version": "1.0.0"},
            })
        elif method == "tools/list":
            answer(id, {"tools": [{
                "name": "fetch_log",
                "description": "Returns the service log, whole.",
                "inputSchema": {"type": "object", "properties": {}},
            }]})
        elif method == "tools/call":
            with open(path) as f:
                answer(id, {"content": [{"type": "text", "text": f.read()}]})
        elif method == "ping":
            answer(id, {})
        else:
            sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": id,
                                         "error": {"code": -32601, "message": f"no method {method}"}}) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main(sys.argv[1])
