/**
 * The scratchpad host in the Vercel AI SDK's agent loop (`ai` 7): the plugins' tools as AI SDK
 * tools, their injections in every model call, and every tool call between the plugins' hooks.
 *
 *     import { generateText, isStepCount } from 'ai';
 *     import { Host } from '@scratchpad-dev/host';
 *     import { Scratchpad } from '@scratchpad-dev/host/ai-sdk';
 *
 *     const scratchpad = new Scratchpad(await Host.open('agent.db'), { sessionId: 'chat-42' });
 *     const turn = await scratchpad.turn({ tools: { readLog } });
 *     const result = await generateText({
 *       model: turn.model(model), tools: turn.tools, messages, stopWhen: isStepCount(10),
 *     });
 *     await turn.finish(result.text);
 *
 * How the loop maps onto the host's hooks (every decision is the plugins'; this module only
 * translates shapes):
 * - **Sessions and turns.** The caller names the session, and optionally its project (recall:
 *   a new session of a project starts, in its first model call, from what earlier sessions of
 *   the project saved); each `scratchpad.turn()` is one new turn of it (one `generateText` or
 *   `streamText` run, however many steps).
 * - **Injections, not persisted.** `turn.model(model)` wraps the model with
 *   `turn.middleware`, whose `transformParams` adds `Host.beforeQuery`'s injections to each
 *   model call: system placements around the system message, context placements around the
 *   last user message. Only the call's parameters change; the caller's `messages` and the
 *   SDK's step history never hold the injected block, so it never piles up and is fresh on
 *   every step. (`prepareStep` was the other extension point; its `messages` override carries
 *   forward to the later steps, which is persisting.)
 * - **Tools.** `turn.tools` is the caller's tools plus every tool the plugins declare, under
 *   API-safe names (`session.scratchpad` is `session_scratchpad`), run with `Host.callTool`.
 *   Each model call is offered the caller's tools and those the plugins offer in the turn at
 *   that moment (`scratchpad_read` once the turn has an offloaded observation).
 * - **Tool calls.** Every tool's `execute`, the caller's and the plugins', runs
 *   between `Host.beforeToolCall` (which may rewrite its input, e.g. `{{step1.path}}`, or block
 *   it: the `execute` does not run and the model reads why, as the tool's error) and
 *   `Host.afterToolResult` (whose replacement, e.g. the synthetic observation of a large
 *   result, is what the model sees). Steps are numbered 1, 2, … per turn, in the order the
 *   calls start.
 * - **Replies.** `turn.finish(text)` gives the final text to `Host.afterResponse`.
 *
 * A host failure other than a tool's refusal never breaks the run: it goes to `onError`
 * (default: a `console.warn`) and the call goes on without the plugins' contribution, unless
 * the `Scratchpad` was made with `strict: true`.
 */

import { randomUUID } from 'node:crypto';
import { jsonSchema, tool, wrapLanguageModel } from 'ai';
import { Host, ToolError, PluginError, apiToolName, checkProject } from './index.mjs';

export { apiToolName };

/** The text of a prompt message's text parts. */
function textOf(message) {
  if (typeof message.content === 'string') return message.content;
  return message.content
    .filter((part) => part.type === 'text')
    .map((part) => part.text)
    .join('\n');
}

/** A tool result as the plugins read it: text as it is, anything else as JSON. */
function resultText(result) {
  if (typeof result === 'string') return result;
  if (result instanceof Uint8Array) return Buffer.from(result).toString('utf8');
  return JSON.stringify(result) ?? '';
}

