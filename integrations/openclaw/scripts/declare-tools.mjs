#!/usr/bin/env node
// Declares the configured components' tools in openclaw.plugin.json's contracts.tools.
// OpenClaw only registers tools its manifest declares (it reads the manifest before loading
// any plugin code), so a third-party component's tools need this once after it is added:
//
//   node scripts/declare-tools.mjs [PLUGIN_DIR] < config.json
//
// where config.json is the plugin's config object (`plugins.entries.scratchpad.config`).
// PLUGIN_DIR defaults to this package; the names written are the API names the host gives.

import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { hostArgs, resolveConfig } from "../src/config.js";
import { componentTools } from "../src/tools.js";

const pluginDir = process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), "..");
const input = readFileSync(0, "utf8").trim();
const config = resolveConfig(input ? JSON.parse(input) : {});
const tools = componentTools(config.binary, hostArgs(config)).map((tool) => tool.api_name);
const file = join(pluginDir, "openclaw.plugin.json");
const manifest = JSON.parse(readFileSync(file, "utf8"));
manifest.contracts.tools = [...new Set([...manifest.contracts.tools, ...tools])];
writeFileSync(file, `${JSON.stringify(manifest, null, 2)}\n`);
console.log(`declared ${manifest.contracts.tools.length} tools in ${file}: ${manifest.contracts.tools.join(", ")}`);
