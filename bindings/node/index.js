'use strict';
/**
 * Agent working memory that survives context compaction: the scratchpad host in-process.
 *
 * The same host as the Rust library and the `scratchpad` CLI: sandboxed WebAssembly components
 * (the embedded scratchpad and observations plugins by default), every limit, SQLite or
 * PostgreSQL. Every method returns a promise; the host works on its own threads, never on
 * JavaScript's.
 *
 *     const { Host } = require('@scratchpad-dev/host');
 *     const host = await Host.open('agent.db');
 *     await host.openSession('s1');
 *     const turn = { sessionId: 's1', turnId: 't1' };
 *     await host.callTool(turn, 'session.scratchpad', { action: 'set_plan', content: '1. Fix X' });
 *     const prompt = await host.beforeQuery({ sessionId: 's1', turnId: 't2' }, 'continue');
 *     const { system, user } = prompt.render('You are a coding agent.', 'continue');
 *
 * Recall: a session created in a project (`host.openSession('s2', { project: projectOfDir(repo) })`,
 * or any key of the caller's) starts, in its first prompt, from what earlier sessions of that
 * project saved; `host.recallSearch` and `host.recallPreview` show what is kept.
 */

const native = require('./native.js');

/** What starts the message of a host error from the addon (see src/lib.rs). */
const ERROR_PREFIX = 'scratchpad-error:';

/** Where an injection goes: around the system prompt, or around the user's message. */
const PLACEMENTS = Object.freeze(['prepend-system', 'append-system', 'prepend-context', 'append-context']);

/** Every error of the scratchpad host; `code` names its kind (`session-exists`, `closed`, …). */
class ScratchpadError extends Error {
  constructor(message, attributes = {}) {
    super(message);
    this.name = new.target.name;
    for (const [key, value] of Object.entries(attributes)) {
      if (key !== 'message') this[key] = value;
    }
  }
}
/** A tool refused the call: show the model `message`; `kind` is `invalid-arguments`, `rejected`, … */
class ToolError extends ScratchpadError {}
/** A plugin failed (trapped, broke a limit) or was refused at load; `plugin`, `hook`. */
class PluginError extends ScratchpadError {}
/** A plugin ran past its deadline. */
class PluginTimeout extends PluginError {}
/** The database failed. */
class StorageError extends ScratchpadError {}
/** No session has that id; `session`. */
class SessionNotFound extends ScratchpadError {}

const CLASSES = { ToolError, PluginError, PluginTimeout, StorageError, SessionNotFound, ScratchpadError };

/** The error a rejected addon call stands for: its class, or the error as it came. */
function raised(error) {
  const message = error && typeof error.message === 'string' ? error.message : '';
  if (!message.startsWith(ERROR_PREFIX)) return error;
  const detail = JSON.parse(message.slice(ERROR_PREFIX.length));
  const Class = CLASSES[detail.class] ?? ScratchpadError;
  return new Class(detail.message, detail.attributes);
}

/** Runs an addon call, its host errors raised as their classes. */
async function call(work) {
  try {
    return await work();
  } catch (error) {
    throw raised(error);
  }
}

/** A synchronous addon call, its host errors raised as their classes. */
function callSync(work) {
  try {
    return work();
  } catch (error) {
    throw raised(error);
  }
}

function typeName(value) {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value;
}

function str(name, value) {
  if (typeof value !== 'string') throw new TypeError(`${name} must be a string, not ${typeName(value)}`);
  return value;
}

function count(name, value) {
  if (value === undefined || value === null) return null;
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new TypeError(`${name} must be a non-negative integer or undefined, not ${typeName(value)} ${String(value)}`);
  }
  return value;
}

/** A turn as the host reads it: `{sessionId, turnId, tokensUsed?, contextWindow?}`. */
function turnJson(turn) {
  if (turn === null || typeof turn !== 'object' || Array.isArray(turn)) {
    throw new TypeError(`turn must be an object {sessionId, turnId}, not ${typeName(turn)}`);
  }
  return JSON.stringify({
    session_id: str('turn.sessionId', turn.sessionId),
    turn_id: str('turn.turnId', turn.turnId),
    tokens_used: count('turn.tokensUsed', turn.tokensUsed),
    context_window: count('turn.contextWindow', turn.contextWindow),
  });
}

