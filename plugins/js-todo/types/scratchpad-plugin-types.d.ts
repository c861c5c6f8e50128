/** @module Interface scratchpad:plugin/types@0.1.3 **/
export interface ToolSpec {
  name: string,
  description: string,
  parameters: string,
}
export interface Turn {
  sessionId: string,
  turnId: string,
  turnIndex: number,
  tokensUsed?: bigint,
  contextWindow?: bigint,
}
export interface SpawnOrigin {
  parent: string,
  copyRequested: boolean,
}
export type Origin = OriginNew | OriginSpawn | OriginFork;
export interface OriginNew {
  tag: 'new',
}
export interface OriginSpawn {
  tag: 'spawn',
  val: SpawnOrigin,
}
export interface OriginFork {
  tag: 'fork',
  val: string,
}
export interface SessionInfo {
  sessionId: string,
  origin: Origin,
}
/**
 * # Variants
 * 
 * ## `"prepend-system"`
 * 
 * ## `"append-system"`
 * 
 * ## `"prepend-context"`
 * 
 * ## `"append-context"`
 */
export type Placement = 'prepend-system' | 'append-system' | 'prepend-context' | 'append-context';
export interface Injection {
  placement: Placement,
  text: string,
}
export interface SessionSetup {
  injections: Array<Injection>,
  inheritParentState: boolean,
}
export interface ToolCall {
  name: string,
  arguments: string,
  step: number,
}
export type ToolError = ToolErrorUnknownTool | ToolErrorInvalidArguments | ToolErrorRejected | ToolErrorNotFound | ToolErrorFailed;
export interface ToolErrorUnknownTool {
  tag: 'unknown-tool',
  val: string,
}
export interface ToolErrorInvalidArguments {
  tag: 'invalid-arguments',
  val: string,
}
export interface ToolErrorRejected {
  tag: 'rejected',
  val: string,
}
export interface ToolErrorNotFound {
  tag: 'not-found',
  val: string,
}
export interface ToolErrorFailed {
  tag: 'failed',
  val: string,
}
export interface ToolOutput {
  content: string,
}
