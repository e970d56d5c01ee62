"""A space's segments: immutable folders of chunks, vectors and postings that generations share.

    spaces/<space-id>/segments.json     {"segments": [{"name", "rows"}, …], "deleted": k}
    spaces/<space-id>/deleted.npy       int64, ascending: vector ids whose chunks this generation removed (absent when k = 0)
    spaces/<space-id>/segments/<name>/  index.faiss, chunks.jsonl, chunks.offsets.npy, lexical/

A segment's rows get vector ids base … base + rows − 1, the bases following the order of
`segments.json`. A run writes a new segment for the chunks it added (several when they pass
SEGMENT_MAX_FLOATS of vectors: `<generation>`, `<generation>.1`, …) and lists the rows it removed
in `deleted.npy`; every other segment is hard-linked from the previous generation, so a run costs
what changed. When removed rows pass COMPACT_DELETED_SHARE of all rows, the fewest trailing
segments that bring them down to half of it are merged (their live rows rewritten into new
segments; all of them when the removed rows lie in the first); when the space would hold more
than MAX_SEGMENTS segments besides the full ones at its front, the small ones are: those after the
first small one, or all of them once they have grown as large as it.

A segment whose postings an earlier analyzer wrote (indexer/lexical.py) is shared with its
postings written anew from its chunk store: a space's segments are always scored alike.

Generations written before segments (schema 1) hold one segment's files directly in the space
folder; `read_layout` presents that folder as the space's only segment.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
from dataclasses import dataclass, field
from typing import Callable, Iterator, Mapping, Sequence
from pathlib import Path

import numpy as np

from indexer.bm25 import LegacyLexicalIndex, LexicalIndex, build_lexical_segment, lexical_rows, segment_analyzer
from indexer.chunkstore import LINES, ChunkStore, SegmentStores, StoredTexts, write_chunk_store
from indexer.dense import DenseSegments, open_index
from indexer.documents import Chunk, ChunkTexts
from indexer.errors import ArtifactError
from indexer.lexical import ANALYZER
from indexer.spill import release, vector_array

SEGMENTS = "segments.json"
DELETED = "deleted.npy"
SEGMENT_FOLDER = "segments"
SEGMENT_FILES = ("index.faiss", "chunks.jsonl", "chunks.offsets.npy", "lexical")
COMPACT_DELETED_SHARE = 0.2  # removed rows above this share of all rows: merge the segments holding them
MAX_SEGMENTS = 8  # more than this, not counting full segments: merge the small ones
# A written segment holds at most this many floats of vectors (256 MB): filling an index holds all
# of its vectors in memory, so this bounds what a run holds at once, whatever the corpus (50,000
# documents at 256 dimensions were one 554 MB index: the cold run's peak). Full segments (half the
# cap or more) are merged only to drop deleted rows.
SEGMENT_MAX_FLOATS = 64_000_000

# Exact search while scanning every vector is cheap (≈ 3 ms on one core at 20M floats: 52k
# vectors of 384 dimensions, 13k of 1536); an inverted-file index (IVF) above that: k-means
# lists, a query scanning the 1/8 of them nearest to it (indexer/dense.py): recall@10 ≈ 0.98 on
# text embeddings. Against the HNSW graph this replaced it builds in seconds instead of minutes
# (108k vectors: 3 s against 82–95 s) at a similar query cost up to ~100k vectors; a query's scan
# grows with the segment. See bench/README.md ("Serving").
EXACT_MAX_FLOATS = 20_000_000
IVF_LISTS_PER_SQRT = 4  # lists = 4·√vectors (FAISS's guideline: 4–16·√n)
IVF_TRAIN_POINTS_PER_LIST = 32  # k-means on at most 32 sampled vectors per list…
IVF_TRAIN_ITERATIONS = 10  # …for 10 rounds: recall as with FAISS's defaults (256, 25), ~1/6 of the time
IVF_SAMPLE_SEED = 1234  # which vectors train the lists: drawn by us, the same for the same vectors
ADD_BLOCK = 16_384  # vectors added to an index at a time (16 MB at 256 dimensions)

_NAME = re.compile(r"[0-9A-Za-z][0-9A-Za-z._-]*")


@dataclass(frozen=True)
class Segment:
    name: str  # "" for a schema-1 space folder
    folder: Path
    base: int  # vector id of row 0
    rows: int


@dataclass(frozen=True)
class Layout:
    segments: tuple[Segment, ...]
    deleted: np.ndarray  # vector ids removed, ascending
    legacy: bool = False  # a schema-1 space: one segment, its files in the space folder

    @property
    def id_space(self) -> int:
        return sum(s.rows for s in self.segments)

    @property
    def live(self) -> int:
        return self.id_space - len(self.deleted)

    def deleted_rows(self, segment: Segment) -> np.ndarray:
        """The rows of `segment` (its own numbering) that are deleted."""
        return self.deleted[(self.deleted >= segment.base) & (self.deleted < segment.base + segment.rows)] - segment.base


def read_layout(space_dir: Path) -> Layout:
    """The segments of a published space folder, checked against what `segments.json` promises."""
    path = space_dir / SEGMENTS
    if not path.exists():
        return Layout((Segment("", space_dir, 0, int(open_index(space_dir / "index.faiss").ntotal)),), np.zeros(0, np.int64), legacy=True)
    try:
        info = json.loads(path.read_text(encoding="utf-8"))
        segments, base = [], 0
        for entry in info["segments"]:
            name, rows = entry["name"], entry["rows"]
            if not (isinstance(name, str) and _NAME.fullmatch(name) and isinstance(rows, int) and rows >= 0):
                raise ValueError(f"bad segment entry {entry!r}")
            segments.append(Segment(name, space_dir / SEGMENT_FOLDER / name, base, rows))
            base += rows
        deleted = np.load(space_dir / DELETED) if info["deleted"] else np.zeros(0, np.int64)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ArtifactError(f"{path}: cannot read the space's segments ({exc})") from None
    if len(deleted) != info["deleted"] or (len(deleted) and (deleted[0] < 0 or deleted[-1] >= base or (np.diff(deleted) <= 0).any())):
        raise ArtifactError(f"{space_dir / DELETED} does not list {info['deleted']} distinct vector ids below {base}")
    return Layout(tuple(segments), deleted.astype(np.int64))


def open_dense(layout: Layout, dimension: int) -> DenseSegments:
    indexes = [(open_index(s.folder / "index.faiss"), s) for s in layout.segments]
    for index, segment in indexes:
        _check(segment, "index.faiss vectors", index.ntotal)
    return DenseSegments([(index, s.base, layout.deleted_rows(s)) for index, s in indexes], dimension)


def open_lexical(layout: Layout) -> LexicalIndex | LegacyLexicalIndex:
    if layout.legacy:
        return LegacyLexicalIndex(layout.segments[0].folder / "lexical")
    index = LexicalIndex([(s.folder / "lexical", s.base, layout.deleted_rows(s)) for s in layout.segments], layout.id_space)
    for segment, part in zip(layout.segments, index.segments):
        _check(segment, "lexical rows", part.row_count)
    return index


def check_lexical(layout: Layout) -> None:
    """Every segment's postings are readable and hold its rows: what a publish verifies, without
    weighing every posting as a searcher's `open_lexical` does."""
    if layout.legacy:
        LegacyLexicalIndex(layout.segments[0].folder / "lexical")
        return
    for segment in layout.segments:
        _check(segment, "lexical rows", lexical_rows(segment.folder / "lexical"))


