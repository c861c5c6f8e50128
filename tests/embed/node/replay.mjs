// Replays the shared test vectors (tests/embed/vectors/scratchpad.json) through the Node host and
// compares every answer with the expected one, exactly.
//
//   node replay.mjs --wasm scratchpad_guest.wasm --vectors scratchpad.json --out target/embed/jco
//
// Prints each divergence, then `N passed, M failed` (vectors) and a last line
// `summary: {"host":"node","vectors":N,"steps":S,"failed":M}`. Exits 1 when any vector failed or
// when the file holds no vector.

import { isDeepStrictEqual, parseArgs } from "node:util";
import { readFile } from "node:fs/promises";

import { LoadError, ScratchpadHost, ToolError, UnknownTool, transpileComponent } from "./host.mjs";

const { values: args } = parseArgs({
  options: { wasm: { type: "string" }, vectors: { type: "string" }, out: { type: "string" } },
});
for (const name of ["wasm", "vectors", "out"]) {
  if (!args[name]) {
    console.error(`missing --${name}; usage: node replay.mjs --wasm FILE --vectors FILE --out DIR`);
    process.exit(2);
  }
}

/** The step's answer in the vectors' JSON shape. */
function runStep(host, step) {
  const { session, turn } = step;
  switch (step.op) {
    case "create_session":
      return { guidance: host.createSession(session, step.origin ?? { kind: "new" }) };
    case "tools":
      return { tools: host.tools(session, turn) };
    case "call_tool": {
      const text = step.arguments_text ?? JSON.stringify(step.arguments);
      try {
        return { ok: host.callTool(session, turn, step.name, text) };
      } catch (error) {
        if (error instanceof ToolError) return { error: { variant: error.variant, message: error.detail } };
        if (error instanceof UnknownTool) return { host_error: "unknown-tool" };
        throw error;
      }
    }
    case "before_query":
      return { injections: host.beforeQuery(session, turn, step.message) };
    case "after_response":
      return host.afterResponse(session, turn, step.text) ?? null;
    case "before_compaction":
      return { warning: host.beforeCompaction(session, turn) };
    case "after_compaction":
      return host.afterCompaction(session, turn) ?? null;
    case "after_tool_result": {
      const bytes = new TextEncoder().encode(step.observation);
      return { replacement: host.afterToolResult(session, turn, step.call, bytes) };
    }
    case "state": {
      const entries = [...host.state(session)].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      return { state: Object.fromEntries(entries.map(([k, v]) => [k, new TextDecoder().decode(v)])) };
    }
    default:
      throw new Error(`unknown op \`${step.op}\``);
  }
}

/** The divergences of one vector: [step index, expected, actual]. */
function replay(bindings, vector) {
  let steps = vector.steps;
  let host = null;
  let loaded;
  try {
    const quota = vector.limits?.storage_quota_bytes;
    host = new ScratchpadHost(bindings.instantiate, bindings.modules, vector.config, quota);
    loaded = { manifest: host.manifest };
  } catch (error) {
    if (!(error instanceof LoadError)) throw error;
    loaded = { load_error: error.message };
  }
  if (steps.length > 0 && steps[0].op === "load") {
    if (!isDeepStrictEqual(loaded, steps[0].expect)) return [[0, steps[0].expect, loaded]];
    steps = steps.slice(1);
  }
  if (host === null) return steps.length > 0 ? [[0, "the component to load", loaded]] : [];
  const failures = [];
  const offset = vector.steps.length - steps.length;
  for (const [i, step] of steps.entries()) {
    let actual;
    try {
      actual = runStep(host, step);
    } catch (error) {
      return [...failures, [offset + i, step.expect, `threw ${error?.name}: ${error?.message}`]];
    }
    if ("expect" in step && !isDeepStrictEqual(actual, step.expect)) failures.push([offset + i, step.expect, actual]);
  }
  return failures;
}

const { vectors } = JSON.parse(await readFile(args.vectors, "utf8"));
const bindings = await transpileComponent(args.wasm, args.out);
let failed = 0;
for (const vector of vectors) {
  const failures = replay(bindings, vector);
  if (failures.length > 0) failed += 1;
  for (const [index, expected, actual] of failures) {
    console.error(`DIVERGENCE in "${vector.name}", step ${index}:`);
    console.error(`  expected ${JSON.stringify(expected)}`);
    console.error(`  actual   ${JSON.stringify(actual)}`);
  }
}
const steps = vectors.reduce((n, v) => n + v.steps.length, 0);
console.log(`${vectors.length - failed} passed, ${failed} failed`);
console.log(`summary: ${JSON.stringify({ host: "node", vectors: vectors.length, steps, failed })}`);
process.exit(failed > 0 || vectors.length === 0 ? 1 : 0);
