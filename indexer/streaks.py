"""Failures that repeat run after run: how long each error of a run has been failing.

A page unshared from the integration, a URL that moved: the document keeps its last good version
and the run exits 4, every night, each night's report reading like the first. The nightly job
succeeds with a warning, and nobody can tell a blip from a page that has been stale for a month.
Each error of a run now carries `failed_runs` (the published runs in a row that had it, this one
included) and `failing_since` (when the first of them began), read from the report.json of the
generation the run builds on.
"""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import datetime
from pathlib import Path

from indexer.artifacts import REPORT
from indexer.errors import IngestError


def count_streaks(errors: list[IngestError], previous, started: datetime) -> None:
    """Set each error's streak in place; `previous`: the PreviousGeneration the run builds on (or None)."""
    if not any(e.level == "error" for e in errors):
        return
    before = _earlier_failures(previous) if previous is not None else {}
    for i, error in enumerate(errors):
        if error.level == "error":
            since, runs = before.get(_key(error.as_dict()), (started.isoformat(timespec="seconds"), 0))
            errors[i] = replace(error, failing_since=since, failed_runs=runs + 1)


def recorded_errors(folder: Path) -> list[dict]:
    """The errors (not warnings) of the run that built the generation in `folder`, as its
    report.json keeps them; [] when it cannot be read."""
    try:
        report = json.loads((folder / REPORT).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return [e for e in report.get("errors") or () if isinstance(e, dict) and e.get("level", "error") == "error"]


def _earlier_failures(previous) -> dict[tuple, tuple[str, int]]:
    """key → (failing_since, failed_runs) of the errors the generation's own run had. A report
    from before streaks were counted counts each error once, since that generation was made."""
    made = previous.manifest.get("created_at", "")
    return {_key(e): (e.get("failing_since") or made, int(e.get("failed_runs") or 1)) for e in recorded_errors(previous.folder)}


def _key(error: dict) -> tuple:
    """The same failure in two runs: the same document (whatever its code), or for a failure of no
    one document (a source that cannot be listed), the same source, step and code."""
    return ("doc", error["doc_id"]) if error.get("doc_id") else ("source", error.get("source"), error.get("step"), str(error.get("code")))