def open_chunks(layout: Layout) -> SegmentStores | None:
    """None for a schema-1 space written before chunks.jsonl existed (DuckDB answers instead)."""
    if layout.legacy and not (layout.segments[0].folder / LINES).exists():
        return None
    stores = [(ChunkStore(s.folder), s) for s in layout.segments]
    for store, segment in stores:
        _check(segment, "chunk store lines", len(store.offsets) - 1)
    return SegmentStores([(store, s.base) for store, s in stores])


def lexical_outdated(layout: Layout, analyzer: str = ANALYZER["name"]) -> bool:
    """Whether another analyzer than `analyzer` (an earlier version's, or another language's) wrote
    postings of the space: the next write rewrites them."""
    return layout.legacy or any(segment_analyzer(s.folder / "lexical") != analyzer for s in layout.segments)


def _check(segment: Segment, what: str, count: int) -> None:
    if count != segment.rows:
        raise ArtifactError(f"segment {segment.folder}: {count} {what}, but {segment.rows} rows listed in {SEGMENTS}")


def stored_vectors(layout: Layout, vector_ids: list[int], dimension: int) -> np.ndarray:
    if not len(vector_ids):
        return np.zeros((0, dimension), dtype=np.float32)
    return open_dense(layout, dimension).reconstruct_batch(vector_ids)


