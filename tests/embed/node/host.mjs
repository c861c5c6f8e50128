// A Node host for scratchpad plugin components, on jco (`@bytecodealliance/jco`).
//
// jco transpiles the component into JavaScript bindings plus core wasm modules; the host then
// instantiates them with what the `scratchpad:plugin/plugin` world imports (wit/): storage
// scoped to the component and the session of the call, cl100k_base token counts, logging, its
// configuration, and the observation handed to `after-tool-result`; WASI comes from
// @bytecodealliance/preview2-shim with nothing granted (no files, environment, arguments or
// network). Like the Rust host (host/src/host.rs), every call runs in a fresh instance, and its
// storage writes are committed when it returns (for a tool, only when it returns `ok`).
//
//   const host = await ScratchpadHost.open("scratchpad_guest.wasm", { config: {}, outDir: "target/jco" });
//   const guidance = host.createSession("s1");                   // system-prompt guidance
//   host.callTool("s1", "t1", "session.scratchpad", '{"action": "set_plan", "content": "1. Fix X"}');
//   const injections = host.beforeQuery("s1", "t2", "continue"); // [{placement, text}] for this turn

import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, readdir, rename, rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";

import { WASIShim } from "@bytecodealliance/preview2-shim/instantiation";
import { Tiktoken } from "js-tiktoken/lite";
import cl100k_base from "js-tiktoken/ranks/cl100k_base";

import { Scope, apply } from "./scope.mjs";

const QUOTA_BYTES = 8 << 20; // the Rust host's default storage quota per plugin per session
const MAX_READ_BYTES = 1 << 20; // the largest slice `observation.read` returns

export class LoadError extends Error {}

/** No tool of that name is declared by the component; it was not called. */
export class UnknownTool extends Error {}

/** A tool refused the call; nothing was changed. `variant` is the `tool-error` case. */
export class ToolError extends Error {
  constructor(variant, message) {
    super(`${variant}: ${message}`);
    this.variant = variant;
    this.detail = message;
  }
}

/**
 * Transpiles the component with jco into `outDir` (once per distinct component: the directory is
 * named after its SHA-256, and appears complete or not at all) and loads the bindings and the
 * compiled core modules.
 */
export async function transpileComponent(wasmPath, outDir) {
  const bytes = await readFile(wasmPath);
  const dir = join(outDir, createHash("sha256").update(bytes).digest("hex").slice(0, 16));
  if (!existsSync(dir)) {
    const { transpile } = await import("@bytecodealliance/jco"); // large: loaded only to transpile
    const { files } = await transpile(bytes, { name: "scratchpad", instantiation: "sync", quiet: true });
    await mkdir(outDir, { recursive: true });
    const partial = await mkdtemp(`${dir}.partial-`);
    for (const [name, content] of Object.entries(files)) {
      await mkdir(dirname(join(partial, name)), { recursive: true });
      await writeFile(join(partial, name), content);
    }
    // Another process may have finished the same transpile first: then keep its copy.
    await rename(partial, dir).catch(() => rm(partial, { recursive: true, force: true }));
  }
  const modules = new Map();
  for (const name of (await readdir(dir)).filter((file) => file.endsWith(".wasm"))) {
    modules.set(name, new WebAssembly.Module(await readFile(join(dir, name))));
  }
  const { instantiate } = await import(pathToFileURL(join(dir, "scratchpad.js")).href);
  return { instantiate, modules };
}

let cl100k;
const tokenizer = () => (cl100k ??= new Tiktoken(cl100k_base)); // ranks ship in the package

/** A tool result held by the host (wit/observation.wit). */
export class Observation {
  constructor(bytes, metadata = {}) {
    this.bytes = bytes;
    this.text = textOf(bytes);
    this.meta = JSON.stringify(metadata);
  }
  size() {
    return BigInt(this.bytes.length);
  }
  kind() {
    return this.text === null ? "binary" : "text";
  }
  read(offset, len) {
    const start = Number(offset < BigInt(this.bytes.length) ? offset : BigInt(this.bytes.length));
    return this.bytes.slice(start, start + Math.min(len, MAX_READ_BYTES));
  }
  sizeChars() {
    return BigInt(this.text === null ? this.bytes.length : [...this.text].length);
  }
  sha256() {
    return createHash("sha256").update(this.bytes).digest("hex");
  }
  metadata() {
    return this.meta;
  }
}

