"""Looking after published generations: what is live, what runs built them, how two differ, rolling back."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from indexer.artifacts import GENERATIONS, current_generation, damaged, list_generations, read_current_id, read_manifest, set_current, space_rebuilt_at
from indexer.chance import ChanceLevel, read_level
from indexer.errors import ArtifactError
from indexer.sql import load_sql, read_as_current
from indexer.streaks import recorded_errors


def _open(folder: Path, advice: bool = True):
    """A read-only connection to a generation's meta.duckdb; `artifacts.damaged` when it fails (`advice`: with what to do)."""
    import duckdb

    try:
        db = duckdb.connect(str(folder / "meta.duckdb"), read_only=True)
    except duckdb.Error as exc:
        raise damaged(folder, exc, advice) from None
    try:
        read_as_current(db)  # an older generation's documents lack columns the queries read
    except duckdb.Error as exc:
        db.close()
        raise damaged(folder, exc, advice) from None
    return db


def run_of(folder: Path) -> dict:
    """The ingest_runs row of a generation, timestamps as ISO strings."""
    db = _open(folder)
    try:
        return _run_row(db)
    finally:
        db.close()


def _run_row(db) -> dict:
    result = db.execute(load_sql("ingest_run"))
    columns = [d[0] for d in result.description]
    row = dict(zip(columns, result.fetchone()))
    for key in ("started_at", "finished_at"):
        row[key] = row[key].isoformat() + "Z"
    return row


def _sources(db) -> dict[str, dict]:
    """Per source of a generation: its type, its documents, how many have no URL, and how many link
    to a Notion page only the workspace's members can open."""
    rows = db.execute(load_sql("documents_by_source")).fetchall()
    return {source: {"type": kind, "documents": documents, "without_url": without_url, "members_only": members_only}
            for source, kind, documents, without_url, members_only in rows}


def document_urls(artifacts: Path, source: str | None = None) -> list[tuple]:
    """(doc_id, source, source_type, url, anchor_offsets, anchor_names) of the live generation's
    documents that have a URL, of one source or of all, by source and doc_id."""
    db = _open(current_generation(artifacts))
    try:
        return db.execute(load_sql("document_urls"), {"source": source}).fetchall()
    finally:
        db.close()


def status(artifacts: Path) -> dict:
    """The live generation, its contents, the run that built it, and the generations kept for rollback."""
    folder = current_generation(artifacts)
    manifest = read_manifest(folder)
    db = _open(folder)  # one connection for the run that built it and its sources
    try:
        run, sources = _run_row(db), _sources(db)
    finally:
        db.close()
    return {
        "artifacts": str(Path(artifacts).resolve()),
        "generation": manifest["generation_id"],
        "built_at": manifest["created_at"],
        "documents": manifest["counts"]["documents"],
        "sources": sources,
        "spaces": {
            space_id: {"vectors": info["vectors"], "stale_documents": info.get("stale_documents", 0), "rebuilt_at": space_rebuilt_at(manifest, space_id),
                       "chance_level": ChanceLevel.of(read_level(folder / info["path"])) is not None}
            for space_id, info in manifest["spaces"].items()
        },
        "last_run": run,
        "failing": _failing(folder),
        "unpublished_since": _unpublished_since(artifacts, run["started_at"]),
        "generations": list_generations(artifacts),
    }


def _failing(folder: Path) -> dict | None:
    """The documents (and listings) that failed in the run that built the generation, each kept at
    its last good version: how many, and the one failing longest (indexer/streaks.py); None when
    none did, or the report cannot say."""
    errors = recorded_errors(folder)
    if not errors:
        return None
    longest = max(errors, key=lambda e: e.get("failed_runs") or 1)
    return {"errors": len(errors), "longest_runs": longest.get("failed_runs") or 1, "longest_since": longest.get("failing_since"),
            "longest": longest.get("doc_id") or longest.get("source")}


def _unpublished_since(artifacts: Path, built: str) -> list[dict]:
    """Runs begun after the one that built the served generation that published nothing (failed,
    killed, crashed or still running), newest first: a status that only named the run behind what
    is served hid last night's failure."""
    from indexer import runlog

    since = _instant(built)
    return [{k: run.get(k) for k in ("run_id", "status", "started_at", "exit_code", "error")} for run in runlog.read(artifacts)
            if run["status"] in runlog.PUBLISHED_NOTHING and run.get("started_at") and _instant(run["started_at"]) > since]


def _instant(text: str) -> datetime:
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=timezone.utc)


OLD_STATUSES = {"ok": "success", "document_errors": "partial"}  # what generations from before the run log wrote
COUNTS = ("added", "updated", "metadata_only", "skipped", "deleted", "failed")


def runs(artifacts: Path, limit: int = 10) -> list[dict]:
    """Every run newest first, failed ones too: the run log (`runs.jsonl`), then the runs behind
    kept generations that predate it. One shape: run_id, status, started_at, finished_at,
    generation, current, unchanged (nothing changed, no generation written), documents
    (counts by decision), error_count, error; logged runs also exit_code, errors and peak_rss_mb."""
    from indexer import runlog

    current = read_current_id(artifacts)
    out = [_logged_run(row, current) for row in runlog.read(artifacts)]
    known = {row["run_id"] for row in out}
    logged_generations = {row["generation"] for row in out if row["generation"]}
    for generation_id in list_generations(artifacts):
        if generation_id in logged_generations:
            continue  # its run is in the log already: no need to open its database
        folder = Path(artifacts) / GENERATIONS / generation_id
        try:
            row = run_of(folder)
        except Exception as exc:  # a damaged generation is listed, not fatal
            out.append({"run_id": None, "generation": generation_id, "status": f"unreadable: {exc}", "started_at": "", "current": generation_id == current})
            continue
        if row["run_id"] not in known:
            out.append({
                "run_id": row["run_id"], "status": OLD_STATUSES.get(row["status"], row["status"]), "started_at": row["started_at"],
                "finished_at": row["finished_at"], "generation": generation_id, "current": generation_id == current,
                "documents": {k: row[k] for k in COUNTS}, "total_documents": row["documents"], "error_count": row["errors"], "error": None,
            })
    out.sort(key=lambda r: r.get("started_at") or "", reverse=True)
    return out[:limit]


