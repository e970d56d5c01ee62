"""OpenAI and Gemini spaces through their real clients, against loopback fakes of their APIs."""

import json
import logging
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from litestar.testing import TestClient

from indexer.chance import SAMPLES
from indexer.probe import TEXTS as PROBE_TEXTS
from indexer.cli import cli
from indexer.embedders.remote import plan_batches
from server.app import create_app
from server.degraded import DegradedLog
from indexer.config import ServerConfig
from indexer.retrying import retry_after_seconds
from server.service import Settings
from tests.conftest import resident_file_kb, stored_vectors, write_config
from tests.fakes.gemini_server import FakeGemini
from tests.fakes.openai_server import FakeOpenAI

OPENAI_SPACE = "openai-text-embedding-3-small-1536"
GEMINI_SPACE = "gemini-embedding-001-768"
PRICES = {OPENAI_SPACE: 0.02, GEMINI_SPACE: 0.15}


@pytest.fixture
def fake_openai(monkeypatch):
    fake = FakeOpenAI().start()
    monkeypatch.setenv("OPENAI_API_KEY", fake.api_key)
    monkeypatch.setenv("OPENAI_BASE_URL", f"{fake.url}/v1")
    yield fake
    fake.close()


@pytest.fixture
def fake_gemini(monkeypatch):
    fake = FakeGemini().start()
    monkeypatch.setenv("GEMINI_API_KEY", fake.api_key)
    monkeypatch.setenv("GEMINI_BASE_URL", fake.url)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    yield fake
    fake.close()


def corpus(folder: Path, spaces: str) -> Path:
    docs = folder / "docs"
    docs.mkdir(exist_ok=True)
    (docs / "refunds.md").write_text("# Refunds\n\nShoes can be returned within sixty days for a refund to the original card.\n")
    (docs / "shipping.md").write_text("# Shipping\n\nParcels leave the Lisbon warehouse within two business days.\n")
    (docs / "sizes.md").write_text("# Sizes\n\nOur shoes run small: order half a size up.\n\n## Wide feet\n\nWide models are marked W.\n")
    return write_config(folder, '[[sources]]\nname = "shop"\ntype = "files"\npath = "docs"\n' + spaces)


BOTH = '[[spaces]]\nprovider = "openai"\n[[spaces]]\nprovider = "gemini"\n'


def run(*args: str):
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert "Traceback" not in result.output
    return result


