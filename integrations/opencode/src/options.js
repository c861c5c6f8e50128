// The plugin's options (the second element of its entry in opencode.json's `plugin` array) as
// the command line of `scratchpad serve`.

import { homedir } from "node:os";
import { resolve } from "node:path";

const KEYS = ["binary", "database", "config", "requestTimeoutMs"];

/** The plugin's options as `scratchpad serve`'s command line, or an Error naming every bad key. */
export function resolveOptions(raw, env = process.env) {
  const options = raw ?? {};
  if (typeof options !== "object" || Array.isArray(options)) throw new Error("scratchpad plugin options: expected an object");
  const problems = Object.keys(options).filter((key) => !KEYS.includes(key)).map((key) => `unknown key \`${key}\``);
  for (const key of ["binary", "database", "config"]) {
    if (options[key] !== undefined && (typeof options[key] !== "string" || options[key] === "")) {
      problems.push(`\`${key}\` must be a non-empty string`);
    }
  }
  const timeout = options.requestTimeoutMs;
  if (timeout !== undefined && !(Number.isInteger(timeout) && timeout >= 100)) {
    problems.push("`requestTimeoutMs` must be an integer >= 100");
  }
  if (problems.length > 0) throw new Error(`scratchpad plugin options: ${problems.join("; ")}`);
  const path = (value) => resolve(value.replace(/^~(?=$|\/)/, env.HOME || homedir()));
  const args = [];
  if (options.database) args.push("--db", path(options.database));
  if (options.config) args.push("--config", path(options.config));
  return { binary: options.binary ?? env.SCRATCHPAD_BIN ?? "scratchpad", args, requestTimeoutMs: timeout ?? 15000 };
}
