/** @module Interface scratchpad:plugin/storage@0.1.3 **/
export function get(key: string): Uint8Array | undefined;
export function set(key: string, value: Uint8Array): void;
export { _delete as delete };
function _delete(key: string): boolean;
export function keys(prefix: string): Array<string>;
export interface Quota {
  used: bigint,
  requested: bigint,
  limit: bigint,
}
export type StorageError = StorageErrorQuotaExceeded | StorageErrorInvalidKey;
export interface StorageErrorQuotaExceeded {
  tag: 'quota-exceeded',
  val: Quota,
}
export interface StorageErrorInvalidKey {
  tag: 'invalid-key',
  val: string,
}
