"""Generations on disk: write one immutable folder, verify it, then publish it atomically.

Layout (the contract is documented in artifacts/README.md):

    <artifacts>/CURRENT                          the live generation id, replaced by atomic rename
    <artifacts>/generations/<id>/manifest.json
    <artifacts>/generations/<id>/meta.duckdb
    <artifacts>/generations/<id>/spaces/<space-id>/{space.json, segments.json, segments/<name>/…}  (indexer/segments.py)

A crash at any point leaves the previous generation served and intact: nothing is
visible under `generations/<id>` until it is complete and fsynced, and `CURRENT`
changes last.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import shutil
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from functools import partial
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from indexer.chance import FILE as CHANCE
from indexer.probe import FILE as PROBE
from indexer.documents import Chunk, Document, utc_naive
from indexer.errors import ArtifactError, IngestError, PublishRefused
from indexer.lexical import ANALYZER
from indexer.metadb import MetaUpdate, stored_chunks, write_metadata
from indexer.segments import SEGMENT_FOLDER, build_postings, check_lexical, open_chunks, open_dense, read_layout, write_space
from indexer.sql import load_sql
from indexer.textspill import TextSpill

SCHEMA_VERSION = 2  # 2: spaces in segments (indexer/segments.py)
READABLE_SCHEMAS = (1, 2)  # 1: one index per space, in the space folder
MANIFEST = "manifest.json"
REPORT = "report.json"
STALE = "stale.json"  # spaces/<id>/stale.json: documents whose chunks there are an older version
CURRENT = "CURRENT"
GENERATIONS = "generations"
TMP_PREFIX = ".tmp-"
PULL_PREFIX = ".pull-"  # `index pull`'s download folder, in the artifacts folder
STALE_SECONDS = 3600


@dataclass(frozen=True)
class SpaceBuild:
    """One embedding space's part of a generation: the chunks it keeps from the previous
    generation's space (by their vector ids there) and the chunks it adds, with their vectors."""

    space_id: str
    manifest: dict
    kept_ids: np.ndarray  # vector ids, in `previous`, of the chunks kept as they are
    added: list[Chunk]
    vectors: np.ndarray | None  # one per chunk of `added`; None once `write_generation` wrote them
    previous: Path | None = None  # the previous generation's folder of this space (None: nothing kept)
    unchanged: bool = False  # exactly the previous space's chunks: every segment is reused as it is
    # Documents whose chunks here are an older version's (the space was not rebuilt since they
    # changed, `--provider`), and when a run last embedded this space (ISO 8601, UTC).
    stale: frozenset[str] = frozenset()
    rebuilt_at: str | None = None
    search: dict | None = None  # the space's search settings from the config (hybrid_weight, min_relevance)
    probe: dict | None = None  # what the provider answered for the probe sentences (indexer/probe.py)
    analyzer: str = ANALYZER["name"]  # what writes its postings: the config's `language` (indexer/lexical.py)

    @property
    def size(self) -> int:
        return len(self.kept_ids) + len(self.added)


@dataclass(frozen=True)
class RunRecord:
    run_id: str
    started_at: datetime
    errors: list[IngestError]  # warnings too (level "warning")
    summary: dict  # RunReport.as_dict()
    decisions: list  # plan.Decision, one per document
    providers: list[str]


GENERATION_ID = re.compile(r"^\d{8}T\d{6}\.\d{6}Z-[0-9a-f]{6}$")  # what new_generation_id writes


def generation_built(generation_id: str) -> datetime | None:
    """When a run began building generation `generation_id`, from its name (UTC); None for a name of another shape."""
    if not GENERATION_ID.match(generation_id):
        return None
    return datetime.strptime(generation_id[:22], "%Y%m%dT%H%M%S.%f").replace(tzinfo=timezone.utc)


def new_generation_id(now: datetime | None = None) -> str:
    """Name order is start-time order (to the microsecond); the suffix keeps concurrent writers apart.

    e.g. `20261122T140501.123456Z-3fa2c1`
    """
    now = (now or datetime.now(timezone.utc)).astimezone(timezone.utc)
    return f"{now:%Y%m%dT%H%M%S.%f}Z-{secrets.token_hex(3)}"


