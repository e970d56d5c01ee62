"""Spaces in segments: a run writes what changed, shares the rest with the previous generation,
and a search across segments finds and scores exactly what a freshly built space would."""

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from indexer import segments
from indexer.documents import Chunk
from indexer.segments import read_layout, write_space
from tests.conftest import resident_file_growth, resident_file_kb, write_config
from tests.test_index_run import run_cli

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "docs"
DIMENSION = 16
QUERIES = ["how do I undo a bad index run", "widget origin cors", "notion pages", "refund policy in Mongolia", "search search api key", "what can I get"]


def documents() -> dict[str, list[str]]:
    """The examples' Markdown files as documents of paragraph chunks."""
    return {p.name: [block for block in p.read_text(encoding="utf-8").split("\n\n") if block.strip()] for p in sorted(EXAMPLES.rglob("*.md"))}


def chunks_of(doc: str, paragraphs: list[str]) -> list[Chunk]:
    return [Chunk(f"file:{doc}", i, 0, len(text), text, ("Heading",), 10) for i, text in enumerate(paragraphs)]


def chunks_for(docs: dict[str, list[str]], names) -> list[Chunk]:
    """The chunks of the documents `names`, in that order."""
    return [c for d in names for c in chunks_of(d, docs[d])]


def vector(text: str) -> np.ndarray:
    """A fixed unit vector per text (as an embedding model gives)."""
    v = np.random.default_rng(int(hashlib.sha256(text.encode()).hexdigest()[:8], 16)).standard_normal(DIMENSION).astype(np.float32)
    return v / np.linalg.norm(v)


def vectors(chunks: list[Chunk]) -> np.ndarray:
    return np.stack([vector(c.text) for c in chunks]) if chunks else np.zeros((0, DIMENSION), np.float32)


class Space:
    """A written space folder and the chunks it holds by vector id (what meta.duckdb would list)."""

    def __init__(self, folder: Path, how, previous: "Space | None" = None):
        """`how`: what write_space did; the rows it did not write are the previous space's, unmoved."""
        unmoved = {vid: previous.rows[vid] for vid in how.unmoved.tolist()} if previous else {}
        self.folder, self.rows, self.how = folder, {**unmoved, **dict(how.rows)}, how
        self.layout = read_layout(folder)

    def next(self, folder: Path, name: str, keep_docs: set[str], added: list[Chunk], max_rows: int | None = None) -> "Space":
        """The next generation's space: keeps the chunks of `keep_docs`, adds `added`."""
        kept = [vid for vid, c in self.rows.items() if c.doc_id.removeprefix("file:") in keep_docs]
        how = write_space(folder, name, "sp", DIMENSION, np.asarray(kept), added, vectors(added), self.folder, self.load, {}, max_rows=max_rows)
        return Space(folder, how, self)

    def load(self, ids: np.ndarray) -> list[Chunk]:
        return [self.rows[int(vid)] for vid in ids]

    def searched(self, query: str) -> tuple[dict, float, dict, dict]:
        """BM25 score per chunk, the ceiling, the top 10 by inner product, and the chunk store's rows — all keyed by chunk."""
        key = {vid: (c.doc_id, c.ordinal) for vid, c in self.rows.items()}
        scores, ceiling = segments.open_lexical(self.layout).scores(query)
        assert not scores[self.layout.deleted].any(), "deleted rows never score"
        dense = segments.open_dense(self.layout, DIMENSION).top(vector(query), 10)
        stores = segments.open_chunks(self.layout)
        rows = stores.rows(list(self.rows))
        stores.close()
        return (
            {key[vid]: float(scores[vid]) for vid in self.rows},
            ceiling,
            {key[vid]: score for vid, score in dense.items()},
            {key[vid]: {k: v for k, v in row.items() if k != "vector_id"} for vid, row in rows.items()},
        )


def built(folder: Path, chunks: list[Chunk], max_rows: int | None = None) -> Space:
    """A first generation's space of `chunks`, its new segments named after the folder."""
    return Space(folder, write_space(folder, folder.name, "sp", DIMENSION, np.zeros(0), chunks, vectors(chunks), None, list, {}, max_rows=max_rows))


