// OpenClaw's hooks mapped onto the host API. Every decision is the components': this file only
// translates shapes (sessions, turns, steps, placements, tool names) and carries answers back.
//
// - OpenClaw's session key is the host's session id (created on first sight): it survives
//   compaction, which may rotate OpenClaw's physical session id. A new session is created in the
//   project of the agent's workspace directory (the host's `project_of_dir`: its git checkout),
//   so its first prompt holds what earlier sessions of that project left; a sub-agent's session
//   is in its requester's.
// - An OpenClaw run (`ctx.runId`) is one host turn; tool calls in it are numbered from 1 in the
//   order `before_tool_call` sees them, so `{{stepN.field}}` and the offloaded observations agree.

import { PLUGIN_FAILED, TOOL_REFUSED, describe } from "../../sidecar-js/sidecar.js";

const PLACEMENTS = {
  "prepend-system": "prependSystemContext",
  "append-system": "appendSystemContext",
  "prepend-context": "prependContext",
  "append-context": "appendContext",
};

export class Bridge {
  constructor({ sidecar, state, logger, spawnCopiesState }) {
    this.sidecar = sidecar;
    this.state = state;
    this.logger = logger;
    this.spawnCopiesState = spawnCopiesState;
    this.sessions = new Map(); // session id -> Promise of its standing guidance
    this.runs = new Map(); // session id -> { turnId, step, steps: Map(toolCallId -> step) }
  }

  /** The host session for an OpenClaw hook or tool context. */
  sessionOf(ctx) {
    return ctx?.sessionKey || ctx?.sessionId || "openclaw";
  }

  /**
   * Creates `session` on first sight (with `origin`; a new one in the project of `ctx`'s
   * workspace directory); resolves with its standing guidance.
   */
  ensureSession(session, ctx, origin = { kind: "new" }) {
    let created = this.sessions.get(session);
    if (!created) {
      created = this.create(session, origin, ctx?.workspaceDir);
      this.sessions.set(session, created);
      created.catch(() => this.sessions.delete(session)); // retried on the next sight
    }
    return created;
  }

  async create(session, origin, workspaceDir) {
    if (origin.kind !== "new") {
      await this.ensureSession(origin.parent);
      return this.sidecar.openSession(session, origin); // in its parent's project
    }
    return this.sidecar.openSession(session, origin, await this.projectOf(workspaceDir));
  }

  /** The project of a workspace directory, as the host decides it; null when there is none (logged). */
  async projectOf(dir) {
    if (typeof dir !== "string" || !dir) return null;
    try {
      return await this.sidecar.projectOfDir(dir);
    } catch (error) {
      this.logger.warn?.(`scratchpad: the session gets no project (recall is off for it): ${describe(error)}`);
      return null;
    }
  }

  /** The host turn of the session's current run (one of its own outside a run). */
  turn(session, extra = {}) {
    const run = this.runs.get(session);
    return { session_id: session, turn_id: run?.turnId ?? `openclaw-${Date.now()}`, ...extra };
  }

  /**
   * `before_prompt_build` → `before_query` (the session's guidance among its injections, once)
   * and any pending compaction warning, each tool named as the model is offered it.
   */
  async beforePromptBuild(event, ctx) {
    const session = this.sessionOf(ctx);
    const turnId = ctx.runId ?? `openclaw-${Date.now()}`;
    if (this.runs.get(session)?.turnId !== turnId) {
      this.runs.set(session, { turnId, step: 0, steps: new Map() });
    }
    const parts = { prependSystemContext: [], appendSystemContext: [], prependContext: [], appendContext: [] };
    let warnings = [];
    try {
      await this.ensureSession(session, ctx);
      warnings = this.state.warnings(session);
      parts.prependContext.push(...warnings);
      const message = event.currentUserMessage ?? event.prompt ?? "";
      const turn = this.turn(session, contextWindow(ctx));
      const { injections } = await this.sidecar.request("before_query", { turn, message, api_names: true });
      for (const [placement, list] of Object.entries(injections)) {
        for (const injection of list) parts[PLACEMENTS[placement]].push(injection.text);
      }
    } catch (error) {
      // The turn goes on without the components' context; the error names the plugin and hook.
      this.logger.error?.(`scratchpad: before_query for ${session} failed: ${describe(error)}`);
    }
    if (warnings.length > 0) this.state.dropWarnings(session, warnings.length);
    const result = {};
    for (const [key, texts] of Object.entries(parts)) if (texts.length > 0) result[key] = texts.join("\n\n");
    return result;
  }

