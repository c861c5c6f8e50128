// opencode plugin entry: the scratchpad project's components as opencode tools and hooks, run by
// `scratchpad serve` (one server per opencode process, started with the plugin). Listed in
// opencode.json's `plugin` array, with its options:
//
//   "plugin": [["/path/to/integrations/opencode", { "database": "~/.local/share/scratchpad/opencode.db" }]]
//
// Options: `binary` (default $SCRATCHPAD_BIN, else `scratchpad` on PATH), `database` (default:
// the CLI's own), `config` (the host's TOML configuration: components, grants, limits),
// `requestTimeoutMs` (default 15000). See docs/opencode.md.

import { tool } from "@opencode-ai/plugin";

import { Sidecar, describe } from "../sidecar-js/sidecar.js";
import { zodShape } from "./src/args.js";
import { Bridge } from "./src/bridge.js";
import { resolveOptions } from "./src/options.js";

async function server(input, rawOptions) {
  // Through opencode's own log (`--print-logs` shows it); never a failure of the hook that logs.
  const log = (level, message) => {
    const text = message.startsWith("scratchpad: ") ? message : `scratchpad: ${message}`;
    const logged = input?.client?.app?.log?.({ body: { service: "scratchpad", level, message: text } });
    logged?.catch?.(() => {});
  };
  let options;
  try {
    options = resolveOptions(rawOptions);
  } catch (error) {
    log("error", error.message);
    return {};
  }
  const logger = { warn: (message) => log("warn", message), error: (message) => log("error", message) };
  const sidecar = new Sidecar({ command: options.binary, args: options.args, requestTimeoutMs: options.requestTimeoutMs, logger });

  // The components' tools, declared once: opencode asks for a plugin's tools when it loads it.
  // Under their API names, their descriptions naming tools as the model is offered them.
  let specs = [];
  try {
    const { plugins } = await sidecar.request("plugins", { api_names: true });
    specs = plugins.flatMap((plugin) => plugin.tools);
  } catch (error) {
    specs = [];
    log("error", `the components' tools are not offered: ${describe(error)}`);
  }
  const bridge = new Bridge({ sidecar, log, directory: input?.directory });
  const tools = {};
  for (const spec of specs) {
    const name = spec.api_name;
    tools[name] = tool({
      description: spec.description || name,
      args: zodShape(tool.schema, parameters(spec)),
      execute: (args, context) => bridge.callTool(name, args, context),
    });
  }

  return {
    tool: tools,
    "chat.message": async (hookInput, output) => bridge.chatMessage(hookInput, output),
    "experimental.chat.system.transform": (hookInput, output) => bridge.systemTransform(hookInput, output),
    "tool.execute.before": (hookInput, output) => bridge.toolBefore(hookInput, output),
    "tool.execute.after": (hookInput, output) => bridge.toolAfter(hookInput, output),
    "experimental.session.compacting": (hookInput, output) => bridge.compacting(hookInput, output),
    "experimental.text.complete": async (hookInput, output) => bridge.textComplete(hookInput, output),
    event: ({ event }) => bridge.event(event),
    dispose: async () => sidecar.close(),
  };
}

function parameters(spec) {
  try {
    return JSON.parse(spec.parameters || "{}");
  } catch {
    return {};
  }
}

export default { id: "scratchpad", server };
