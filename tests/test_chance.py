"""Each space's chance level (indexer/chance.py): what a question without an answer scores there,
measured when a generation is written, kept while the space stays about the same size, and read
by the server to turn cosines into relevance."""

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from indexer.chance import FILE, LENGTHS, SAMPLES, ChanceLevel, measure, sample_texts, still_valid
from tests.test_old_generations import reseal

SPACE = "local-all-minilm-l6-v2-384"


def current(artifacts: Path) -> Path:
    return artifacts / "generations" / (artifacts / "CURRENT").read_text().strip()


def level_of(artifacts: Path) -> dict | None:
    path = current(artifacts) / "spaces" / SPACE / FILE
    return json.loads(path.read_text()) if path.exists() else None


def index(folder: Path):
    from indexer.config import load_config
    from indexer.pipeline import run_index

    report = run_index(load_config(folder / "index.toml", artifacts_override=folder / "artifacts"))
    assert not report.errors, report.errors
    return report


def test_a_run_measures_the_chance_level_of_each_space(examples_artifacts):
    level = level_of(examples_artifacts)
    manifest = json.loads((current(examples_artifacts) / "manifest.json").read_text())
    assert f"spaces/{SPACE}/{FILE}" in manifest["files"], "checksummed like every file of the generation"
    assert level["samples"] == sum(SAMPLES) and len(SAMPLES) == len(LENGTHS) and level["vectors"] == manifest["spaces"][SPACE]["vectors"]
    terms, means, spreads = np.array(level["points"]).T
    assert (np.diff(terms) > 0).all() and terms[0] == 0 and terms[-1] >= 34, "from questions of function words only to long pastes"
    assert (np.diff(means) >= 0).all() and means[-1] > means[1] + 0.1, "a long paste of the corpus's words matches it better than one word does"
    assert (spreads > 0).all()


def test_the_level_stays_until_the_space_grows_by_a_tenth(copy_of_examples, local_embedder):
    first = index(copy_of_examples)
    measured = level_of(copy_of_examples / "artifacts")
    assert f"chance:{SPACE}" in first.seconds

    guide = copy_of_examples / "docs" / "guide"
    page = sorted(guide.glob("*.md"))[0]
    page.write_text(page.read_text() + "\n\nOne more sentence about nothing in particular.\n")
    edited = index(copy_of_examples)
    assert not edited.unchanged and f"chance:{SPACE}" not in edited.seconds, "a small change is not worth measuring again"
    assert level_of(copy_of_examples / "artifacts") == measured

    sentences = [f"Section {i} of the appendix lists the tariff code {i * 7} for parcel class {i % 13} and its customs note." for i in range(400)]
    (guide / "appendix.md").write_text("# Appendix\n\n" + "\n\n".join(" ".join(sentences[i : i + 20]) for i in range(0, 400, 20)) + "\n")
    grown = index(copy_of_examples)
    level = level_of(copy_of_examples / "artifacts")
    assert f"chance:{SPACE}" in grown.seconds and level["vectors"] >= 1.1 * measured["vectors"]
    assert level["points"] != measured["points"], "the corpus's words changed: so does what chance scores"


def test_a_generation_without_a_level_is_served_and_gets_one_on_the_next_run(copy_of_examples, local_embedder):
    from server.reader import Generation
    from server.relevance import FIXED_MIN_RELEVANCE, relevance
    from server.search import search
    from server.service import SearchService, Settings

    index(copy_of_examples)
    artifacts = copy_of_examples / "artifacts"
    folder = current(artifacts)
    (folder / "spaces" / SPACE / FILE).unlink()  # as versions before chance levels wrote it
    reseal(folder)

    from indexer.generations import status

    assert status(artifacts)["spaces"][SPACE]["chance_level"] is False
    generation = Generation.open_current(artifacts)
    try:
        (space,) = generation.spaces.values()
        assert space.chance is None and generation.info()["spaces"][0]["chance_level"] is False
        vector = SearchService(Settings(artifacts=artifacts)).query_vector(space, "what is reciprocal rank fusion?")
        result = search(generation, space, vector, "what is reciprocal rank fusion?")
        best = result.hits[0]
        assert best.relevance == relevance(best.dense, best.lexical), "the fixed calibration on the raw cosine"
        assert result.answerable and best.relevance >= FIXED_MIN_RELEVANCE
    finally:
        generation.close()

    again = index(copy_of_examples)
    assert not again.unchanged and again.generation_id != folder.name, "nothing else changed, but the level was missing"
    generation = Generation.open_current(artifacts)
    assert level_of(artifacts)["vectors"] == generation.spaces[SPACE].size, "measured over every vector of the space"
    assert generation.info()["spaces"][0]["chance_level"] is True and status(artifacts)["spaces"][SPACE]["chance_level"] is True
    generation.close()
    assert index(copy_of_examples).unchanged, "and then a run with nothing to do publishes nothing again"