  /** `before_tool_call` → `before_tool_call`: numbers the step, applies rewritten arguments. */
  async beforeToolCall(event, ctx) {
    const session = this.sessionOf(ctx);
    const run = this.runs.get(session);
    const step = run ? ++run.step : 1;
    if (run && event.toolCallId) run.steps.set(event.toolCallId, step);
    const text = JSON.stringify(event.params ?? {});
    const call = { name: event.toolName, arguments: text, step };
    try {
      await this.ensureSession(session, ctx);
      const { arguments: rewritten } = await this.sidecar.request("before_tool_call", { turn: this.turn(session), call });
      if (rewritten !== text) return { params: JSON.parse(rewritten) };
    } catch (error) {
      if (error.code === TOOL_REFUSED || error.code === PLUGIN_FAILED) {
        // e.g. `{{step9.content}}` with no step 9: the model reads why its call did not run.
        return { block: true, blockReason: describe(error) };
      }
      this.logger.error?.(`scratchpad: before_tool_call for ${session} failed: ${describe(error)}`);
    }
    return undefined;
  }

  /** A component's tool called by the model → `tools.call`; a refusal is thrown for the model. */
  async callTool(ctx, apiToolName, params) {
    const session = this.sessionOf(ctx);
    await this.ensureSession(session, ctx);
    try {
      const { content, plugin } = await this.sidecar.request("tools.call", {
        turn: this.turn(session),
        name: apiToolName,
        arguments: params ?? {},
        api_names: true,
      });
      return { content: [{ type: "text", text: content }], details: { plugin } };
    } catch (error) {
      throw new Error(describe(error));
    }
  }

  /** The tool-result middleware → `after_tool_result`: the model may see a replacement. */
  async afterToolResult(event, ctx) {
    const texts = (event.result?.content ?? []).filter((part) => part?.type === "text").map((part) => part.text);
    if (texts.length === 0) return undefined; // images and other media stay as they are
    const session = this.sessionOf(ctx);
    const run = this.runs.get(session);
    const step = run?.steps.get(event.toolCallId) ?? (run ? ++run.step : 1);
    const call = { name: event.toolName, arguments: JSON.stringify(event.args ?? {}), step };
    try {
      await this.ensureSession(session, ctx);
      const { replacement, replaced_by: replacedBy } = await this.sidecar.request("after_tool_result", {
        turn: this.turn(session),
        call,
        text: texts.join("\n"),
        kind: "text",
      });
      if (replacement === null || replacement === undefined) return undefined;
      const details = { ...(isObject(event.result.details) ? event.result.details : {}), scratchpadReplacedBy: replacedBy };
      return { result: { ...event.result, content: [{ type: "text", text: replacement }], details } };
    } catch (error) {
      this.logger.error?.(`scratchpad: after_tool_result for ${session} failed: ${describe(error)}`);
      return undefined;
    }
  }

  /** The run's final reply → `after_response` (nudges, plan detection). */
  async agentEnd(event, ctx) {
    const session = this.sessionOf(ctx);
    const text = lastAssistantText(event.messages ?? []);
    try {
      await this.ensureSession(session, ctx);
      await this.sidecar.request("after_response", { turn: this.turn(session, contextWindow(ctx)), text });
    } catch (error) {
      this.logger.error?.(`scratchpad: after_response for ${session} failed: ${describe(error)}`);
    }
  }

  /** `before_compaction` observes only: the warnings wait for the next prompt build. */
  async beforeCompaction(event, ctx) {
    const session = this.sessionOf(ctx);
    try {
      await this.ensureSession(session, ctx);
      const extra = { ...contextWindow(ctx), ...(Number.isInteger(event.tokenCount) ? { tokens_used: event.tokenCount } : {}) };
      const { warnings } = await this.sidecar.request("before_compaction", {
        turn: this.turn(session, extra),
        api_names: true,
      });
      this.state.addWarnings(session, warnings.map((warning) => warning.text));
    } catch (error) {
      this.logger.error?.(`scratchpad: before_compaction for ${session} failed: ${describe(error)}`);
    }
  }

  async afterCompaction(_event, ctx) {
    const session = this.sessionOf(ctx);
    try {
      await this.ensureSession(session, ctx);
      await this.sidecar.request("after_compaction", { turn: this.turn(session) });
    } catch (error) {
      this.logger.error?.(`scratchpad: after_compaction for ${session} failed: ${describe(error)}`);
    }
  }

  /** A sub-agent OpenClaw spawns is a spawn of its requester's session. */
  async subagentSpawned(event, ctx) {
    const parent = ctx?.requesterSessionKey;
    if (!event.childSessionKey || !parent) return;
    try {
      await this.ensureSession(event.childSessionKey, ctx, { kind: "spawn", parent, copy: this.spawnCopiesState });
    } catch (error) {
      this.logger.error?.(`scratchpad: creating sub-agent session ${event.childSessionKey} failed: ${describe(error)}`);
    }
  }
}

function contextWindow(ctx) {
  return Number.isInteger(ctx?.contextTokenBudget) ? { context_window: ctx.contextTokenBudget } : {};
}

function isObject(value) {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function lastAssistantText(messages) {
  for (let i = messages.length - 1; i >= 0; i -= 1) {
    const message = messages[i];
    if (message?.role !== "assistant") continue;
    if (typeof message.content === "string") return message.content;
    if (Array.isArray(message.content)) {
      const text = message.content.filter((p) => p?.type === "text").map((p) => p.text).join("\n");
      if (text) return text;
    }
  }
  return "";
}
