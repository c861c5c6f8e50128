/** @module Interface scratchpad:plugin/checkpoints@0.1.3 **/
export function available(): boolean;
export function request(request: CheckpointRequest): void;
export function latest(): Checkpoint | undefined;
export type Trigger = TriggerTokenPercent | TriggerMessageCount;
export interface TriggerTokenPercent {
  tag: 'token-percent',
  val: number,
}
export interface TriggerMessageCount {
  tag: 'message-count',
  val: number,
}
export interface CheckpointRequest {
  trigger: Trigger,
  tokens: bigint,
  messageCount: number,
}
export interface Summary {
  summary: string,
  topics: Array<string>,
  keyDecisions: Array<string>,
  openQuestions: Array<string>,
}
export interface Checkpoint {
  id: string,
  createdAtMs: bigint,
  turnId: string,
  trigger: Trigger,
  tokensAtCheckpoint: bigint,
  messageCountAtCheckpoint: number,
  summary: Summary,
}
