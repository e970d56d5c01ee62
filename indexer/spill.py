"""Vector arrays whose memory a run can give back while it still needs their values.

A cold run over 10,000 documents holds 108k vectors (110 MB at 256 dimensions, 660 MB at 1,536)
from the moment they are embedded until its segment's index is built, and FAISS copies them into
its lists while the array is alive: the run's peak (597 MB of 611) was both copies at once. A big
array is therefore a shared mapping of a temporary file (unlinked as soon as it is created, so a
crash leaves nothing behind): its pages can be let go (`release`) and are read back from the page
cache — or the file — when used again. The values never change; only where they live does.
"""

from __future__ import annotations

import mmap
import os
import tempfile
from pathlib import Path

import numpy as np

SPILL_BYTES = 32 << 20  # smaller arrays stay in anonymous memory: 2,000 documents' 22 MB of vectors do


def vector_array(rows: int, dimension: int, folder: Path | None) -> np.ndarray:
    """A zeroed float32 array of `rows` × `dimension`, file-backed in `folder` when it is big."""
    size = rows * dimension * 4
    if folder is None or size < SPILL_BYTES or not hasattr(mmap, "MADV_DONTNEED"):
        return np.zeros((rows, dimension), dtype=np.float32)
    try:
        mapping = _file_mapping(folder, size)
    except OSError:  # no room on that disk, or a filesystem that cannot map files: memory it is
        return np.zeros((rows, dimension), dtype=np.float32)
    return np.frombuffer(mapping, dtype=np.float32).reshape(rows, dimension)


def _file_mapping(folder: Path, size: int) -> mmap.mmap:
    folder.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=".vectors-", dir=folder)
    try:
        os.unlink(name)
        # The disk space is taken now: a write into a mapped hole on a full disk would kill the
        # process (SIGBUS) instead of failing here.
        if hasattr(os, "posix_fallocate"):
            os.posix_fallocate(fd, 0, size)
        else:
            os.ftruncate(fd, size)
        return mmap.mmap(fd, size)  # shared: released pages keep their values in the file
    finally:
        os.close(fd)


def release(array: np.ndarray, start: int = 0, stop: int | None = None) -> None:
    """Give back the memory of rows start … stop − 1 of a file-backed array (whole pages inside
    them); their values stay readable. Does nothing for an array in anonymous memory."""
    mapping = array.base
    while mapping is not None and not isinstance(mapping, mmap.mmap):
        mapping = mapping.obj if isinstance(mapping, memoryview) else getattr(mapping, "base", None)
    if mapping is None or array.ndim != 2 or not array.flags.c_contiguous:
        return
    stop = len(array) if stop is None else min(stop, len(array))
    offset = array.ctypes.data - np.frombuffer(mapping, dtype=np.uint8).ctypes.data
    page = mmap.PAGESIZE
    first = -(-(offset + start * array.strides[0]) // page) * page  # inward to whole pages
    last = (offset + stop * array.strides[0]) // page * page
    if last > first:
        mapping.madvise(mmap.MADV_DONTNEED, first, last - first)