def run_json(*args: str) -> dict:
    result = run(*args, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_two_providers_build_two_spaces_in_one_generation_and_queries_use_each(tmp_path, fake_openai, fake_gemini):
    config = corpus(tmp_path, BOTH)
    first = run_json("run", "-c", str(config), "--provider", "openai")
    assert set(first["spaces"]) == {OPENAI_SPACE, GEMINI_SPACE}
    assert "skipped" in first["spaces"][GEMINI_SPACE] and fake_gemini.calls == []
    openai_calls = len(fake_openai.calls)

    second = run_json("run", "-c", str(config), "--provider", "gemini")
    assert second["spaces"][OPENAI_SPACE] == {
        "chunks": first["spaces"][OPENAI_SPACE]["chunks"], "carried_over": True, "stale_documents": 0,
        "segments": 1, "rows_written": 0, "deleted_rows": 0, "compacted": False,  # its segment is shared, not rewritten
    }
    assert len(fake_openai.calls) == openai_calls, "the carried-over space sent nothing to OpenAI"
    assert second["spaces"][GEMINI_SPACE]["embedded"] == 4

    with TestClient(create_app(Settings(artifacts=tmp_path / "artifacts"))) as client:
        info = client.get("/v1/info").json()
        assert {s["space_id"]: s["dimension"] for s in info["spaces"]} == {OPENAI_SPACE: 1536, GEMINI_SPACE: 768}
        for space, fake in ((GEMINI_SPACE, fake_gemini), (OPENAI_SPACE, fake_openai)):
            before = len(fake.calls)
            result = client.post("/v1/search", json={"query": "can shoes be returned for a refund", "space": space, "top_k": 1}).json()
            assert result["space"] == space and result["hits"][0]["doc_id"] == "file:refunds.md"
            assert len(fake.calls) == before + 1, f"the query for {space} was embedded by its own provider"
    assert fake_gemini.task_types()[-1] == ("RETRIEVAL_QUERY", None)


def test_vectors_embedded_into_a_file_backed_array_hold_about_one_request_of_memory(tmp_path, fake_openai):
    """A run's vectors over 32 MB live in a file (indexer/spill.py): each request's vectors are
    written there and their pages given back as they arrive, so embedding 6,000 texts at 1,536
    dimensions (37 MB) never holds much more than one request of 2,048 (13 MB)."""
    from indexer.config import load_config
    from indexer.embedders import load_embedder
    from indexer.spill import vector_array

    space = load_config(corpus(tmp_path, '[[spaces]]\nprovider = "openai"\n')).spaces[0]
    embedder = load_embedder(space)
    texts = [f"parcel {i} leaves the Lisbon warehouse" for i in range(6000)]
    spilled = vector_array(len(texts), space.dimensions, tmp_path)
    before, held = resident_file_kb(), []
    embedder.embed_documents(texts, lambda n: held.append(resident_file_kb() - before), out=spilled)
    assert len(held) == 3 and max(held) < 0.5 * spilled.nbytes / 1024, held
    assert np.array_equal(spilled, embedder.embed_documents(texts)), "the values are all there"


def test_new_chunking_reuses_cached_vectors_and_every_chunk_keeps_its_own_text_vector(tmp_path, fake_openai, monkeypatch):
    """A space chunked anew (chunk_tokens changed) embeds only texts it has no vector for; the
    others are copied from the last generation, a few rows at a time (`CACHED_ROWS`, made small
    here so that the copy takes several reads), each into its own chunk's row."""
    import duckdb

    from indexer import previous, steps
    from tests.corpus import write_corpus
    from tests.fakes.service import word_vector

    def chunks(generation: str) -> list[tuple]:
        db = duckdb.connect(str(tmp_path / "artifacts" / "generations" / generation / "meta.duckdb"), read_only=True)
        try:
            return db.execute("SELECT vector_id, text, chunk_hash FROM chunks").fetchall()
        finally:
            db.close()

    write_corpus(tmp_path / "docs", 40, min_words=30, max_words=400)
    space = '[[spaces]]\nprovider = "openai"\ndimensions = 256\nchunk_overlap = 0\nchunk_tokens = '
    config = write_config(tmp_path, '[[sources]]\nname = "docs"\ntype = "files"\npath = "docs"\n' + space + "120\n")
    before = {h for _, _, h in chunks(run_json("run", "-c", str(config))["generation"])}
    write_config(tmp_path, '[[sources]]\nname = "docs"\ntype = "files"\npath = "docs"\n' + space + "150\n")
    monkeypatch.setattr(steps, "CACHED_ROWS", 3)
    monkeypatch.setattr(previous, "HASHES_PER_QUERY", 5)  # the cache is asked in several queries too
    report = run_json("run", "-c", str(config))
    stats = report["spaces"]["openai-text-embedding-3-small-256"]
    rows = chunks(report["generation"])
    assert stats["reused"] == len({h for _, _, h in rows} & before) > 3 * steps.CACHED_ROWS and stats["embedded"] > 0, stats

    folder = tmp_path / "artifacts" / "generations" / report["generation"]
    vectors = stored_vectors(folder / "spaces" / "openai-text-embedding-3-small-256")
    for vector_id, text, _ in rows:
        expected = word_vector(text, 256)
        assert np.allclose(vectors[vector_id], expected / np.linalg.norm(expected), atol=1e-6), text[:60]


def test_gemini_documents_and_queries_use_their_task_types_and_titles(tmp_path, fake_gemini):
    config = corpus(tmp_path, '[[spaces]]\nprovider = "gemini"\n')
    run_json("run", "-c", str(config))
    seen = fake_gemini.task_types()
    documents = [t for t in seen if t[0] == "RETRIEVAL_DOCUMENT"]
    assert sorted(documents) == sorted([("RETRIEVAL_DOCUMENT", "Refunds"), ("RETRIEVAL_DOCUMENT", "Shipping"), ("RETRIEVAL_DOCUMENT", "Sizes"), ("RETRIEVAL_DOCUMENT", "Sizes")])
    artifacts = tmp_path / "artifacts"
    (level,) = (artifacts / "generations" / (artifacts / "CURRENT").read_text().strip() / "spaces").glob("*/chance.json")
    measured = json.loads(level.read_text())["samples"]  # a sample drawn from three or four of the four chunks is not embedded (MIN_COMPARED)
    probe = len(PROBE_TEXTS)  # the sentences that tell a changed model (indexer/probe.py), as queries too
    assert 0 < measured < sum(SAMPLES) and len(seen) - len(documents) == measured + probe and set(seen) - set(documents) == {("RETRIEVAL_QUERY", None)}, \
        "the chance level's samples go as the queries they stand for"
    assert all(c.body["requests"][0]["outputDimensionality"] == 768 for c in fake_gemini.ok_calls)
    with TestClient(create_app(Settings(artifacts=tmp_path / "artifacts"))) as client:
        client.post("/v1/search", json={"query": "wide shoes"})
    assert fake_gemini.task_types()[-1] == ("RETRIEVAL_QUERY", None)


def test_reduced_gemini_vectors_are_stored_normalized(tmp_path, fake_gemini):
    config = corpus(tmp_path, '[[spaces]]\nprovider = "gemini"\n')
    generation = run_json("run", "-c", str(config))["generation"]
    vectors = np.stack(list(stored_vectors(tmp_path / "artifacts/generations" / generation / "spaces" / GEMINI_SPACE).values()))
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5), "the fake returns them at 0.37x length"


def test_token_and_cost_accounting_equal_what_the_provider_counted(tmp_path, fake_openai, fake_gemini):
    config = corpus(tmp_path, BOTH)
    report = run_json("run", "-c", str(config))
    for space, fake in ((OPENAI_SPACE, fake_openai), (GEMINI_SPACE, fake_gemini)):
        usage = report["spaces"][space]["usage"]
        assert (usage["tokens"], usage["inputs"], usage["requests"]) == (fake.tokens, fake.inputs, len(fake.ok_calls))
        assert usage["cost_usd"] == pytest.approx(fake.tokens * PRICES[space] / 1e6)
    assert report["cost_usd"] == pytest.approx(sum(report["spaces"][s]["usage"]["cost_usd"] for s in PRICES))
    assert len(fake_openai.ok_calls) == 3, "OpenAI takes every chunk in one request, the probe's sentences and the chance level's samples in one each"


