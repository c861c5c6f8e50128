"""What the wheel's tests share: a host on a fresh SQLite file, and the large-observation store's reference log."""

import pytest

from scratchpad import Host


def big_log():
    """The large-observation store's reference log: exactly 89,042 bytes, its last line the one to find."""
    lines = []
    for i in range(2095):
        level = "ERROR" if i % 100 == 50 else "INFO"
        t = 10 * 3600 + i + 1
        lines.append(f"{level} 2026-04-26 {t // 3600:02}:{t // 60 % 60:02}:{t % 60:02} event number {i}\n")
    log = "".join(lines) + "ERROR 2026-04-26 23:59:59 LAST_CRITICAL_EVENT\n"
    assert len(log) == 89_042
    return log


@pytest.fixture
def host(tmp_path):
    return Host.open(str(tmp_path / "agent.db"))