def write_generation(
    artifacts: Path,
    generation_id: str,
    documents: list[Document],
    spaces: list[SpaceBuild],
    run: RunRecord,
    advance=lambda n: None,
    update: MetaUpdate | None = None,
    chance: Callable[[SpaceBuild, Path], dict | None] | None = None,
) -> tuple[Path, dict[str, dict]]:
    """Write a complete generation into a hidden temporary folder and return it (not yet
    published) with what writing each space did (segments, rows written, deleted, compacted).

    `update`: the previous generation's meta.duckdb to update instead of writing all rows again.
    Each space's vectors are let go of once written: `spaces[i].vectors` is None afterwards.
    `chance(build, space_dir)`: the space's chance level (indexer/chance.py) once its segments are
    written, kept in `chance.json` (None: the space has none).
    On any failure, Ctrl-C included, the temporary folder is removed and the error re-raised.
    """
    folder = artifacts / GENERATIONS / f"{TMP_PREFIX}{generation_id}"
    folder.mkdir(parents=True)
    try:
        written = _write(folder, generation_id, documents, spaces, run, advance, update, chance)
    except BaseException:
        discard(folder)
        raise
    return folder, written


class _Titles(Mapping):
    """Each document's title by doc_id, read when asked for. A kept document's is read from the
    previous generation (one query for all of them), which only postings written anew for kept
    rows need — a merge, a move, an upgrade — not every run (8,674 titles: 36 ms)."""

    def __init__(self, documents: list[Document]):
        self.documents = {d.doc_id: d for d in documents}

    def __getitem__(self, doc_id: str) -> str:
        return self.documents[doc_id].title

    def __iter__(self):
        return iter(self.documents)

    def __len__(self) -> int:
        return len(self.documents)