def test_an_unchanged_second_run_sends_nothing(tmp_path, fake_openai, fake_gemini):
    config = corpus(tmp_path, BOTH)
    run_json("run", "-c", str(config))
    calls = (len(fake_openai.calls), len(fake_gemini.calls))
    again = run_json("run", "-c", str(config))
    assert (len(fake_openai.calls), len(fake_gemini.calls)) == calls
    assert (again["spaces"][GEMINI_SPACE]["embedded"], again["spaces"][GEMINI_SPACE]["carried"]) == (0, 4), "skipped documents keep their chunks"
    # An edited document re-embeds only its changed chunk, in every space.
    (tmp_path / "docs" / "sizes.md").write_text("# Sizes\n\nOur shoes run large: order half a size down.\n\n## Wide feet\n\nWide models are marked W.\n")
    edited = run_json("run", "-c", str(config))
    assert edited["spaces"][OPENAI_SPACE]["embedded"] == 1 and edited["spaces"][GEMINI_SPACE]["embedded"] == 1


@pytest.mark.parametrize(
    "faults, retries",
    [
        ([{"status": 429, "headers": {"Retry-After": "1"}, "message": "Rate limit reached"}], 1),
        ([{"status": 500}, {"status": 502}, {"status": 503}], 3),
    ],
)
def test_rate_limits_and_server_errors_are_retried(tmp_path, fake_openai, faults, retries):
    config = corpus(tmp_path, '[[spaces]]\nprovider = "openai"\n')
    fake_openai.faults = list(faults)
    started = time.monotonic()
    report = run_json("run", "-c", str(config))
    assert report["spaces"][OPENAI_SPACE]["usage"]["retries"] == retries
    assert [c.status for c in fake_openai.calls] == [f["status"] for f in faults] + [200, 200, 200]  # the chunks, the probe, the chance level
    if "headers" in faults[0]:
        assert time.monotonic() - started >= 1.0, "Retry-After was honoured"


def test_a_timeout_is_retried(tmp_path, fake_gemini):
    config = corpus(tmp_path, '[[spaces]]\nprovider = "gemini"\ntimeout_seconds = 1\nmax_concurrency = 1\n')
    fake_gemini.faults = [{"delay": 2.5}]
    report = run_json("run", "-c", str(config))
    assert report["spaces"][GEMINI_SPACE]["usage"]["retries"] == 1
    assert report["spaces"][GEMINI_SPACE]["embedded"] == 4


def test_documents_whose_embedding_fails_keep_their_last_good_version(tmp_path, fake_gemini):
    config = corpus(tmp_path, '[[spaces]]\nprovider = "gemini"\n')
    run_json("run", "-c", str(config))
    (tmp_path / "docs" / "refunds.md").write_text("# Refunds\n\nRefunds now take ninety days.\n")
    (tmp_path / "docs" / "gifts.md").write_text("# Gift cards\n\nGift cards never expire.\n")
    fake_gemini.faults = [{"dimensions": 512}] * 3  # the probe's request (indexer/probe.py), then each document's
    result = run("run", "-c", str(config), "--json")
    assert result.exit_code == 4, "published, with document errors"
    report = json.loads(result.output)
    assert report["documents"] == {"added": 0, "updated": 0, "metadata_only": 0, "skipped": 2, "deleted": 0, "failed": 2}
    message = "gemini-embedding-001-768: the provider returned 512-dimensional vectors; this space expects 768"
    assert sorted((e["doc_id"], e["code"], e["message"]) for e in report["errors"]) == [
        ("file:gifts.md", "EMBEDDINGS_FAILED", message),
        ("file:refunds.md", "EMBEDDINGS_FAILED", message),
    ]
    with TestClient(create_app(Settings(artifacts=tmp_path / "artifacts"))) as client:
        hits = client.post("/v1/search", json={"query": "refund original card", "mode": "lexical"}).json()["hits"]
        assert hits[0]["doc_id"] == "file:refunds.md" and "sixty days" in hits[0]["text"], "the last good version is served"
        assert client.get("/v1/documents/file:gifts.md").status_code == 404


def test_a_rejected_request_is_not_retried(tmp_path, fake_openai, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "wrong-key")
    result = run("run", "-c", str(corpus(tmp_path, '[[spaces]]\nprovider = "openai"\n')))
    assert result.exit_code == 1, "nothing could be indexed, so nothing is published"
    assert "first problem: EMBEDDINGS_FAILED openai-text-embedding-3-small-1536: HTTP 401: Incorrect API key provided." in result.output
    assert len(fake_openai.calls) == 1


