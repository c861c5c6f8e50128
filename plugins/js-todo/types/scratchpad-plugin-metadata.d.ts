/** @module Interface scratchpad:plugin/metadata@0.1.3 **/
export function set(key: string, value: string): void;
export function get(key: string): string | undefined;
export function remove(key: string): boolean;
export type Quota = import('./scratchpad-plugin-storage.js').Quota;
export type MetadataError = MetadataErrorInvalid | MetadataErrorQuotaExceeded;
export interface MetadataErrorInvalid {
  tag: 'invalid',
  val: string,
}
export interface MetadataErrorQuotaExceeded {
  tag: 'quota-exceeded',
  val: Quota,
}