def _write(folder: Path, generation_id: str, documents: list[Document], spaces: list[SpaceBuild], run: RunRecord, advance,
           update: MetaUpdate | None, chance: Callable[[SpaceBuild, Path], dict | None] | None) -> dict[str, dict]:
    now = utc_naive(datetime.now(timezone.utc))

    writes = {}
    # The new segments' postings are built after meta.duckdb is written: building them leaves the
    # heap in pieces that DuckDB's buffers then came on top of (2,000 documents, `index run` seven
    # times each way, with bm25.TERM_RANGE: peak RSS 277-292 MB with the postings first, 271-280 after).
    postings: list = []
    texts = TextSpill(folder)  # the texts of chunks written again (merged or moved) wait on disk until read
    titles = _Titles(documents)  # indexed with their chunks' words (lexical.indexed_text)
    for n, build in enumerate(spaces):
        space_dir = folder / "spaces" / build.space_id
        space_dir.mkdir(parents=True)
        writes[build.space_id] = write_space(space_dir, generation_id, build.space_id, int(build.manifest["dimension"]), build.kept_ids, build.added,
                                             build.vectors, build.previous, partial(stored_chunks, build.previous.parent.parent, build.space_id, spill=texts) if build.previous else _nothing,
                                             titles, postings, analyzer=build.analyzer)
        # The vectors are in the segment now: the caller's list lets go of them (108k vectors:
        # 111 MB) before meta.duckdb is written, the run's memory peak.
        spaces[n] = build = replace(build, vectors=None)
        if build.stale:
            _write_json(space_dir / STALE, {"documents": sorted(build.stale)})
        if build.probe:
            _write_json(space_dir / PROBE, build.probe, indent=None)
        _write_json(space_dir / "space.json", {**build.manifest, "vector_count": build.size})
        advance(1)

    write_metadata(folder / "meta.duckdb", generation_id, documents, spaces, writes, run, now, update)
    build_postings(postings, titles)
    # Measured last, when the rest of the write has let go of its memory (2,000 documents, cold:
    # peak RSS 266-269 MB measured right after each space, 262-267 here; chance._best_cosines has more).
    for build in spaces if chance is not None else ():
        if (level := chance(build, folder / "spaces" / build.space_id)) is not None:
            _write_json(folder / "spaces" / build.space_id / CHANCE, level, indent=None)

    _write_json(folder / REPORT, indent=None, data={  # compact: the pure-Python indenting encoder took 0.18 s over 10,000 decisions
        "run_id": run.run_id,
        "generation": generation_id,
        "summary": {k: v for k, v in run.summary.items() if k != "errors"},
        "decisions": [d.as_dict() for d in run.decisions],
        "errors": run.summary["errors"],
    })
    now = datetime.now(timezone.utc)
    created = now.isoformat(timespec="seconds")
    manifest = {
        "schema_version": SCHEMA_VERSION,
        "generation_id": generation_id,
        "run_id": run.run_id,
        "created_at": created,
        "spaces": {b.space_id: _space_entry(b, now.isoformat(timespec="microseconds")) for b in spaces},
        "counts": {"documents": len(documents), "chunks": sum(b.size for b in spaces)},
        "files": {},
    }
    # Hard-linked segments are byte-for-byte the previous generation's: take their checksums from
    # its manifest (but for the postings written anew: those segments are summed again).
    known: dict[str, dict] = {}
    for build in spaces:
        if names := [n for n in writes[build.space_id].linked if n not in writes[build.space_id].reanalyzed]:
            previous = json.loads((build.previous.parent.parent / MANIFEST).read_text(encoding="utf-8"))["files"]
            prefixes = tuple(f"spaces/{build.previous.name}/{SEGMENT_FOLDER}/{name}/" for name in names)
            known.update({f"spaces/{build.space_id}/" + name.split("/", 2)[2]: info for name, info in previous.items() if name.startswith(prefixes)})
    manifest["files"] = {
        name: known.get(name) or {"bytes": p.stat().st_size, "sha256": _file_sha256(p)}
        for p in sorted(folder.rglob("*"))
        if p.is_file() and (name := p.relative_to(folder).as_posix())
    }
    _write_json(folder / MANIFEST, manifest)
    _fsync_tree(folder)
    advance(1)
    return {space_id: write.as_dict() for space_id, write in writes.items()}


def _nothing(vector_ids) -> list[Chunk]:
    return []


def _space_entry(build: SpaceBuild, now: str) -> dict:
    entry = {
        "path": f"spaces/{build.space_id}", "vectors": build.size, "dimension": build.manifest["dimension"],
        "rebuilt_at": build.rebuilt_at or now, "stale_documents": len(build.stale),
    }
    return entry | ({"search": build.search} if build.search else {})


def verify_generation(folder: Path) -> dict:
    """Refuse a generation that a server could not serve; returns its manifest."""
    import duckdb

    manifest = read_manifest(folder)
    if manifest["counts"]["documents"] == 0 or manifest["counts"]["chunks"] == 0:
        raise PublishRefused("the generation is empty (0 documents or 0 chunks); check that the sources point at content")
    db = duckdb.connect(str(folder / "meta.duckdb"), read_only=True)
    try:
        rows = {space_id: count for space_id, count, _ in db.execute(load_sql("chunk_counts_by_space")).fetchall()}
    finally:
        db.close()
    for space_id, info in manifest["spaces"].items():
        try:  # every segment's vectors, postings and chunk lines agree with its row count
            layout = read_layout(folder / info["path"])
            open_dense(layout, int(info["dimension"]))
            check_lexical(layout)
            stores = open_chunks(layout)
            if stores is not None:
                stores.close()
        except (ArtifactError, ValueError) as exc:
            raise PublishRefused(f"space {space_id}: {exc}") from None
        if layout.live != rows.get(space_id, 0):
            raise PublishRefused(f"space {space_id}: {layout.live} live vectors but {rows.get(space_id, 0)} chunk rows")
    return manifest


