"""Generations written by earlier versions: served as they are, and updated by the next run."""

import hashlib
import json
import shutil
from pathlib import Path

import duckdb
import pytest

from tests.test_index_run import edit, run_cli, small_corpus


def as_schema_1(folder: Path, chunk_store: bool = True) -> None:
    """Rewrite a one-segment generation the way versions before segments wrote it (schema 1):
    index.faiss, chunks.* and a bm25s lexical index in the space folder itself; `chunk_store`
    False: from before chunks.jsonl existed too."""
    import bm25s

    from indexer.lexical import ANALYZERS, WHOLE_WORDS, analyze

    manifest = json.loads((folder / "manifest.json").read_text())
    for info in manifest["spaces"].values():
        space = folder / info["path"]
        (segment,) = json.loads((space / "segments.json").read_text())["segments"]
        source = space / "segments" / segment["name"]
        for name in ("index.faiss", "chunks.jsonl", "chunks.offsets.npy"):
            (source / name).rename(space / name)
        texts = [json.loads(line)["text"] for line in (space / "chunks.jsonl").read_text(encoding="utf-8").splitlines()]
        old = ANALYZERS[WHOLE_WORDS]  # the only analyzer of those versions
        retriever = bm25s.BM25(k1=old["k1"], b=old["b"])
        retriever.index([analyze(t, WHOLE_WORDS) for t in texts], show_progress=False)
        retriever.save(str(space / "lexical"), show_progress=False)
        (space / "lexical" / "analyzer.json").write_text(json.dumps({**old, "documents": len(texts)}))
        shutil.rmtree(space / "segments")
        (space / "segments.json").unlink()
        if not chunk_store:
            (space / "chunks.jsonl").unlink()
            (space / "chunks.offsets.npy").unlink()
    manifest["schema_version"] = 1
    reseal(folder, manifest)


def with_whole_word_postings(folder: Path, analyzer: str = "english-snowball-v1") -> None:
    """Rewrite a generation's postings as versions before identifier parts wrote them
    (`english-snowball-v1`), before titles were indexed (`-v2`) or, for a test of the text alone,
    before Chinese, Japanese and Korean were read in pairs (`-v3`): each segment's `lexical/` from
    its chunk texts alone."""
    from indexer.bm25 import build_lexical_segment
    from indexer.chunkstore import StoredTexts

    for segment in sorted(folder.glob("spaces/*/segments/*")):
        shutil.rmtree(segment / "lexical")  # its own files: hard links into the generation before are not rewritten
        texts = StoredTexts(segment)
        build_lexical_segment(texts, segment / "lexical", analyzer)
        texts.close()
    reseal(folder)


def lexical_titles(config: Path, query: str) -> list[str]:
    found = json.loads(run_cli("search", query, "-c", str(config), "--mode", "lexical", "--json").output)
    return [hit["title"] for hit in found["hits"]]


def reseal(folder: Path, manifest: dict | None = None) -> None:
    """The manifest's checksums made to match a generation's files again, after a test rewrote some."""
    manifest = manifest or json.loads((folder / "manifest.json").read_text())
    manifest["files"] = {
        p.relative_to(folder).as_posix(): {"bytes": p.stat().st_size, "sha256": hashlib.sha256(p.read_bytes()).hexdigest()}
        for p in sorted(folder.rglob("*")) if p.is_file() and p.name != "manifest.json"
    }
    (folder / "manifest.json").write_text(json.dumps(manifest))


