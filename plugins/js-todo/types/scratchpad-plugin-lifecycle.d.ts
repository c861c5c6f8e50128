/** @module Interface scratchpad:plugin/lifecycle@0.1.3 **/
export function load(): Manifest;
export type ToolSpec = import('./scratchpad-plugin-types.js').ToolSpec;
export interface Manifest {
  tools: Array<ToolSpec>,
}