def test_a_provider_whose_model_changed_stops_the_run_until_the_space_is_embedded_anew(tmp_path, fake_openai):
    """A space's vectors are reused run after run. When the model behind the name changed, the new
    chunks' vectors were ranked against the cached ones as if they compared, and nothing said so."""
    from tests.fakes.service import word_vector

    config = corpus(tmp_path, '[[spaces]]\nprovider = "openai"\n')
    run_json("run", "-c", str(config))
    served = (tmp_path / "artifacts" / "CURRENT").read_text()
    (tmp_path / "docs" / "refunds.md").write_text("# Refunds\n\nRefunds now take ninety days to reach the original card.\n")
    fake_openai.vector = lambda text, dimensions: np.roll(word_vector(text, dimensions), 7)  # another model under the same name
    sent = len(fake_openai.calls)
    stopped = run("run", "-c", str(config))
    assert stopped.exit_code == 1 and "the provider now embeds text differently than when this space's vectors were cached" in stopped.output
    assert "nothing was embedded or published" in stopped.output and "index run --reembed" in stopped.output, stopped.output
    assert len(fake_openai.calls) == sent + 1, "only the probe's two sentences were sent: no chunk was paid for"
    assert (tmp_path / "artifacts" / "CURRENT").read_text() == served

    plan = run_json("run", "-c", str(config), "--reembed", "--dry-run")["spaces"][OPENAI_SPACE]
    assert (plan["chunks_to_embed"], plan["chunks_reused"]) == (4, 0), plan
    report = run_json("run", "-c", str(config), "--reembed")["spaces"][OPENAI_SPACE]
    assert (report["embedded"], report["reused"]) == (4, 0), report
    with TestClient(create_app(Settings(artifacts=tmp_path / "artifacts"))) as client:
        hits = client.post("/v1/search", json={"query": "how long until refunds reach the original card", "mode": "dense"}).json()["hits"]
    assert "ninety days" in hits[0]["text"], "the new model's query finds the new model's vectors"
    (tmp_path / "docs" / "shipping.md").write_text("# Shipping\n\nParcels leave the Porto warehouse within one business day.\n")
    assert run_json("run", "-c", str(config))["spaces"][OPENAI_SPACE]["embedded"] == 1, "checked against the new model from now on"


def test_a_server_whose_provider_changed_its_model_answers_by_keywords_and_says_why(tmp_path, fake_openai):
    """Queries embedded by a changed model were compared with the served vectors of the old one:
    dense ranking at random, answered as if nothing were wrong."""
    from tests.fakes.service import word_vector

    run_json("run", "-c", str(corpus(tmp_path, '[[spaces]]\nprovider = "openai"\n')))
    with TestClient(create_app(Settings(artifacts=tmp_path / "artifacts"))) as client:
        assert "degraded" not in client.post("/v1/search", json={"query": "parcel shipping time"}).json(), "the same model: dense as usual"
    fake_openai.vector = lambda text, dimensions: np.roll(word_vector(text, dimensions), 7)
    with TestClient(create_app(Settings(artifacts=tmp_path / "artifacts"))) as client:
        body = client.post("/v1/search", json={"query": "parcel shipping time"}).json()
        assert body["degraded"] == "lexical" and "provider now embeds text differently" in body["degraded_reason"], body
        assert "index run --reembed" in body["degraded_reason"] and body["hits"][0]["title"] == "Shipping"
        (space,) = client.get("/v1/info").json()["spaces"]
        assert "embeds text differently" in space["degraded_reason"]
    with TestClient(create_app(Settings(artifacts=tmp_path / "artifacts", server=ServerConfig(on_embedding_failure="error")))) as client:
        refused = client.post("/v1/search", json={"query": "parcel shipping time"})
        assert refused.status_code == 503 and refused.json()["code"] == "MODEL_CHANGED"


def test_index_search_from_the_shell_checks_the_model_before_it_trusts_a_query_vector(tmp_path, fake_openai):
    """`index search` loads a space's model on its first query, and the server's check ran only when
    models were readied at load: from the shell a changed model ranked the old vectors at random
    with nothing said — where an admin looks first after a night stopped by that change."""
    from tests.fakes.service import word_vector

    config = str(corpus(tmp_path, '[[spaces]]\nprovider = "openai"\n'))
    run_json("run", "-c", config)
    before = len(fake_openai.calls)
    same = run("search", "parcel shipping time", "-c", config)
    assert same.exit_code == 0 and "keywords only" not in same.output and "1. Shipping" in same.output, same.output
    assert len(fake_openai.calls) == before + 2, "the probe's request, then the query's"
    fake_openai.vector = lambda text, dimensions: np.roll(word_vector(text, dimensions), 7)
    changed = run("search", "parcel shipping time", "-c", config)
    assert changed.exit_code == 0 and "Answered by keywords only" in changed.output, changed.output
    assert "embeds text differently" in changed.output and "index run --reembed" in changed.output and "1. Shipping" in changed.output
    before = len(fake_openai.calls)
    assert run("search", "parcel shipping time", "-c", config, "--mode", "lexical").exit_code == 0
    assert len(fake_openai.calls) == before, "a search by keywords sends nothing"


def test_a_model_that_changes_while_the_server_runs_is_noticed_within_probe_seconds(tmp_path, fake_openai):
    """No generation is published while the nightly stops on the changed model: a server that only
    checked when it loaded one kept answering with query vectors of the new model for days."""
    from tests.fakes.service import word_vector

    run_json("run", "-c", str(corpus(tmp_path, '[[spaces]]\nprovider = "openai"\n')))

    def degraded(client) -> bool:
        return "degraded" in client.post("/v1/search", json={"query": "parcel shipping time"}).json()

    def waited_for(client, expected: bool) -> bool:
        deadline = time.monotonic() + 10
        while degraded(client) != expected and time.monotonic() < deadline:
            time.sleep(0.1)
        return degraded(client) == expected

    with TestClient(create_app(Settings(artifacts=tmp_path / "artifacts", poll_seconds=0.05, probe_seconds=0.2))) as client:
        assert not degraded(client)
        fake_openai.vector = lambda text, dimensions: np.roll(word_vector(text, dimensions), 7)
        assert waited_for(client, True), "the changed model is noticed while the generation is served"
        del fake_openai.vector  # the provider answers as before: dense again
        assert waited_for(client, False)