def test_levels_read_back_by_number_of_query_terms():
    level = ChanceLevel.of({"version": 1, "vectors": 10, "samples": 4, "points": [[1.0, 0.3, 0.1], [7.0, 0.5, 0.001]]})
    assert level.z(0.5, 1) == pytest.approx(2.0)
    assert level.z(0.5, 0) == pytest.approx(2.0), "fewer terms than measured: the shortest group"
    assert level.z(0.6, 40) == pytest.approx(5.0), "more: the longest; a spread under 0.02 counts as 0.02"
    assert level.z(0.46, 3) == pytest.approx(1.0), "in between, linear in log(1 + terms): 3 terms is halfway from 1 to 7"
    assert ChanceLevel.of(None) is None and ChanceLevel.of({"version": 1, "vectors": 0, "samples": 0, "points": []}) is None
    assert still_valid({"version": 1, "compared": "other-chunks", "vectors": 100, "points": []}, 109)
    assert not still_valid({"version": 1, "compared": "other-chunks", "vectors": 100, "points": []}, 110)
    assert not still_valid({"version": 1, "vectors": 100, "points": []}, 100), "measured with its source chunks too: measured again"
    assert sample_texts(["alpha beta", "gamma"]) == sample_texts(["alpha beta", "gamma"]), "the same corpus, the same samples"
    assert sample_texts(["", "  "]) == []


def test_a_few_chunks_give_a_level_for_the_questions_they_could_measure():
    """In a space of three chunks most samples are left out (each must leave two chunks to be
    compared with), and one draw kept only salads of one and two terms beside function-word ones.
    The level then held only the function words' point, and every question was read against it:
    a shop of three chunks answered 32 of 173 everyday questions (bench/README.md). Now such
    samples give a line, and a question of more terms reads the longest one measured."""
    rng = np.random.default_rng(0)
    texts = ["the of and"] * 40 + ["parcels"] * 120 + ["refund label"] * 25
    best = np.concatenate([rng.normal(0.05, 0.04, 40), rng.normal(0.16, 0.11, 120), rng.normal(0.21, 0.14, 25)])
    level = measure(texts, best, vectors=3)
    terms, means, _ = np.array(level["points"]).T
    assert list(terms) == [0, 1, 2] and means[1] == pytest.approx(0.16, abs=0.03) and means[2] == pytest.approx(0.21, abs=0.04)
    read = ChanceLevel.of(level)
    assert read.z(0.21, 5) == pytest.approx(read.z(0.21, 2)), "five terms: the level of two, the most measured"
    assert read.z(0.21, 5) < 0.5, "a question at the level of salad is not far above it"

    few = measure(["the of and"] * 40 + ["parcels"] * 7, np.full(47, 0.1), vectors=3)
    assert few["points"] == [], "too few samples with a term: no level (the fixed calibration serves), not the function words' alone"
    only_function_words = {"version": 1, "compared": "other-chunks", "vectors": 3, "samples": 187, "points": [[0.0, 0.05209, 0.0438]]}
    assert ChanceLevel.of(only_function_words) is None, "such a level, written before, is not read"
    assert not still_valid(only_function_words, 3), "and the next run that rebuilds the space measures it again"


def test_a_remote_space_measures_through_its_provider_and_a_refusal_only_warns(tmp_path, monkeypatch):
    from tests.fakes.openai_server import FakeOpenAI
    from tests.test_providers import corpus, run

    fake = FakeOpenAI().start()
    try:
        monkeypatch.setenv("OPENAI_API_KEY", fake.api_key)
        monkeypatch.setenv("OPENAI_BASE_URL", f"{fake.url}/v1")
        config = corpus(tmp_path, '[[spaces]]\nprovider = "openai"\n')
        result = run("run", "-c", str(config), "--json", "--max-cost", "0.000003")  # the documents cost ~1e-6, the level ~5e-6
        assert result.exit_code == 0, result.output
        report = json.loads(result.output)
        (warning,) = [w for w in report["warnings"] if w["step"] == "chance"]
        assert "could not be measured" in warning["message"] and "fixed calibration" in warning["message"]
        space_dir = current(tmp_path / "artifacts") / "spaces" / "openai-text-embedding-3-small-1536"
        assert not (space_dir / FILE).exists()

        shutil.rmtree(tmp_path / "artifacts")
        result = run("run", "-c", str(config), "--json")
        assert result.exit_code == 0, result.output
        level = json.loads((current(tmp_path / "artifacts") / "spaces" / "openai-text-embedding-3-small-1536" / FILE).read_text())
        assert level["vectors"] == 4 and level["points"], "measured through the provider, as queries"
        usage = json.loads(result.output)["spaces"]["openai-text-embedding-3-small-1536"]["usage"]
        # Four chunks: only samples drawn from one or two of them leave two to compare with (MIN_COMPARED), and only those are embedded.
        assert 0 < level["samples"] < sum(SAMPLES)
        # Besides, the two sentences that tell a changed model (indexer/probe.py), in a request of their own.
        assert usage["inputs"] == 4 + 2 + level["samples"] and usage["requests"] == 3, "the report counts the measurement as the provider does"
    finally:
        fake.close()