def fresh(folder: Path, space: Space) -> Space:
    """The same chunks written from scratch into one segment."""
    chunks = list(space.rows.values())
    return Space(folder, write_space(folder, "fresh", "sp", DIMENSION, np.zeros(0), chunks, vectors(chunks), None, list, {}))


def assert_even_pieces(space: Space, cap: int) -> list[int]:
    """The rows of each segment of `space`: none over `cap`, no two more than one apart (no small remainder)."""
    rows = [s.rows for s in space.layout.segments]
    assert max(rows) <= cap and max(rows) - min(rows) <= 1, f"{rows}: even pieces, no small remainder"
    return rows


def assert_same_search(space: Space, reference: Space) -> None:
    assert len(space.rows) == len(reference.rows) == space.layout.live
    for query in QUERIES:
        lexical, ceiling, dense, rows = space.searched(query)
        fresh_lexical, fresh_ceiling, fresh_dense, fresh_rows = reference.searched(query)
        assert lexical.keys() == fresh_lexical.keys()
        assert max(abs(lexical[k] - fresh_lexical[k]) for k in lexical) <= 1e-6, query
        assert ceiling == pytest.approx(fresh_ceiling, abs=1e-6), query
        assert list(dense) == list(fresh_dense) and np.allclose(list(dense.values()), list(fresh_dense.values()), atol=1e-6), query
        assert rows == fresh_rows


def test_a_change_writes_one_small_segment_and_searches_as_a_fresh_build(tmp_path):
    docs = documents()
    names = sorted(docs)
    chunks = chunks_for(docs, names[:-1])
    g1 = built(tmp_path / "g1", chunks)
    # One document removed, one edited, one added.
    removed, edited, added = names[0], names[1], names[-1]
    new_chunks = chunks_of(edited, docs[edited][:-1] + ["An edited closing paragraph about refunds."]) + chunks_of(added, docs[added])
    g2 = g1.next(tmp_path / "g2", "g2", set(names[2:-1]), new_chunks)

    assert g2.how.written == len(new_chunks) and not g2.how.compacted
    assert g2.how.deleted == len(docs[removed]) + len(docs[edited]) == len(g2.layout.deleted)
    assert [s.name for s in g2.layout.segments] == ["g1", "g2"]
    for path in (tmp_path / "g1" / "segments" / "g1").rglob("*"):
        if path.is_file():  # the first segment is shared, not copied
            assert path.stat().st_ino == (tmp_path / "g2" / "segments" / "g1" / path.relative_to(tmp_path / "g1" / "segments" / "g1")).stat().st_ino
    assert_same_search(g2, fresh(tmp_path / "fresh", g2))
    # A search's top hits never include a deleted row, even when the query is that row's own text.
    gone = chunks_of(removed, docs[removed])[0]
    top = segments.open_dense(g2.layout, DIMENSION).top(vector(gone.text), 5)
    assert not set(top) & set(g2.layout.deleted.tolist())


def test_a_segment_whose_postings_miss_rows_is_refused_by_the_publish_check_and_by_a_searcher(tmp_path):
    docs = documents()
    chunks = chunks_for(docs, sorted(docs))
    space = built(tmp_path / "g1", chunks)
    segments.check_lexical(space.layout)  # as written: no complaint
    lengths = tmp_path / "g1" / "segments" / "g1" / "lexical" / "lengths.npy"
    np.save(lengths, np.load(lengths)[:-1])
    for check in (segments.check_lexical, segments.open_lexical):
        with pytest.raises(segments.ArtifactError, match=f"{len(chunks) - 1} lexical rows, but {len(chunks)} rows"):
            check(space.layout)


