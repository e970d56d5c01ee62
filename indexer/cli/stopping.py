"""How a command stops when it is asked to: Ctrl-C (SIGINT), SIGTERM (`timeout`, systemd, `docker
stop`, `kill`) and SIGHUP (the terminal or ssh session closed under it).

Under the default handlers of SIGTERM and SIGHUP the process died where it stood: `index eval`
left its index of the dataset in /tmp, `index pull` its half-downloaded archive in the artifacts
folder, and `index run` no end line in the run log. Here both raise `Terminated`, which unwinds
like Ctrl-C's KeyboardInterrupt, closing what the command holds; `main` then ends the process by
the signal itself, as supervisors expect.
"""

from __future__ import annotations

import signal
from contextlib import contextmanager

import click

_STOPPED_BY: int | None = None  # the signal that asked this process to stop, once one has


class Terminated(BaseException):
    """SIGTERM or SIGHUP arrived. A BaseException, so no `except Exception` (one bad document never
    fails a run) swallows it."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum

    @property
    def reason(self) -> str:
        """The signal as a person reads it: "SIGTERM", "SIGHUP (its terminal closed)"."""
        return "SIGHUP (its terminal closed)" if self.signum == signal.SIGHUP else signal.Signals(self.signum).name


def stop_on_signals() -> None:
    """Install the handlers: SIGTERM and SIGHUP raise `Terminated` (a second one ends the process
    at once), SIGINT raises KeyboardInterrupt as Python's own handler does; each notes the signal
    for `stops_kept`. A signal the parent set to be ignored (nohup) stays ignored."""

    def stop(signum, frame):
        global _STOPPED_BY
        _STOPPED_BY = signum
        signal.signal(signum, signal.SIG_DFL)
        raise Terminated(signum)

    def interrupt(signum, frame):
        global _STOPPED_BY
        _STOPPED_BY = signum
        raise KeyboardInterrupt

    for signum in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(signum) == signal.SIG_DFL:
            signal.signal(signum, stop)
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, interrupt)


def raise_if_stopped() -> None:
    """Raise the stop again if a signal has asked for one. DuckDB can also swallow what the
    handler raised and carry on with its query (2 of 10 tries of a long query in one-off
    /tmp/s39/duck_sig.py): without a second look, the command went on as if never asked. Called
    at each step of progress, in a place where raising is safe."""
    stop = _the_stop()
    if stop is not None:
        raise stop


def _the_stop() -> BaseException | None:
    if _STOPPED_BY is None:
        return None
    return KeyboardInterrupt() if _STOPPED_BY == signal.SIGINT else Terminated(_STOPPED_BY)


@contextmanager
def stops_kept():
    """Give back a stop that a native library turned into an error of its own. DuckDB checks for
    signals during a query and answers one with RuntimeError("Query interrupted"), dropping the
    KeyboardInterrupt or `Terminated` the handler raised: a run stopped while it read the last
    generation ended as "unexpected RuntimeError: Query interrupted", exit 1, not by the signal."""
    try:
        yield
    except Exception as exc:
        stop = _the_stop()
        if stop is None:
            raise
        raise stop from exc


def end_by_signal(stopped: Terminated) -> None:
    """End the process by the signal itself (exit status 143 in a shell for SIGTERM, 129 for SIGHUP)."""
    import os
    import sys

    try:
        click.echo(f"Stopped by {stopped.reason}.", err=True)
        sys.stderr.flush()
    except (OSError, ValueError):  # stderr is gone (a closed pipe or terminal): the signal still ends the process
        pass
    signal.signal(stopped.signum, signal.SIG_DFL)
    signal.raise_signal(stopped.signum)
    os._exit(128 + stopped.signum)  # not reached where the signal ends a process