function noHostSupport(what) {
  throw new Error(`this host has no ${what}`);
}

function textOf(bytes) {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return null;
  }
}

export class ScratchpadHost {
  static async open(wasmPath, { config = {}, outDir, quotaBytes = QUOTA_BYTES }) {
    const { instantiate, modules } = await transpileComponent(wasmPath, outDir);
    return new ScratchpadHost(instantiate, modules, config, quotaBytes);
  }

  constructor(instantiate, modules, config, quotaBytes = QUOTA_BYTES) {
    this.quotaBytes = quotaBytes;
    this.instantiate = instantiate;
    this.modules = modules;
    this.configJson = JSON.stringify(config);
    this.sessions = new Map(); // id -> { turnId, turnIndex, state: Map<key, Uint8Array> }
    this.call = null; // the scope of the call in progress
    const sandbox = { preopens: {}, env: {}, args: [], enableNetwork: false }; // grants nothing
    this.imports = { ...new WASIShim({ sandbox }).getImportObject(), ...this.pluginImports() };
    try {
      this.manifest = this.run(new Scope(new Map(), this.quotaBytes), (p) => p.lifecycle.load()).tools.map((t) => t.name);
    } catch (error) {
      if (error.payload === undefined) throw error;
      throw new LoadError(error.payload);
    }
  }

  /** What the `plugin` world imports, besides WASI. Each call sees its own scope. */
  pluginImports() {
    const scope = () => this.call;
    return {
      "scratchpad:plugin/storage": {
        get: (key) => scope().get(key),
        set: (key, value) => scope().set(key, value),
        delete: (key) => scope().delete(key),
        keys: (prefix) => scope().keys(prefix),
      },
      "scratchpad:plugin/tokens": {
        count: (text) => tokenizer().encode(text, [], []).length,
        encoding: () => "cl100k_base",
      },
      "scratchpad:plugin/log": { log: (level, message) => console.error(`[plugin ${level}] ${message}`) },
      "scratchpad:plugin/config": { get: () => this.configJson },
      // No summarizer and no project: no checkpoint is ever written, and the session has no
      // search index (recall answers `none`, as the Rust host's does for a session without a
      // project). A call that writes or searches anyway traps.
      "scratchpad:plugin/checkpoints": {
        available: () => false,
        request: () => noHostSupport("a checkpoint"),
        latest: () => undefined,
      },
      "scratchpad:plugin/index": {
        currentAccess: () => "none",
        put: () => noHostSupport("a search index"),
        remove: () => noHostSupport("a search index"),
        get: () => noHostSupport("a search index"),
        search: () => noHostSupport("a search index"),
        recent: () => noHostSupport("a search index"),
      },
      "scratchpad:plugin/observation": { Observation },
    };
  }

  /** Runs `f` on a fresh instance whose storage is `scope`. */
  run(scope, f) {
    this.call = scope;
    try {
      return f(this.instantiate((name) => this.modules.get(name), this.imports));
    } finally {
      this.call = null;
    }
  }

  /** Runs `f` on `sessionId`'s state and commits the writes when `commits(result)`. */
  sessionCall(sessionId, f, commits = () => true) {
    const session = this.sessions.get(sessionId);
    if (!session) throw new Error(`session \`${sessionId}\` does not exist`);
    const scope = new Scope(session.state, this.quotaBytes);
    let result;
    try {
      result = { ok: true, value: this.run(scope, f) };
    } catch (error) {
      if (error.payload === undefined) throw error; // a trap: nothing is kept
      result = { ok: false, error: error.payload }; // an `err` value returned by the export
    }
    if (commits(result)) apply(session.state, scope.writes);
    if (!result.ok) throw new ToolError(result.error.tag, result.error.val);
    return result.value;
  }