def test_deletions_past_a_fifth_of_the_rows_compact_the_space_into_one_segment(tmp_path):
    docs = documents()
    names = sorted(docs)
    chunks = chunks_for(docs, names)
    space = built(tmp_path / "g1", chunks)
    total = len(chunks)
    step = 0
    while not space.how.compacted:
        step += 1
        dropped = names[step]
        space = space.next(tmp_path / f"g{step + 1}", f"g{step + 1}", set(names[step + 1 :]) | set(names[:1]), [])
        removed_rows = total - len(space.rows)
        if not space.how.compacted:
            assert removed_rows <= segments.COMPACT_DELETED_SHARE * total and len(space.layout.deleted) == removed_rows, dropped
    assert removed_rows > segments.COMPACT_DELETED_SHARE * total
    assert len(space.layout.segments) == 1 and len(space.layout.deleted) == 0 and not (space.folder / segments.DELETED).exists()
    assert_same_search(space, fresh(tmp_path / "fresh", space))


def test_deletions_in_the_last_segments_compact_only_those(tmp_path):
    # The removed rows lie in the newer, smaller segment: it alone is rewritten, the first stays shared.
    docs = documents()
    names = sorted(docs)
    first = built(tmp_path / "g1", chunks_for(docs, names[:14]))
    space = first.next(tmp_path / "g2", "g2", set(names[:14]), chunks_for(docs, names[14:]))
    assert [s.name for s in space.layout.segments] == ["g1", "g2"] and not space.how.compacted
    gone = set(names[14:21])
    space = space.next(tmp_path / "g3", "g3", set(names) - gone, [])
    removed = sum(len(docs[d]) for d in gone)
    assert removed > segments.COMPACT_DELETED_SHARE * (removed + len(space.rows)), "past the share: a compaction"
    assert space.how.compacted and space.how.linked == ["g1"] and [s.name for s in space.layout.segments] == ["g1", "g3"]
    assert len(space.layout.deleted) == 0 and space.layout.segments[1].rows == sum(len(docs[d]) for d in names[21:])
    assert (tmp_path / "g3" / "segments" / "g1" / "index.faiss").stat().st_ino == (tmp_path / "g1" / "segments" / "g1" / "index.faiss").stat().st_ino
    assert_same_search(space, fresh(tmp_path / "fresh", space))


def test_many_small_runs_merge_their_segments_and_leave_the_big_one_shared(tmp_path):
    docs = documents()
    names = sorted(docs)
    base = chunks_for(docs, names[:12])
    space = built(tmp_path / "g0", base)
    merged = False
    for step, doc in enumerate(names[12:], start=1):  # one new document per run
        keep = {c.doc_id.removeprefix("file:") for c in space.rows.values()}
        space = space.next(tmp_path / f"g{step}", f"g{step}", keep, chunks_of(doc, docs[doc]))
        assert len(space.layout.segments) <= segments.MAX_SEGMENTS
        if space.how.compacted:
            merged = True
            assert [s.name for s in space.layout.segments] == ["g0", f"g{step}"], "the small segments merged, the first one kept"
            assert (tmp_path / f"g{step}" / "segments" / "g0" / "index.faiss").stat().st_ino == (tmp_path / "g0" / "segments" / "g0" / "index.faiss").stat().st_ino
            break
    assert merged, f"{len(names) - 12} runs never merged"
    assert_same_search(space, fresh(tmp_path / "fresh", space))


def test_a_space_past_the_segment_cap_is_written_in_capped_segments_that_search_as_one(tmp_path):
    # SEGMENT_MAX_FLOATS bounds what filling one index holds in memory; `max_rows` is that cap in rows.
    docs = documents()
    names = sorted(docs)
    chunks = chunks_for(docs, names)
    cap = len(chunks) // 3 + 1
    space = built(tmp_path / "g1", chunks, cap)
    rows = assert_even_pieces(space, cap)
    assert [s.name for s in space.layout.segments] == ["g1", "g1.1", "g1.2"] and sum(rows) == len(chunks)
    assert space.how.as_dict() == {"segments": 3, "rows_written": len(chunks), "deleted_rows": 0, "compacted": False}
    assert_same_search(space, fresh(tmp_path / "fresh", space))

    # Runs that each add a document merge only the small segments: the full ones stay shared.
    step = 1
    while not space.how.compacted:
        step += 1
        keep = {c.doc_id.removeprefix("file:") for c in space.rows.values()}
        added = chunks_of(f"new-{step}.md", [f"Page {step} says something new about refunds number {step}."])
        space = space.next(tmp_path / f"g{step}", f"g{step}", keep, added, max_rows=cap)
        assert len(space.layout.segments) - 3 <= segments.MAX_SEGMENTS, "the full segments do not count"
    assert [s.name for s in space.layout.segments] == ["g1", "g1.1", "g1.2", f"g{step}"], "the full segments and the first small one kept, the rest merged"
    for name in ("g1", "g1.1", "g1.2"):
        assert (space.folder / "segments" / name / "index.faiss").stat().st_ino == (tmp_path / "g1" / "segments" / name / "index.faiss").stat().st_ino
    assert_same_search(space, fresh(tmp_path / "fresh-2", space))


