"""A scripted OpenAI Chat Completions API on 127.0.0.1 for the opencode and OpenClaw end-to-end
tests and the Node package's AI SDK tests (stdlib only): the one scripted part of those tests.
opencode and the AI SDK talk to it through `@ai-sdk/openai-compatible` with its `baseURL`,
OpenClaw as a custom provider (`api: "openai-completions"`). The script and its rules:
`rules.py`; chat.py passes the conversation, so its scripts may have stepped rules.

Usage: python3 chat.py SCRIPT.json REQUESTS.jsonl
Prints its port on the first line of stdout, then serves until killed; every request body is
appended to REQUESTS.jsonl. A request with `"stream": true` gets chunks (server-sent events),
any other one chat completion (the AI SDK's `generateText` does not stream).

The last user turn is every message after the assistant's last one: the user's message, or
the tool results. A request that offers no tools (a title, a compaction summary) gets the
script's "compact_summary" (with "compact_echo", shaped by the request's last message).
"""

import json
import sys

import rules

COUNTER = [0]


def last_turn_text(body):
    messages = body.get("messages", [])
    last_output = -1
    for index, message in enumerate(messages):
        if message.get("role") == "assistant":
            last_output = index
    return "\n".join(rules.text_of(m.get("content", "")) for m in messages[last_output + 1:])


def conversation(body):
    """The messages as a stepped rule reads them: (kind, text), kind "user", "call" (a model
    reply with tool calls) or "other"."""
    out = []
    for message in body.get("messages", []):
        role = message.get("role")
        kind = "user" if role == "user" else "call" if role == "assistant" and message.get("tool_calls") else "other"
        out.append((kind, rules.text_of(message.get("content") or "")))
    return out


def reply_for(body):
    """The reply's blocks and the usage it reports."""
    if not body.get("tools"):
        messages = body.get("messages", [])
        prompt = rules.text_of(messages[-1].get("content") or "") if messages else ""
        return [{"text": rules.compact_summary(prompt)}], rules.usage()
    return rules.reply(last_turn_text(body), conversation(body))


def chunks(blocks, usage, model):
    """The reply as chat completion chunks: its text, then its tool calls, then the usage."""
    COUNTER[0] += 1
    base = {"id": f"chatcmpl-{COUNTER[0]}", "object": "chat.completion.chunk", "created": 0, "model": model}

    def chunk(delta, finish=None):
        return dict(base, choices=[{"index": 0, "delta": delta, "finish_reason": finish}])

    yield chunk({"role": "assistant", "content": ""})
    text = "".join(block["text"] for block in blocks if "text" in block)
    if text:
        yield chunk({"content": text})
    calls = [block["tool_use"] for block in blocks if "tool_use" in block]
    for index, use in enumerate(calls):
        function = {"name": use["name"], "arguments": json.dumps(use.get("input", {}))}
        yield chunk({"tool_calls": [{"index": index, "id": f"call_{COUNTER[0]}_{index}", "type": "function",
                                     "function": function}]})
    yield chunk({}, "tool_calls" if calls else "stop")
    prompt, completion = usage["input_tokens"], usage["output_tokens"]
    yield dict(base, choices=[], usage={"prompt_tokens": prompt, "completion_tokens": completion,
                                        "total_tokens": prompt + completion})


def completion(blocks, usage, model):
    """The reply as one chat completion, for a request that does not stream."""
    COUNTER[0] += 1
    text = "".join(block["text"] for block in blocks if "text" in block)
    calls = [block["tool_use"] for block in blocks if "tool_use" in block]
    message = {"role": "assistant", "content": text or None}
    if calls:
        message["tool_calls"] = [
            {"id": f"call_{COUNTER[0]}_{index}", "type": "function",
             "function": {"name": use["name"], "arguments": json.dumps(use.get("input", {}))}}
            for index, use in enumerate(calls)
        ]
    prompt, completion_tokens = usage["input_tokens"], usage["output_tokens"]
    return {
        "id": f"chatcmpl-{COUNTER[0]}", "object": "chat.completion", "created": 0, "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion_tokens,
                  "total_tokens": prompt + completion_tokens},
    }


class Handler(rules.Handler):
    def answer(self, path, body):
        if not path.endswith("/chat/completions"):
            return self.send_json(200, {})
        rules.record(body)
        blocks, usage = reply_for(body)
        if not body.get("stream"):
            return self.send_json(200, completion(blocks, usage, body.get("model", "scripted")))
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.end_headers()
        for chunk in chunks(blocks, usage, body.get("model", "scripted")):
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
        self.close_connection = True


if __name__ == "__main__":
    rules.main(Handler, sys.argv)
