// The plugin's settings (OpenClaw's `plugins.entries.scratchpad.config`) turned into the
// command line of `scratchpad serve`: defaults, validation with one message naming every bad
// key, and the host's TOML config file for the components.

import { createHash } from "node:crypto";
import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";

const KEYS = ["binary", "database", "cacheDir", "components", "requestTimeoutMs", "spawnCopiesState"];
const COMPONENT_KEYS = ["name", "path", "config", "limits", "grants", "publisher", "allowUnsigned"];
const LIMIT_KEYS = [
  "call_timeout_ms",
  "memory_bytes",
  "storage_quota_bytes",
  "output_bytes",
  "blob_quota_bytes",
  "storage_max_keys",
  "blob_max_ttl_seconds",
];

/** The settings with their defaults, or an Error naming every offending key. */
export function resolveConfig(raw = {}, env = process.env) {
  const problems = [];
  const config = raw ?? {};
  if (typeof config !== "object" || Array.isArray(config)) {
    throw new Error("scratchpad plugin config: expected an object");
  }
  for (const key of Object.keys(config)) {
    if (!KEYS.includes(key)) problems.push(`unknown key \`${key}\``);
  }
  const string = (key) => {
    if (config[key] !== undefined && (typeof config[key] !== "string" || config[key] === "")) {
      problems.push(`\`${key}\` must be a non-empty string`);
    }
  };
  ["binary", "database", "cacheDir"].forEach(string);
  const timeout = config.requestTimeoutMs;
  if (timeout !== undefined && !(Number.isInteger(timeout) && timeout >= 100)) {
    problems.push("`requestTimeoutMs` must be an integer >= 100");
  }
  if (config.spawnCopiesState !== undefined && typeof config.spawnCopiesState !== "boolean") {
    problems.push("`spawnCopiesState` must be a boolean");
  }
  const components = config.components;
  if (components !== undefined) {
    if (!Array.isArray(components) || components.length === 0) {
      problems.push("`components` must be a non-empty array");
    } else {
      components.forEach((component, i) => checkComponent(component, `components[${i}]`, problems));
    }
  }
  if (problems.length > 0) {
    throw new Error(`scratchpad plugin config: ${problems.join("; ")}`);
  }
  const stateDir = env.OPENCLAW_STATE_DIR || join(env.HOME || homedir(), ".openclaw");
  return {
    binary: config.binary ?? env.SCRATCHPAD_BIN ?? "scratchpad",
    database: resolve(config.database ?? join(stateDir, "scratchpad", "scratchpad.db")),
    cacheDir: config.cacheDir ? resolve(config.cacheDir) : undefined,
    components: components?.map((c) => ({ ...c, path: c.path && !c.path.startsWith("oci://") ? resolve(c.path) : c.path })),
    requestTimeoutMs: timeout ?? 15000,
    spawnCopiesState: config.spawnCopiesState ?? false,
  };
}

function checkComponent(component, where, problems) {
  if (!component || typeof component !== "object" || Array.isArray(component)) {
    problems.push(`\`${where}\` must be an object`);
    return;
  }
  for (const key of Object.keys(component)) {
    if (!COMPONENT_KEYS.includes(key)) problems.push(`unknown key \`${where}.${key}\``);
  }
  if (typeof component.name !== "string" || component.name === "") {
    problems.push(`\`${where}.name\` must be a non-empty string`);
  }
  if (component.path !== undefined && (typeof component.path !== "string" || component.path === "")) {
    problems.push(`\`${where}.path\` must be a non-empty string`);
  }
  if (component.grants !== undefined && !(Array.isArray(component.grants) && component.grants.every((g) => typeof g === "string"))) {
    problems.push(`\`${where}.grants\` must be an array of power names`);
  }
  if (component.publisher !== undefined && (typeof component.publisher !== "string" || component.publisher === "")) {
    problems.push(`\`${where}.publisher\` must be a non-empty string`);
  }
  if (component.allowUnsigned !== undefined && typeof component.allowUnsigned !== "boolean") {
    problems.push(`\`${where}.allowUnsigned\` must be a boolean`);
  }
  for (const key of ["config", "limits"]) {
    const value = component[key];
    if (value !== undefined && (value === null || typeof value !== "object" || Array.isArray(value))) {
      problems.push(`\`${where}.${key}\` must be an object`);
    }
  }
  for (const [key, value] of Object.entries(component.limits ?? {})) {
    if (!LIMIT_KEYS.includes(key)) problems.push(`unknown key \`${where}.limits.${key}\``);
    else if (!(Number.isInteger(value) && value > 0)) problems.push(`\`${where}.limits.${key}\` must be a positive integer`);
  }
}

/**
 * The global options for every `scratchpad` command this plugin runs. The components, when
 * configured, go into a TOML file beside the database named by its content's hash, so every
 * process (OpenClaw evaluates the plugin module several times) agrees on it without races.
 */
export function hostArgs(config) {
  mkdirSync(dirname(config.database), { recursive: true });
  const args = ["--db", config.database];
  const toml = hostToml(config);
  if (toml) {
    const hash = createHash("sha256").update(toml).digest("hex").slice(0, 16);
    const file = join(dirname(config.database), `.openclaw-host-${hash}.toml`);
    const temporary = `${file}.${process.pid}.tmp`;
    writeFileSync(temporary, toml);
    renameSync(temporary, file);
    args.push("--config", file);
  }
  return args;
}

/** The host's TOML config (cache dir, components), or "" when the defaults apply. */
export function hostToml(config) {
  const lines = [];
  if (config.cacheDir) lines.push(`cache_dir = ${tomlValue(config.cacheDir)}`);
  for (const component of config.components ?? []) {
    lines.push("", "[[plugin]]", `name = ${tomlValue(component.name)}`);
    if (component.path) lines.push(`path = ${tomlValue(component.path)}`);
    if (component.grants) lines.push(`grants = ${tomlValue(component.grants)}`);
    if (component.publisher) lines.push(`publisher = ${tomlValue(component.publisher)}`);
    if (component.allowUnsigned) lines.push("allow_unsigned = true");
    if (component.config) lines.push(`config = ${tomlValue(component.config)}`);
    if (component.limits) lines.push(`limits = ${tomlValue(component.limits)}`);
  }
  return lines.length > 0 ? `${lines.join("\n")}\n` : "";
}

/** A JSON value as TOML (inline tables and arrays); null has no TOML form. */
export function tomlValue(value, where = "config") {
  if (typeof value === "string") return JSON.stringify(value); // JSON string escapes are valid TOML
  if (typeof value === "boolean") return String(value);
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new Error(`scratchpad plugin config: \`${where}\` is not a finite number`);
    return String(value);
  }
  if (Array.isArray(value)) return `[${value.map((v, i) => tomlValue(v, `${where}[${i}]`)).join(", ")}]`;
  if (value && typeof value === "object") {
    const entries = Object.entries(value).map(([k, v]) => `${JSON.stringify(k)} = ${tomlValue(v, `${where}.${k}`)}`);
    return `{ ${entries.join(", ")} }`;
  }
  throw new Error(`scratchpad plugin config: \`${where}\` is null, which a component config cannot hold`);
}