def test_a_compaction_past_the_cap_rewrites_every_row_in_capped_segments(tmp_path):
    docs = documents()
    names = sorted(docs)
    chunks = chunks_for(docs, names)
    cap = len(chunks) // 4 + 1
    space = built(tmp_path / "g1", chunks, cap)
    keep = set(names) - set(names[::2])  # half the documents, from every segment: past COMPACT_DELETED_SHARE in the first one too
    edited = chunks_of(names[-1], docs[names[-1]][:-1] + ["A closing paragraph rewritten after the move."])
    space = space.next(tmp_path / "g2", "g2", keep - {names[-1]}, edited, max_rows=cap)
    assert space.how.compacted and not space.how.linked and len(space.layout.deleted) == 0
    rows = assert_even_pieces(space, cap)
    assert len(rows) > 1 and sum(rows) == len(space.rows), rows
    assert [s.name for s in space.layout.segments] == ["g2"] + [f"g2.{i}" for i in range(1, len(rows))]
    assert_same_search(space, fresh(tmp_path / "fresh", space))


@pytest.fixture
def two_segments(tmp_path, local_embedder) -> tuple[Path, dict]:
    """A config indexed twice, the second run after one edit: a generation of two segments."""
    docs = tmp_path / "docs"
    docs.mkdir()
    topics = ["refunds within thirty days", "shipping from Lisbon", "sizes run small", "gift cards never expire", "store opening hours"]
    for i, topic in enumerate(topics):
        (docs / f"d{i}.md").write_text(f"# Page {i}\n\nThis page is about {topic}.\n")
    config = write_config(tmp_path, '[[sources]]\nname = "docs"\ntype = "files"\npath = "docs"\n[[spaces]]\nprovider = "local"\n')
    assert run_cli("run", "-c", str(config), "-q").exit_code == 0
    (docs / "d1.md").write_text("# Page 1\n\nParcels leave the warehouse in Porto on the same day.\n")
    report = json.loads(run_cli("run", "-c", str(config), "--json").output)
    return config, report


def test_an_edited_document_is_found_in_its_new_segment_and_not_in_the_old(two_segments):
    config, report = two_segments
    space = report["spaces"]["local-all-minilm-l6-v2-384"]
    assert (space["segments"], space["rows_written"], space["deleted_rows"], space["compacted"]) == (2, 1, 1, False)
    hits = json.loads(run_cli("search", "where do parcels leave from", "-c", str(config), "--json", "-k", "5").output)["hits"]
    assert hits[0]["doc_id"] == "file:d1.md" and "Porto" in hits[0]["text"]
    lexical = json.loads(run_cli("search", "Lisbon", "-c", str(config), "--json", "--mode", "lexical").output)["hits"]
    assert lexical == [], "the old version's row is deleted"