def test_after_the_space_is_embedded_anew_no_query_vector_of_the_old_model_is_used(tmp_path, fake_openai):
    """The server's query cache outlived the generation: after `--reembed` a popular question kept
    its vector from the old model, compared with vectors of the new one."""
    from tests.fakes.service import word_vector

    config = corpus(tmp_path, '[[spaces]]\nprovider = "openai"\n')
    run_json("run", "-c", str(config))
    question = {"query": "parcel shipping time", "mode": "dense"}
    with TestClient(create_app(Settings(artifacts=tmp_path / "artifacts", poll_seconds=0.05))) as client:
        assert client.post("/v1/search", json=question).json()["hits"][0]["title"] == "Shipping"
        served = client.get("/v1/info").json()["generation"]
        fake_openai.vector = lambda text, dimensions: np.roll(word_vector(text, dimensions), 7)
        run_json("run", "-c", str(config), "--reembed")
        deadline = time.monotonic() + 10
        while client.get("/v1/info").json()["generation"] == served and time.monotonic() < deadline:
            time.sleep(0.05)
        asked = sum(c.body.get("input") == [question["query"]] or c.body.get("input") == question["query"] for c in fake_openai.calls)
        body = client.post("/v1/search", json=question).json()
        assert "degraded" not in body and body["hits"][0]["title"] == "Shipping", body
        assert sum(c.body.get("input") == [question["query"]] or c.body.get("input") == question["query"] for c in fake_openai.calls) == asked + 1, \
            "the question is embedded again, by the new model"


def test_max_cost_stops_before_spending_and_publishes_nothing(tmp_path, fake_openai):
    config = corpus(tmp_path, '[[spaces]]\nprovider = "openai"\n')
    result = run("run", "-c", str(config), "--max-cost", "0.0000001")
    assert result.exit_code == 5
    assert "--max-cost of $0.0000" in result.output and "nothing was published" in result.output
    assert fake_openai.calls == [] and not (tmp_path / "artifacts" / "CURRENT").exists()
    unbounded = run("run", "-c", str(config), "--max-cost", "nan")  # nan passed the range, then no cost ever exceeded it
    assert unbounded.exit_code == 2 and "'nan' is not a finite number" in unbounded.output and fake_openai.calls == [], unbounded.output
    assert run("run", "-c", str(config), "--max-cost", "1").exit_code == 0


def test_a_missing_key_is_a_config_error_naming_the_variable(tmp_path, monkeypatch):
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    result = run("run", "-c", str(corpus(tmp_path, '[[spaces]]\nprovider = "gemini"\n')))
    assert result.exit_code == 2
    assert "the gemini embedding space needs an API key: set GEMINI_API_KEY or GOOGLE_API_KEY in the environment" in result.output
    assert "--provider" not in result.output, "no other space to rebuild"
    both = corpus(tmp_path, '[[spaces]]\nprovider = "gemini"\n[[spaces]]\nprovider = "local"\n')
    result = run("run", "-c", str(both))  # the key is one space's problem: said how to build the rest meanwhile
    assert result.exit_code == 2 and "or rebuild the other spaces alone: index run --provider local" in result.output, result.output


def test_google_api_key_works_too(tmp_path, fake_gemini, monkeypatch):
    monkeypatch.delenv("GEMINI_API_KEY")
    monkeypatch.setenv("GOOGLE_API_KEY", fake_gemini.api_key)
    assert run("run", "-c", str(corpus(tmp_path, '[[spaces]]\nprovider = "gemini"\n'))).exit_code == 0


def test_a_space_without_its_key_answers_lexically_while_others_keep_working(tmp_path, fake_openai, local_embedder, monkeypatch):
    config = corpus(tmp_path, '[[spaces]]\nprovider = "local"\n[[spaces]]\nprovider = "openai"\n')
    run_json("run", "-c", str(config))
    monkeypatch.delenv("OPENAI_API_KEY")
    with TestClient(create_app(Settings(artifacts=tmp_path / "artifacts"))) as client:
        degraded = client.post("/v1/search", json={"query": "refund", "space": OPENAI_SPACE}).json()
        assert degraded["degraded"] == "lexical" and "set OPENAI_API_KEY" in degraded["degraded_reason"]
        assert degraded["mode"] == "lexical" and degraded["hits"][0]["doc_id"] == "file:refunds.md"
        lexical = client.post("/v1/search", json={"query": "refund", "space": OPENAI_SPACE, "mode": "lexical"}).json()
        assert "degraded" not in lexical, "asking for lexical is not a degradation"
        local = client.post("/v1/search", json={"query": "refund", "space": "local-all-minilm-l6-v2-384"}).json()
        assert local["hits"] and "degraded" not in local and local["mode"] == "hybrid"
        spaces = {s["space_id"]: s for s in client.get("/v1/info").json()["spaces"]}
        assert "set OPENAI_API_KEY" in spaces[OPENAI_SPACE]["degraded_reason"], "seen before any search"
        assert spaces["local-all-minilm-l6-v2-384"]["degraded_reason"] is None
    strict = Settings(artifacts=tmp_path / "artifacts", server=ServerConfig(on_embedding_failure="error"))
    with TestClient(create_app(strict)) as client:
        refused = client.post("/v1/search", json={"query": "refund", "space": OPENAI_SPACE})
        assert refused.status_code == 503
        assert refused.json()["code"] == "PROVIDER_UNAVAILABLE" and "set OPENAI_API_KEY" in refused.json()["message"]


