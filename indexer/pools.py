"""Thread pools that let Ctrl-C and SIGTERM through at once.

`with ThreadPoolExecutor()` waits, on every way out, for the tasks already running: after Ctrl-C
an embedding request to a provider that hangs kept `index run` alive until it timed out, and its
retries after that (40 s for one 40-second request against a loopback provider). Here an interrupt
(KeyboardInterrupt, SIGTERM's and SIGHUP's `Terminated`: exceptions that are not `Exception`s) cancels what has
not started and leaves the running tasks behind; the command's end (`indexer.cli.base.main`)
does not wait for their threads either. An ordinary error still waits for them, as before.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager


@contextmanager
def thread_pool(max_workers: int, name: str) -> Iterator[ThreadPoolExecutor]:
    pool = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix=name)
    interrupted = False
    try:
        yield pool
    except BaseException as exc:
        interrupted = not isinstance(exc, Exception)
        raise
    finally:
        pool.shutdown(wait=not interrupted, cancel_futures=interrupted)