def test_a_generation_of_several_segments_packs_and_unpacks_whole(two_segments, tmp_path):
    config, report = two_segments
    packed = json.loads(run_cli("pack", "-o", str(tmp_path / "out" / "gen.tar.gz"), "-c", str(config), "--json").output)
    server = tmp_path / "server"
    assert run_cli("unpack", packed["archive"], "--artifacts", str(server)).exit_code == 0
    installed = server / "generations" / report["generation"]
    assert len(read_layout(installed / "spaces" / "local-all-minilm-l6-v2-384").segments) == 2
    assert (installed / "spaces" / "local-all-minilm-l6-v2-384" / segments.DELETED).is_file()
    for query in ("where do parcels leave from", "gift cards", "Lisbon"):
        ours = json.loads(run_cli("search", query, "-c", str(config), "--json").output)["hits"]
        theirs = json.loads(run_cli("search", query, "--artifacts", str(server), "--json").output)["hits"]
        assert [(h["chunk_id"], h["score"]) for h in ours] == [(h["chunk_id"], h["score"]) for h in theirs], query


def tables(artifacts: Path) -> tuple[list, list]:
    import duckdb

    folder = artifacts / "generations" / (artifacts / "CURRENT").read_text().strip()
    db = duckdb.connect(str(folder / "meta.duckdb"), read_only=True)
    try:
        columns = [c for (c,) in db.execute("SELECT column_name FROM information_schema.columns WHERE table_name = 'documents' ORDER BY ordinal_position").fetchall()]
        documents = db.execute(f"SELECT {', '.join(c for c in columns if c != 'indexed_at')} FROM documents ORDER BY doc_id").fetchall()
        chunks = db.execute("SELECT * EXCLUDE (vector_id) FROM chunks ORDER BY chunk_id").fetchall()
        return documents, chunks
    finally:
        db.close()


def test_the_updated_metadata_file_holds_what_a_fresh_build_writes(two_segments, tmp_path):
    import duckdb

    config, report = two_segments
    artifacts = tmp_path / "artifacts"
    folder = artifacts / "generations" / report["generation"]
    db = duckdb.connect(str(folder / "meta.duckdb"), read_only=True)
    indexed = dict(db.execute("SELECT doc_id, indexed_at FROM documents").fetchall())
    db.close()
    assert indexed["file:d0.md"] < indexed["file:d1.md"], "an unchanged row is the previous generation's, not written again"
    assert run_cli("run", "-c", str(config), "-a", str(tmp_path / "fresh"), "-q").exit_code == 0
    assert tables(artifacts) == tables(tmp_path / "fresh")
    # A renamed source changes no hash, but every row names it: the rows are written again.
    config.write_text(config.read_text().replace('name = "docs"', 'name = "help"'))
    result = run_cli("run", "-c", str(config))
    assert result.exit_code == 0 and "Nothing changed" not in result.output, result.output
    documents, _ = tables(artifacts)
    assert {row[1] for row in documents} == {"help"} and len(documents) == 5
    (tmp_path / "docs" / "d4.md").unlink()
    assert run_cli("run", "-c", str(config), "-q").exit_code == 0
    assert run_cli("run", "-c", str(config), "-a", str(tmp_path / "fresh-2"), "-q").exit_code == 0
    assert tables(artifacts) == tables(tmp_path / "fresh-2") and len(tables(artifacts)[0]) == 4


def test_runs_that_each_add_a_page_merge_the_small_segments_and_keep_the_metadata_true(tmp_path, local_embedder):
    site = tmp_path / "o'brien's site"  # a quote in the path: the merge reads the previous metadata file by name
    docs = site / "docs"
    docs.mkdir(parents=True)
    for i in range(90):  # the pages added below grow the space by under a tenth: its chance level is measured once, not every run
        (docs / f"base{i}.md").write_text(f"# Base {i}\n\nNotes kept on base page {i}.\n")
    config = write_config(site, '[[sources]]\nname = "docs"\ntype = "files"\npath = "docs"\n[[spaces]]\nprovider = "local"\n')
    assert run_cli("run", "-c", str(config), "-q").exit_code == 0
    shapes = []
    for i in range(segments.MAX_SEGMENTS):
        (docs / f"new{i}.md").write_text(f"# New {i}\n\nA page about topic {i}.\n")
        space = json.loads(run_cli("run", "-c", str(config), "--json").output)["spaces"]["local-all-minilm-l6-v2-384"]
        shapes.append((space["segments"], space["compacted"]))
    assert shapes[-1] == (2, True) and shapes[:-1] == [(n, False) for n in range(2, segments.MAX_SEGMENTS + 1)], shapes
    assert run_cli("run", "-c", str(config), "-a", str(tmp_path / "fresh"), "-q").exit_code == 0
    assert tables(site / "artifacts") == tables(tmp_path / "fresh")
    hits = json.loads(run_cli("search", "topic 3", "-c", str(config), "--json", "--mode", "lexical").output)["hits"]
    assert hits[0]["doc_id"] == "file:new3.md"