def test_a_base_url_that_is_no_url_is_named_not_retried_as_a_connection_error(tmp_path, fake_openai, monkeypatch):
    """OPENAI_BASE_URL without its scheme: six attempts, each "APIConnectionError: Connection error.",
    and nothing named the variable. Now the run stops before sending anything, and a server answers
    by keywords with the variable in its reason."""
    config = corpus(tmp_path, '[[spaces]]\nprovider = "openai"\n')
    run_json("run", "-c", str(config))
    sent = len(fake_openai.calls)
    monkeypatch.setenv("OPENAI_BASE_URL", "api.openai.com/v1")
    (tmp_path / "docs" / "refunds.md").write_text("# Refunds\n\nRefunds take ten business days now.\n")
    result = run("run", "-c", str(config))
    assert result.exit_code == 2 and "OPENAI_BASE_URL = 'api.openai.com/v1' is not an http(s) URL with a host" in result.output, result.output
    assert len(fake_openai.calls) == sent
    with TestClient(create_app(Settings(artifacts=tmp_path / "artifacts"))) as client:
        found = client.post("/v1/search", json={"query": "refund"}).json()
    assert found["degraded"] == "lexical" and "OPENAI_BASE_URL" in found["degraded_reason"] and found["hits"], found


def test_repeated_queries_are_embedded_once(tmp_path, fake_openai):
    run_json("run", "-c", str(corpus(tmp_path, '[[spaces]]\nprovider = "openai"\n')))
    before = len(fake_openai.calls)
    with TestClient(create_app(Settings(artifacts=tmp_path / "artifacts"))) as client:
        for _ in range(3):
            assert client.post("/v1/search", json={"query": "parcel shipping time"}).status_code == 200
        client.post("/v1/search", json={"query": "another question"})
    assert len(fake_openai.calls) == before + 1 + 2, "the probe's sentences when the server loads (indexer/probe.py), then two questions"


def test_a_provider_outage_answers_lexically_or_as_a_retryable_503_when_configured(tmp_path, fake_openai):
    run_json("run", "-c", str(corpus(tmp_path, '[[spaces]]\nprovider = "openai"\n')))
    with TestClient(create_app(Settings(artifacts=tmp_path / "artifacts"))) as client:
        fake_openai.faults = [{"status": 500}, {"status": 500}]
        response = client.post("/v1/search", json={"query": "refunds please"})
        assert response.status_code == 200
        body = response.json()
        assert body["degraded"] == "lexical" and "could not embed the query" in body["degraded_reason"]
        assert body["hits"][0]["doc_id"] == "file:refunds.md", "BM25 still finds the page"
    strict = Settings(artifacts=tmp_path / "artifacts", server=ServerConfig(on_embedding_failure="error"))
    with TestClient(create_app(strict)) as client:
        fake_openai.faults = [{"status": 500}, {"status": 500}]
        response = client.post("/v1/search", json={"query": "refunds again"})
        assert response.status_code == 503
        assert response.json()["code"] == "EMBEDDINGS_FAILED" and response.json()["retryable"] is True
        # A long Retry-After is not slept through while a user waits.
        fake_openai.faults = [{"status": 429, "headers": {"Retry-After": "30"}}]
        started = time.monotonic()
        limited = client.post("/v1/search", json={"query": "refunds again"})
        assert limited.status_code == 503 and time.monotonic() - started < 5
        assert client.post("/v1/search", json={"query": "refunds again"}).status_code == 200


def test_an_outage_is_logged_once_and_its_end_with_how_many_searches_it_covered(tmp_path, fake_openai):
    run_json("run", "-c", str(corpus(tmp_path, '[[spaces]]\nprovider = "openai"\n')))
    lines = []
    handler = logging.Handler()
    handler.emit = lambda record: lines.append((record.levelname, record.getMessage()))
    server_log = logging.getLogger("static_rag.server")
    server_log.addHandler(handler)
    try:
        with TestClient(create_app(Settings(artifacts=tmp_path / "artifacts"))) as client:
            counted = re.compile(rf'^static_rag_degraded_searches_total{{space="{OPENAI_SPACE}"}} (\S+)$', re.M)
            before = float((counted.search(client.get("/metrics").text) or [0, 0])[1])  # the process's earlier tests count too
            fake_openai.faults = [{"status": 500}] * 8  # four searches, each tried twice by the client
            for i in range(4):
                assert client.post("/v1/search", json={"query": f"refunds {i}"}).json()["degraded"] == "lexical"
            assert "could not embed the query" in client.get("/v1/info").json()["spaces"][0]["degraded_reason"]
            assert "degraded" not in client.post("/v1/search", json={"query": "refunds again"}).json()
            assert client.get("/v1/info").json()["spaces"][0]["degraded_reason"] is None, "the outage is over"
            assert float(counted.search(client.get("/metrics").text)[1]) == before + 4
    finally:
        server_log.removeHandler(handler)
    outage = [(level, message) for level, message in lines if "lexically" in message]
    assert len(outage) == 2, outage
    assert outage[0][0] == "WARNING" and f"space {OPENAI_SPACE} could not embed the query" in outage[0][1]
    assert outage[1] == ("INFO", f"space {OPENAI_SPACE} embeds queries again; 4 searches were answered lexically meanwhile")