  /** The contract's `turn`: a new turn id starts the next turn index (from 0). */
  turn(sessionId, turnId) {
    const session = this.sessions.get(sessionId);
    if (!session) throw new Error(`session \`${sessionId}\` does not exist`);
    if (session.turnId !== turnId) {
      session.turnId = turnId;
      session.turnIndex += 1;
    }
    return { sessionId, turnId, turnIndex: session.turnIndex, tokensUsed: undefined, contextWindow: undefined };
  }

  /**
   * Creates a session; returns the standing guidance as [{placement, text}].
   * `origin`: {kind: "new"}, {kind: "spawn", parent, copy} or {kind: "fork", parent}.
   */
  createSession(sessionId, origin = { kind: "new" }) {
    if (this.sessions.has(sessionId)) throw new Error(`session \`${sessionId}\` already exists`);
    const parent = origin.parent;
    if (parent !== undefined && !this.sessions.has(parent)) throw new Error(`parent session \`${parent}\` does not exist`);
    const wit = {
      new: { tag: "new" },
      spawn: { tag: "spawn", val: { parent, copyRequested: origin.copy } },
      fork: { tag: "fork", val: parent },
    }[origin.kind];
    const scope = new Scope(new Map(), this.quotaBytes); // the hook sees empty storage
    const setup = this.run(scope, (p) => p.hooks.beforeSessionCreate({ sessionId, origin: wit }));
    const inherit = parent !== undefined && setup.inheritParentState;
    const state = new Map(inherit ? this.sessions.get(parent).state : []);
    apply(state, scope.writes); // the hook's writes go over the copy
    this.sessions.set(sessionId, { turnId: null, turnIndex: -1, state });
    return setup.injections;
  }

  /** The tools offered in this turn (names). */
  tools(sessionId, turnId) {
    const turn = this.turn(sessionId, turnId);
    return this.sessionCall(sessionId, (p) => p.tools.listTools(turn)).map((t) => t.name);
  }

  /** Runs a tool; returns what the model sees, or throws ToolError (nothing changed). */
  callTool(sessionId, turnId, name, args) {
    if (!this.manifest.includes(name)) throw new UnknownTool(name);
    const turn = this.turn(sessionId, turnId);
    return this.sessionCall(sessionId, (p) => p.tools.callTool(turn, name, args), (r) => r.ok).content;
  }

  /** This turn's injections as [{placement, text}]; the message is never changed. */
  beforeQuery(sessionId, turnId, message) {
    const turn = this.turn(sessionId, turnId);
    return this.sessionCall(sessionId, (p) => p.hooks.beforeQuery(turn, message));
  }

  afterResponse(sessionId, turnId, text) {
    const turn = this.turn(sessionId, turnId);
    this.sessionCall(sessionId, (p) => p.hooks.afterResponse(turn, text));
  }

  /** The warning turn to send before compacting, or null. */
  beforeCompaction(sessionId, turnId) {
    const turn = this.turn(sessionId, turnId);
    return this.sessionCall(sessionId, (p) => p.hooks.beforeCompaction(turn)) ?? null;
  }

  afterCompaction(sessionId, turnId) {
    const turn = this.turn(sessionId, turnId);
    this.sessionCall(sessionId, (p) => p.hooks.afterCompaction(turn));
  }

  /** What the model should see of a tool's result (`call`: {name, arguments, step}): a replacement, or null. */
  afterToolResult(sessionId, turnId, call, bytes, metadata = {}) {
    const turn = this.turn(sessionId, turnId);
    const observation = new Observation(bytes, metadata);
    return this.sessionCall(sessionId, (p) => p.hooks.afterToolResult(turn, call, observation)) ?? null;
  }

  /** Every key the component stores for the session. */
  state(sessionId) {
    return new Map(this.sessions.get(sessionId).state);
  }
}