def build_dense_index(vectors: np.ndarray):
    """An inner-product index holding `vectors` (normalized: inner product = cosine), row i = vectors[i]."""
    import faiss

    count, dimension = vectors.shape
    if count * dimension <= EXACT_MAX_FLOATS:
        index = faiss.IndexFlatIP(dimension)
    else:
        lists = int(round(IVF_LISTS_PER_SQRT * math.sqrt(count)))
        index = faiss.IndexIVFFlat(faiss.IndexFlatIP(dimension), dimension, lists, faiss.METRIC_INNER_PRODUCT)
        index.cp.max_points_per_centroid = IVF_TRAIN_POINTS_PER_LIST
        index.cp.min_points_per_centroid = 1  # quiet: FAISS warns below 39 training points per list
        index.cp.niter = IVF_TRAIN_ITERATIONS
        index.train(_training_sample(vectors, lists * IVF_TRAIN_POINTS_PER_LIST))
        release(vectors)
        index.set_direct_map_type(faiss.DirectMap.Array)  # rows are reconstructed by id (cosines, merges)
    if isinstance(index, faiss.IndexIVF):
        _add_to_lists(index, vectors)
    else:
        for start in range(0, count, ADD_BLOCK):  # a file-backed array's rows go back to the file once copied (indexer/spill.py)
            index.add(vectors[start : start + ADD_BLOCK])
            release(vectors, start, start + ADD_BLOCK)
    return index


def _training_sample(vectors: np.ndarray, size: int) -> np.ndarray:
    """`size` rows of `vectors` drawn at random, copied in row order a block at a time. FAISS draws
    its own sample when given more rows, but its draw reads rows all over a file-backed array and
    brought the whole array back into memory while k-means ran (108k vectors at 256 dimensions:
    110 MB for a 42 MB sample; indexer/spill.py)."""
    if len(vectors) <= size:
        return vectors
    rows = np.sort(np.random.default_rng(IVF_SAMPLE_SEED).choice(len(vectors), size, replace=False))
    sample = np.empty((size, vectors.shape[1]), dtype=np.float32)
    for start in range(0, len(vectors), ADD_BLOCK):
        first, last = np.searchsorted(rows, [start, start + ADD_BLOCK])
        sample[first:last] = vectors[rows[first:last]]
        release(vectors, start, start + ADD_BLOCK)
    return sample


def _add_to_lists(index, vectors: np.ndarray) -> None:
    """`index.add(vectors)` for an IVF index, each list's room reserved first: FAISS grows a list
    by doubling, which held half again the vectors (108k at 256 dimensions: 161 MB for 110 MB of
    vectors, the run's peak; 74 MB reserved). The same index, byte for byte."""
    import faiss

    blocks = [(start, min(start + ADD_BLOCK, len(vectors))) for start in range(0, len(vectors), ADD_BLOCK)]
    assigned = np.empty(len(vectors), dtype=np.int64)
    for start, stop in blocks:
        assigned[start:stop] = index.quantizer.search(vectors[start:stop], 1)[1][:, 0]
        release(vectors, start, stop)
    lists = faiss.downcast_InvertedLists(index.invlists)
    for list_no, size in enumerate(np.bincount(assigned, minlength=index.nlist).tolist()):
        if size:
            lists.resize(list_no, size)  # an empty list sized once has exactly this room…
            lists.resize(list_no, 0)  # …and keeps it when emptied
    for start, stop in blocks:
        block, lists_of = np.ascontiguousarray(vectors[start:stop]), np.ascontiguousarray(assigned[start:stop])
        index.add_core(stop - start, faiss.swig_ptr(block), None, faiss.swig_ptr(lists_of))
        release(vectors, start, stop)