def _logged_run(row: dict, current: str | None) -> dict:
    return {
        "run_id": row["run_id"], "status": row["status"], "started_at": row.get("started_at"), "finished_at": row.get("finished_at"),
        "generation": row.get("generation_id"), "current": bool(row.get("generation_id")) and row.get("generation_id") == current,
        "unchanged": row.get("unchanged", False), "documents": row.get("documents"), "total_documents": row.get("total_documents"), "exit_code": row.get("exit_code"),
        "error_count": row.get("error_count", 0), "error": row.get("error"), "errors": row.get("errors", []),
        "peak_rss_mb": row.get("peak_rss_mb"),
    }


@dataclass(frozen=True)
class Diff:
    generations: tuple[str, str]  # (from, to)
    added: list[str]
    changed: list[str]
    metadata_changed: list[str]
    removed: list[str]
    titles: dict[str, str]  # doc_id -> title (the newer one where both have it)

    def as_dict(self) -> dict:
        return {"from": self.generations[0], "to": self.generations[1], "added": self.added, "changed": self.changed,
                "metadata_changed": self.metadata_changed, "removed": self.removed, "titles": self.titles}


def diff(artifacts: Path, a: str = "previous", b: str = "current") -> Diff:
    """Documents that differ from generation `a` to generation `b` (ids, unique prefixes, `current` or `previous`)."""
    a, b = resolve(artifacts, a), resolve(artifacts, b)
    states, titles = [], {}
    for generation_id in (a, b):
        db = _open(_generation_folder(artifacts, generation_id))
        try:
            states.append({doc_id: (content, meta) for doc_id, _, content, meta, _ in db.execute(load_sql("documents_state")).fetchall()})
            titles.update(db.execute("SELECT doc_id, title FROM documents").fetchall())
        finally:
            db.close()
    old, new = states
    added, removed = sorted(set(new) - set(old)), sorted(set(old) - set(new))
    changed = sorted(d for d in set(old) & set(new) if old[d][0] != new[d][0])
    metadata_changed = sorted(d for d in set(old) & set(new) if old[d][0] == new[d][0] and old[d][1] != new[d][1])
    listed = {*added, *removed, *changed, *metadata_changed}
    return Diff((a, b), added, changed, metadata_changed, removed, {d: t for d, t in titles.items() if d in listed})


def resolve(artifacts: Path, name: str) -> str:
    """A kept generation's id from what a person types: the id, a unique prefix of it, `current`
    (what CURRENT names) or `previous` (the newest kept generation older than the current one)."""
    kept = list_generations(artifacts)
    current = read_current_id(artifacts)
    if current is None and not kept:
        raise ArtifactError(f"nothing is published in {artifacts} yet (run `index run` first)")
    if name.lower() == "current":
        if current is None:
            raise ArtifactError(f"nothing is published in {artifacts}: CURRENT is missing; kept: {', '.join(kept)} (index rollback GEN names one)")
        return current
    if name.lower() == "previous":
        older = [g for g in kept if current is None or g < current]
        if not older:
            raise ArtifactError(f"no generation older than {current} is kept; kept: {', '.join(kept) or 'none'}")
        return older[-1]
    if name in kept:
        return name
    matches = [g for g in kept if g.startswith(name)]
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise ArtifactError(f"{name!r} matches {len(matches)} kept generations ({', '.join(matches)}); type more of the id")
    raise ArtifactError(f"no generation {name!r} in {artifacts}; kept: {', '.join(kept) or 'none'} (or: current, previous)")


def rollback(artifacts: Path, target: str | None = None) -> tuple[str, str]:
    """Point CURRENT at `target` (default: the newest generation older than the current one). Returns (from, to)."""
    artifacts = Path(artifacts)
    current = read_current_id(artifacts)
    target = resolve(artifacts, target or "previous")
    folder = _generation_folder(artifacts, target)
    try:  # refuse a damaged generation before pointing servers at it: its files' sizes, and a database
        read_manifest(folder)  # that opens (one failing its checksums was pointed at, and refused by every server)
        _open(folder, advice=False).close()
    except ArtifactError as exc:
        others = [g for g in list_generations(artifacts) if g != target]
        raise ArtifactError(f"{exc}; CURRENT is unchanged. Kept: {', '.join(others) or 'none'}") from None
    set_current(artifacts, target)
    return current or "", target


def _generation_folder(artifacts: Path, generation_id: str) -> Path:
    folder = Path(artifacts) / GENERATIONS / generation_id
    if "/" in generation_id or generation_id.startswith(".") or not folder.is_dir():
        kept = ", ".join(list_generations(artifacts)) or "none"
        raise ArtifactError(f"no generation {generation_id!r} in {artifacts}; kept: {kept}")
    return folder