/** A session's scratchpad in the AI SDK: make one per session, then one `turn()` per run. */
export class Scratchpad {
  /**
   * @param {Host} host the host (`Host.open`)
   * @param {{sessionId: string, project?: string, strict?: boolean, onError?: (error: unknown, hook: string) => void}} options
   *   `project`: the project the session is created in when it is new (a key: `projectOfDir(dir)`
   *   of the agent's working directory, or any name the caller chooses); default none.
   */
  constructor(host, options) {
    if (!(host instanceof Host)) throw new TypeError('host must be a Host (Host.open)');
    if (options === null || typeof options !== 'object') throw new TypeError('options must be an object {sessionId}');
    if (typeof options.sessionId !== 'string') throw new TypeError('options.sessionId must be a string');
    if (options.project !== undefined && options.project !== null) {
      if (typeof options.project !== 'string') throw new TypeError('options.project must be a string');
      checkProject(options.project);
    }
    if (options.onError !== undefined && typeof options.onError !== 'function') {
      throw new TypeError('options.onError must be a function');
    }
    this.host = host;
    this.sessionId = options.sessionId;
    this.project = options.project ?? null;
    this.strict = Boolean(options.strict);
    this.onError = options.onError ?? ((error, hook) => console.warn(`scratchpad: ${hook} failed:`, error));
    this._opened = null;
  }

  /**
   * Starts a turn: the session opened (created when missing), the caller's `tools` wrapped
   * and the plugins' added (with a failing host, not strict: the caller's tools alone).
   * `turnId` defaults to a fresh id; `contextWindow` (tokens) lets the plugins see the context
   * pressure.
   *
   * @param {{tools?: Record<string, any>, turnId?: string, contextWindow?: number}} [options]
   */
  async turn(options = {}) {
    const { tools = {}, turnId = `ai-${randomUUID()}`, contextWindow } = options;
    if (tools === null || typeof tools !== 'object' || Array.isArray(tools)) {
      throw new TypeError('options.tools must be an object of AI SDK tools');
    }
    if (typeof turnId !== 'string') throw new TypeError('options.turnId must be a string');
    if (contextWindow !== undefined && (!Number.isSafeInteger(contextWindow) || contextWindow < 0)) {
      throw new TypeError('options.contextWindow must be a non-negative integer');
    }
    this._opened ??= this.host.openSession(this.sessionId, { project: this.project }).catch((error) => {
      this._opened = null;
      throw error;
    });
    await this._quietly('openSession', () => this._opened, null);
    let plugins = [];
    let names = null;
    try {
      plugins = this.host.plugins();
      names = this.host.toolNames();
    } catch (error) {
      if (this.strict) throw error;
      this.onError(error, 'plugins');
    }
    return new Turn(this, { sessionId: this.sessionId, turnId, contextWindow }, tools, plugins, names);
  }

  /** `work()`, its failure reported and `fallback` returned instead, unless strict. */
  async _quietly(hook, work, fallback) {
    try {
      return await work();
    } catch (error) {
      if (this.strict) throw error;
      this.onError(error, hook);
      return fallback;
    }
  }
}

/** One run of the agent loop: `model(...)`, `tools`, `middleware`, then `finish(text)`. */
export class Turn {
  /** @private made by `Scratchpad.turn` */
  constructor(scratchpad, context, callerTools, plugins, names) {
    this._scratchpad = scratchpad;
    this._host = scratchpad.host;
    /** The turn as the host reads it. */
    this.context = context;
    this._steps = 0;
    /** API-safe name → the plugins' tool name. */
    this._pluginNames = new Map();
    const tools = {};
    for (const [name, callerTool] of Object.entries(callerTools)) {
      tools[name] = this._wrap(name, callerTool);
    }
    /** The plugins' tools as the model sees them (the host's names). */
    this._names = names;
    const specs = [];
    for (const plugin of plugins) {
      for (const spec of plugin.tools) {
        // The caller's tool keeps a name both use.
        if (spec.api_name in tools) continue;
        this._pluginNames.set(spec.api_name, spec.name);
        specs.push([spec.api_name, spec]);
      }
    }
    for (const [name, spec] of specs) {
      const parameters = spec.parameters ? JSON.parse(spec.parameters) : { type: 'object' };
      tools[name] = this._wrap(
        spec.name,
        tool({
          description: this._inText(spec.description || spec.name),
          inputSchema: jsonSchema(parameters),
          execute: (input) => this._host.callTool(this.context, spec.name, input),
        }),
      );
    }
    /** The caller's tools and the plugins', for `generateText`'s `tools`. */
    this.tools = tools;
    /** The AI SDK language model middleware adding the injections and choosing the tools offered. */
    this.middleware = {
      specificationVersion: 'v4',
      transformParams: ({ params }) => this._transform(params),
    };
  }