def test_a_flat_segment_is_read_exactly_without_its_deleted_rows(tmp_path):
    import faiss

    from indexer.chance import _block_best

    rng = np.random.default_rng(0)
    vectors, queries = rng.standard_normal((20000, 64)).astype(np.float32), rng.standard_normal((50, 64)).astype(np.float32)
    index = faiss.IndexFlatIP(64)
    index.add(vectors)
    faiss.write_index(index, str(tmp_path / "index.faiss"))
    mapped = faiss.read_index(str(tmp_path / "index.faiss"), faiss.IO_FLAG_MMAP_IFC | faiss.IO_FLAG_READ_ONLY)
    stored = faiss.rev_swig_ptr(mapped.get_xb(), mapped.ntotal * 64).reshape(-1, 64)
    gone = np.array([5, 9000, 19999])
    scores = vectors @ queries.T
    scores[gone] = -np.inf
    none = np.zeros((0, 2), dtype=np.int64)
    assert np.allclose(_block_best(queries, stored, None, gone, none, block=3000), scores.max(axis=0), atol=1e-4)
    assert np.allclose(_block_best(queries, stored, None, gone[:0], none, block=3000), (vectors @ queries.T).max(axis=0), atol=1e-4), \
        "the pages given back are read again from the file"
    best = scores.argmax(axis=0)
    skip = np.stack([best, np.arange(len(queries))], axis=1)  # each query's best row left out, for that query alone
    scores[best, np.arange(len(queries))] = -np.inf
    assert np.allclose(_block_best(queries, stored, None, gone, skip, block=3000), scores.max(axis=0), atol=1e-4)


def test_an_ivf_segment_is_read_exactly_list_by_list(tmp_path):
    import faiss

    from indexer.chance import _best_cosines
    from indexer.segments import Layout, Segment

    rng = np.random.default_rng(1)
    vectors, queries = rng.standard_normal((5000, 32)).astype(np.float32), rng.standard_normal((30, 32)).astype(np.float32)
    index = faiss.IndexIVFFlat(faiss.IndexFlatIP(32), 32, 16, faiss.METRIC_INNER_PRODUCT)
    index.train(vectors)
    index.add(vectors)
    (tmp_path / "s").mkdir()
    faiss.write_index(index, str(tmp_path / "s" / "index.faiss"))
    (tmp_path / "first").mkdir()  # a flat segment before it: the IVF segment's rows are vector ids 100…
    first = faiss.IndexFlatIP(32)
    first.add(np.zeros((100, 32), dtype=np.float32))
    faiss.write_index(first, str(tmp_path / "first" / "index.faiss"))
    gone = np.array([0, 77, 4999])
    scores = vectors @ queries.T
    scores[gone] = -np.inf
    layout = Layout((Segment("first", tmp_path / "first", 0, 100), Segment("s", tmp_path / "s", 100, 5000)), gone + 100)
    nothing_left_out = [np.zeros(0, dtype=np.int64)] * len(queries)
    assert np.allclose(_best_cosines(layout, 32, queries, nothing_left_out), scores.max(axis=0), atol=1e-4), \
        "exact, where a search probes a share of the lists"
    # Each query's own source chunks left out (here: its two best rows), and only for that query.
    top_two = np.argsort(-scores, axis=0)[:2].T
    scores[top_two[:, 0], np.arange(len(queries))] = scores[top_two[:, 1], np.arange(len(queries))] = -np.inf
    assert np.allclose(_best_cosines(layout, 32, queries, [rows + 100 for rows in top_two]), scores.max(axis=0), atol=1e-4)


def test_a_level_measured_with_its_source_chunks_is_read_then_measured_again(tmp_path, local_embedder):
    """A chance.json without `compared` (each sample compared with its own source chunks too, as
    before 2026-11-28) still serves; the next run measures it again, and says that is why it published."""
    from server.reader import Generation
    from tests.test_providers import corpus, run

    config = corpus(tmp_path, '[[spaces]]\nprovider = "local"\n')
    assert run("run", "-c", str(config)).exit_code == 0
    artifacts = tmp_path / "artifacts"
    folder = current(artifacts)
    level = json.loads((folder / "spaces" / SPACE / FILE).read_text())
    assert level["compared"] == "other-chunks" and level["points"]
    (folder / "spaces" / SPACE / FILE).write_text(json.dumps({k: v for k, v in level.items() if k != "compared"}))  # as the version before wrote it
    reseal(folder)
    generation = Generation.open_current(artifacts)
    try:
        assert generation.spaces[SPACE].chance is not None, "the older level is read"
    finally:
        generation.close()

    again = run("run", "-c", str(config))
    assert again.exit_code == 0 and f"the chance level of {SPACE} measured again" in again.output, again.output
    assert level_of(artifacts)["compared"] == "other-chunks"
    assert "Nothing changed" in run("run", "-c", str(config)).output
