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

from indexer.artifacts import GENERATIONS, list_generations, read_current_id
from indexer.errors import ErrorCode, IngestError, StaticRagError

NO_SPACE = (errno.ENOSPC, errno.EDQUOT)  # no space left on the device; over the user's disk quota


class NoRoom(StaticRagError):
    """The disk cannot hold what the run would write; it stopped before embedding."""


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


def full_disk_message(artifacts: Path, needs: dict[str, int] | None = None, free: int | None = None, dry_run: bool = False) -> str:
    """What a run that ran out of space tells its admin: how much is free, what the generations
    kept there take, and that the served one is untouched. `needs`: what the run would write at
    the least, when it stopped before embedding anything (`check_room`, which says how much is
    `free`); `dry_run`: what a run would need, said before it."""
    free = _free_bytes(artifacts) if free is None else free
    current = read_current_id(artifacts)
    held = _generation_sizes(artifacts, current)
    kept = [f"the generation being served takes {_mb(held.pop(current))}"] if current in held else []
    if held:
        kept.append(f"{len(held)} older one(s) kept for rollback (keep_generations) {_mb(sum(held.values()))}")
    served = f"; {current} is still served" if current else ""
    if needs is not None:
        parts = ", ".join(f"{what} {_mb(size)}" for what, size in needs.items() if size)
        room = (f"the disk holding {artifacts} has {_mb(free or 0)} free, and {'a run would need' if dry_run else 'this run needs'} "
                f"at least {_mb(sum(needs.values()))} there ({parts})")
        end = "Free space there before the run." if dry_run else f"Nothing was embedded or published{served}. Free space there and run again."
        return "; ".join([room, *kept]) + f". {end}"
    details = ([f"{_mb(free)} free"] if free is not None else []) + kept
    where = f"the disk holding {artifacts} is full" + (f" ({'; '.join(details)})" if details else "")
    return f"{where}. Nothing was published{served}. Free space there and run again."


def check_room(artifacts: Path, needs: dict[str, int], written: int = 0, warnings: list[IngestError] | None = None) -> None:
    """Stop a run before it embeds when the disk holding `artifacts` has less room than what it
    will surely write (`needs`: what → bytes, a lower bound; `written`: bytes of it on the disk
    already, which count as room): a run that filled the disk while writing had embedded — with a
    paid provider, paid for — every vector it then threw away. With `warnings` (a dry run), say
    so there instead."""
    free = _free_bytes(artifacts)
    if free is None or sum(needs.values()) <= free + written:
        return
    if warnings is None:
        raise NoRoom(full_disk_message(artifacts, needs, free + written))
    warnings.append(IngestError(ErrorCode.NO_ROOM, "plan", full_disk_message(artifacts, needs, free + written, dry_run=True), level="warning"))


def _free_bytes(folder: Path) -> int | None:
    for path in (folder, *folder.parents):
        if path.exists():
            try:
                usage = shutil.disk_usage(path)
            except OSError:
                return None
            return usage.free if usage.total else None  # a filesystem that tells no sizes (some FUSE mounts) says 0 of 0
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
    return f"{size / 1e6:,.1f} MB" if size >= 100_000 else f"{size / 1e3:,.0f} kB"
