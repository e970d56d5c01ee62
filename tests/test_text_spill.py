"""Document texts wait on disk between a run's steps (indexer/textspill.py): the crawl holds no
text in memory, and every text and chunk reads back exactly as it was read."""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

from indexer.chunking import ChunkingParams, chunk_text
from indexer.config import SourceConfig
from indexer.documents import Document, content_hash, metadata_hash
from indexer.sources import crawl
from indexer.textspill import TEXTS_DECODED, TextSpill, text_holder
from tests.conftest import resident_anon_kb


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
