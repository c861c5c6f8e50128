// Measures the time the scratchpad plugin's hooks add to one OpenClaw turn, without OpenClaw's
// own noise: the plugin's bridge (integrations/openclaw/src) against a real `scratchpad serve`,
// called as OpenClaw calls it on a turn without tool calls (before_prompt_build, agent_end) and
// on a turn with one scratchpad call (plus before_tool_call, the tool, the result middleware).
// A measurement script, not a test. measure.py measures whole gateway turns.
//
// Usage: node tests/openclaw/measure_hooks.mjs [TURNS]   (after `cargo build -p scratchpad-cli`;
// TURNS defaults to 100)

import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "../..");
const src = join(root, "integrations/openclaw/src");
const { Bridge } = await import(join(src, "bridge.js"));
const { hostArgs, resolveConfig } = await import(join(src, "config.js"));
const { Sidecar } = await import(join(root, "integrations/sidecar-js/sidecar.js"));
const { PluginState } = await import(join(src, "state.js"));

const turns = Number(process.argv[2] ?? 100);
const work = mkdtempSync(join(tmpdir(), "scratchpad-hooks-"));
const config = resolveConfig({ binary: join(root, "target/debug/scratchpad"), database: join(work, "s.db") });
const args = hostArgs(config);
const logger = { warn: console.warn, error: console.error };
const sidecar = new Sidecar({ command: config.binary, args, requestTimeoutMs: 30000, logger });
const bridge = new Bridge({ sidecar, state: new PluginState(`${config.database}.openclaw.json`), logger });
const ctx = { sessionKey: "agent:main:measure" };

async function turn(i, withTool) {
  const run = { ...ctx, runId: `run-${i}` };
  const start = process.hrtime.bigint();
  await bridge.beforePromptBuild({ prompt: `turn ${i}`, currentUserMessage: `turn ${i}`, messages: [] }, run);
  if (withTool) {
    const params = { action: "append_notes", content: `finding ${i % 10}` };
    await bridge.beforeToolCall({ toolName: "session_scratchpad", params, toolCallId: `c${i}` }, run);
    const result = await bridge.callTool(run, "session_scratchpad", params).catch((e) => ({ content: [{ type: "text", text: e.message }] }));
    await bridge.afterToolResult({ toolName: "session_scratchpad", toolCallId: `c${i}`, args: params, result }, run);
    if (i % 20 === 0) await bridge.callTool(run, "session_scratchpad", { action: "set_notes", content: "reset" });
  }
  await bridge.agentEnd({ messages: [{ role: "assistant", content: `reply ${i}` }], success: true }, run);
  return Number(process.hrtime.bigint() - start) / 1e6;
}

function rssMiB(pid) {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+)/.exec(status)[1]) / 1024;
}

function report(label, times) {
  const sorted = [...times].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))].toFixed(1);
  console.log(`${label}: ${times.length} turns, p50 ${at(0.5)} ms, p90 ${at(0.9)} ms, max ${at(1)} ms`);
}

await turn(0, true); // first sight: session created, components compiled or loaded from cache
const memory = [];
for (const withTool of [false, true]) {
  const times = [];
  for (let i = 1; i <= turns; i += 1) {
    times.push(await turn(i + (withTool ? turns : 0), withTool));
    if (withTool && (i === 1 || i === turns / 2 || i === turns)) memory.push([i, rssMiB(sidecar.child.pid)]);
  }
  report(withTool ? "hooks of a turn with one scratchpad call" : "hooks of a turn without tool calls", times);
}
console.log(`plugin (node) RSS ${(process.memoryUsage().rss / 1048576).toFixed(1)} MiB`);
for (const [i, mib] of memory) console.log(`scratchpad serve RSS after tool turn ${i}: ${mib.toFixed(1)} MiB`);
sidecar.close();
rmSync(work, { recursive: true, force: true });
