// The Claude Agent SDK with the scratchpad plugin: `query()` runs Claude Code headless with the
// plugin's hooks and MCP server loaded, so the agent's plan survives compaction and large tool
// results are offloaded. The test suite runs this file (Node 24 strips the types) against a
// scripted model; point ANTHROPIC_BASE_URL elsewhere to use a real one.
//
// Usage: npm ci && node agent-sdk.ts "PROMPT" [SESSION_ID_TO_RESUME]   (Node >= 24)
import { query, type Options } from "@anthropic-ai/claude-agent-sdk";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const plugin = join(dirname(fileURLToPath(import.meta.url)), "..", ".."); // integrations/claude-code
const [prompt, resume] = process.argv.slice(2);

const options: Options = {
  plugins: [{ type: "local", path: plugin }],
  // Headless: nobody is there to approve the scratchpad's own tools.
  permissionMode: "bypassPermissions",
  allowDangerouslySkipPermissions: true,
  maxTurns: 8,
  ...(resume ? { resume } : {}),
};

for await (const message of query({ prompt, options })) {
  if (message.type === "result") {
    // One JSON line: the session id (for `scratchpad show`) and the final text.
    console.log(JSON.stringify({ session_id: message.session_id, result: "result" in message ? message.result : null }));
  }
}