@pytest.mark.parametrize("chunk_store", [True, False], ids=["schema-1", "schema-1-without-chunk-store"])
def test_a_generation_from_before_segments_is_served_with_the_same_hits(tmp_path, examples_artifacts, chunk_store):
    from server.reader import Generation
    from server.search import search

    for name in ("old", "new"):  # both written by the analyzer of those versions: the same terms, in two formats
        shutil.copytree(examples_artifacts, tmp_path / name)
        with_whole_word_postings(tmp_path / name / "generations" / (tmp_path / name / "CURRENT").read_text().strip())
    as_schema_1(tmp_path / "old" / "generations" / (tmp_path / "old" / "CURRENT").read_text().strip(), chunk_store)
    old, new = Generation.open_current(tmp_path / "old"), Generation.open_current(tmp_path / "new")
    space_id = next(iter(new.spaces))
    assert (old.spaces[space_id].chunks is not None) is chunk_store and new.spaces[space_id].chunks is not None
    ids = [0, 5, 17, 42]
    assert old.hits(space_id, ids) == new.hits(space_id, ids)
    vector = new.spaces[space_id].dense.reconstruct_batch([17])[0]
    for mode in ("hybrid", "lexical", "dense"):
        found = [search(g, g.spaces[space_id], vector, "how do I undo a bad index run?", top_k=5, mode=mode).hits for g in (old, new)]
        assert [h.chunk_id for h in found[0]] == [h.chunk_id for h in found[1]] and found[0], mode
        assert [h.score for h in found[0]] == pytest.approx([h.score for h in found[1]], abs=1e-5), mode
    old.close()
    new.close()


def test_a_run_over_a_generation_from_before_segments_embeds_nothing_and_writes_segments(tmp_path):
    config = small_corpus(tmp_path)
    first = json.loads(run_cli("run", "-c", str(config), "--json").output)["generation"]
    as_schema_1(tmp_path / "artifacts" / "generations" / first)
    edit(tmp_path, 1)
    report = json.loads(run_cli("run", "-c", str(config), "--json").output)
    space = report["spaces"]["local-all-minilm-l6-v2-384"]
    assert report["generation"] != first and space["carried"] == 1 and space["embedded"] == 1, space
    folder = tmp_path / "artifacts" / "generations" / report["generation"]
    assert json.loads((folder / "manifest.json").read_text())["schema_version"] == 2
    assert (folder / "spaces" / "local-all-minilm-l6-v2-384" / "segments.json").is_file()
    hit = json.loads(run_cli("search", "refund", "-c", str(config), "-k", "1", "--json").output)["hits"][0]
    assert hit["title"] == "Refunds"


def test_postings_of_whole_words_are_served_as_written_and_the_next_run_rewrites_them(tmp_path):
    """A generation from before identifier parts: its postings hold whole words, so a server
    queries them by whole words (a question in words does not find `add_library` yet), and the
    next run, though nothing changed, publishes the same chunks with postings that do."""
    config = small_corpus(tmp_path)
    (tmp_path / "docs" / "cmake.md").write_text("# Targets\n\nCall add_library() with STATIC for an archive of object files.\n")
    first = json.loads(run_cli("run", "-c", str(config), "--json").output)["generation"]
    with_whole_word_postings(tmp_path / "artifacts" / "generations" / first)
    assert lexical_titles(config, "add_library") == ["Targets"] and lexical_titles(config, "how do I add a library") == []
    report = json.loads(run_cli("run", "-c", str(config), "--json").output)
    space = report["spaces"]["local-all-minilm-l6-v2-384"]
    assert report["generation"] != first and not report["unchanged"] and space["embedded"] == 0 and space["postings_rewritten"] == 1, space
    assert lexical_titles(config, "how do I add a library") == ["Targets"]
    with_whole_word_postings(tmp_path / "artifacts" / "generations" / report["generation"])
    said = run_cli("run", "-c", str(config), "-q").output
    assert "Rewrote the lexical postings of local-all-minilm-l6-v2-384 (1 segment) for this version's analyzer: once, after an upgrade" in said, said
    again = json.loads(run_cli("run", "-c", str(config), "--json").output)
    assert again["unchanged"] and "postings_rewritten" not in again["spaces"]["local-all-minilm-l6-v2-384"]
    folder = tmp_path / "artifacts" / "generations" / json.loads(run_cli("status", "-c", str(config), "--json").output)["generation"]
    files = json.loads((folder / "manifest.json").read_text())["files"]  # the rewritten postings' checksums are their own
    assert all(hashlib.sha256((folder / name).read_bytes()).hexdigest() == info["sha256"] for name, info in files.items())


