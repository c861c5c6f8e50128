// opencode's plugin hooks mapped onto the host API. Every decision is the components': this file
// only translates shapes (sessions, turns, steps, placements, tool names) and carries answers
// back. No hook ever fails the user's turn: a failure is logged and the turn goes on without the
// components' contribution (a tool call a component blocks is the one deliberate refusal).
//
// - opencode's session id is the host's session, created on first sight in the project of
//   opencode's working directory (the host's `project_of_dir`: its git checkout), so a new
//   session's first model call holds what earlier sessions of the checkout left.
// - A user message (`chat.message`) starts a host turn named by the message's id; the tool calls
//   after it are numbered from 1 in the order `tool.execute.before` sees them, so `{{stepN.field}}`
//   and the offloaded observations agree.

import { PLUGIN_FAILED, TOOL_REFUSED, describe } from "../../sidecar-js/sidecar.js";

/** Sessions whose current turn is kept in memory (the oldest is dropped beyond). */
const KEPT_SESSIONS = 1024;

export class Bridge {
  constructor({ sidecar, log, directory }) {
    this.sidecar = sidecar;
    this.log = log;
    this.directory = directory;
    this.project = null; // Promise of the directory's project key (null: none)
    this.sessions = new Map(); // session id -> Promise of its standing guidance
    this.turns = new Map(); // session id -> { id, message, step, steps: Map(callID -> step), reply }
  }

  /** The project of opencode's working directory, asked once; null when it names none (logged). */
  projectKey() {
    this.project ??= typeof this.directory === "string" && this.directory
      ? this.sidecar.projectOfDir(this.directory).catch((error) => {
          this.log("warn", `sessions get no project (recall is off for them): ${describe(error)}`);
          return null;
        })
      : Promise.resolve(null);
    return this.project;
  }

  /** Creates `session` (in the working directory's project) on first sight; resolves with its standing guidance. */
  ensureSession(session) {
    let opened = this.sessions.get(session);
    if (!opened) {
      opened = this.projectKey().then((project) => this.sidecar.openSession(session, { kind: "new" }, project));
      this.sessions.set(session, opened);
      opened.catch(() => this.sessions.delete(session)); // retried on the next sight
      if (this.sessions.size > KEPT_SESSIONS) this.sessions.delete(this.sessions.keys().next().value);
    }
    return opened;
  }

  /** Starts the session's next turn. */
  startTurn(session, id, message) {
    const turn = { id, message, step: 0, steps: new Map(), reply: "" };
    this.turns.delete(session);
    this.turns.set(session, turn);
    if (this.turns.size > KEPT_SESSIONS) this.turns.delete(this.turns.keys().next().value);
    return turn;
  }

  /** The session's current turn (one of its own before any user message was seen). */
  current(session) {
    return this.turns.get(session) ?? this.startTurn(session, `opencode-${Date.now()}`, "");
  }

  hostTurn(session) {
    return { session_id: session, turn_id: this.current(session).id };
  }

  /** `chat.message`: the user's message starts a turn. */
  chatMessage(input, output) {
    const text = (output?.parts ?? []).filter((part) => part?.type === "text").map((part) => part.text).join("\n");
    this.startTurn(input.sessionID, input.messageID ?? output?.message?.id ?? `opencode-${Date.now()}`, text);
  }

  /**
   * `experimental.chat.system.transform`, before every model call: `before_query`'s injections
   * (the session's guidance among them, once) join the system prompt (system placements around
   * opencode's own, context placements after it), each tool named as the model is offered it,
   * fresh on every call and never stored in the session.
   */
  async systemTransform(input, output) {
    const session = input?.sessionID;
    if (!session || !Array.isArray(output?.system)) return;
    try {
      await this.ensureSession(session);
      const message = this.current(session).message;
      const { injections } = await this.sidecar.request("before_query", {
        turn: this.hostTurn(session),
        message,
        api_names: true,
      });
      const texts = (placement) => (injections[placement] ?? []).map((i) => i.text).filter(Boolean);
      output.system.unshift(...texts("prepend-system"));
      output.system.push(...texts("append-system"), ...texts("prepend-context"), ...texts("append-context"));
    } catch (error) {
      this.log("error", `before_query for ${session} failed: ${describe(error)}`);
    }
  }

