"""How many memory arenas the C allocator keeps while `index run` works (glibc's malloc).

glibc gives threads arenas of their own, up to eight per core, and what one thread frees stays in
its arena for that arena's threads. A run allocates from several threads (chunking on every core,
requests to a provider, DuckDB's and FAISS's workers), so memory freed in one step sat unused
while another grew. With two arenas the peak RSS of a cold run over the bench-peers harness's
2,000 documents was 266-269 MB instead of 269-281 (six runs each way, half with the harness's
PYTHONHASHSEED=0), over its 10,000 documents 481-482 MB instead of 486-496, in the same time.
"""

from __future__ import annotations

import ctypes

ARENAS = 2
_M_ARENA_MAX = -8  # mallopt's parameter number for the arena limit (malloc.h)


def fewer_arenas(count: int = ARENAS) -> bool:
    """Ask the process's malloc for at most `count` arenas from now on; True when it agreed.
    Does nothing where malloc is not glibc's (macOS has no mallopt; musl's ignores it)."""
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return mallopt(_M_ARENA_MAX, count) == 1