def test_postings_built_in_batches_score_as_one_index_split_anywhere(tmp_path):
    """More rows than one build batch: the postings are the same as two segments split elsewhere."""
    from indexer.bm25 import BUILD_BATCH, LexicalIndex, build_lexical_segment

    words = ["refund", "parcel", "warranty", "invoice", "courier", "voucher", "lisbon", "porto"]
    texts = [" ".join(words[(i * k) % len(words)] for k in range(1, 2 + i % 5)) for i in range(BUILD_BATCH + 900)]
    build_lexical_segment(texts, tmp_path / "one")
    build_lexical_segment(texts[:5000], tmp_path / "a")
    build_lexical_segment(texts[5000:], tmp_path / "b")
    none = np.zeros(0, np.int64)
    one = LexicalIndex([(tmp_path / "one", 0, none)], len(texts))
    two = LexicalIndex([(tmp_path / "a", 0, none), (tmp_path / "b", 5000, none)], len(texts))
    for query in ("refund courier", "porto porto voucher", "warranty"):
        (a, ceiling_a), (b, ceiling_b) = one.scores(query), two.scores(query)
        assert np.array_equal(a, b) and ceiling_a == ceiling_b and (a > 0).sum() > BUILD_BATCH // 10, query


def test_postings_written_in_term_ranges_are_every_term_s_rows_in_order(tmp_path):
    """More postings than the builder puts in order at a time, and several build batches: each term
    lists exactly the rows holding it, ascending, with its count there."""
    import json
    from collections import Counter

    from indexer.bm25 import BUILD_BATCH, TERM_RANGE, build_lexical_segment
    from indexer.lexical import analyze

    texts = [" ".join(f"w{(i * 7 + k * 13) % 3001}" for k in range(118)) + f" w{i % 5} w{i % 5}" for i in range(max(3 * TERM_RANGE // 100, BUILD_BATCH + 900))]
    build_lexical_segment(texts, tmp_path / "lexical")
    folder = tmp_path / "lexical"
    terms = json.loads((folder / "terms.json").read_text())
    indptr, rows, tf = (np.load(folder / f"postings.{name}.npy") for name in ("indptr", "rows", "tf"))
    assert len(rows) > 2 * TERM_RANGE
    expected: dict[str, list[tuple[int, int]]] = {}
    terms_of = {word: analyze(word) for word in {word for text in texts for word in text.split()}}  # 3,006 words, a million uses
    for row, text in enumerate(texts):
        for term, count in Counter(t for word in text.split() for t in terms_of[word]).items():
            expected.setdefault(term, []).append((row, count))
    assert sorted(terms) == sorted(expected)
    for t, term in enumerate(terms):
        span = slice(indptr[t], indptr[t + 1])
        assert list(zip(rows[span].tolist(), tf[span].tolist())) == expected[term], term


def test_a_segment_too_large_to_scan_is_an_ivf_index_that_finds_every_live_row_and_no_deleted_one(tmp_path):
    """Above the exact-scan size a segment is an inverted-file index: approximate, but a chunk's own
    vector still finds it first, deleted rows never come back, and a filter never costs a result."""
    import faiss

    from indexer.dense import EXACT_FILTERED_MAX, DenseSegments, open_index

    from indexer.spill import release, vector_array

    rng = np.random.default_rng(7)
    dimension = 256
    count = segments.EXACT_MAX_FLOATS // dimension + 2000
    stored = vector_array(count, dimension, tmp_path)  # as a run holds them: in a file (indexer/spill.py)
    stored[:] = rng.standard_normal((count, dimension), dtype=np.float32)
    stored /= np.linalg.norm(stored, axis=1, keepdims=True)
    release(stored)
    with resident_file_growth() as growth:
        built = segments.build_dense_index(stored)
    assert growth[0] < 0.5 * stored.nbytes / 1024, "training and filling the lists read the file a block at a time, not all of it at once"
    faiss.write_index(built, str(tmp_path / "index.faiss"))
    plain = faiss.clone_index(built)
    plain.reset()
    plain.add(stored)  # FAISS's own add into the same trained lists
    assert faiss.serialize_index(plain).tobytes() == faiss.serialize_index(built).tobytes(), "lists filled with room reserved: the same index"
    index = open_index(tmp_path / "index.faiss")
    assert isinstance(index, faiss.IndexIVF) and index.ntotal == count
    gone = np.arange(0, count, 7)
    dense = DenseSegments([(index, 0, gone)], dimension)
    assert dense.ntotal == count - len(gone)

    probe = rng.choice(count, 300, replace=False)
    scores, ids = dense.search(stored[probe], 10)
    live = probe % 7 != 0
    assert (ids[live, 0] == probe[live]).all() and np.allclose(scores[live, 0], 1, atol=1e-5), "a stored vector finds its own row"
    assert (ids >= 0).all() and not np.isin(ids, gone).any(), "ten live hits for every query, none deleted"
    assert np.array_equal(dense.reconstruct_batch(probe), stored[probe]), "rows read back exactly from the mapped file"

    query = stored[1]
    for allowed, depth in (
        (rng.choice(count, 500, replace=False), 50),  # narrow: scored exactly
        # wide, and far from the query: the lists probed first hold fewer than `depth` of them, so every list is scanned
        (np.argsort(stored @ query)[: EXACT_FILTERED_MAX + 5000], 5000),
    ):
        allowed = np.setdiff1d(allowed, gone)
        hits = dense.top(query, depth, allowed)
        best = np.sort(stored[allowed] @ query)[::-1][:depth]
        assert set(hits) <= set(allowed.tolist()) and len(hits) == depth, f"{depth} hits among the {len(allowed)} allowed rows"
        assert np.allclose(list(hits.values()), best, atol=1e-5), f"the best {depth} of the {len(allowed)} allowed rows, as an exact scan finds them"


def test_a_big_vector_array_gives_its_memory_back_and_keeps_its_values(tmp_path):
    # indexer/spill.py: a run's vectors live in an unlinked file; an index built from them holds the
    # same vectors as one built from memory, and the array's pages go back once copied.
    from indexer.spill import SPILL_BYTES, release, vector_array

    rows, dimension = SPILL_BYTES // (4 * 128) + 1000, 128
    spilled = vector_array(rows, dimension, tmp_path)
    assert not list(tmp_path.iterdir()), "the file is unlinked at once: a crash leaves nothing behind"
    values = np.random.default_rng(3).standard_normal((rows, dimension), dtype=np.float32)
    values /= np.linalg.norm(values, axis=1, keepdims=True)
    spilled[:] = values
    before = resident_file_kb()
    release(spilled)
    assert before - resident_file_kb() > 0.9 * spilled.nbytes / 1024, "its pages went back"
    assert np.array_equal(spilled, values), "and its values are still there"

    from_file = segments.build_dense_index(spilled)
    from_memory = segments.build_dense_index(values.copy())
    assert from_file.ntotal == from_memory.ntotal == rows
    assert np.array_equal(from_file.reconstruct_n(0, rows), from_memory.reconstruct_n(0, rows))
    assert resident_file_kb() < before - 0.9 * spilled.nbytes / 1024, "building the index gave the rows back again"
    small = vector_array(10, dimension, tmp_path)
    release(small)  # anonymous memory: nothing to give back, nothing lost
    assert small.shape == (10, dimension) and not small.any()
    (tmp_path / "a-file").write_text("not a folder")
    unplaced = vector_array(rows, dimension, tmp_path / "a-file")  # nowhere to put the file: memory, not an error
    assert unplaced.shape == (rows, dimension) and not unplaced.any()
