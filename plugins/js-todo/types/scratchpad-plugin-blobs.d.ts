/** @module Interface scratchpad:plugin/blobs@0.1.3 **/
export function store(content: Observation, entry: NewEntry): string;
export function stat(id: string): Entry | undefined;
export function listTurn(turnId: string): Array<Entry>;
export function read(id: string, offset: bigint, len: number): Uint8Array;
export function gc(): number;
export type Observation = import('./scratchpad-plugin-observation.js').Observation;
export interface NewEntry {
  turnId: string,
  step: number,
  tool: string,
  summary: string,
  ttlSeconds: bigint,
}
export type Quota = import('./scratchpad-plugin-storage.js').Quota;
export type BlobError = BlobErrorNotFound | BlobErrorInvalid | BlobErrorQuotaExceeded;
export interface BlobErrorNotFound {
  tag: 'not-found',
  val: string,
}
export interface BlobErrorInvalid {
  tag: 'invalid',
  val: string,
}
export interface BlobErrorQuotaExceeded {
  tag: 'quota-exceeded',
  val: Quota,
}
export type ContentKind = import('./scratchpad-plugin-observation.js').ContentKind;
export interface Entry {
  id: string,
  turnId: string,
  step: number,
  tool: string,
  kind: ContentKind,
  sizeBytes: bigint,
  sizeChars: bigint,
  ascii: boolean,
  sha256: string,
  summary: string,
  metadata: string,
  createdAtMs: bigint,
  expiresAtMs: bigint,
  expired: boolean,
}
