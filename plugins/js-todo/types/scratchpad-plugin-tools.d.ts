/** @module Interface scratchpad:plugin/tools@0.1.3 **/
export function listTools(turn: Turn): Array<ToolSpec>;
export function callTool(turn: Turn, name: string, arguments: string): ToolOutput;
export type Turn = import('./scratchpad-plugin-types.js').Turn;
export type ToolSpec = import('./scratchpad-plugin-types.js').ToolSpec;
export type ToolOutput = import('./scratchpad-plugin-types.js').ToolOutput;
export type ToolError = import('./scratchpad-plugin-types.js').ToolError;