def write_segment(folder: Path, space_id: str, chunks: list[Chunk], vectors: np.ndarray, titles: Mapping[str, str], postings: list | None = None,
                  analyzer: str = ANALYZER["name"]) -> None:
    """A new segment of `chunks` with their `vectors`; its postings (of the chunks with their
    documents' `titles`, by `analyzer`) are built now, or — when the caller passes a list
    `postings` — added to it, for the caller to build later (`build_postings`)."""
    import faiss

    folder.mkdir(parents=True)
    vectors = np.ascontiguousarray(vectors, dtype=np.float32).reshape(len(vectors), -1)
    index = build_dense_index(vectors)
    faiss.write_index(index, str(folder / "index.faiss"))
    del index  # not kept while the rest of the segment is built
    write_chunk_store(folder, space_id, chunks)
    later = [(folder, chunks, analyzer)]
    if postings is None:
        build_postings(later, titles)
    else:
        postings.extend(later)


def build_postings(pending: list[tuple[Path, list[Chunk], str]], titles: Mapping[str, str]) -> None:
    """The postings of segments written without them (`write_segment(..., postings=pending)`), of
    their chunks with their documents' `titles` (doc_id → title), by the analyzer each names."""
    for folder, chunks, analyzer in pending:
        build_lexical_segment(ChunkTexts(chunks, titles), folder / "lexical", analyzer)


class Rows:
    """(vector id, chunk) rows, kept as runs of chunks beside their ids and paired when iterated:
    a tuple per row held 10 MB at 108k chunks while meta.duckdb was written (the run's peak)."""

    def __init__(self):
        self.runs: list[tuple[Sequence[int], list[Chunk]]] = []

    def add(self, ids: Sequence[int], chunks: list[Chunk]) -> None:
        self.runs.append((ids, chunks))

    def __iter__(self) -> Iterator[tuple[int, Chunk]]:
        for ids, chunks in self.runs:
            yield from zip(ids, chunks)

    def __len__(self) -> int:
        return sum(len(chunks) for _, chunks in self.runs)


@dataclass
class SpaceWrite:
    """What writing a space did, and which chunk rows meta.duckdb must hold."""

    rows: Rows = field(default_factory=Rows)
    linked: list[str] = field(default_factory=list)  # segments hard-linked from the previous generation
    reanalyzed: list[str] = field(default_factory=list)  # of those, the ones whose postings were written anew (an earlier analyzer's)
    written: int = 0  # rows written into new segments
    new_segments: list[str] = field(default_factory=list)
    deleted: int = 0
    compacted: bool = False
    # `rows` holds the rows written anew (new or moved); `unmoved` the vector ids whose row is the
    # previous generation's row of the same id, kept as it is; `dropped` the previous generation's
    # ids whose rows go (None: all of them).
    unmoved: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    dropped: np.ndarray | None = None

    def as_dict(self) -> dict:
        done = {"segments": len(self.linked) + len(self.new_segments), "rows_written": self.written, "deleted_rows": self.deleted, "compacted": self.compacted}
        return done | ({"postings_rewritten": len(self.reanalyzed)} if self.reanalyzed else {})  # once, after an upgrade