def without_page_and_anchor_columns(meta: Path):
    """meta.duckdb as versions before page_starts / anchor_offsets / anchor_names wrote it; the
    connection stays open for the caller to change more, then CHECKPOINT, close and `reseal`."""
    db = duckdb.connect(str(meta))
    for column in ("page_starts", "anchor_offsets", "anchor_names"):
        db.execute(f"ALTER TABLE documents DROP COLUMN {column}")
    return db


def test_a_generation_from_before_page_and_anchor_columns_is_served_and_updated_in_place(tmp_path):
    """meta.duckdb written before documents had page_starts / anchor_offsets / anchor_names: a server
    reads it (the columns empty), and the next run updates a copy that gains them."""
    config = small_corpus(tmp_path)
    (tmp_path / "docs" / "guide.md").write_text("---\nurl: https://docs.example.com/guide/\n---\n# Guide\n\n## Lacing\n\nLace the boots from the toe up.\n")
    first = json.loads(run_cli("run", "-c", str(config), "--json").output)["generation"]
    meta = tmp_path / "artifacts" / "generations" / first / "meta.duckdb"
    db = without_page_and_anchor_columns(meta)
    old_etag = hashlib.sha256((tmp_path / "docs" / "guide.md").read_bytes()).hexdigest()  # the old version's file validator: the bytes alone
    db.execute("UPDATE documents SET metadata_hash = 'hashed before anchors', etag = ? WHERE doc_id = 'file:guide.md'", [old_etag])  # as the old version hashed it
    db.execute("CHECKPOINT")
    db.close()
    reseal(meta.parent)
    hit = json.loads(run_cli("search", "lace the boots", "-c", str(config), "-k", "1", "--json").output)["hits"][0]
    assert hit["title"] == "Guide" and hit["link"] == "https://docs.example.com/guide/", "served, without anchors"
    report = json.loads(run_cli("run", "-c", str(config), "--json").output)
    assert not report["errors"] and report["documents"]["metadata_only"] == 1 and report["documents"]["skipped"] == 2, report["documents"]
    assert report["spaces"]["local-all-minilm-l6-v2-384"]["compacted"] is False, "the copy of the old file was updated"
    folder = tmp_path / "artifacts" / "generations" / report["generation"]
    names = duckdb.connect(str(folder / "meta.duckdb"), read_only=True).execute(
        "SELECT anchor_names FROM documents WHERE doc_id = 'file:guide.md'").fetchone()[0]
    assert names == ["guide", "lacing"]
    hit = json.loads(run_cli("search", "lace the boots", "-c", str(config), "-k", "1", "--json").output)["hits"][0]
    assert hit["link"] == "https://docs.example.com/guide/#lacing"


def test_postings_of_chunk_texts_alone_are_rewritten_with_the_titles(tmp_path):
    """A generation from before titles were indexed with their chunks (`english-snowball-v2`): a
    page whose text never says its title's words is found by them once the next run, though
    nothing changed and nothing is embedded, rewrites the postings."""
    config = small_corpus(tmp_path)
    (tmp_path / "docs" / "boots.md").write_text("---\ntitle: Warranty claims\n---\nSend the boots back with the receipt: we repair or replace them.\n")
    first = json.loads(run_cli("run", "-c", str(config), "--json").output)["generation"]
    assert lexical_titles(config, "warranty") == ["Warranty claims"]
    with_whole_word_postings(tmp_path / "artifacts" / "generations" / first, "english-snowball-v2")
    assert lexical_titles(config, "warranty") == [] and lexical_titles(config, "receipt") == ["Warranty claims"], "served as written"
    report = json.loads(run_cli("run", "-c", str(config), "--json").output)
    space = report["spaces"]["local-all-minilm-l6-v2-384"]
    assert report["generation"] != first and space["embedded"] == 0 and space["postings_rewritten"] == 1, space
    assert lexical_titles(config, "warranty") == ["Warranty claims"]


