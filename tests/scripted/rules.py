"""What the scripted models of the end-to-end tests share (stdlib only): the script, its rules,
and the record of every request. A model is the one scripted part of those tests; each API's
front end (`anthropic.py` for Claude Code, `responses.py` for Codex) turns a rule's reply into
that API's wire format.

SCRIPT.json: {"rules": [RULE, ...], "compact_summary": TEXT, "usage": {...}}. A RULE is
{"when": SUBSTRING, "capture": REGEX?, "usage": {...}?, "reply": [{"text": T} |
{"tool_use": {"name", "input"}}]} (a rule's "usage" is what that reply reports, e.g. to push an
agent into compacting);
the first rule whose SUBSTRING is in the text of the conversation's last user turn answers.
With "capture", "$1" in the reply's strings is replaced by the regex's first group in that text.
No rule: the text "ok". A compaction request is answered with "compact_summary".
"""

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SCRIPT = {}
REQUESTS = [None]
LOCK = threading.Lock()


def load(script, requests):
    """Reads the script and names the file requests are recorded in."""
    with open(script) as f:
        SCRIPT.update(json.load(f))
    REQUESTS[0] = requests


def record(body):
    """Appends one request body to the record, one JSON object a line."""
    with LOCK:
        with open(REQUESTS[0], "a") as f:
            f.write(json.dumps(body) + "\n")


def substitute(value, group):
    if isinstance(value, str):
        return value.replace("$1", group) if group is not None else value
    if isinstance(value, list):
        return [substitute(v, group) for v in value]
    if isinstance(value, dict):
        return {k: substitute(v, group) for k, v in value.items()}
    return value


def reply(text):
    """The reply of the first rule that matches `text` (the last user turn's text): a list of
    {"text"} and {"tool_use": {"name", "input"}} blocks, and the usage it reports."""
    for rule in SCRIPT.get("rules", []):
        if rule["when"] in text:
            group = None
            if "capture" in rule:
                found = re.search(rule["capture"], text)
                group = found.group(1) if found else None
            return substitute(rule["reply"], group), usage(rule.get("usage"))
    return [{"text": "ok"}], usage()


def text_of(value, unwrap=None):
    """The text of a request's part: a string, a list's parts line by line, a dict's `text` or
    `content`; `unwrap` maps a part's `type` to the key that holds its text (a tool's result)."""
    unwrap = unwrap or {}
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(text_of(v, unwrap) for v in value)
    if isinstance(value, dict):
        key = unwrap.get(value.get("type"))
        if key is not None:
            return text_of(value.get(key, ""), unwrap)
        for key in ("text", "content"):
            if key in value:
                return text_of(value[key], unwrap)
    return ""


def compact_summary():
    return SCRIPT.get("compact_summary", "Summary of the conversation.")


def usage(override=None):
    """What a reply reports: the defaults, the script's "usage", then the rule's."""
    reported = {"input_tokens": 100, "output_tokens": 10}
    reported.update(SCRIPT.get("usage", {}))
    reported.update(override or {})
    return reported


class Handler(BaseHTTPRequestHandler):
    """The HTTP side every front end shares; a front end implements `answer(path, body)`,
    which calls `send_json` or `send_events`."""

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

    def send_events(self, events):
        """Streams `events`, (name, data) pairs, as server-sent events, then closes."""
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.end_headers()
        for name, data in events:
            self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
        self.wfile.flush()
        self.close_connection = True

    def do_GET(self):
        self.send_json(200, {"object": "list", "data": [], "has_more": False})

    def do_HEAD(self):
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def do_POST(self):
        length = int(self.headers.get("content-length", "0"))
        body = json.loads(self.rfile.read(length) or b"{}")
        self.answer(self.path.split("?")[0], body)


def main(handler, argv):
    """Loads the script (argv[1]), records requests in argv[2], prints the port and serves."""
    load(argv[1], argv[2])
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    print(server.server_address[1], flush=True)
    server.serve_forever()