def write_space(space_dir: Path, name: str, space_id: str, dimension: int, kept_ids: np.ndarray, added: list[Chunk], vectors: np.ndarray,
                previous: Path | None, load: Callable[[np.ndarray], list[Chunk]], titles: Mapping[str, str], postings: list | None = None,
                max_rows: int | None = None, analyzer: str = ANALYZER["name"]) -> SpaceWrite:
    """Write the segments of a space holding rows `kept_ids` of the space folder `previous` and
    `added` (with their `vectors`); new segments are called `name`, `name.1`, … (at most
    `max_rows` rows each: SEGMENT_MAX_FLOATS of vectors). `load(ids)` returns the previous
    generation's chunks of those vector ids, in that order: only rows that must be written again
    (merged, or moved to another id) are loaded. `titles`: the title of each document (doc_id →
    title), indexed with its chunks' words by `analyzer`. `postings`: see `write_segment`."""
    max_rows = max_rows or max(1, SEGMENT_MAX_FLOATS // dimension)
    kept_ids = np.sort(np.asarray(kept_ids, dtype=np.int64))
    if len(added) != len(vectors):
        raise ValueError(f"space {space_id}: {len(added)} chunks but {len(vectors)} vectors to add")
    layout = read_layout(previous) if previous is not None else None
    if layout is None or layout.legacy:  # nothing to share: one segment holding everything
        old = stored_vectors(layout, kept_ids, dimension) if layout is not None else np.zeros((0, dimension), np.float32)
        return _finish(space_dir, name, space_id, [], _new_rows(load(kept_ids) + added, np.concatenate([old, vectors]) if len(old) else vectors), False, None, load,
                       titles, postings, max_rows, analyzer)

    # The rows each previous segment keeps (local row numbers, ascending); segments keeping none are dropped.
    position = np.searchsorted([s.base for s in layout.segments], kept_ids, side="right") - 1
    keep = [(s, kept_ids[position == i] - s.base) for i, s in enumerate(layout.segments) if (position == i).any()]
    rows = sum(s.rows for s, _ in keep) + len(added)
    dead = sum(s.rows - len(live) for s, live in keep)
    full = next((i for i, (s, _) in enumerate(keep) if not _full(s, max_rows)), len(keep))  # the leading full segments
    merge_from = None
    if dead > COMPACT_DELETED_SHARE * rows:
        merge_from = _fewest_to_compact(keep, dead, rows)
    elif len(keep) - full + bool(added) > MAX_SEGMENTS:  # the small ones after the first small one, or all small ones once they are as large as it
        tail = sum(len(live) for _, live in keep[full + 1 :]) + len(added)
        merge_from = full + 1 if tail < len(keep[full][1]) else full
    if merge_from is None:
        return _finish(space_dir, name, space_id, keep, _new_rows(added, vectors), False, layout, load, titles, postings, max_rows, analyzer)
    merged = keep[merge_from:]
    chunks = load(np.concatenate([live + s.base for s, live in merged])) + added
    order = _document_order(chunks)
    new = [chunks[i] for i in order], _gathered(merged, vectors, np.asarray(order, dtype=np.int64), dimension, space_dir)
    return _finish(space_dir, name, space_id, keep[:merge_from], new, True, layout, load, titles, postings, max_rows, analyzer)


def _fewest_to_compact(keep: list[tuple[Segment, np.ndarray]], dead: int, rows: int) -> int:
    """Where to start merging so that the removed rows left in the segments before it are at most
    half COMPACT_DELETED_SHARE (half, so that the next run's few deletions do not merge again): the
    fewest trailing segments rewritten, the ones before them shared as they are — all of them
    when the removed rows lie in the first."""
    dead_before, start = 0, 0
    for m, (segment, live) in enumerate(keep[:-1], start=1):
        dead_before += segment.rows - len(live)
        if dead_before <= COMPACT_DELETED_SHARE / 2 * (rows - (dead - dead_before)):
            start = m
    return start


def _gathered(merged: list[tuple[Segment, np.ndarray]], added: np.ndarray, order: np.ndarray, dimension: int, folder: Path) -> np.ndarray:
    """The vectors of merged rows in `order` — positions in the merged segments' live rows, then in
    `added` — read a block at a time into a file-backed array (indexer/spill.py): a compaction
    holds a block of them in memory, not every one."""
    starts = np.cumsum([0] + [len(live) for _, live in merged])  # where each segment's live rows begin; added rows after
    gathered = vector_array(len(order), dimension, folder)
    for start in range(0, len(order), ADD_BLOCK):
        source = order[start : start + ADD_BLOCK]
        block = np.empty((len(source), dimension), dtype=np.float32)
        where = np.searchsorted(starts, source, side="right") - 1
        for i, (segment, live) in enumerate(merged):
            if (mine := where == i).any():
                # Opened for each block: the mapped pages it read go when it is closed (50,000
                # documents: 550 MB of them at once otherwise, ~30 ms an opening).
                block[mine] = open_index(segment.folder / "index.faiss").reconstruct_batch(live[source[mine] - starts[i]])
        if (mine := where == len(merged)).any():
            block[mine] = added[source[mine] - starts[-1]]
        gathered[start : start + len(source)] = block
        release(gathered, start, start + len(source))
    return gathered


def _document_order(chunks: list[Chunk]) -> list[int]:
    """Positions of `chunks` in document order: a new segment's ids follow documents, as in a fresh build."""
    return sorted(range(len(chunks)), key=lambda i: (chunks[i].doc_id, chunks[i].ordinal))


def _new_rows(chunks: list[Chunk], vectors: np.ndarray) -> tuple[list[Chunk], np.ndarray]:
    """A new segment's rows in document order."""
    order = _document_order(chunks)
    if order == list(range(len(chunks))):  # a run's chunks come in document order: no copy of the vectors
        return chunks, vectors
    return [chunks[i] for i in order], vectors[order]


def _finish(space_dir: Path, name: str, space_id: str, keep: list[tuple[Segment, np.ndarray]], new: tuple[list[Chunk], np.ndarray],
            compacted: bool, previous: Layout | None, load: Callable[[np.ndarray], list[Chunk]], titles: Mapping[str, str], postings: list | None,
            max_rows: int, analyzer: str) -> SpaceWrite:
    result = SpaceWrite(compacted=compacted)
    entries, deleted, unmoved, base = [], [], [], 0
    for segment, live in keep:
        if _share(segment, space_dir / SEGMENT_FOLDER / segment.name, titles, analyzer):
            result.reanalyzed.append(segment.name)
        deleted.append(np.setdiff1d(np.arange(segment.rows), live, assume_unique=True) + base)
        if base == segment.base:  # same ids as in the previous generation: their rows stay as they are
            unmoved.append(live + base)
        else:
            result.rows.add((live + base).tolist(), load(live + segment.base))
        result.linked.append(segment.name)
        entries.append({"name": segment.name, "rows": segment.rows})
        base += segment.rows
    chunks, vectors = new
    for piece, (start, stop) in enumerate(_pieces(len(chunks), max_rows)):
        part = chunks[start:stop]
        piece_name = f"{name}.{piece}" if piece else name
        write_segment(space_dir / SEGMENT_FOLDER / piece_name, space_id, part, vectors[start:stop], titles, postings, analyzer)
        result.rows.add(range(base, base + len(part)), part)
        result.written += len(part)
        result.new_segments.append(piece_name)
        entries.append({"name": piece_name, "rows": len(part)})
        base += len(part)
    if previous is not None:
        result.unmoved = np.concatenate(unmoved) if unmoved else np.zeros(0, np.int64)
        previous_live = np.setdiff1d(np.arange(previous.id_space), previous.deleted, assume_unique=True)
        result.dropped = np.setdiff1d(previous_live, result.unmoved, assume_unique=True)
    deleted_ids = np.concatenate(deleted).astype(np.int64) if deleted else np.zeros(0, np.int64)
    result.deleted = len(deleted_ids)
    if len(deleted_ids):
        np.save(space_dir / DELETED, deleted_ids)
    (space_dir / SEGMENTS).write_text(json.dumps({"segments": entries, "deleted": len(deleted_ids)}, indent=2) + "\n", encoding="utf-8")
    return result


def _pieces(rows: int, max_rows: int) -> list[tuple[int, int]]:
    """(start, stop) of the fewest segments of at most `max_rows` rows holding `rows`, their sizes
    within one of each other: no small remainder, which would be an exact-scan index searched
    beside the others (50,000 documents in 250k + 250k + 41k rows: queries p50 7.0 ms, against
    5.4 ms in one segment). Each of several pieces is full (`_full`)."""
    if not rows:
        return []
    count = -(-rows // max_rows)
    bounds = [start * rows // count for start in range(count + 1)]
    return list(zip(bounds, bounds[1:]))


def _full(segment: Segment, max_rows: int) -> bool:
    """A segment of at least half the cap: merged only to drop deleted rows."""
    return segment.rows >= max_rows // 2


def _share(segment: Segment, target: Path, titles: Mapping[str, str], analyzer: str) -> bool:
    """Link `segment` into `target`, its postings written anew by `analyzer` when another wrote
    them (True then): from its chunk store and the documents' `titles`, so a segment costs a read
    of its texts, not its vectors."""
    if segment_analyzer(segment.folder / "lexical") == analyzer:
        _link_tree(segment.folder, target)
        return False
    _link_tree(segment.folder, target, [name for name in SEGMENT_FILES if name != "lexical"])
    texts = StoredTexts(target, titles)
    try:
        build_lexical_segment(texts, target / "lexical", analyzer)
    finally:
        texts.close()
    return True


def _link_tree(source: Path, target: Path, names: Sequence[str] = SEGMENT_FILES) -> None:
    """Hard-link a segment's files (copy where links are impossible): safe because published segments never change."""
    for name in names:
        for path in [source / name] if (source / name).is_file() else sorted((source / name).rglob("*")):
            if path.is_dir():
                continue
            destination = target / path.relative_to(source)
            destination.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.link(path, destination)
            except OSError:
                shutil.copy2(path, destination)
