"""The README's Python example (tests/tests/embedding_examples.rs runs it):
python3 example.py scratchpad_guest.wasm"""
import json
import sys

from scratchpad_host import ScratchpadHost

host = ScratchpadHost(sys.argv[1], config={"notesMaxChars": 8000})  # wasmtime-py compiles it once
guidance = host.create_session("s1")  # [(placement, text)]: for the system prompt
args = {"action": "set_plan", "content": "1. Fix X\n2. Test Y"}
print(host.call_tool("s1", "turn-1", "session.scratchpad", json.dumps(args)))  # a fresh instance per call
for placement, text in host.before_query("s1", "turn-2", "continue"):
    print(f"{placement}:\n{text}")  # goes around the user's message, which is never changed
