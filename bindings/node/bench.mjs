// What the Node binding costs over the Rust host: a measurement script, not a test.
//
// Usage: node bench.mjs [CALLS]   (beside an installed @scratchpad-dev/host, or in
//   bindings/node with a release addon copied in as scratchpad.linux-x64-gnu.node:
//   cargo build --release -p scratchpad-node
//   cp target/release/libscratchpad_node.so bindings/node/scratchpad.linux-x64-gnu.node)
//
// The same host, the same session, in one run: `beforeQuery` and a `session.scratchpad` tool
// call through the JavaScript API (`Host`, awaiting each call), then the same calls looped in
// Rust inside the addon (`timeInRust`, no JavaScript between calls), in ten alternating blocks.
// Prints each side's p50 and the ratio.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Host } from '@scratchpad-dev/host';

const CALL = { action: 'set_plan', content: '1. Reproduce\n2. Fix token expiry\n3. Add a regression test' };

function p50us(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] / 1000;
}

const BLOCKS = 10;
const calls = Math.ceil(Number(process.argv[2] ?? 2000) / BLOCKS) * BLOCKS;
const host = await Host.open(join(mkdtempSync(join(tmpdir(), 'scratchpad-bench-')), 'bench.db'));
await host.createSession('bench');
const turn = { sessionId: 'bench', turnId: 't' };
await host.callTool(turn, 'session.scratchpad', CALL);
const turnJson = JSON.stringify({ session_id: 'bench', turn_id: 't' });
console.log(`${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, ${calls} calls each`);
for (const [op, jsCall, argument] of [
  ['before_query', () => host.beforeQuery(turn, 'continue'), 'continue'],
  ['call_tool', () => host.callTool(turn, 'session.scratchpad', CALL), JSON.stringify(CALL)],
]) {
  for (let i = 0; i < 200; i++) await jsCall();
  // In alternating blocks, so both sides see the same machine (a shared VM drifts by tens of
  // percent over the seconds one side's calls take).
  const [samples, rust] = [[], []];
  for (let block = 0; block < BLOCKS; block++) {
    for (let i = 0; i < calls / BLOCKS; i++) {
      const start = process.hrtime.bigint();
      await jsCall();
      samples.push(Number(process.hrtime.bigint() - start));
    }
    rust.push(...(await host._native.timeInRust(op, turnJson, argument, calls / BLOCKS)));
  }
  const [js, rs] = [p50us(samples), p50us(rust)];
  console.log(`${op}: Node ${js.toFixed(1)} us, Rust ${rs.toFixed(1)} us (p50), ratio ${(js / rs).toFixed(2)}`);
}
host.close();
