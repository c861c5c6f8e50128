"""A scripted Gemini API on 127.0.0.1 for the Gemini CLI end-to-end tests (stdlib only): the one
scripted part of those tests. Gemini CLI talks to it through `GOOGLE_GEMINI_BASE_URL`. The
script and its rules: `rules.py`; a usage's "input_tokens" is reported as `promptTokenCount`.

Usage: python3 gemini.py SCRIPT.json REQUESTS.jsonl
Prints its port on the first line of stdout, then serves until killed. Every generation request
body is appended to REQUESTS.jsonl (one JSON object a line) with its "path" added.

`POST /v1beta/models/<m>:streamGenerateContent?alt=sse` is a turn: the last user turn is every
`user` content after the model's last one (its text and its function responses). Its reply is one
server-sent event with the whole candidate. `:generateContent` is a side request: a compression
(its prompt asks for a `<state_snapshot>`) gets the script's "compact_summary", a request for
JSON (`responseMimeType`) an object saying the user speaks next, any other "ok".
`:countTokens` counts a token per 4 characters.
"""

import json
import sys

import rules

COUNTER = [0]


def part_text(part):
    if "text" in part:
        return part["text"]
    if "functionResponse" in part:
        return json.dumps(part["functionResponse"].get("response", {}))
    return ""


def last_turn_text(body):
    contents = body.get("contents", [])
    last_model = -1
    for index, content in enumerate(contents):
        if content.get("role") == "model":
            last_model = index
    texts = []
    for content in contents[last_model + 1:]:
        texts.extend(part_text(part) for part in content.get("parts", []))
    return "\n".join(texts)


def usage_metadata(usage):
    prompt, output = usage["input_tokens"], usage["output_tokens"]
    return {"promptTokenCount": prompt, "candidatesTokenCount": output, "totalTokenCount": prompt + output}


def response(parts, usage, model):
    COUNTER[0] += 1
    return {
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": usage_metadata(usage),
        "modelVersion": model,
        "responseId": f"resp_{COUNTER[0]}",
    }


def parts_of(blocks):
    parts = []
    for block in blocks:
        if "tool_use" in block:
            use = block["tool_use"]
            parts.append({"functionCall": {"name": use["name"], "args": use.get("input", {})}})
        else:
            parts.append({"text": block["text"]})
    return parts


def side_reply(body):
    config = body.get("generationConfig", {}) or {}
    if config.get("responseMimeType") == "application/json":
        return json.dumps({"reasoning": "The model finished its turn.", "next_speaker": "user"})
    if "state_snapshot" in json.dumps(body.get("systemInstruction", "")) + last_turn_text(body):
        return rules.compact_summary()
    return "ok"


class Handler(rules.Handler):
    def answer(self, path, body):
        model = path.rsplit("/", 1)[-1].split(":")[0]
        if path.endswith(":countTokens"):
            return self.send_json(200, {"totalTokens": max(1, len(json.dumps(body)) // 4)})
        rules.record(dict(body, path=path))
        if path.endswith(":streamGenerateContent"):
            blocks, usage = rules.reply(last_turn_text(body))
            event = response(parts_of(blocks), usage, model)
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("connection", "close")
            self.end_headers()
            self.wfile.write(f"data: {json.dumps(event)}\r\n\r\n".encode())
            self.wfile.flush()
            self.close_connection = True
            return
        if path.endswith(":generateContent"):
            return self.send_json(200, response([{"text": side_reply(body)}], rules.usage(), model))
        self.send_json(404, {"error": {"code": 404, "message": f"no {path}", "status": "NOT_FOUND"}})


if __name__ == "__main__":
    rules.main(Handler, sys.argv)