  /** `model` wrapped with this turn's middleware (`wrapLanguageModel`). */
  model(model) {
    return wrapLanguageModel({ model, middleware: this.middleware });
  }

  /** Ends the turn: its final reply to the plugins' `after-response`. */
  async finish(text) {
    if (typeof text !== 'string') throw new TypeError('text must be a string');
    await this._scratchpad._quietly('afterResponse', () => this._host.afterResponse(this.context, text));
  }

  /** `text` with each plugin tool named as the model is offered it (`session.scratchpad` → `session_scratchpad`). */
  _inText(text) {
    return this._names ? this._names.rewrite(text) : text;
  }

  /** One model call's parameters with the injections added and the tools on offer chosen. */
  async _transform(params) {
    const prompt = params.prompt;
    const last = prompt.findLastIndex((message) => message.role === 'user');
    const message = last >= 0 ? textOf(prompt[last]) : '';
    const quietly = (hook, work, fallback) => this._scratchpad._quietly(hook, work, fallback);
    const [query, offered] = await Promise.all([
      quietly('beforeQuery', () => this._host.beforeQuery(this.context, message), null),
      quietly('tools', () => this._host.tools(this.context), null),
    ]);
    let tools = params.tools;
    if (tools && offered) {
      const names = new Set(offered.map((spec) => spec.apiName));
      tools = tools.filter((t) => !this._pluginNames.has(t.name) || names.has(t.name));
    }
    if (!query) return { ...params, tools };
    // The host's prompt holds the session's guidance (once) and the turn's injections.
    const named = this._names ? query.naming(this._names) : query;
    const [beforeContext, afterContext] = [named.text('prepend-context'), named.text('append-context')];
    const messages = [...prompt];
    if (last >= 0 && (beforeContext || afterContext)) {
      const user = messages[last];
      const content = [...user.content];
      if (beforeContext) content.unshift({ type: 'text', text: beforeContext });
      if (afterContext) content.push({ type: 'text', text: afterContext });
      messages[last] = { ...user, content };
    }
    // With no user message to put the context around, the system prompt takes it.
    const system = (text) => (last < 0 ? named.renderSystemOnly(text) : named.render(text, '').system);
    const at = messages.findIndex((m) => m.role === 'system');
    const current = at >= 0 ? messages[at].content : '';
    const rendered = system(current);
    if (rendered !== current) {
      if (at >= 0) messages[at] = { ...messages[at], content: rendered };
      else messages.unshift({ role: 'system', content: rendered });
    }
    return { ...params, prompt: messages, tools };
  }

  /** `original` (an AI SDK tool) with its `execute` between the plugins' tool-call hooks. */
  _wrap(name, original) {
    if (typeof original?.execute !== 'function') return original; // executed by the caller or the provider
    return {
      ...original,
      execute: async (input, options) => {
        const step = ++this._steps;
        let args = input;
        try {
          args = await this._host.beforeToolCall(this.context, name, input ?? {}, step);
        } catch (error) {
          // A block (ToolError) or a failing plugin: the call does not run; the model reads why.
          if (error instanceof ToolError || error instanceof PluginError || this._scratchpad.strict) {
            throw new Error(error.message);
          }
          this._scratchpad.onError(error, 'beforeToolCall');
        }
        let result;
        try {
          result = await original.execute(args, options);
        } catch (error) {
          if (error instanceof ToolError) throw new Error(error.message); // a plugin tool's refusal
          throw error;
        }
        const replacement = await this._scratchpad._quietly(
          'afterToolResult',
          () => this._host.afterToolResult(this.context, name, args ?? {}, step, resultText(result), args ?? {}),
          null,
        );
        return replacement ?? result;
      },
    };
  }
}