def test_a_long_outage_is_logged_again_each_minute_with_the_searches_since():
    lines, now = [], [0.0]
    log = logging.getLogger("tests.degraded")
    log.propagate = False
    handler = logging.Handler()
    handler.emit = lambda record: lines.append(record.getMessage())
    log.addHandler(handler)
    degraded = DegradedLog(log, repeat_seconds=60, clock=lambda: now[0])
    for second in range(0, 150, 5):  # a search every 5 s for two and a half minutes
        now[0] = second
        degraded.answered_lexically("s", "space s could not embed the query: HTTP 500")
    degraded.embedded("s")
    degraded.embedded("s")
    assert lines == [
        "answering lexically: space s could not embed the query: HTTP 500",
        "answering lexically: space s could not embed the query: HTTP 500 (11 more searches answered lexically since the last message)",
        "answering lexically: space s could not embed the query: HTTP 500 (11 more searches answered lexically since the last message)",
        "space s embeds queries again; 30 searches were answered lexically meanwhile",
    ]


def test_gemini_batches_stay_within_100_inputs(tmp_path, fake_gemini):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "long.md").write_text("# Long\n\n" + "\n\n".join(f"## Part {i}\n\nParagraph number {i} about topic {i}." for i in range(230)))
    config = write_config(tmp_path, '[[sources]]\nname = "d"\ntype = "files"\npath = "docs"\n[[spaces]]\nprovider = "gemini"\n')
    report = run_json("run", "-c", str(config))
    assert report["spaces"][GEMINI_SPACE]["embedded"] == 230
    assert sorted(c.inputs for c in fake_gemini.calls if c.body["requests"][0]["taskType"] == "RETRIEVAL_DOCUMENT") == [30, 100, 100]
    assert max(c.inputs for c in fake_gemini.calls) == 100, "the chance level's samples too"
    assert all(c.status == 200 for c in fake_gemini.calls)


def test_the_fakes_reject_oversize_batches_as_the_real_apis_do(fake_openai, fake_gemini):
    import openai
    from google import genai
    from google.genai import errors, types

    client = openai.OpenAI(api_key=fake_openai.api_key, base_url=f"{fake_openai.url}/v1", max_retries=0)
    with pytest.raises(openai.BadRequestError, match="maximum 2048 inputs"):
        client.embeddings.create(model="text-embedding-3-small", input=["x"] * 2049)
    with pytest.raises(openai.BadRequestError, match="cannot be an empty string"):
        client.embeddings.create(model="text-embedding-3-small", input=["ok", ""])
    gemini = genai.Client(api_key=fake_gemini.api_key, http_options=types.HttpOptions(base_url=fake_gemini.url, api_version="v1"))
    with pytest.raises(errors.ClientError, match="at most 100 requests"):
        gemini.models.embed_content(model="gemini-embedding-001", contents=["x"] * 101)


def test_batches_respect_input_and_token_limits():
    tokens = [100_000, 150_000, 60_000, 10, 10]
    assert plan_batches(tokens, None, max_inputs=2048, max_tokens=300_000) == [[0, 1], [2, 3, 4]]
    assert plan_batches([1] * 5, None, max_inputs=2, max_tokens=None) == [[0, 1], [2, 3], [4]]
    assert plan_batches([1] * 4, ["a", "b", "a", "b"], max_inputs=100, max_tokens=None) == [[0, 2], [1, 3]]


@pytest.mark.parametrize(
    "headers, seconds",
    [
        ({"retry-after": "2"}, 2.0),
        ({"retry-after-ms": "250"}, 0.25),
        ({"x-ratelimit-reset-requests": "1s", "x-ratelimit-reset-tokens": "6m0s"}, 360.0),
        ({"x-ratelimit-reset-tokens": "20ms"}, 0.02),
        ({}, None),
    ],
)
def test_wait_hints_are_read_from_headers(headers, seconds):
    assert retry_after_seconds(headers) == seconds


