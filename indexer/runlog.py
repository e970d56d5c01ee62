"""The run log: one line per run event in `artifacts/runs.jsonl`, outside every generation, so a
run that published nothing (exit 1, 2, 3, 5) or died half-way is still seen by `index runs`.

A run appends `in_progress` when it starts and one of `success` (published, exit 0), `partial`
(published with document errors, exit 4) or `failed` (nothing published) when it ends. A run
killed before its end has no end line; reading the log on the machine that ran it tells the two
apart by its process: `running`, or `unfinished` (killed or crashed). Lines are appended whole
with O_APPEND and fsynced; a reader skips a line a crash cut short.
"""

from __future__ import annotations

import errno
import json
import os
import socket
from datetime import datetime, timezone
from pathlib import Path

from indexer.processes import alive

RUNLOG = "runs.jsonl"
STATUSES = ("in_progress", "success", "partial", "failed")  # as logged; `read` also says `running` and `unfinished`
PUBLISHED_NOTHING = ("failed", "in_progress", "running", "unfinished")  # statuses `read` gives a run that published nothing
MAX_ERRORS = 20  # per run: the first ones, with the count; the generation's source_events has them all


def _append(artifacts: Path, entry: dict) -> None:
    Path(artifacts).mkdir(parents=True, exist_ok=True)
    line = (json.dumps(entry, default=str, ensure_ascii=False) + "\n").encode("utf-8")
    path = Path(artifacts) / RUNLOG
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        written = os.write(fd, line)
        if written < len(line):  # the disk filled up mid-line: take the part back, or the next line would be glued to it
            os.ftruncate(fd, os.fstat(fd).st_size - written)
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        os.fsync(fd)
    except OSError as exc:  # say which file: "No space left on device" alone does not say which disk
        raise OSError(exc.errno, exc.strerror, str(path)) from None
    finally:
        os.close(fd)


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


def started(artifacts: Path, run_id: str, providers: list[str] | None, full_refresh: bool = False) -> None:
    _append(artifacts, {"run_id": run_id, "status": "in_progress", "started_at": _now(), "providers": providers, "full_refresh": full_refresh,
                        "host": socket.gethostname(), "pid": os.getpid()})


def finished(artifacts: Path, run_id: str, status: str, exit_code: int, summary: dict | None = None, error: str | None = None) -> None:
    """The run's outcome: its status, exit code, and either its summary (counts, generation, first errors) or the error that stopped it."""
    entry = {"run_id": run_id, "status": status, "finished_at": _now(), "exit_code": exit_code}
    if summary is not None:
        errors = summary.get("errors", [])
        entry |= {
            "generation_id": summary.get("generation"),
            "unchanged": summary.get("unchanged", False),
            "built_on": summary.get("built_on"),
            "documents": summary.get("documents"),
            "total_documents": summary.get("total_documents"),
            "chunks": summary.get("chunks"),
            "cost_usd": summary.get("cost_usd"),
            "peak_rss_mb": summary.get("peak_rss_mb"),
            "error_count": len(errors),
            "errors": errors[:MAX_ERRORS],
        }
    if error is not None:
        entry["error"] = error
    _append(artifacts, entry)


def read(artifacts: Path) -> list[dict]:
    """Every logged run, its events merged (the last status wins), newest first."""
    path = Path(artifacts) / RUNLOG
    if not path.exists():
        return []
    runs: dict[str, dict] = {}
    for line in path.read_bytes().split(b"\n"):
        try:
            entry = json.loads(line)
        except ValueError:
            continue  # blank, or cut short by a crash
        if isinstance(entry, dict) and entry.get("run_id"):
            runs.setdefault(entry["run_id"], {}).update(entry)
    for run in runs.values():
        if run.get("status") == "in_progress":
            run["status"] = _still_running(run)
    return sorted(runs.values(), key=lambda r: r.get("started_at") or r.get("finished_at") or "", reverse=True)


def last_completed_start(artifacts: Path) -> datetime | None:
    """When the newest run that came to its end started (it published, or found nothing changed:
    `success` or `partial`); None before the first."""
    for run in read(artifacts):
        if run.get("status") in ("success", "partial"):
            try:
                started = datetime.fromisoformat(run["started_at"])
            except (KeyError, TypeError, ValueError):
                continue
            return started if started.tzinfo else started.replace(tzinfo=timezone.utc)
    return None


def _still_running(run: dict) -> str:
    """A run without an end line: `running` while its process lives, `unfinished` once it is gone
    (killed or crashed), `in_progress` when this machine cannot tell (another host ran it, or a
    version that did not log its process)."""
    pid = run.get("pid")
    if run.get("host") != socket.gethostname() or not isinstance(pid, int):
        return "in_progress"
    try:
        logged = datetime.fromisoformat(run["started_at"]).timestamp()
    except (KeyError, TypeError, ValueError):
        logged = None
    return "running" if alive(pid, since=logged) else "unfinished"  # a process begun after the run logged itself reuses its id
