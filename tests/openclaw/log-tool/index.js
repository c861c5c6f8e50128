// A tool that returns a workspace file whole. OpenClaw's own read and exec tools cap text at
// ~50 KB, so the large-observation store's 89 KB log needs a tool of its own to reach the tool-result middleware
// (and the scratchpad plugin's offload) as one result.

import { readFileSync } from "node:fs";
import { resolve } from "node:path";

export default {
  id: "e2e-log-tool",
  name: "E2E log tool",
  description: "Returns a workspace file whole.",
  register(api) {
    api.registerTool((ctx) => ({
      name: "fetch_log",
      label: "fetch_log",
      description: "Return a log file's whole text.",
      parameters: { type: "object", required: ["path"], properties: { path: { type: "string" } } },
      catalogMode: "direct-only",
      async execute(_toolCallId, params) {
        const text = readFileSync(resolve(ctx.workspaceDir ?? process.cwd(), params.path), "utf8");
        return { content: [{ type: "text", text }], details: { path: params.path } };
      },
    }), { names: ["fetch_log"] });
  },
};
