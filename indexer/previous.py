"""Read access to the generation a run starts from (the one CURRENT names), for reuse.

Two kinds of reuse, both keyed so that vectors from different models never meet:
- the vector cache: an unchanged chunk text keeps its vector (same space, same chunk_hash);
- carry-over: a space this run does not rebuild (`--provider`) keeps its chunks for every
  document whose content is unchanged.
"""

from __future__ import annotations

import json
import threading
from contextlib import contextmanager
from dataclasses import fields
from pathlib import Path

import numpy as np

from indexer.artifacts import CURRENT, GENERATIONS, current_generation, damaged, fallback_order, read_manifest, read_stale, space_rebuilt_at
from indexer.documents import Document, FetchState, utc_aware
from indexer.embedders import same_space
from indexer.errors import ArtifactError, ErrorCode, IngestError
from indexer.plan import PreviousDocument
from indexer.segments import lexical_outdated, read_layout, stored_vectors
from indexer.sql import load_sql, read_as_current
from indexer.textspill import SpilledText, TextSpill

TEXT_ROWS = 64  # stored texts read at a time (at most these are in memory together when they go to a spill)
HASHES_PER_QUERY = 16_384  # chunk hashes looked up in the vector cache at a time


class PreviousGeneration:
    def __init__(self, folder: Path, served: bool = True):
        import duckdb

        self.folder, self.served = folder, served  # served: CURRENT names it (else a run publishes even when nothing changed)
        self.forgotten: frozenset[str] = frozenset()  # spaces embedded anew (`index run --reembed`): nothing of theirs is reused
        self.manifest = read_manifest(folder)
        self.db = None
        try:
            self.db = duckdb.connect(str(folder / "meta.duckdb"), read_only=True)
            read_as_current(self.db)
        except duckdb.Error as exc:  # bit rot, a bad copy: "Corrupt database file: computed checksum … does not match"
            if self.db is not None:
                self.db.close()
            raise damaged(folder, exc, advice=False) from None  # the run says what it does instead

    @classmethod
    def open(cls, artifacts: Path, warnings: list[IngestError] | None = None, dry_run: bool = False) -> "PreviousGeneration | None":
        """The generation a run builds on: the one CURRENT names; when that cannot be read —
        missing, or damaged (a file of the wrong size, a database that fails its checksums) — the
        newest kept generation older than it that can be read, as `index rollback` would choose by
        hand, else the newest that can be read (its unchanged chunks reuse their vectors, and the
        run publishes even when nothing changed, so that what is served can be read again); None
        on a first run, or when no kept generation can be read (the run starts afresh). Falling
        back is said in `warnings`: starting afresh without a word re-embedded all 131 of
        `examples/`' chunks and read like a first run."""
        artifacts = Path(artifacts)
        try:
            return cls(current_generation(artifacts))
        except ArtifactError as exc:
            problem = str(exc)
        base = _newest_readable(artifacts)
        if warnings is not None and ((artifacts / CURRENT).exists() or base is not None):
            warnings.append(IngestError(ErrorCode.GENERATION_UNREADABLE, "plan", _fallback_said(problem, base, dry_run), level="warning"))
        return base

    def space_manifest(self, space_id: str) -> dict | None:
        info = self.manifest["spaces"].get(space_id)
        if info is None:
            return None
        return json.loads((self.folder / info["path"] / "space.json").read_text(encoding="utf-8"))

    def compatible(self, space_id: str, manifest: dict) -> bool:
        """True when this space's vectors can stand beside new ones of `manifest`'s model (the embedding cache)."""
        stored = self.space_manifest(space_id) if space_id not in self.forgotten else None
        return stored is not None and not same_space(stored, manifest)

    def documents_state(self) -> dict[str, PreviousDocument]:
        return {row[0]: PreviousDocument(*row) for row in self.db.execute(load_sql("documents_state")).fetchall()}

    def stored_texts(self, doc_ids: set[str]) -> dict[str, tuple[int, str]]:
        """doc_id → (its stored text's length in characters, a digest of it), for those of `doc_ids` stored here."""
        if not doc_ids:
            return {}
        rows = self.db.execute(load_sql("document_lengths_by_ids"), {"doc_ids": sorted(doc_ids)}).fetchall()
        return {doc_id: (length, digest) for doc_id, length, digest in rows}

    def documents(self, doc_ids: set[str], spill: TextSpill | None = None) -> list[Document]:
        """Whole documents as the previous generation stored them (their last good version), read
        when one is first asked for (`StoredDocument`). `doc_ids` are documents of this generation.
        `spill`: where their texts wait once read, rather than in memory (indexer/textspill.py)."""
        stored = _Stored(self.folder / "meta.duckdb", doc_ids, spill)
        return [stored.documents[doc_id] for doc_id in sorted(doc_ids)]

    def fetch_state(self) -> dict[str, FetchState]:
        """doc_id → what the fetch of its stored version knew, for conditional and incremental fetching."""
        return {
            doc_id: FetchState(etag, modified, utc_aware(fetched_at), tuple(links or ()))
            for doc_id, etag, modified, fetched_at, links in self.db.execute(load_sql("fetch_validators")).fetchall()
        }

    def carries_chunks(self, space_id: str, manifest: dict) -> bool:
        """True when this space was chunked and embedded exactly as configured now, so its chunks can be kept as they are."""
        stored = self.space_manifest(space_id) if space_id not in self.forgotten else None
        return stored is not None and {k: v for k, v in stored.items() if k != "vector_count"} == manifest

    def cached_vector_ids(self, space_id: str, hashes: set[str]) -> dict[str, int]:
        """The vector id in this space of each chunk text among `hashes` that it already embedded
        (`vectors` reads them)."""
        ordered, found = sorted(hashes), {}
        # In batches: DuckDB held ~1 kB per hash asked for at once (+116 MB peak for 120k hashes, +57 MB in batches of 16k).
        for start in range(0, len(ordered), HASHES_PER_QUERY):
            params = {"space_id": space_id, "chunk_hashes": ordered[start : start + HASHES_PER_QUERY]}
            found.update(self.db.execute(load_sql("vectors_by_chunk_hash"), params).fetchall())
        return found

    def carried_ids(self, space_id: str, doc_ids: set[str]) -> tuple[np.ndarray, bool]:
        """The vector ids of this space's chunks of the given documents, and whether that is the
        whole space (then its segments are reused as they are). Their texts are not read: a run
        reads only the chunks it writes again (indexer/segments.py)."""
        params = {"space_id": space_id, "doc_ids": sorted(doc_ids)}
        kept = self.db.execute(load_sql("chunk_ids_of_space"), params).fetchnumpy()["vector_id"].astype(np.int64, copy=False)
        (total,) = self.db.execute(load_sql("chunk_count_of_space"), {"space_id": space_id}).fetchone()
        return kept, len(kept) == total

    def stale_documents(self, space_id: str) -> frozenset[str]:
        """Documents whose chunks in this space are an older version's (it was not rebuilt since they changed)."""
        return read_stale(self.space_folder(space_id))

    def rebuilt_at(self, space_id: str) -> str:
        return space_rebuilt_at(self.manifest, space_id)

    def space_folder(self, space_id: str) -> Path:
        return self.folder / self.manifest["spaces"][space_id]["path"]

    def postings_outdated(self, space_id: str, analyzer: str) -> bool:
        """Whether another analyzer than `analyzer` wrote the space's postings (the next publish rewrites them)."""
        return lexical_outdated(read_layout(self.space_folder(space_id)), analyzer)

    def vectors(self, space_id: str, vector_ids: list[int]) -> np.ndarray:
        return stored_vectors(read_layout(self.space_folder(space_id)), vector_ids, int(self.manifest["spaces"][space_id]["dimension"]))

    def close(self) -> None:
        self.db.close()


