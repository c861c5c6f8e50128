// OpenClaw plugin entry: the scratchpad project's components, run by `scratchpad serve`.
// OpenClaw evaluates this module several times per process (and loads it with require(), so
// no top-level await): one bridge and one server per configuration are kept on globalThis and
// started lazily, on the first hook or tool call.

// The manifest: OpenClaw refuses to register a tool its contracts.tools does not declare.
import manifest from "./openclaw.plugin.json" with { type: "json" };
import { Bridge } from "./src/bridge.js";
import { hostArgs, resolveConfig } from "./src/config.js";
import { Sidecar } from "../sidecar-js/sidecar.js";
import { PluginState } from "./src/state.js";
import { agentTools, componentTools } from "./src/tools.js";

const INSTANCES = Symbol.for("scratchpad.openclaw.instances");

function instance(pluginConfig, logger) {
  const config = resolveConfig(pluginConfig);
  const args = hostArgs(config);
  const key = JSON.stringify([config.binary, args, config.requestTimeoutMs, config.spawnCopiesState]);
  globalThis[INSTANCES] ??= new Map();
  let found = globalThis[INSTANCES].get(key);
  if (!found) {
    const tools = componentTools(config.binary, args);
    const sidecar = new Sidecar({ command: config.binary, args, requestTimeoutMs: config.requestTimeoutMs, logger });
    const state = new PluginState(`${config.database}.openclaw.json`);
    const bridge = new Bridge({ sidecar, state, logger, spawnCopiesState: config.spawnCopiesState });
    found = { tools, sidecar, bridge };
    globalThis[INSTANCES].set(key, found);
  }
  return found;
}

export default {
  id: "scratchpad",
  name: "Scratchpad",
  description: manifest.description,
  register(api) {
    const logger = api.logger ?? console;
    const { tools, sidecar, bridge } = instance(api.pluginConfig ?? {}, logger);
    const declared = new Set(manifest.contracts.tools);
    const offered = tools.filter((tool) => declared.has(tool.api_name));
    const undeclared = tools.filter((tool) => !declared.has(tool.api_name));
    if (undeclared.length > 0) {
      logger.warn?.(
        `scratchpad: not offered to the model because openclaw.plugin.json does not declare them in contracts.tools: ${undeclared
          .map((tool) => tool.api_name)
          .join(", ")} (run scripts/declare-tools.mjs)`,
      );
    }
    if (offered.length > 0) {
      api.registerTool((ctx) => agentTools(offered, bridge, ctx), {
        names: offered.map((tool) => tool.api_name),
      });
    }
    api.on("before_prompt_build", (event, ctx) => bridge.beforePromptBuild(event, ctx));
    api.on("before_tool_call", (event, ctx) => bridge.beforeToolCall(event, ctx));
    api.registerAgentToolResultMiddleware((event, ctx) => bridge.afterToolResult(event, ctx), {
      runtimes: ["openclaw"],
    });
    api.on("agent_end", (event, ctx) => bridge.agentEnd(event, ctx));
    api.on("before_compaction", (event, ctx) => bridge.beforeCompaction(event, ctx));
    api.on("after_compaction", (event, ctx) => bridge.afterCompaction(event, ctx));
    api.on("subagent_spawned", (event, ctx) => bridge.subagentSpawned(event, ctx));
    api.on("gateway_stop", () => sidecar.close());
  },
};
