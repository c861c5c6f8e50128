// Types of @scratchpad-dev/host (index.js, index.mjs). Checked by `tsc --strict` in the
// package's tests (test/types.ts).

/** Where an injection goes: around the system prompt, or around the user's message. */
export type Placement = 'prepend-system' | 'append-system' | 'prepend-context' | 'append-context';
export declare const PLACEMENTS: readonly Placement[];

/** One turn of a session: the runtime's ids, and the context pressure when known. */
export interface Turn {
  sessionId: string;
  turnId: string;
  tokensUsed?: number | null;
  contextWindow?: number | null;
}

/** Text a plugin places in the prompt. */
export interface Injection {
  plugin: string;
  placement: Placement;
  text: string;
}

/** A tool the plugins offer the model; `parameters` is its JSON Schema. */
export interface ToolSpec {
  plugin: string;
  name: string;
  /** The name model APIs accept: offer the tool under it (the host takes either name). */
  apiName: string;
  description: string;
  parameters: Record<string, unknown>;
}

/** A loaded plugin: its name, declared tools (parameters as JSON Schema text) and limits. */
export interface PluginSummary {
  name: string;
  tools: Array<{ name: string; api_name: string; description: string; parameters: string }>;
  call_timeout_ms: number;
  memory_bytes: number;
  [limit: string]: unknown;
}

/** A tool call's arguments: an object, or JSON text. */
export type Arguments = Record<string, unknown> | string;

/** What `beforeQuery` returns: the injections around the user's untouched message. */
export declare class Prompt {
  readonly injections: Injection[];
  /** The texts of one placement, joined by blank lines. */
  text(placement: Placement): string;
  /** The runtime's system prompt and the user's message with the injections around them. */
  render(systemPrompt: string, message: string): { system: string; user: string };
  /** The system prompt with every injection, for a model call with no user message. */
  renderSystemOnly(systemPrompt: string): string;
  /** This prompt with each tool named as a model offered `names` sees it. */
  naming(names: ToolNames): Prompt;
}

/** Tools and the names a model sees for them: `prefix` + each tool's API name. */
export declare class ToolNames {
  /** Throws when two tools map to one API name, or a name is empty. */
  constructor(tools: string[], prefix?: string);
  /** The name the model sees for `tool`, or null. */
  modelName(tool: string): string | null;
  /** The tool behind a model-visible `name`, or null. */
  tool(name: string): string | null;
  /** `text` with each whole-word mention of a tool named as the model sees it. */
  rewrite(text: string): string;
  /** Every `[tool, modelName]`. */
  items(): [string, string][];
}

/** `name` as model APIs accept it (`session.scratchpad` → `session_scratchpad`). */
export declare function apiToolName(name: string): string;

/**
 * The project of a working directory (absolute, existing): the root of the git checkout holding
 * it (a linked worktree's main checkout), else the directory itself.
 */
export declare function projectOfDir(dir: string): string;
/** Throws unless `key` may name a project (1 to 1024 bytes, no control characters). */
export declare function checkProject(key: string): void;

export interface SessionOptions {
  /**
   * The project the session belongs to (recall: its first prompt holds what earlier sessions of
   * the project saved). `projectOfDir(dir)` for an agent's working directory, or any key.
   */
  project?: string | null;
}

/** A document of a project's recall index. */
export interface IndexedDocument {
  project: string;
  plugin: string;
  id: string;
  /** What it is (`plan`, `note`, …). */
  kind: string;
  title: string;
  /** Its text as kept (private spans removed, secrets redacted). */
  text: string;
  /** When what it records happened, Unix milliseconds. */
  at_ms: number;
  /** The session whose call kept it. */
  session: string;
}

/** A document `recallSearch` found. */
export interface RecallHit {
  document: IndexedDocument;
  /** Its text around the first word that matched. */
  snippet: string;
  /** How well it matched within its plugin's answer (higher is better). */
  score: number;
}

export interface OpenOptions {
  /** A configuration file (TOML), as the CLI's `--config`. */
  config?: string | null;
  /** More components: files or `oci://` references, as the CLI's `--plugin`. */
  plugins?: string[];
}

/** The scratchpad host over one database. */
export declare class Host {
  private constructor();
  /** Opens the database at `location`: a SQLite file (created when missing) or a `postgres://` URL. */
  static open(location: string, options?: OpenOptions): Promise<Host>;
  plugins(): PluginSummary[];
  createSession(sessionId: string, options?: SessionOptions): Promise<Injection[]>;
  openSession(sessionId: string, options?: SessionOptions): Promise<Injection[]>;
  tools(turn: Turn): Promise<ToolSpec[]>;
  /** The loaded tools as a model sees them: `prefix` + each tool's API name. */
  toolNames(prefix?: string): ToolNames;
  callTool(turn: Turn, name: string, args: Arguments): Promise<string>;
  beforeToolCall(turn: Turn, name: string, args: Arguments, step: number): Promise<Record<string, unknown>>;
  afterToolResult(
    turn: Turn,
    name: string,
    args: Arguments,
    step: number,
    result: string | Uint8Array,
    metadata?: Record<string, unknown>,
  ): Promise<string | null>;
  afterResponse(turn: Turn, text: string): Promise<void>;
  beforeQuery(turn: Turn, message: string): Promise<Prompt>;
  beforeCompaction(turn: Turn): Promise<string[]>;
  afterCompaction(turn: Turn): Promise<void>;
  show(sessionId: string): Promise<{ session: Record<string, unknown>; state: Array<{ plugin: string; key: string; text: string }> }>;
  /** What the sessions of `project` left that matches `query`, at most `limit` (1 to 50, default 10) per plugin. */
  recallSearch(project: string, query: string, options?: { limit?: number }): Promise<RecallHit[]>;
  /** What a new session of `project` would receive in its first prompt for `message`. */
  recallPreview(project: string, message?: string): Promise<Prompt>;
  close(): void;
}

/** Every error of the scratchpad host; `code` names its kind. */
export declare class ScratchpadError extends Error {
  readonly code: string;
}
/** A tool refused the call: show the model `message`. */
export declare class ToolError extends ScratchpadError {
  readonly kind: 'unknown-tool' | 'invalid-arguments' | 'rejected' | 'not-found' | 'failed';
  readonly plugin: string;
  readonly tool: string;
}
/** A plugin failed (trapped, broke a limit) or was refused at load. */
export declare class PluginError extends ScratchpadError {
  readonly plugin: string;
  readonly hook?: string;
}
/** A plugin ran past its deadline. */
export declare class PluginTimeout extends PluginError {}
/** The database failed. */
export declare class StorageError extends ScratchpadError {}
/** No session has that id. */
export declare class SessionNotFound extends ScratchpadError {
  readonly session: string;
}
