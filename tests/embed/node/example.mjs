// The README's Node example (tests/tests/embedding_examples.rs runs it):
//   node example.mjs scratchpad_guest.wasm target/embed/jco
import { ScratchpadHost } from "./host.mjs";

const [wasm, outDir] = process.argv.slice(2);
const host = await ScratchpadHost.open(wasm, { config: { notesMaxChars: 8000 }, outDir }); // jco transpiles once
const guidance = host.createSession("s1"); // [{placement, text}]: for the system prompt
const args = { action: "set_plan", content: "1. Fix X\n2. Test Y" };
console.log(host.callTool("s1", "turn-1", "session.scratchpad", JSON.stringify(args))); // a fresh instance per call
for (const { placement, text } of host.beforeQuery("s1", "turn-2", "continue")) {
  console.log(`${placement}:\n${text}`); // goes around the user's message, which is never changed
}