def _newest_readable(artifacts: Path) -> PreviousGeneration | None:
    """The first kept generation in `fallback_order` that opens, or None."""
    for generation_id in fallback_order(artifacts):
        try:
            return PreviousGeneration(artifacts / GENERATIONS / generation_id, served=False)
        except ArtifactError:
            continue
    return None


def _fallback_said(problem: str, base: PreviousGeneration | None, dry_run: bool) -> str:
    run = "a run would" if dry_run else "this run"
    if base is None:
        return f"{problem}; {run} {'start' if dry_run else 'started'} afresh: every document read and every chunk embedded again"
    return (f"{problem}; {run} {'build' if dry_run else 'built'} on generation {base.folder.name} instead, the newest kept one "
            f"that can be read: its unchanged chunks reuse their vectors, and the generation built is published even if nothing changed")


class StoredDocument(Document):
    """A document as the previous generation stored it, read from there when first used: its
    fields together with those of the documents asked for alongside it (one query), its text
    likewise (another). A run over 10,000 files that keeps 9,900 of them unread uses neither:
    building their fields was 0.2 s of a run where nothing changed, reading their texts ~0.45 s of
    a run that changed 1% of them. Reading works after the run has let the previous generation go.
    Only `doc_id` is known from the start; a copy (`dataclasses.replace`) is a plain document.
    With a TextSpill, the texts read go to its file, and `text` reads one back each time it is asked."""

    def __new__(cls, *args, **kwargs):
        """What `dataclasses.replace` builds from one: a plain Document (every field read). The
        stored ones themselves are made by `_Stored`, without calling the class."""
        return Document(*args, **kwargs)

    @property
    def text(self) -> str:
        return str(self.__dict__["_stored"].text(self.doc_id))

    @property
    def _spilled(self) -> SpilledText | None:
        """Where the text waits, for chunking to cut from (indexer/textspill.py `text_holder`)."""
        held = self.__dict__["_stored"].text(self.doc_id)
        return held if isinstance(held, SpilledText) else None


