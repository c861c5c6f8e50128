// Types of @scratchpad-dev/host/ai-sdk (ai-sdk.mjs). Checked by `tsc --strict` in the
// package's tests (test/types.ts).
import type { LanguageModelMiddleware, ToolSet, wrapLanguageModel } from 'ai';
import type { Host, Turn as TurnContext } from './index.js';

/** The API-safe form of a plugin's tool name (`session.scratchpad` → `session_scratchpad`). */
export declare function apiToolName(name: string): string;

export interface ScratchpadOptions {
  /** The host's session: the caller's id for the conversation. */
  sessionId: string;
  /**
   * The project the session is created in when it is new (recall: its first model call holds
   * what earlier sessions of the project saved): `projectOfDir(dir)` or any key. Default none.
   */
  project?: string | null;
  /** Host failures reject instead of being reported to `onError` (default false). */
  strict?: boolean;
  /** Where host failures go when not strict (default: `console.warn`). */
  onError?: (error: unknown, hook: string) => void;
}

export interface TurnOptions<TOOLS extends ToolSet> {
  /** The caller's tools; each one's `execute` runs between the plugins' tool-call hooks. */
  tools?: TOOLS;
  /** The turn's id (default: a fresh one). */
  turnId?: string;
  /** The model's context window in tokens, when known. */
  contextWindow?: number;
}

/** A session's scratchpad in the AI SDK. */
export declare class Scratchpad {
  constructor(host: Host, options: ScratchpadOptions);
  readonly host: Host;
  readonly sessionId: string;
  readonly project: string | null;
  turn<TOOLS extends ToolSet = {}>(options?: TurnOptions<TOOLS>): Promise<Turn<TOOLS>>;
}

/** One run of the agent loop. */
export declare class Turn<TOOLS extends ToolSet = ToolSet> {
  private constructor();
  readonly context: TurnContext;
  /** The caller's tools and the plugins', for `generateText`'s or `streamText`'s `tools`. */
  readonly tools: TOOLS & ToolSet;
  /** The middleware adding the injections to each model call and choosing the tools offered. */
  readonly middleware: LanguageModelMiddleware;
  /** `model` wrapped with `middleware` (`wrapLanguageModel`). */
  model(model: Parameters<typeof wrapLanguageModel>[0]['model']): ReturnType<typeof wrapLanguageModel>;
  /** Ends the turn: its final reply to the plugins' `after-response`. */
  finish(text: string): Promise<void>;
}
