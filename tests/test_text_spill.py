"""Document texts wait on disk between a run's steps (indexer/textspill.py): the crawl holds no
text in memory, nor does reading the texts of documents the run did not crawl, and every text
and chunk reads back exactly as it was read."""

from __future__ import annotations

import json
import random
import tracemalloc
from dataclasses import replace
from pathlib import Path

import numpy as np

from indexer.chunking import ChunkingParams, chunk_text
from indexer.config import SourceConfig, load_config
from indexer.documents import Document, content_hash, metadata_hash
from indexer.metadb import IDS_PER_QUERY, stored_chunks
from indexer.pipeline import run_index
from indexer.previous import PreviousGeneration
from indexer.sources import crawl
from indexer.textspill import TEXTS_DECODED, SpilledText, TextSpill, text_holder
from tests.conftest import resident_anon_kb, write_config
from tests.fakes.openai_server import FakeOpenAI


def _markdown(seed: int, words: int) -> str:
    rng = random.Random(seed)
    vocabulary = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa", "lambda", "mu"]
    paragraphs = [" ".join(rng.choice(vocabulary) for _ in range(60)) + "." for _ in range(words // 60)]
    return f"# File {seed}\n\n" + "\n\n".join(paragraphs) + "\n"


def test_a_crawl_holds_its_documents_texts_on_disk(tmp_path: Path):
    folder = tmp_path / "docs"
    folder.mkdir()
    count, words = 60, 60_000  # 60 files of ~400 KB: 24 MB of text
    for i in range(count):
        (folder / f"file{i:03}.md").write_text(_markdown(i, words), encoding="utf-8")
    source = SourceConfig(name="docs", type="files", path=folder, extensions=(".md",))
    text_bytes = sum(p.stat().st_size for p in folder.iterdir())

    before = resident_anon_kb()
    kept = crawl(source, keep=TextSpill(tmp_path / "artifacts").keep)
    grown = resident_anon_kb() - before
    assert len(kept.documents) == count and not kept.errors
    assert grown * 1024 < text_bytes / 4, f"the crawl held {grown} kB of {text_bytes // 1024} kB of text"

    plain = crawl(source)
    assert [d.text for d in kept.documents] == [d.text for d in plain.documents]
    assert [d.content_hash for d in kept.documents] == [d.content_hash for d in plain.documents]
    assert [d.metadata_hash for d in kept.documents] == [d.metadata_hash for d in plain.documents]


def test_kept_texts_anchors_and_chunks_read_back_exactly(tmp_path: Path):
    spill = TextSpill(tmp_path)
    texts = [
        "# Café\n\nNaïve résumé, 東京 and emoji 🙂 in one paragraph.\n\n## Más\n\n" + "ünïcödé words " * 400,
        "Zero-width joiner\u200d, right-to-left \u05e9\u05dc\u05d5\u05dd and a NUL \x00 survive the round trip.\n\n" + "plain ascii words " * 300,
    ] + [_markdown(seed, 900) for seed in range(2 * TEXTS_DECODED)]  # more than stay decoded at once
    originals = [Document(f"doc:{i}", "s", "files", f"Title {i}", text, pages=(0, 40) if i % 2 else (),
                          anchors=((0, "café"), (30, f"section-{i}"), (31, "東京")) if i % 3 else ()) for i, text in enumerate(texts)]
    kept = [spill.keep(d) for d in originals]
    assert all(k is not d for k, d in zip(kept, originals))

    params = ChunkingParams(60, 10)
    expected = [chunk_text(d.text, params, doc_id=d.doc_id) for d in originals]
    chunked = [chunk_text(k.text, params, doc_id=k.doc_id, held=text_holder(k)) for k in kept]
    # Read in an order that evicts and reads again: every chunk of every document, round-robin.
    for round_ in range(max(map(len, chunked))):
        for doc_chunks, want in zip(chunked, expected):
            if round_ < len(doc_chunks):
                assert doc_chunks[round_].text == want[round_].text
    assert chunked == expected
    for k, d in zip(kept, originals):
        assert k.text == d.text and k.content_hash == content_hash(d.doc_id, d.text) and k.title == d.title
        assert k.anchors == d.anchors and k.pages == d.pages and k.metadata_hash == metadata_hash(d)
    copy = replace(kept[1], title="Renamed")  # a copy holds its fields itself
    assert type(copy) is Document and copy == replace(originals[1], title="Renamed")


def test_texts_stay_in_memory_when_they_cannot_be_kept_on_disk(tmp_path: Path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    document = Document("doc:1", "s", "files", "Title", "Some text.")
    assert TextSpill(blocker / "artifacts").keep(document) is document
    assert TextSpill(blocker / "artifacts").hold("A stored text.") == "A stored text."  # read back from a generation: likewise


class _CheapVectors(FakeOpenAI):
    """Vectors without reading the words: this test is about texts, and hashing 4M words took seconds."""

    vector = staticmethod(lambda text, dimensions: np.r_[1.0 + len(text) % 97, np.zeros(dimensions - 1)])


def _indexed_big_files(tmp_path: Path, monkeypatch, chunk_tokens: int = 8000) -> tuple[Path, int]:
    """A generation of 1,000 files of ~24 kB (one chunk each at 8,000 tokens): its config, and the files' bytes."""
    folder = tmp_path / "docs"
    folder.mkdir()
    count = 1000  # files of ~24 kB: 24 MB of text
    for i in range(count):
        (folder / f"file{i:04}.md").write_text(_markdown(i, 3600), encoding="utf-8")
    text_bytes = sum(p.stat().st_size for p in folder.iterdir())
    fake = _CheapVectors().start()
    monkeypatch.setenv("OPENAI_API_KEY", fake.api_key)
    monkeypatch.setenv("OPENAI_BASE_URL", f"{fake.url}/v1")
    config = write_config(tmp_path, '[[sources]]\nname = "docs"\ntype = "files"\npath = "docs"\n'
                                    f'[[spaces]]\nprovider = "openai"\ndimensions = 256\nchunk_tokens = {chunk_tokens}\nchunk_overlap = 0\n')
    try:
        assert not run_index(load_config(config)).errors
    finally:
        fake.close()
    return config, text_bytes


def test_texts_of_documents_not_crawled_again_wait_on_disk_too(tmp_path: Path, monkeypatch):
    """A run chunks documents it did not crawl — the last good version of a failed page, a Notion
    page known unchanged — when a new space needs their chunks; their texts come from the last
    generation, and go to the run's file too, a batch at a time, instead of into memory at once."""
    config, text_bytes = _indexed_big_files(tmp_path, monkeypatch)
    previous = PreviousGeneration.open(tmp_path / "artifacts")
    doc_ids = set(previous.documents_state())
    expected = {d.doc_id: d.text for d in crawl(load_config(config).sources[0]).documents}

    tracemalloc.start()
    try:
        stored = previous.documents(doc_ids, TextSpill(tmp_path / "artifacts"))
        holders = [text_holder(d) for d in stored]  # what chunking asks for: every text is read
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < text_bytes / 4, f"reading {text_bytes // 1024} kB of stored text held {peak // 1024} kB"
    assert all(isinstance(h, SpilledText) for h in holders)
    assert {d.doc_id: d.text for d in stored} == expected
    assert {d.doc_id: d.text for d in previous.documents(doc_ids)} == expected, "without a spill, in memory as before"
    previous.close()


def test_chunks_written_again_wait_on_disk_with_their_texts(tmp_path: Path, monkeypatch):
    """A compaction or a moved segment writes stored chunks again: read back from meta.duckdb a
    batch at a time, their texts wait in the run's file until the chunk store, postings and rows
    read them, instead of all in memory at once."""
    config, text_bytes = _indexed_big_files(tmp_path, monkeypatch, chunk_tokens=500)  # ~14 chunks a file
    generation = PreviousGeneration.open(tmp_path / "artifacts")
    folder, space_id = generation.folder, next(iter(generation.manifest["spaces"]))
    generation.close()
    ids = np.arange(int(json.loads((folder / "spaces" / space_id / "space.json").read_text())["vector_count"]))
    in_memory = stored_chunks(folder, space_id, ids[::-1])
    assert len(in_memory) == len(ids) > 8 * IDS_PER_QUERY and [c.ordinal for c in in_memory] == [c.ordinal for c in stored_chunks(folder, space_id, ids)][::-1]

    tracemalloc.start()
    try:
        spilled = stored_chunks(folder, space_id, ids[::-1], spill=TextSpill(tmp_path / "artifacts"))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # What is held is the chunks themselves (~400 bytes each) and one batch of texts.
    assert peak < text_bytes / 2, f"reading {text_bytes // 1024} kB of stored chunk text held {peak // 1024} kB"
    assert spilled == in_memory and [c.text for c in spilled] == [c.text for c in in_memory], "every field and text as stored, in the order asked"
