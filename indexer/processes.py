"""Is the process that wrote something still alive? Asked of a run with no end line in the run log
(`running` or `unfinished`) and of a temporary folder a killed command may have left behind."""

from __future__ import annotations

import os
from pathlib import Path


def alive(pid: int, since: float | None = None) -> bool:
    """Whether process `pid` lives on this machine — and, given `since` (Unix time: when what it
    wrote was logged), whether it began by then; one that began later reuses the id of a process
    that is gone. Where /proc cannot say when it began, a living process counts."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # alive, another user's
    if since is None:
        return True
    began = started(pid)
    return began is None or began <= since + 2  # boot time is whole seconds


def started(pid: int) -> float | None:
    """When process `pid` began (Unix time), from /proc; None where there is no /proc."""
    try:
        ticks = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19])
        boot = next(int(line.split()[1]) for line in Path("/proc/stat").read_text().splitlines() if line.startswith("btime "))
    except (OSError, ValueError, IndexError, StopIteration):
        return None
    return boot + ticks / os.sysconf("SC_CLK_TCK")
