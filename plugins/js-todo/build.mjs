// Builds the todo list into a WebAssembly component of the `plugin` world in ../../wit.
//
//   node plugins/js-todo/build.mjs [OUT.wasm]   (default: target/third-party/js_todo.wasm)
//
// Uses the ComponentizeJS library API: `jco componentize` (jco 1.35.0) fails on this
// project's Node with "failed to get path metadata" for any WIT path, the library does not.
// The versions are pinned by package-lock.json (`npm install --no-save` in this directory installs exactly them).
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, "../..");
const out = resolve(process.argv[2] ?? join(root, "target/third-party/js_todo.wasm"));

let componentize;
try {
  ({ componentize } = await import("@bytecodealliance/componentize-js"));
} catch (error) {
  console.error(`@bytecodealliance/componentize-js is not installed: run \`npm install --no-save\` in ${here} (${error.message})`);
  process.exit(1);
}
const { component } = await componentize({
  sourcePath: join(here, "todo.js"),
  witPath: join(root, "wit"),
  worldName: "plugin",
  // No fetch(), no incoming HTTP handler: the host grants no network, and the `plugin` world
  // imports no wasi:http. Clocks, random and stdio stay (the host provides them).
  disableFeatures: ["http", "fetch-event"],
});
await mkdir(dirname(out), { recursive: true });
await writeFile(out, component);
console.log(`wrote ${out} (${component.length} bytes)`);
