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
With "first": SUBSTRING, a rule answers only a conversation whose first user message holds it:
a front end that passes that message (`anthropic.py`) tells a sub-agent's requests, which begin
with the prompt its parent gave it, from its parent's. No rule: the text "ok". A compaction
request is answered with "compact_summary".

A RULE with "steps": [STEP, ...] instead of "reply" is a script of several model calls in one
turn, for an agent that adds messages of its own after tool results (OpenClaw), where the last
user turn is no guide. A STEP is {"reply": [...], "capture": REGEX?, "usage": {...}?}. Such a
rule answers when its SUBSTRING is in the conversation's latest user message that contains the
SUBSTRING of any stepped rule; the number of model replies with tool calls after that message
picks the STEP (the last one answers every call after it too), and "$1" is the regex's first
group in its last match in the text from that message on. Only a front end that passes the
conversation to `reply` (`chat.py`) answers stepped rules.

"compact_echo": true answers a compaction prompt with every `## ` heading it asks for, the first
holding "compact_summary" and the conversation the prompt quotes between <conversation> tags,
the others "None." (OpenClaw's compaction safeguard checks the headings and the identifiers).
"models": [ID, ...] is what a GET (`/v1/models`) lists.
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


def marked(conversation):
    """The latest user message of `conversation` ((kind, text) pairs, kind "user", "call" for a
    model reply with tool calls, or "other") that holds a stepped rule's SUBSTRING: its text, the
    text from it on, and the number of model replies with tool calls after it. None without one."""
    whens = [rule["when"] for rule in SCRIPT.get("rules", []) if "steps" in rule]
    for index in range(len(conversation) - 1, -1, -1):
        kind, text = conversation[index]
        if kind == "user" and any(when in text for when in whens):
            since = conversation[index:]
            return text, "\n".join(t for _, t in since), sum(1 for k, _ in since if k == "call")
    return None


def last_group(pattern, text):
    """The first group of `pattern`'s last match in `text`, or None."""
    if pattern is None:
        return None
    found = list(re.finditer(pattern, text))
    return found[-1].group(1) if found else None


def reply(text, conversation=(), first=""):
    """The reply of the first rule that matches `text` (the last user turn's text) and `first`
    (the conversation's first user message), or, for a stepped rule, the conversation's marked
    message: a list of {"text"} and {"tool_use": {"name", "input"}} blocks, and the usage it
    reports."""
    turn = marked(conversation)
    for rule in SCRIPT.get("rules", []):
        if "first" in rule and rule["first"] not in first:
            continue
        if "steps" in rule:
            if turn is None or rule["when"] not in turn[0]:
                continue
            _, since, calls = turn
            step = rule["steps"][min(calls, len(rule["steps"]) - 1)]
            return substitute(step["reply"], last_group(step.get("capture"), since)), usage(step.get("usage"))
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


def compact_summary(prompt=""):
    """The script's "compact_summary"; with "compact_echo", inside the headings `prompt` (the
    compaction request's last message) asks for."""
    summary = SCRIPT.get("compact_summary", "Summary of the conversation.")
    if not SCRIPT.get("compact_echo"):
        return summary
    conversation, _, instructions = prompt.partition("</conversation>")
    conversation = conversation.replace("<conversation>", "").strip()
    headings = re.findall(r"^## .+$", instructions, re.MULTILINE) or ["## Summary"]
    parts = [f"{headings[0]}\n{summary}\n{conversation}"] + [f"{h}\nNone." for h in headings[1:]]
    return "\n\n".join(parts)


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
        models = [{"id": model, "object": "model"} for model in SCRIPT.get("models", [])]
        self.send_json(200, {"object": "list", "data": models, "has_more": False})

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
