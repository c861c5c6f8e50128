"""A scripted Anthropic Messages API on 127.0.0.1 for the Claude Code end-to-end tests (stdlib
only): the one scripted part of those tests. Claude Code talks to it through
`ANTHROPIC_BASE_URL`. The script and its rules: `rules.py`.

Usage: python3 anthropic.py SCRIPT.json REQUESTS.jsonl
Prints its port on the first line of stdout, then serves until killed. Every request body is
appended to REQUESTS.jsonl (one JSON object a line) so a test can assert on what the model saw.

The last user turn is the last `user` message (its text and its tool results; system-role
messages after it are skipped). A rule's "first" is matched against the first `user` message:
a sub-agent's conversation (Claude Code's `Agent` tool) begins with the prompt its parent gave
it. Claude Code's compaction request gets `<summary>` around the script's "compact_summary";
side requests without tools get "ok".
"""

import json
import sys

import rules

COUNTER = [0]
# Where a tool result part keeps its text.
UNWRAP = {"tool_result": "content"}


def last_user_text(body):
    for message in reversed(body.get("messages", [])):
        if message.get("role") == "user":
            return rules.text_of(message.get("content", ""), UNWRAP)
    return ""


def first_user_text(body):
    for message in body.get("messages", []):
        if message.get("role") == "user":
            return rules.text_of(message.get("content", ""), UNWRAP)
    return ""


def is_compaction(body):
    """Claude Code 2.1.331's compaction sends the conversation with a last user message that
    asks for "a detailed summary of the conversation so far" (text only, no tools)."""
    return "summary of the conversation so far" in last_user_text(body)


def reply_for(body):
    """The reply's blocks and the usage it reports."""
    if is_compaction(body):
        return [{"text": f"<analysis>scripted</analysis>\n<summary>{rules.compact_summary()}</summary>"}], rules.usage()
    if not body.get("tools"):
        return [{"text": "ok"}], rules.usage()  # side requests (titles, topics)
    return rules.reply(last_user_text(body), first=first_user_text(body))


def events(blocks, usage, model):
    COUNTER[0] += 1
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


class Handler(rules.Handler):
    def answer(self, path, body):
        if path.endswith("/count_tokens"):
            return self.send_json(200, {"input_tokens": 100})
        if not path.endswith("/v1/messages"):
            return self.send_json(200, {})
        rules.record(body)
        blocks, usage = reply_for(body)
        model = body.get("model", "claude-scripted")
        if not body.get("stream"):
            return self.send_json(200, message(blocks, model))
        self.send_events(events(blocks, usage, model))


if __name__ == "__main__":
    rules.main(Handler, sys.argv)
