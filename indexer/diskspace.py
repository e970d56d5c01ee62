"""A full disk: told apart from other failures, and said in words a person can act on.

Each library says it its own way: Python and numpy raise OSError(ENOSPC), DuckDB an IOException
whose text ends "No space left on device", FAISS a RuntimeError quoting its C++ assertion with the
same words in parentheses. A run that filled its disk ended with "unexpected RuntimeError: Error in
void faiss::write_index(...) at /project/faiss/impl/index_write.cpp:499: ...".
"""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path

from indexer.artifacts import GENERATIONS, list_generations

NO_SPACE = (errno.ENOSPC, errno.EDQUOT)  # no space left on the device; over the user's disk quota


def out_of_space(exc: BaseException | None) -> bool:
    """Whether `exc`, or an error it was raised from, says that a disk or a quota is full."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, OSError) and exc.errno in NO_SPACE:
            return True
        if any(os.strerror(code) in str(exc) for code in NO_SPACE):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


def full_disk_message(artifacts: Path, current: str | None) -> str:
    """What a run that ran out of space tells its admin: how much is free, what the generations
    kept there take, and that the served one is untouched."""
    free = _free_bytes(artifacts)
    held = _generation_sizes(artifacts, current)
    kept = [f"the generation being served takes {_mb(held.pop(current))}"] if current in held else []
    if held:
        kept.append(f"{len(held)} older one(s) kept for rollback (keep_generations) {_mb(sum(held.values()))}")
    details = ([f"{_mb(free)} free"] if free is not None else []) + kept
    where = f"the disk holding {artifacts} is full" + (f" ({'; '.join(details)})" if details else "")
    served = f"; {current} is still served" if current else ""
    return f"{where}. Nothing was published{served}. Free space there and run again."


def _free_bytes(folder: Path) -> int | None:
    for path in (folder, *folder.parents):
        if path.exists():
            try:
                return shutil.disk_usage(path).free
            except OSError:
                return None
    return None


def _generation_sizes(artifacts: Path, current: str | None) -> dict[str, int]:
    """Bytes of each generation's files; a file shared with the served generation (hard-linked
    segments) counts only there, so the older ones' figure is what removing them would free."""
    sizes: dict[str, int] = {}
    counted: set[tuple[int, int]] = set()
    try:
        names = sorted(list_generations(artifacts), key=lambda name: name != current)  # the served one first
    except OSError:
        return sizes
    for name in names:
        total = 0
        for root, _, files in os.walk(artifacts / GENERATIONS / name):
            for file in files:
                try:
                    info = os.lstat(os.path.join(root, file))
                except OSError:
                    continue
                if (info.st_dev, info.st_ino) not in counted:
                    counted.add((info.st_dev, info.st_ino))
                    total += info.st_size
        sizes[name] = total
    return sizes


def _mb(size: int) -> str:
    return f"{size / 1e6:,.1f} MB"
