// A JSON-RPC 2.0 client of `scratchpad serve` (docs/protocol.md), shared by the integrations
// that run in JavaScript (OpenClaw, opencode): the full host over SQLite, with every sandbox
// limit, in its own process. It is started on the first request, restarted on the next
// request after it dies, and killed when a request outlives `requestTimeoutMs`
// (a backstop: the host enforces each component's deadline long before). The host commits a
// call's writes before it answers, so an answered request is durable; a request cut short by
// a crash fails with an error saying so, and the next one runs on a fresh server.

import { spawn } from "node:child_process";
import { createInterface } from "node:readline";

/** An error answered by the server (`code`, `data` as in docs/protocol.md) or about it. */
export class SidecarError extends Error {
  constructor(message, code, data) {
    super(message);
    this.name = "SidecarError";
    this.code = code;
    this.data = data;
  }
}

/** Codes of docs/protocol.md the plugin acts on. */
export const TOOL_REFUSED = -32001;
export const PLUGIN_FAILED = -32002;
export const SESSION_EXISTS = -32004;
export const NO_SUCH_TOOL = -32005;
/** Not a server code: the server died or was killed before it answered. */
export const SERVER_LOST = -32099;

export class Sidecar {
  /** `command`: the binary; `args`: its global options (`serve` is appended). */
  constructor({ command, args, requestTimeoutMs, logger }) {
    this.command = command;
    this.globalArgs = args;
    this.args = [...args, "serve"];
    this.requestTimeoutMs = requestTimeoutMs;
    this.logger = logger;
    this.child = null;
    this.pending = new Map();
    this.nextId = 1;
    this.starts = 0;
    this.stderrTail = [];
    this.projects = new Map(); // directory -> Promise of its project key
  }

  /** Sends `method` and resolves with its result, or rejects with a SidecarError. */
  request(method, params) {
    const child = this.ensureStarted();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.settle(id, () => reject(new SidecarError(
          `scratchpad serve did not answer ${method} within ${this.requestTimeoutMs} ms; it was restarted`,
          SERVER_LOST,
        )));
        this.kill(child, "request timeout");
      }, this.requestTimeoutMs);
      this.pending.set(id, { method, resolve, reject, timer });
      this.keepAlive();
      child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
    });
  }

  /**
   * Creates `session` (with `origin`, in `project` when given) and resolves with its standing
   * guidance; when it exists already (created by an earlier process), with the guidance the
   * host kept for it (and the project it was created in).
   */
  async openSession(session, origin = { kind: "new" }, project = null) {
    try {
      const params = project ? { session, origin, project } : { session, origin };
      return (await this.request("session.create", params)).guidance;
    } catch (error) {
      if (error.code !== SESSION_EXISTS) throw error;
      const shown = await this.request("session.show", { session });
      return shown.session.guidance ?? [];
    }
  }

  /**
   * The project of the working directory `dir`, as the host decides it (`project_of_dir`: the
   * root of the git checkout holding it, a linked worktree's main checkout, else `dir`): asked of
   * the sidecar once per directory (`project.of_dir`). Rejects when `dir` names no project
   * (relative, missing).
   */
  projectOfDir(dir) {
    let found = this.projects.get(dir);
    if (!found) {
      found = this.request("project.of_dir", { dir }).then((answer) => answer.project);
      this.projects.set(dir, found);
      found.catch(() => this.projects.delete(dir)); // asked again next time
    }
    return found;
  }

  /** The running server, started when there is none. */
  ensureStarted() {
    if (this.child) return this.child;
    this.starts += 1;
    const child = spawn(this.command, this.args, { stdio: ["pipe", "pipe", "pipe"] });
    this.child = child;
    child.on("error", (error) => this.lost(child, `could not run ${this.command}: ${error.message}`));
    child.on("exit", (code, signal) => this.lost(child, `exited (${signal ?? `status ${code}`})`));
    child.stdin.on("error", () => {}); // a dead server's EPIPE is reported by `exit`
    createInterface({ input: child.stdout }).on("line", (line) => this.answer(line));
    createInterface({ input: child.stderr }).on("line", (line) => {
      this.stderrTail.push(line);
      if (this.stderrTail.length > 20) this.stderrTail.shift();
    });
    this.keepAlive();
    return child;
  }

  answer(line) {
    let message;
    try {
      message = JSON.parse(line);
    } catch {
      this.logger.warn?.(`scratchpad: ignored a line from scratchpad serve that is not JSON: ${line.slice(0, 200)}`);
      return;
    }
    this.settle(message.id, (entry) => {
      if (message.error) {
        const { code, message: text, data } = message.error;
        entry.reject(new SidecarError(data?.message ?? text, code, data));
      } else {
        entry.resolve(message.result);
      }
    });
  }

  settle(id, action) {
    const entry = this.pending.get(id);
    if (!entry) return;
    this.pending.delete(id);
    clearTimeout(entry.timer);
    action(entry);
    this.keepAlive();
  }

  /** The server `child` is gone: every request it had fails, the next one starts another. */
  lost(child, why) {
    if (this.child !== child) return;
    this.child = null;
    const tail = this.stderrTail.slice(-5).join(" | ");
    const message = `scratchpad serve ${why} before answering; it restarts on the next call${tail ? ` (stderr: ${tail})` : ""}`;
    this.logger.warn?.(`scratchpad: ${message}`);
    for (const id of [...this.pending.keys()]) {
      this.settle(id, (entry) => entry.reject(new SidecarError(`${entry.method}: ${message}`, SERVER_LOST)));
    }
  }

  kill(child, why) {
    if (this.child === child) this.lost(child, `was stopped (${why})`);
    child.kill("SIGKILL");
  }

  /**
   * The server's pipes keep the event loop alive only while a request is pending: a one-shot
   * `openclaw agent --local` run must be able to exit when its turn is done.
   */
  keepAlive() {
    const child = this.child;
    if (!child) return;
    const busy = this.pending.size > 0;
    for (const handle of [child, child.stdout, child.stderr, child.stdin]) {
      if (busy) handle.ref?.();
      else handle.unref?.();
    }
  }

  /** Closes stdin: the server answers what it started and exits. */
  close() {
    const child = this.child;
    this.child = null;
    child?.stdin.end();
  }
}

/** An error as the model or the log should read it: a component's failure names it and its hook. */
export function describe(error) {
  if (error instanceof SidecarError && error.data?.plugin && error.code === PLUGIN_FAILED) {
    return `component \`${error.data.plugin}\` failed in ${error.data.hook}: ${error.data.failure ?? error.message}`;
  }
  return error?.message ?? String(error);
}
