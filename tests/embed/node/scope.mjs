// One plugin's storage in one session during one call, as the WIT `storage` interface specifies
// it (wit/host.wit): a snapshot taken when the call starts plus the call's own writes, which the
// call reads back and the host commits only when the call succeeds.
//
// Keys are 1 to 256 bytes; usage (every key's and value's length in bytes) may not grow past
// the quota. A refused write throws the `storage-error` value, which jco hands to the guest as
// the `err` of `set`'s result.

export const MAX_KEY_BYTES = 256;

const utf8 = new TextEncoder();
const byteLength = (key) => utf8.encode(key).length;
const entrySize = (key, value) => byteLength(key) + value.length;
const byBytes = (a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b));

export class Scope {
  /** @param {Map<string, Uint8Array>} base the session's stored state  @param {number} quota bytes */
  constructor(base, quota) {
    this.base = new Map(base);
    this.writes = new Map(); // key -> Uint8Array, or null for a delete
    this.used = [...this.base].reduce((sum, [k, v]) => sum + entrySize(k, v), 0);
    this.quota = quota;
  }

  get(key) {
    return this.writes.has(key) ? (this.writes.get(key) ?? undefined) : this.base.get(key);
  }

  set(key, value) {
    const size = byteLength(key);
    if (size === 0) throw { tag: "invalid-key", val: "keys must not be empty" };
    if (size > MAX_KEY_BYTES) {
      throw { tag: "invalid-key", val: `key of ${size} bytes is longer than the ${MAX_KEY_BYTES}-byte limit` };
    }
    const current = this.get(key);
    const old = current === undefined ? 0 : entrySize(key, current);
    const added = entrySize(key, value);
    const after = this.used - old + added;
    if (added > old && after > this.quota) {
      const quota = { used: BigInt(this.used), requested: BigInt(added - old), limit: BigInt(this.quota) };
      throw { tag: "quota-exceeded", val: quota };
    }
    this.used = after;
    this.writes.set(key, Uint8Array.from(value));
  }

  delete(key) {
    const current = this.get(key);
    if (current === undefined) return false;
    this.used -= entrySize(key, current);
    if (this.base.has(key)) this.writes.set(key, null);
    else this.writes.delete(key);
    return true;
  }

  keys(prefix) {
    const present = new Set([...this.base.keys()].filter((k) => !this.writes.has(k)));
    for (const [k, v] of this.writes) if (v !== null) present.add(k);
    return [...present].filter((k) => k.startsWith(prefix)).sort(byBytes);
  }
}

/** Commits a call's writes to a session's stored state. */
export function apply(state, writes) {
  for (const [key, value] of writes) {
    if (value === null) state.delete(key);
    else state.set(key, value);
  }
}