  /** A component's tool, called by the model; a refusal is thrown, so the model reads it as the tool's error. */
  async callTool(apiToolName, args, context) {
    const session = context.sessionID;
    try {
      await this.ensureSession(session);
      const { content } = await this.sidecar.request("tools.call", {
        turn: this.hostTurn(session),
        name: apiToolName,
        arguments: args ?? {},
        api_names: true,
      });
      return content;
    } catch (error) {
      throw new Error(describe(error));
    }
  }

  /** `tool.execute.before`, for every tool: numbers the step, applies rewritten arguments; a block throws. */
  async toolBefore(input, output) {
    const session = input.sessionID;
    const turn = this.current(session);
    const step = ++turn.step;
    if (input.callID) turn.steps.set(input.callID, step);
    const text = JSON.stringify(output.args ?? {});
    let rewritten = text;
    try {
      await this.ensureSession(session);
      const call = { name: input.tool, arguments: text, step };
      ({ arguments: rewritten } = await this.sidecar.request("before_tool_call", { turn: this.hostTurn(session), call }));
    } catch (error) {
      // e.g. `{{step9.content}}` with no step 9: the call does not run and the model reads why.
      if (error.code === TOOL_REFUSED || error.code === PLUGIN_FAILED) throw new Error(describe(error));
      this.log("error", `before_tool_call for ${session} failed: ${describe(error)}`);
    }
    if (rewritten !== text) output.args = JSON.parse(rewritten);
  }

  /** `tool.execute.after`: the model sees `after_tool_result`'s replacement (the large-observation store's synthetic observation). */
  async toolAfter(input, output) {
    if (typeof output?.output !== "string") return;
    const session = input.sessionID;
    const turn = this.current(session);
    const step = turn.steps.get(input.callID) ?? ++turn.step;
    const args = input.args ?? {};
    try {
      await this.ensureSession(session);
      const call = { name: input.tool, arguments: JSON.stringify(args), step };
      const metadata = args !== null && typeof args === "object" && !Array.isArray(args) ? args : undefined;
      const { replacement } = await this.sidecar.request("after_tool_result", {
        turn: this.hostTurn(session),
        call,
        text: output.output,
        kind: "text",
        ...(metadata ? { metadata } : {}),
      });
      if (replacement !== null && replacement !== undefined) output.output = replacement;
    } catch (error) {
      this.log("error", `after_tool_result for ${session} failed: ${describe(error)}`);
    }
  }

  /** `experimental.session.compacting`: the pre-compaction warnings join the compaction prompt's context. */
  async compacting(input, output) {
    const session = input?.sessionID;
    if (!session || !Array.isArray(output?.context)) return;
    try {
      await this.ensureSession(session);
      const { warnings } = await this.sidecar.request("before_compaction", { turn: this.hostTurn(session), api_names: true });
      output.context.push(...warnings.map((warning) => warning.text));
    } catch (error) {
      this.log("error", `before_compaction for ${session} failed: ${describe(error)}`);
    }
  }

  /** `experimental.text.complete`: the turn's reply so far (the last text the model completed). */
  textComplete(input, output) {
    const turn = this.turns.get(input?.sessionID);
    if (turn && typeof output?.text === "string" && output.text) turn.reply = output.text;
  }

  /** opencode's events: a finished compaction is counted; an idle session's turn ends with its reply. */
  async event(event) {
    const session = event?.properties?.sessionID;
    if (!session) return;
    try {
      if (event.type === "session.compacted") {
        await this.ensureSession(session);
        await this.sidecar.request("after_compaction", { turn: this.hostTurn(session) });
      } else if (event.type === "session.idle") {
        const turn = this.turns.get(session);
        if (!turn?.reply) return;
        const text = turn.reply;
        turn.reply = "";
        await this.sidecar.request("after_response", { turn: this.hostTurn(session), text });
      }
    } catch (error) {
      this.log("error", `${event.type} for ${session} failed: ${describe(error)}`);
    }
  }
}
