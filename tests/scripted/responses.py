"""A scripted OpenAI Responses API on 127.0.0.1 for the Codex end-to-end tests (stdlib only):
the one scripted part of those tests. Codex talks to it through a `model_providers` entry with
`wire_api = "responses"`. The script and its rules: `rules.py`; a tool use may name the
`namespace` Codex puts MCP tools in.

Usage: python3 responses.py SCRIPT.json REQUESTS.jsonl
Prints its port on the first line of stdout, then serves until killed; every request body is
appended to REQUESTS.jsonl.

The last user turn is every input item after the model's last output (its message or function
call): the user's message with what Codex adds to it, or the function call outputs. A
compaction request (no tools offered; Codex asks for a summary) gets the script's
"compact_summary".
"""

import json
import sys

import rules

COUNTER = [0]
# Where a tool result part keeps its text.
UNWRAP = {"function_call_output": "output"}


def last_turn_text(body):
    items = body.get("input", [])
    if isinstance(items, str):
        return items
    last_output = -1
    for index, item in enumerate(items):
        if item.get("type") in ("function_call", "custom_tool_call") or item.get("role") == "assistant":
            last_output = index
    return "\n".join(rules.text_of(item, UNWRAP) for item in items[last_output + 1:])


def reply_for(body):
    """The reply's blocks and the usage it reports."""
    if not body.get("tools"):
        return [{"text": rules.compact_summary()}], rules.usage()
    return rules.reply(last_turn_text(body))


def output_items(blocks):
    COUNTER[0] += 1
    items = []
    for index, block in enumerate(blocks):
        if "tool_use" in block:
            use = block["tool_use"]
            item = {"type": "function_call", "id": f"fc_{COUNTER[0]}_{index}", "call_id": f"call_{COUNTER[0]}_{index}",
                    "name": use["name"], "arguments": json.dumps(use.get("input", {})), "status": "completed"}
            if "namespace" in use:
                item["namespace"] = use["namespace"]
        else:
            item = {"type": "message", "id": f"msg_{COUNTER[0]}_{index}", "role": "assistant", "status": "completed",
                    "content": [{"type": "output_text", "text": block["text"], "annotations": []}]}
        items.append(item)
    return items


def events(items, usage, model):
    response = {"id": f"resp_{COUNTER[0]}", "object": "response", "status": "in_progress", "model": model, "output": []}
    yield {"type": "response.created", "response": response}
    for index, item in enumerate(items):
        yield {"type": "response.output_item.added", "output_index": index, "item": item}
        if item["type"] == "message":
            text = item["content"][0]["text"]
            yield {"type": "response.output_text.delta", "output_index": index, "content_index": 0,
                   "item_id": item["id"], "delta": text}
        yield {"type": "response.output_item.done", "output_index": index, "item": item}
    total = usage["input_tokens"] + usage["output_tokens"]
    done = dict(response, status="completed", output=items, usage={
        "input_tokens": usage["input_tokens"], "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": usage["output_tokens"], "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": total})
    yield {"type": "response.completed", "response": done}


class Handler(rules.Handler):
    def answer(self, path, body):
        if not path.endswith("/responses"):
            return self.send_json(200, {})
        rules.record(body)
        blocks, usage = reply_for(body)
        items = output_items(blocks)
        self.send_events((event["type"], event) for event in events(items, usage, body.get("model", "scripted")))


if __name__ == "__main__":
    rules.main(Handler, sys.argv)
