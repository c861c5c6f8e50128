"""A scripted Anthropic Messages API on 127.0.0.1 for the Claude Code end-to-end tests (stdlib
only): the one scripted part of those tests. Claude Code talks to it through
`ANTHROPIC_BASE_URL`.

Usage: python3 anthropic_model.py SCRIPT.json REQUESTS.jsonl
Prints its port on the first line of stdout, then serves until killed. Every request body is
appended to REQUESTS.jsonl (one JSON object a line) so a test can assert on what the model saw.

SCRIPT.json: {"rules": [RULE, ...], "compact_summary": TEXT, "usage": {...}}. A RULE is
{"when": SUBSTRING, "capture": REGEX?, "reply": [{"text": T} | {"tool_use": {"name", "input"}}]};
the first rule whose SUBSTRING is in the text of the last `user` message (its text and its
tool results; system-role messages after it are skipped) answers. With "capture", "$1" in the
reply's strings is replaced by the regex's first group in that text. No rule: the text "ok".
A summarisation request (Claude Code's compaction) is answered with "compact_summary".
"""

import json
import re
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SCRIPT = {}
REQUESTS = None
LOCK = threading.Lock()
COUNTER = [0]


def text_of(value):
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(text_of(v) for v in value)
    if isinstance(value, dict):
        if value.get("type") == "tool_result":
            return text_of(value.get("content", ""))
        if "text" in value:
            return text_of(value["text"])
        return ""
    return ""


def last_user_text(body):
    for message in reversed(body.get("messages", [])):
        if message.get("role") == "user":
            return text_of(message.get("content", ""))
    return ""


def is_compaction(body):
    """Claude Code 2.1.331's compaction sends the conversation with a last user message that
    asks for "a detailed summary of the conversation so far" (text only, no tools)."""
    return "summary of the conversation so far" in last_user_text(body)


def substitute(value, group):
    if isinstance(value, str):
        return value.replace("$1", group) if group is not None else value
    if isinstance(value, list):
        return [substitute(v, group) for v in value]
    if isinstance(value, dict):
        return {k: substitute(v, group) for k, v in value.items()}
    return value


def reply_for(body):
    if is_compaction(body):
        summary = SCRIPT.get("compact_summary", "Summary of the conversation.")
        return [{"text": f"<analysis>scripted</analysis>\n<summary>{summary}</summary>"}]
    if not body.get("tools"):
        return [{"text": "ok"}]  # side requests (titles, topics)
    text = last_user_text(body)
    for rule in SCRIPT.get("rules", []):
        if rule["when"] in text:
            group = None
            if "capture" in rule:
                found = re.search(rule["capture"], text)
                group = found.group(1) if found else None
            return substitute(rule["reply"], group)
    return [{"text": "ok"}]


def events(blocks, model):
    COUNTER[0] += 1
    usage = dict({"input_tokens": 100, "output_tokens": 10}, **SCRIPT.get("usage", {}))
    yield "message_start", {"type": "message_start", "message": {
        "id": f"msg_{COUNTER[0]}", "type": "message", "role": "assistant", "model": model,
        "content": [], "stop_reason": None, "stop_sequence": None,
        "usage": dict(usage, output_tokens=1)}}
    stop = "end_turn"
    for index, block in enumerate(blocks):
        if "tool_use" in block:
            stop = "tool_use"
            use = block["tool_use"]
            yield "content_block_start", {"type": "content_block_start", "index": index, "content_block": {
                "type": "tool_use", "id": f"toolu_{COUNTER[0]}_{index}", "name": use["name"], "input": {}}}
            yield "content_block_delta", {"type": "content_block_delta", "index": index, "delta": {
                "type": "input_json_delta", "partial_json": json.dumps(use.get("input", {}))}}
        else:
            yield "content_block_start", {"type": "content_block_start", "index": index,
                                          "content_block": {"type": "text", "text": ""}}
            yield "content_block_delta", {"type": "content_block_delta", "index": index,
                                          "delta": {"type": "text_delta", "text": block["text"]}}
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    yield "message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                            "usage": {"output_tokens": usage["output_tokens"]}}
    yield "message_stop", {"type": "message_stop"}


def message(blocks, model):
    content = []
    for index, block in enumerate(blocks):
        if "tool_use" in block:
            content.append({"type": "tool_use", "id": f"toolu_x_{index}", "name": block["tool_use"]["name"],
                            "input": block["tool_use"].get("input", {})})
        else:
            content.append({"type": "text", "text": block["text"]})
    stop = "tool_use" if any("tool_use" in b for b in blocks) else "end_turn"
    return {"id": "msg_x", "type": "message", "role": "assistant", "model": model, "content": content,
            "stop_reason": stop, "stop_sequence": None, "usage": {"input_tokens": 100, "output_tokens": 10}}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send_json(self, status, value):
        data = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self.send_json(200, {"data": [], "has_more": False})

    def do_HEAD(self):
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def do_POST(self):
        length = int(self.headers.get("content-length", "0"))
        body = json.loads(self.rfile.read(length) or b"{}")
        path = self.path.split("?")[0]
        if path.endswith("/count_tokens"):
            return self.send_json(200, {"input_tokens": 100})
        if not path.endswith("/v1/messages"):
            return self.send_json(200, {})
        with LOCK:
            with open(REQUESTS, "a") as f:
                f.write(json.dumps(body) + "\n")
        blocks = reply_for(body)
        model = body.get("model", "claude-scripted")
        if not body.get("stream"):
            return self.send_json(200, message(blocks, model))
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.end_headers()
        for name, data in events(blocks, model):
            self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
        self.wfile.flush()
        self.close_connection = True


def main(script, requests):
    global SCRIPT, REQUESTS
    with open(script) as f:
        SCRIPT = json.load(f)
    REQUESTS = requests
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