class _ReadWhenAsked:
    """A field of a StoredDocument: the first time any is asked for, every field of every document
    of its `_Stored` is read into the documents themselves, where later lookups find it."""

    def __init__(self, name: str):
        self.name = name

    def __get__(self, document, owner=None):
        if document is None:
            return self
        document.__dict__["_stored"].read_fields()
        return document.__dict__[self.name]


class _Title:
    """A StoredDocument's title before its fields are read: the titles alone, in one query. Writing
    the postings reads every kept document's (lexical.indexed_text); it needs no other field."""

    def __get__(self, document, owner=None):
        if document is None:
            return self
        return document.__dict__["_stored"].title(document.doc_id)


for _field in fields(Document):
    if _field.name not in ("doc_id", "text"):
        setattr(StoredDocument, _field.name, _Title() if _field.name == "title" else _ReadWhenAsked(_field.name))
del _field


class _Stored:
    """Some documents of a generation, their fields and texts each read in one query when first needed."""

    def __init__(self, path: Path, doc_ids: set[str], spill: TextSpill | None = None):
        self.path, self.spill, self.lock = path, spill, threading.Lock()  # chunking asks from several threads
        self.documents: dict[str, StoredDocument] = {}
        for doc_id in doc_ids:
            document = object.__new__(StoredDocument)  # fields come later (read_fields); frozen dataclasses are built field by field anyway
            document.__dict__.update(doc_id=doc_id, _stored=self)
            self.documents[doc_id] = document
        self.texts: dict[str, str | SpilledText] | None = None
        self.titles: dict[str, str] | None = None
        self.fields_read = False

    def read_fields(self) -> None:
        with self.lock:
            if self.fields_read:
                return
            rows = self._query("documents_by_ids")
            for (doc_id, source, source_type, title, url, path, tags, authors, updated_at, metadata, etag, last_modified, fetched_at, links,
                 pages, anchor_offsets, anchor_names) in rows:
                self.documents[doc_id].__dict__.update(
                    source=source, source_type=source_type, title=title, url=url, path=path, tags=tuple(tags), authors=tuple(authors),
                    updated_at=utc_aware(updated_at), metadata=json.loads(metadata) if metadata else {}, etag=etag, last_modified=last_modified,
                    fetched_at=utc_aware(fetched_at), links=tuple(links or ()), pages=tuple(pages or ()),
                    anchors=tuple(zip(anchor_offsets or (), anchor_names or ())), fetch_seconds=None,
                )
            if len(rows) != len(self.documents):
                missing = sorted(set(self.documents) - {row[0] for row in rows})
                raise ArtifactError(f"{self.path}: {len(missing)} document(s) asked for are not stored there, e.g. {missing[0]}")
            self.fields_read = True

    def title(self, doc_id: str) -> str:
        with self.lock:
            if self.titles is None:
                self.titles = dict(self._query("document_titles_by_ids"))
        return self.titles[doc_id]

    def text(self, doc_id: str) -> str | SpilledText:
        with self.lock:
            if self.texts is None:
                self.texts = self._read_texts()
        return self.texts[doc_id]

    def _read_texts(self) -> dict[str, str | SpilledText]:
        """Every text, a batch of rows at a time: with a spill, no more of them are in memory at once."""
        hold = self.spill.hold if self.spill is not None else str
        with self._connection() as db:
            cursor = db.execute(load_sql("document_texts_by_ids"), {"doc_ids": sorted(self.documents)})
            texts = {}
            while rows := cursor.fetchmany(TEXT_ROWS):
                texts.update((doc_id, hold(text)) for doc_id, text in rows)
            return texts

    def _query(self, name: str) -> list[tuple]:
        with self._connection() as db:
            return db.execute(load_sql(name), {"doc_ids": sorted(self.documents)}).fetchall()

    @contextmanager
    def _connection(self):
        import duckdb

        db = duckdb.connect(str(self.path), read_only=True)
        try:
            read_as_current(db)  # an older generation's documents lack columns the queries read
            yield db
        finally:
            db.close()
