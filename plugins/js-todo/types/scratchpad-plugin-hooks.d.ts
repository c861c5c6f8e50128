/** @module Interface scratchpad:plugin/hooks@0.1.3 **/
export function beforeSessionCreate(session: SessionInfo): SessionSetup;
export function beforeQuery(turn: Turn, message: string): Array<Injection>;
export function afterResponse(turn: Turn, text: string): void;
export function beforeToolCall(turn: Turn, call: ToolCall): string | undefined;
export function afterToolResult(turn: Turn, call: ToolCall, observation: Observation): string | undefined;
export function beforeCompaction(turn: Turn): string | undefined;
export function afterCompaction(turn: Turn): void;
export type Turn = import('./scratchpad-plugin-types.js').Turn;
export type SessionInfo = import('./scratchpad-plugin-types.js').SessionInfo;
export type SessionSetup = import('./scratchpad-plugin-types.js').SessionSetup;
export type Injection = import('./scratchpad-plugin-types.js').Injection;
export type ToolCall = import('./scratchpad-plugin-types.js').ToolCall;
export type ToolError = import('./scratchpad-plugin-types.js').ToolError;
export type Observation = import('./scratchpad-plugin-observation.js').Observation;
