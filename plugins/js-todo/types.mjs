// Regenerates types/, the TypeScript declarations of the `plugin` world as a plugin sees it
// (what each `scratchpad:plugin/...` import provides, what `lifecycle`, `hooks` and `tools`
// must export), for editors and `tsc --checkJs`.
//
//   node plugins/js-todo/types.mjs COMPONENT.wasm     (a component built by build.mjs)
//
// Why from a built component and not from wit/: `jco types` fails on this project's Node
// with "failed to get path metadata" for any WIT path (the same bug as `jco componentize`),
// while `jco transpile` reads the component's bytes itself and emits the same declarations.
// The output is small and changes only with wit/, so it is checked in for authors.
import { mkdir, rm, writeFile } from "node:fs/promises";
import { readFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { transpile } from "@bytecodealliance/jco";

const here = dirname(fileURLToPath(import.meta.url));
const component = process.argv[2];
if (!component) {
  console.error("usage: node types.mjs COMPONENT.wasm");
  process.exit(2);
}
const { files } = await transpile(await readFile(component), { name: "plugin" });
const out = join(here, "types");
await rm(out, { recursive: true, force: true });
await mkdir(out, { recursive: true });
let count = 0;
for (const [path, bytes] of Object.entries(files)) {
  const name = basename(path);
  // Only the contract's interfaces: WASI's are the runtime's business, not the plugin's.
  if (!path.startsWith("interfaces/scratchpad-plugin-") || !name.endsWith(".d.ts")) continue;
  await writeFile(join(out, name), bytes);
  count += 1;
}
// jsconfig.json maps each `scratchpad:plugin/NAME@0.1.3` import to types/scratchpad-plugin-NAME.d.ts.
console.log(`wrote ${count} interfaces to ${out}`);