/** A tool call's arguments as JSON text: an object, or JSON text already. */
function argumentsJson(value) {
  if (typeof value === 'string') return value;
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) return JSON.stringify(value);
  throw new TypeError(`arguments must be an object or a JSON string, not ${typeName(value)}`);
}

function stepNumber(value) {
  if (!Number.isSafeInteger(value) || value < 0 || value > 0xffffffff) {
    throw new TypeError(`step must be a non-negative integer, not ${typeName(value)} ${String(value)}`);
  }
  return value;
}

/**
 * Tools and the names a model sees for them: `prefix` + each tool's API name. The rules are
 * the host's (Rust), shared by every runtime. Two tools with one API name throw.
 */
class ToolNames {
  constructor(tools, prefix = '') {
    if (!Array.isArray(tools) || tools.some((t) => typeof t !== 'string')) {
      throw new TypeError(`tools must be an array of strings, not ${typeName(tools)}`);
    }
    str('prefix', prefix);
    this._native = callSync(() => native.NativeToolNames.create(tools, prefix));
  }

  /** @private from the host's own */
  static _of(handle) {
    const names = Object.create(ToolNames.prototype);
    names._native = handle;
    return names;
  }

  /** The name the model sees for `tool`, or null. */
  modelName(tool) {
    return this._native.modelName(str('tool', tool)) ?? null;
  }

  /** The tool behind a model-visible `name`, or null. */
  tool(name) {
    return this._native.tool(str('name', name)) ?? null;
  }

  /** `text` with each whole-word mention of a tool named as the model sees it. */
  rewrite(text) {
    return this._native.rewrite(str('text', text));
  }

  /** Every `[tool, modelName]`. */
  items() {
    return JSON.parse(this._native.items());
  }
}

/** `name` as model APIs accept it (`session.scratchpad` → `session_scratchpad`). */
function apiToolName(name) {
  return callSync(() => native.apiToolName(str('name', name)));
}

/**
 * The project of a working directory (absolute, existing): the root of the git checkout holding
 * it (a linked worktree's main checkout), else the directory itself. A coding agent's sessions
 * pass it as their `project`, so every session in one checkout shares one. A relative or
 * missing directory throws a `ScratchpadError` (code `invalid-input`).
 */
function projectOfDir(dir) {
  return callSync(() => native.projectOfDir(str('dir', dir)));
}

/** Throws a `ScratchpadError` (code `invalid-input`) unless `key` may name a project (1 to 1024 bytes, no control characters). */
function checkProject(key) {
  callSync(() => native.checkProject(str('project', key)));
}

/** The `project` of a session's options (`{project}`), or null. */
function projectOption(options) {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new TypeError(`options must be an object {project}, not ${typeName(options)}`);
  }
  const { project } = options;
  return project === undefined || project === null ? null : str('options.project', project);
}

/**
 * What `beforeQuery` returns: the injections around the user's untouched message (the
 * session's standing guidance among them, once), joined and rendered by the host's rules.
 */
class Prompt {
  constructor(injections) {
    /** `{plugin, placement, text}` each. */
    this.injections = injections;
  }

  _json() {
    return JSON.stringify(this.injections);
  }

  /** The texts of one placement, joined by blank lines. */
  text(placement) {
    return callSync(() => native.promptText(this._json(), str('placement', placement)));
  }

  /** The runtime's system prompt and the user's message with the injections around them. */
  render(systemPrompt, message) {
    str('systemPrompt', systemPrompt);
    str('message', message);
    return JSON.parse(callSync(() => native.renderPrompt(this._json(), systemPrompt, message)));
  }

  /** The system prompt with every injection, for a model call with no user message. */
  renderSystemOnly(systemPrompt) {
    return callSync(() => native.renderSystemOnly(this._json(), str('systemPrompt', systemPrompt)));
  }

