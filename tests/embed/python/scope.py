"""One plugin's storage in one session during one call, as the WIT `storage` interface
specifies it (wit/host.wit): a snapshot taken when the call starts plus the call's own
writes, which the call reads back and the host commits only when the call succeeds.

Keys are 1 to 256 bytes; usage (every key's and value's length in bytes) may not grow past
the quota. A refused write returns the `storage-error` case and its payload, never raises.
"""

MAX_KEY_BYTES = 256


def entry_size(key: str, value: bytes) -> int:
    return len(key.encode()) + len(value)


class Scope:
    def __init__(self, base: dict, quota_bytes: int):
        self.base = dict(base)
        self.writes = {}  # key -> bytes, or None for a delete
        self.used = sum(entry_size(k, v) for k, v in self.base.items())
        self.quota = quota_bytes

    def get(self, key: str):
        if key in self.writes:
            return self.writes[key]
        return self.base.get(key)

    def set(self, key: str, value: bytes):
        """`None` when stored; `(case, payload)` of `storage-error` when refused."""
        size = len(key.encode())
        if size == 0:
            return ("invalid-key", "keys must not be empty")
        if size > MAX_KEY_BYTES:
            return ("invalid-key", f"key of {size} bytes is longer than the {MAX_KEY_BYTES}-byte limit")
        current = self.get(key)
        old = entry_size(key, current) if current is not None else 0
        new = entry_size(key, value)
        after = self.used - old + new
        if new > old and after > self.quota:
            return ("quota-exceeded", {"used": self.used, "requested": new - old, "limit": self.quota})
        self.used = after
        self.writes[key] = bytes(value)
        return None

    def delete(self, key: str) -> bool:
        current = self.get(key)
        if current is None:
            return False
        self.used -= entry_size(key, current)
        if key in self.base:
            self.writes[key] = None
        else:
            del self.writes[key]
        return True

    def keys(self, prefix: str) -> list:
        present = {k for k in self.base if k not in self.writes}
        present |= {k for k, v in self.writes.items() if v is not None}
        return sorted((k for k in present if k.startswith(prefix)), key=str.encode)


def apply(state: dict, writes: dict) -> None:
    """Commits a call's writes to a session's stored state."""
    for key, value in writes.items():
        if value is None:
            state.pop(key, None)
        else:
            state[key] = value
