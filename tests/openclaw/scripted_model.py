#!/usr/bin/env python3
"""A scripted model: an OpenAI-compatible chat-completions server for the OpenClaw end-to-end test.

OpenClaw calls it as a custom provider (`api: "openai-completions"`, streaming SSE). Replies are
keyed on the conversation, never on whole prompts (OpenClaw's system prompt is ~46 KB and changes
between releases): the latest user message carrying a `SCRIPT:<name>` marker picks a script, and
the number of assistant tool-call messages after it is the step in that script. (After tool
results OpenClaw appends an internal-context user message, so the last message is no guide.)

Every request body is appended to the JSONL file given as the second argument, so the test can
assert on its own markers in what the model received.

Usage: scripted_model.py PORT_FILE REQUESTS_FILE   (listens on 127.0.0.1, a free port, written
to PORT_FILE once it is listening; runs until killed).
"""

import json
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PLAN = "1. PLAN-MARKER-ALPHA reproduce the crash\n2. fix the parser"
NOTE = "NOTE-MARKER-BRAVO: the crash is in parser.rs line 42"
SUMMARY = "SUMMARY-OF-CONVERSATION: the user works on a parser crash."
LOCK = threading.Lock()


def text_of(message):
    """A message's text, whether `content` is a string or a list of parts."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return ""


def call(name, arguments):
    return {"tool": name, "arguments": arguments}


def observation_id(messages):
    """The scratchpad_id of the synthetic observation in the latest tool message that has one."""
    for message in reversed(messages):
        if message.get("role") == "tool":
            found = re.search(r'"scratchpad_id"\s*:\s*"([0-9a-f]{16})"', text_of(message))
            if found:
                return found.group(1)
    return "0000000000000000"


def script(name, step, messages, marker_text):
    """The reply at `step` of script `name`: a tool call or the final text."""
    if name == "plan":
        steps = [
            call("session_scratchpad", {"action": "set_plan", "content": PLAN}),
            call("session_scratchpad", {"action": "append_notes", "content": NOTE}),
        ]
    elif name == "log":
        path = re.search(r"LOG-PATH=(\S+)", marker_text).group(1)
        steps = [
            # The test's fetch_log tool (log-tool/): OpenClaw's read and exec cap text at ~50 KB,
            # and the point is the whole 89 KB result.
            call("fetch_log", {"path": path}),
            call("scratchpad_read", {"scratchpad_id": observation_id(messages), "mode": "head", "n": 120}),
            call(
                "scratchpad_read",
                {"scratchpad_id": observation_id(messages), "mode": "grep", "pattern": "LAST_CRITICAL_EVENT"},
            ),
        ]
    elif name == "overbudget":
        steps = [call("session_scratchpad", {"action": "append_notes", "content": "OVERBUDGET " + "x" * 5000})]
    elif name == "malformed":
        # Valid for the schema OpenClaw checks, refused by the component: set_plan needs content.
        steps = [call("session_scratchpad", {"action": "set_plan"})]
    elif name == "hostile":
        steps = [call("probe_loop", {})]
    else:
        steps = []
    if step < len(steps):
        return steps[step]
    return {"text": f"SCRIPT-DONE {name} after {step} tool calls"}


def reply_for(body):
    messages = body.get("messages", [])
    if not body.get("tools"):
        # Compaction's summarisation request (it offers no tools, and quotes the conversation,
        # markers included).
        return {"text": summary(text_of(messages[-1]) if messages else "")}
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        found = re.search(r"SCRIPT:(\w+)", text_of(message)) if message.get("role") == "user" else None
        if found:
            after = messages[index + 1 :]
            step = sum(1 for m in after if m.get("role") == "assistant" and m.get("tool_calls"))
            return script(found.group(1), step, messages, text_of(message))
    # Anything else (titles, greetings): a plain answer.
    return {"text": SUMMARY}


def summary(prompt):
    """A summary OpenClaw's compaction safeguard accepts: every heading the prompt asks for, the
    conversation quoted under the first (so every identifier and the latest ask are kept)."""
    conversation, _, instructions = prompt.partition("</conversation>")
    conversation = conversation.replace("<conversation>", "").strip()
    headings = re.findall(r"^## .+$", instructions, re.MULTILINE) or ["## Summary"]
    parts = [f"{headings[0]}\n{SUMMARY}\n{conversation}"] + [f"{h}\nNone." for h in headings[1:]]
    return "\n\n".join(parts)


def chunk(delta, finish=None):
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": "scripted",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


class Handler(BaseHTTPRequestHandler):
    requests_file = None
    counter = 0

    def log_message(self, *args):  # quiet: the test reads the requests file instead
        pass

    def do_GET(self):
        if self.path.rstrip("/").endswith("/models"):
            self.send_json({"object": "list", "data": [{"id": "scripted", "object": "model"}]})
        else:
            self.send_error(404)

    def send_json(self, value):
        data = json.dumps(value).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"{}")
        with LOCK:
            with open(Handler.requests_file, "a", encoding="utf-8") as out:
                out.write(json.dumps(body) + "\n")
            Handler.counter += 1
            counter = Handler.counter
        reply = reply_for(body)
        if not body.get("stream"):
            message = {"role": "assistant", "content": reply.get("text")}
            if "tool" in reply:
                message["tool_calls"] = [self.tool_call(reply, counter)]
            finish = "tool_calls" if "tool" in reply else "stop"
            choice = {"index": 0, "message": message, "finish_reason": finish}
            self.send_json({"id": "chatcmpl-scripted", "object": "chat.completion", "model": "scripted",
                            "choices": [choice], "usage": {"prompt_tokens": 10, "completion_tokens": 5,
                                                           "total_tokens": 15}})
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        events = [chunk({"role": "assistant", "content": ""})]
        if "tool" in reply:
            events.append(chunk({"tool_calls": [dict(self.tool_call(reply, counter), index=0)]}))
            events.append(chunk({}, "tool_calls"))
        else:
            events.append(chunk({"content": reply["text"]}))
            events.append(chunk({}, "stop"))
        usage = dict(chunk({}), choices=[], usage={"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15})
        events.append(usage)
        for event in events:
            self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()

    @staticmethod
    def tool_call(reply, counter):
        return {
            "id": f"call{counter}",
            "type": "function",
            "function": {"name": reply["tool"], "arguments": json.dumps(reply["arguments"])},
        }


def main():
    port_file, Handler.requests_file = sys.argv[1], sys.argv[2]
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    with open(port_file + ".tmp", "w", encoding="utf-8") as out:
        out.write(str(server.server_address[1]))
    # Renamed into place so the test never reads a half-written port.
    import os

    os.replace(port_file + ".tmp", port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