def test_postings_that_read_japanese_as_whole_clauses_are_rewritten_in_pairs(tmp_path):
    """A generation from before Chinese, Japanese and Korean were read as pairs of characters
    (`english-snowball-v3`: a clause was one word): served as written, so a question finds the
    page by no word, until the next run, though nothing changed and nothing is embedded, rewrites
    the postings."""
    config = small_corpus(tmp_path)
    (tmp_path / "docs" / "returns.md").write_text("# 返品について\n\n未使用の商品に限り返品を受け付けます。\n", encoding="utf-8")
    first = json.loads(run_cli("run", "-c", str(config), "--json").output)["generation"]
    assert lexical_titles(config, "返品できますか") == ["返品について"]
    with_whole_word_postings(tmp_path / "artifacts" / "generations" / first, "english-snowball-v3")
    assert lexical_titles(config, "返品できますか") == [], "served as written"
    report = json.loads(run_cli("run", "-c", str(config), "--json").output)
    space = report["spaces"]["local-all-minilm-l6-v2-384"]
    assert report["generation"] != first and space["embedded"] == 0 and space["postings_rewritten"] == 1, space
    assert lexical_titles(config, "返品できますか") == ["返品について"]


def test_a_document_that_fails_keeps_its_version_from_a_generation_before_page_and_anchor_columns(tmp_path):
    """Its last good version is read from a meta.duckdb that lacks those columns."""
    config = small_corpus(tmp_path)
    first = json.loads(run_cli("run", "-c", str(config), "--json").output)["generation"]
    meta = tmp_path / "artifacts" / "generations" / first / "meta.duckdb"
    db = without_page_and_anchor_columns(meta)
    db.execute("CHECKPOINT")
    db.close()
    reseal(meta.parent)
    (tmp_path / "docs" / "refunds.md").write_text("---\ntitle: [unclosed\n---\nx")
    result = run_cli("run", "-c", str(config), "--json")
    report = json.loads(result.output)
    assert result.exit_code == 4 and report["documents"]["failed"] == 1, report["documents"]
    assert [(e["doc_id"], e["code"]) for e in report["errors"]] == [("file:refunds.md", "FILE_EXTRACTION_FAILED")]
    hit = json.loads(run_cli("search", "refund within 30 days", "-c", str(config), "-k", "1", "--json").output)["hits"][0]
    assert hit["title"] == "Refunds", "its last good version"


def test_a_script_url_an_older_generation_holds_is_never_served_as_a_link(tmp_path):
    """Generations written before the indexer refused `javascript:` urls (URL_REFUSED) may hold them:
    the API gives such a document no url and no link, and a curated answer no url."""
    config = small_corpus(tmp_path)
    (tmp_path / "faq.toml").write_text('[[answers]]\nquestion = "How long does a refund take?"\nanswer = "Five business days."\n'
                                       'url = "https://shop.example/refunds"\n')
    text = config.read_text().replace("[[spaces]]", '[[sources]]\nname = "faq"\ntype = "answers"\npath = "faq.toml"\n\n[[spaces]]', 1)
    config.write_text(text)
    (tmp_path / "docs" / "guide.md").write_text("---\nurl: https://docs.example.com/guide/\n---\n# Guide\n\n## Lacing\n\nLace the boots from the toe up.\n")
    first = json.loads(run_cli("run", "-c", str(config), "--json").output)["generation"]
    meta = tmp_path / "artifacts" / "generations" / first / "meta.duckdb"
    db = duckdb.connect(str(meta))
    db.execute("UPDATE documents SET url = ' JavaScript:alert(1)' WHERE doc_id IN ('file:guide.md', 'answer:faq/how-long-does-a-refund-take')")
    db.execute("CHECKPOINT")
    db.close()
    reseal(meta.parent)
    hit = json.loads(run_cli("search", "lace the boots", "-c", str(config), "-k", "1", "--json").output)["hits"][0]
    assert hit["title"] == "Guide" and hit["url"] is None and hit["link"] is None, hit
    found = json.loads(run_cli("search", "how long until my refund arrives", "-c", str(config), "--json").output)
    assert [(a["answer"], a["url"]) for a in found["answers"]] == [("Five business days.", None)], found["answers"]