  /** This prompt with each tool named as a model offered `names` (a `ToolNames`) sees it. */
  naming(names) {
    if (!(names instanceof ToolNames)) throw new TypeError('names must be a ToolNames');
    return new Prompt(this.injections.map((i) => ({ ...i, text: names.rewrite(i.text) })));
  }
}

function injections(text) {
  return JSON.parse(text).map((i) => ({ plugin: i.plugin, placement: i.placement, text: i.text }));
}

/** The scratchpad host over one database. Open it with `Host.open`; share it freely. */
class Host {
  /** @private use `Host.open` */
  constructor(handle) {
    this._native = handle;
  }

  /**
   * Opens the database at `location` (a SQLite file, created when missing, or a `postgres://`
   * URL) with the configuration file `config` (TOML, as the CLI's `--config`) and more
   * components `plugins` (files or `oci://` references, as `--plugin`).
   */
  static async open(location, options = {}) {
    str('location', location);
    if (options === null || typeof options !== 'object') {
      throw new TypeError(`options must be an object {config, plugins}, not ${typeName(options)}`);
    }
    const { config, plugins = [] } = options;
    if (config !== undefined && config !== null) str('options.config', config);
    if (!Array.isArray(plugins)) throw new TypeError(`options.plugins must be an array, not ${typeName(plugins)}`);
    plugins.forEach((p, i) => str(`options.plugins[${i}]`, p));
    return new Host(await call(() => native.open(location, config ?? null, plugins)));
  }

  /** The loaded plugins, each with its name, tools and limits. */
  plugins() {
    try {
      return JSON.parse(this._native.plugins());
    } catch (error) {
      throw raised(error);
    }
  }

  /**
   * The loaded tools as a model sees them: `prefix` + each tool's API name, for the texts that
   * name them (`ToolNames.rewrite`, `Prompt.naming`).
   */
  toolNames(prefix = '') {
    str('prefix', prefix);
    return ToolNames._of(callSync(() => this._native.toolNames(prefix)));
  }

  /**
   * Creates the session (a `ScratchpadError` with code `session-exists` when it exists): its
   * standing guidance. `options.project` (a key: `projectOfDir` of the agent's working
   * directory, or any name the caller chooses) is what recall keeps the session's findings
   * under; the session's first prompt holds what earlier sessions of the project left. Without
   * one the session recalls nothing and is recalled by nothing.
   */
  async createSession(sessionId, options = {}) {
    str('sessionId', sessionId);
    const project = projectOption(options);
    return injections(await call(() => this._native.createSession(sessionId, project)));
  }

  /** The session, created (in `options.project`) when missing: its standing guidance. A session that exists keeps its project. */
  async openSession(sessionId, options = {}) {
    str('sessionId', sessionId);
    const project = projectOption(options);
    return injections(await call(() => this._native.openSession(sessionId, project)));
  }

  /**
   * The tools offered to the model in `turn`: `{plugin, name, apiName, description, parameters}`,
   * parameters a JSON Schema. Offer each as `apiName` (the name model APIs accept); the host
   * takes either name.
   */
  async tools(turn) {
    const t = turnJson(turn);
    const specs = JSON.parse(await call(() => this._native.tools(t)));
    return specs.map((s) => ({
      plugin: s.plugin,
      name: s.name,
      apiName: s.api_name,
      description: s.description,
      parameters: JSON.parse(s.parameters || '{}'),
    }));
  }

  /** Runs the plugins' tool `name`: its output text. A refusal rejects with `ToolError`; nothing is stored then. */
  async callTool(turn, name, args) {
    const t = turnJson(turn);
    str('name', name);
    const a = argumentsJson(args);
    return call(() => this._native.callTool(t, name, a));
  }

  /**
   * Every plugin's `before-tool-call` on the agent's tool call (step `step`, 1-based, of the
   * turn): the arguments to run it with. A plugin that blocks it rejects with `ToolError`.
   */
  async beforeToolCall(turn, name, args, step) {
    const t = turnJson(turn);
    str('name', name);
    const a = argumentsJson(args);
    stepNumber(step);
    return JSON.parse(await call(() => this._native.beforeToolCall(t, name, a, step)));
  }

