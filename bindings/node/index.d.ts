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
  createSession(sessionId: string): Promise<Injection[]>;
  openSession(sessionId: string): Promise<Injection[]>;
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