def publish(artifacts: Path, tmp_folder: Path, generation_id: str, keep: int) -> Path:
    """Rename the finished folder into place, then point CURRENT at it; prune to the newest `keep`."""
    final = artifacts / GENERATIONS / generation_id
    os.rename(tmp_folder, final)
    _fsync_dir(final.parent)
    set_current(artifacts, generation_id)
    prune_generations(artifacts, keep)
    return final


def set_current(artifacts: Path, generation_id: str) -> None:
    """Replace CURRENT atomically: write beside it, fsync, rename over it, fsync the folder."""
    tmp_current = artifacts / f"{CURRENT}.{generation_id}.tmp"
    with open(tmp_current, "w", encoding="utf-8") as f:
        f.write(generation_id + "\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp_current, artifacts / CURRENT)
    _fsync_dir(artifacts)


def prune_generations(artifacts: Path, keep: int) -> list[str]:
    """Delete published generations beyond the newest `keep`, never the current one, and
    what killed runs and pulls left behind (`.tmp-*` and `.pull-*` folders, `CURRENT.*.tmp`
    files) once nothing in it has changed for STALE_SECONDS — a live run writes its temporary
    folder in minutes, and a live download keeps touching its archive.
    """
    current = read_current_id(artifacts)
    removed = [g for g in list_generations(artifacts)[::-1][keep:] if g != current]
    for name in removed:
        shutil.rmtree(artifacts / GENERATIONS / name, ignore_errors=True)
    cutoff = time.time() - STALE_SECONDS
    leftovers = [*(artifacts / GENERATIONS).glob(f"{TMP_PREFIX}*"), *artifacts.glob(f"{PULL_PREFIX}*"), *artifacts.glob(f"{CURRENT}.*.tmp")]
    for leftover in leftovers:
        try:
            changed = _last_changed(leftover)
        except OSError:  # removed meanwhile (its run or pull ended)
            continue
        if changed < cutoff:
            shutil.rmtree(leftover, ignore_errors=True) if leftover.is_dir() else leftover.unlink(missing_ok=True)
    return removed


def _last_changed(path: Path) -> float:
    """When `path` last changed: a folder's own time, or that of a file directly in it if later
    (writing into a file does not touch its folder's time)."""
    if not path.is_dir():
        return path.stat().st_mtime
    return max([path.stat().st_mtime, *(child.stat().st_mtime for child in path.iterdir())])


def discard(tmp_folder: Path) -> None:
    shutil.rmtree(tmp_folder, ignore_errors=True)


def list_generations(artifacts: Path) -> list[str]:
    folder = artifacts / GENERATIONS
    if not folder.is_dir():
        return []
    return sorted(p.name for p in folder.iterdir() if p.is_dir() and not p.name.startswith("."))


def fallback_order(artifacts: Path) -> list[str]:
    """Kept generations to use in place of the one CURRENT names when it cannot be read: those
    older than it newest first (what `index rollback` would choose), then the newer ones (kept
    after a rollback away from them). All of them, newest first, when CURRENT names none."""
    named = read_current_id(artifacts)
    named = named if named and GENERATION_ID.match(named) else None
    kept = [g for g in list_generations(artifacts)[::-1] if g != named]
    older = [g for g in kept if named is None or g < named]
    return older + [g for g in kept if g not in older]


def read_current_id(artifacts: Path) -> str | None:
    try:
        return (artifacts / CURRENT).read_text(encoding="utf-8").strip() or None
    except FileNotFoundError:
        return None


def current_generation(artifacts: Path) -> Path:
    """The folder CURRENT names, or an ArtifactError that says what is wrong and what to do."""
    artifacts = Path(artifacts)
    if not artifacts.is_dir():
        raise ArtifactError(f"artifacts folder not found: {artifacts} (run `index run` first, or pass --artifacts)")
    current = artifacts / CURRENT
    if not current.exists():
        if kept := list_generations(artifacts):
            raise ArtifactError(f"{current} is missing, though {len(kept)} generation(s) are kept: `index rollback {kept[-1]}` serves the "
                                "newest again, and the next `index run` builds on it")
        raise ArtifactError(f"no generation published in {artifacts}: {CURRENT} is missing (run `index run` first)")
    generation_id = read_current_id(artifacts)
    if not generation_id or "/" in generation_id or generation_id.startswith("."):
        raise ArtifactError(f"{current} is empty or corrupt ({generation_id!r}); run `index run` to publish a new generation")
    folder = artifacts / GENERATIONS / generation_id
    if not folder.is_dir():
        raise ArtifactError(
            f"{CURRENT} names generation {generation_id}, but {folder} does not exist; "
            f"available: {', '.join(list_generations(artifacts)) or 'none'}"
        )
    return folder


def damaged(folder: Path, exc: Exception, advice: bool = True) -> ArtifactError:
    """The error for a generation whose meta.duckdb DuckDB cannot read (bit rot, a bad copy:
    "Corrupt database file: computed checksum … does not match"), with what to do about it."""
    said = f"{folder / 'meta.duckdb'} cannot be read ({exc}): the generation is damaged"
    return ArtifactError(said + ("; `index rollback` serves the one before it, and the next `index run` builds on the newest kept "
                                 "generation that can be read" if advice else ""))


def read_manifest(folder: Path) -> dict:
    path = folder / MANIFEST
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ArtifactError(f"{path} is missing: the generation is incomplete") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ArtifactError(f"{path} is corrupt: {exc}") from None
    if manifest.get("schema_version") not in READABLE_SCHEMAS:
        raise ArtifactError(f"{path}: schema version {manifest.get('schema_version')!r}; this version reads {', '.join(map(str, READABLE_SCHEMAS))}")
    check_manifest_paths(manifest, path)
    for name, info in manifest.get("files", {}).items():
        file = folder / name
        if not file.is_file() or file.stat().st_size != info["bytes"]:
            raise ArtifactError(f"{file} is missing or has the wrong size: the generation is damaged")
    return manifest


def read_stale(space_dir: Path) -> frozenset[str]:
    """The documents `spaces/<id>/stale.json` lists (none when the file is absent)."""
    path = Path(space_dir) / STALE
    return frozenset(json.loads(path.read_text(encoding="utf-8"))["documents"]) if path.exists() else frozenset()


def space_rebuilt_at(manifest: dict, space_id: str) -> str:
    """When a run last embedded the space; generations from before the field: their creation."""
    return manifest["spaces"].get(space_id, {}).get("rebuilt_at") or manifest["created_at"]


def check_manifest_paths(manifest: dict, where: object) -> None:
    """Every file a manifest lists must lie inside its generation: a relative POSIX path with no
    `..`, `.` or empty parts and no backslash, with a size and a sha256. A manifest naming
    `../../etc/hostname` would otherwise make a reader check (and `index unpack` vouch for) a file
    outside the generation."""
    files = manifest.get("files")
    if not isinstance(files, dict):
        raise ArtifactError(f"{where}: `files` must be an object of path → {{bytes, sha256}}")
    for name, info in files.items():
        parts = name.split("/")
        if not name or name.startswith("/") or "\\" in name or any(part in ("", ".", "..") for part in parts) or name == MANIFEST:
            raise ArtifactError(f"{where}: {name!r} is not a path inside the generation")
        if not (isinstance(info, dict) and isinstance(info.get("bytes"), int) and info["bytes"] >= 0 and isinstance(info.get("sha256"), str)):
            raise ArtifactError(f"{where}: {name!r} needs a size (`bytes`) and a `sha256`")


def _write_json(path: Path, data: dict, indent: int | None = 2) -> None:
    path.write_text(json.dumps(data, indent=indent, ensure_ascii=False, default=str) + "\n", encoding="utf-8")


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _fsync_tree(folder: Path) -> None:
    for path in folder.rglob("*"):
        if path.is_file():
            fd = os.open(path, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
    for path in [folder, *(p for p in folder.rglob("*") if p.is_dir())]:
        _fsync_dir(path)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