  /**
   * Every plugin's `after-tool-result`: what the model should see instead of `result` (the
   * large-observation store's synthetic observation for a large one), or null.
   */
  async afterToolResult(turn, name, args, step, result, metadata = {}) {
    const t = turnJson(turn);
    str('name', name);
    const a = argumentsJson(args);
    stepNumber(step);
    let bytes;
    if (typeof result === 'string') bytes = Buffer.from(result, 'utf8');
    else if (result instanceof Uint8Array) bytes = Buffer.from(result.buffer, result.byteOffset, result.byteLength);
    else throw new TypeError(`result must be a string or a Uint8Array, not ${typeName(result)}`);
    if (metadata === null || typeof metadata !== 'object' || Array.isArray(metadata)) {
      throw new TypeError(`metadata must be an object, not ${typeName(metadata)}`);
    }
    const m = JSON.stringify(metadata);
    return (await call(() => this._native.afterToolResult(t, name, a, step, bytes, m))) ?? null;
  }

  /** Every plugin's `after-response` on the turn's final reply. */
  async afterResponse(turn, text) {
    const t = turnJson(turn);
    str('text', text);
    await call(() => this._native.afterResponse(t, text));
  }

  /** The injections for the user's `message` (which is never changed), as a `Prompt`. */
  async beforeQuery(turn, message) {
    const t = turnJson(turn);
    str('message', message);
    return new Prompt(injections(await call(() => this._native.beforeQuery(t, message))));
  }

  /** The warnings to give the model before the runtime compacts, as texts. */
  async beforeCompaction(turn) {
    const t = turnJson(turn);
    return JSON.parse(await call(() => this._native.beforeCompaction(t))).map((w) => w.text);
  }

  /** Tells the plugins the runtime compacted the conversation. */
  async afterCompaction(turn) {
    const t = turnJson(turn);
    await call(() => this._native.afterCompaction(t));
  }

  /** The session's record (its `project` among its fields) and every plugin's stored state. */
  async show(sessionId) {
    str('sessionId', sessionId);
    return JSON.parse(await call(() => this._native.show(sessionId)));
  }

  /**
   * What the sessions of `project` left that matches `query` (words), best first within each
   * plugin, at most `options.limit` (1 to 50, default 10) per plugin: `{document: {project,
   * plugin, id, kind, title, text, at_ms, session}, snippet, score}` each. Private spans and
   * secrets were removed before anything was kept.
   */
  async recallSearch(project, query, options = {}) {
    str('project', project);
    str('query', query);
    if (options === null || typeof options !== 'object' || Array.isArray(options)) {
      throw new TypeError(`options must be an object {limit}, not ${typeName(options)}`);
    }
    const { limit = 10 } = options;
    if (!Number.isSafeInteger(limit) || limit < 0 || limit > 0xffffffff) {
      throw new TypeError(`options.limit must be a non-negative integer, not ${typeName(limit)} ${String(limit)}`);
    }
    return JSON.parse(await call(() => this._native.recallSearch(project, query, limit)));
  }

  /**
   * What a new session of `project` would receive in its first prompt for `message` (earlier
   * sessions' findings among it), as a `Prompt`. Nothing is read of any session and nothing is
   * written.
   */
  async recallPreview(project, message = '') {
    str('project', project);
    str('message', message);
    return new Prompt(injections(await call(() => this._native.recallPreview(project, message))));
  }

  /**
   * Lets the host go: later calls reject with a `ScratchpadError` (code `closed`); calls
   * already running finish, then the database closes.
   */
  close() {
    this._native.close();
  }
}

module.exports = {
  Host,
  Prompt,
  ToolNames,
  apiToolName,
  projectOfDir,
  checkProject,
  PLACEMENTS,
  ScratchpadError,
  ToolError,
  PluginError,
  PluginTimeout,
  StorageError,
  SessionNotFound,
};