def test_the_fake_openai_server_runs_on_its_own(tmp_path):
    import socket

    import openai

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    process = subprocess.Popen([sys.executable, "-m", "tests.fakes.openai_server", "--port", str(port)], stdout=subprocess.PIPE, text=True, cwd=Path(__file__).parent.parent)
    try:
        assert "fake OpenAI embeddings on" in process.stdout.readline()
        client = openai.OpenAI(api_key="test-key", base_url=f"http://127.0.0.1:{port}/v1", max_retries=0)
        response = client.embeddings.create(model="text-embedding-3-small", input=["hello", "world"])  # the client's default base64 encoding
        assert [len(d.embedding) for d in response.data] == [1536, 1536] and response.usage.prompt_tokens == 2
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_a_space_whose_stored_manifest_differs_is_rebuilt_not_reused(tmp_path, fake_gemini):
    """A generation written by an older version that embedded without task types: its vectors never mix with ours."""
    import hashlib

    config = corpus(tmp_path, '[[spaces]]\nprovider = "gemini"\n')
    generation = tmp_path / "artifacts/generations" / run_json("run", "-c", str(config))["generation"]
    space_json = generation / "spaces" / GEMINI_SPACE / "space.json"
    older = json.loads(space_json.read_text())
    older["task_types"] = {"document": None, "query": None}
    space_json.write_text(json.dumps(older))
    manifest = json.loads((generation / "manifest.json").read_text())
    data = space_json.read_bytes()
    manifest["files"][f"spaces/{GEMINI_SPACE}/space.json"] = {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    (generation / "manifest.json").write_text(json.dumps(manifest))

    rebuilt = run_json("run", "-c", str(config))
    assert (rebuilt["spaces"][GEMINI_SPACE]["embedded"], rebuilt["spaces"][GEMINI_SPACE]["reused"]) == (4, 0)
    again = run_json("run", "-c", str(config))
    assert (again["spaces"][GEMINI_SPACE]["embedded"], again["spaces"][GEMINI_SPACE]["carried"]) == (0, 4)


def test_the_fake_gemini_single_embed_content_endpoint(fake_gemini):
    import httpx

    body = {"content": {"parts": [{"text": "where is my parcel"}]}, "taskType": "RETRIEVAL_QUERY", "outputDimensionality": 768}
    response = httpx.post(f"{fake_gemini.url}/v1/models/gemini-embedding-001:embedContent", json=body, headers={"x-goog-api-key": fake_gemini.api_key})
    assert response.status_code == 200 and len(response.json()["embedding"]["values"]) == 768
    assert response.json()["usageMetadata"]["promptTokenCount"] == 4
    with_title = httpx.post(f"{fake_gemini.url}/v1/models/gemini-embedding-001:embedContent", json={**body, "title": "x"}, headers={"x-goog-api-key": fake_gemini.api_key})
    assert with_title.status_code == 400 and with_title.json()["error"]["status"] == "INVALID_ARGUMENT"


def test_a_provider_run_keeps_changed_documents_findable_in_the_other_spaces(tmp_path, fake_openai, fake_gemini):
    config = corpus(tmp_path, BOTH)
    run_json("run", "-c", str(config))
    (tmp_path / "docs" / "refunds.md").write_text("# Refunds\n\nShoes can be returned within ninety days for a refund to the original card.\n")
    (tmp_path / "docs" / "gift-cards.md").write_text("# Gift cards\n\nGift cards never expire and cannot be exchanged for cash.\n")
    nightly = run_json("run", "-c", str(config), "--provider", "gemini")
    assert nightly["spaces"][OPENAI_SPACE]["stale_documents"] == 2, "one changed, one new: both wait for OpenAI"

    artifacts = tmp_path / "artifacts"
    with TestClient(create_app(Settings(artifacts=artifacts))) as client:
        info = client.get("/v1/info").json()
        assert {s["space_id"]: s["stale_documents"] for s in info["spaces"]} == {OPENAI_SPACE: 2, GEMINI_SPACE: 0}
        assert info["default_space"] == GEMINI_SPACE, "without default_space, the space rebuilt last serves"
        default = client.post("/v1/search", json={"query": "can shoes be returned for a refund", "top_k": 1}).json()
        assert default["space"] == GEMINI_SPACE and default["hits"][0]["doc_id"] == "file:refunds.md" and not default["hits"][0]["stale"]
        old = client.post("/v1/search", json={"query": "can shoes be returned for a refund", "space": OPENAI_SPACE, "top_k": 1}).json()
        assert old["hits"][0]["doc_id"] == "file:refunds.md", "the changed page is still in the space that was not rebuilt"
        assert old["hits"][0]["stale"] is True and "sixty days" in old["hits"][0]["text"]
    status = run("status", "-c", str(config))
    assert f"{OPENAI_SPACE}: 4 vectors" in status.output and "2 stale" in status.output

    assert run_json("status", "-c", str(config))["spaces"][OPENAI_SPACE]["stale_documents"] == 2
    with TestClient(create_app(Settings(artifacts=artifacts, server=ServerConfig(default_space=OPENAI_SPACE)))) as client:
        assert client.post("/v1/search", json={"query": "gift cards", "top_k": 1}).json()["space"] == OPENAI_SPACE, "[server] default_space wins"

    (tmp_path / "docs" / "shipping.md").write_text("# Shipping\n\nParcels leave the Porto warehouse within one business day.\n")
    second = run_json("run", "-c", str(config), "--provider", "gemini")
    assert second["spaces"][OPENAI_SPACE]["stale_documents"] == 3, "a second night: the first night's two are still stale, and one more"
    with TestClient(create_app(Settings(artifacts=artifacts))) as client:
        old = client.post("/v1/search", json={"query": "can shoes be returned for a refund", "space": OPENAI_SPACE, "top_k": 1}).json()
        assert old["hits"][0]["stale"] is True and "sixty days" in old["hits"][0]["text"]

    catch_up = run_json("run", "-c", str(config), "--provider", "openai")
    assert catch_up["spaces"][OPENAI_SPACE]["embedded"] == 3, "only the stale documents' chunks are embedded"
    with TestClient(create_app(Settings(artifacts=artifacts))) as client:
        info = client.get("/v1/info").json()
        assert {s["space_id"]: s["stale_documents"] for s in info["spaces"]} == {OPENAI_SPACE: 0, GEMINI_SPACE: 0}
        hit = client.post("/v1/search", json={"query": "can shoes be returned for a refund", "space": OPENAI_SPACE, "top_k": 1}).json()["hits"][0]
        assert hit["stale"] is False and "ninety days" in hit["text"]
