// The components' tools as OpenClaw agent tools. OpenClaw registers tools synchronously at
// plugin load, so the declarations come from `scratchpad plugins --json` run synchronously
// once per process (the host's compiled-component cache makes it quick); calls go to the
// running `scratchpad serve` through the bridge.

import { execFileSync } from "node:child_process";

/**
 * Every tool the configured components declare: `[{ plugin, name, api_name, description, parameters }]`
 * (`api_name`: the name model APIs accept, the host's own rule).
 */
export function componentTools(binary, args) {
  let output;
  try {
    output = execFileSync(binary, [...args, "--json", "plugins"], { encoding: "utf8", timeout: 60000 });
  } catch (error) {
    const detail = `${error.stdout ?? ""}${error.stderr ?? ""}`.trim() || error.message;
    throw new Error(`scratchpad: \`${binary} plugins\` failed, so the components' tools are unknown: ${detail}`);
  }
  const { plugins } = JSON.parse(output);
  return plugins.flatMap((plugin) =>
    plugin.tools.map((tool) => ({
      plugin: plugin.name,
      name: tool.name,
      api_name: tool.api_name,
      description: tool.description,
      parameters: typeof tool.parameters === "string" ? JSON.parse(tool.parameters) : tool.parameters,
    })),
  );
}

/**
 * The OpenClaw tools for one run's context. `catalogMode: "direct-only"` keeps them in front of
 * the model instead of behind OpenClaw's tool search: the scratchpad is only useful when the
 * model sees it.
 */
export function agentTools(tools, bridge, ctx) {
  return tools.map((tool) => {
    const name = tool.api_name;
    return {
      name,
      label: tool.name,
      description: tool.description,
      parameters: tool.parameters,
      catalogMode: "direct-only",
      execute: (_toolCallId, params) => bridge.callTool(ctx, name, params),
    };
  });
}
