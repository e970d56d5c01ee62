"""Temporary folders that a killed process does not leave behind for good.

`index eval` indexes its dataset in a temporary folder (20–25 MB for SciFact, more for a larger
set) and `index serve` keeps its workers' metrics in one. Ctrl-C, SIGTERM and SIGHUP remove them;
SIGKILL (the OOM killer, `kill -9`, a CI runner's hard timeout) cannot, and nothing removed them
after. Each folder's name now carries the host and the process id that made it, and the next
command of the same kind removes those whose process is gone.
"""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
from pathlib import Path

from indexer.processes import alive

PREFIX = "static-rag-"


def scratch_folder(kind: str) -> tempfile.TemporaryDirectory:
    """A new temporary folder for `kind` ("eval", "metrics"), once the ones killed processes of
    that kind left on this machine are removed."""
    sweep(kind)
    return tempfile.TemporaryDirectory(prefix=f"{_prefix(kind)}{os.getpid()}-")


def sweep(kind: str, root: Path | None = None) -> list[Path]:
    """Remove the `kind` folders in the temporary directory whose process has ended (or whose id a
    later process reuses); return them. Only this host's (a /tmp shared between containers holds
    other hosts' live ones) and only the current user's."""
    prefix = _prefix(kind)
    removed = []
    for folder in Path(root or tempfile.gettempdir()).glob(f"{prefix}*"):
        pid = folder.name[len(prefix):].partition("-")[0]
        try:
            info = folder.stat()
        except OSError:  # removed meanwhile by another sweep
            continue
        mine = folder.is_dir() and info.st_uid == os.getuid()
        # Its maker began before it last wrote there: a process begun later only reuses the id.
        if mine and pid.isdigit() and not alive(int(pid), since=info.st_mtime):
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed


def _prefix(kind: str) -> str:
    return f"{PREFIX}{kind}-{socket.gethostname()}-"
