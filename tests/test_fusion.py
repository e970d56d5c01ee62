"""Hybrid ranking: a fixed-scale blend of cosine and the share of the query a chunk matches,
which follows the better retriever when the other one carries no signal."""

import hashlib
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from indexer.config import load_config
from indexer.bm25 import LegacyLexicalIndex, LexicalIndex, build_lexical_segment
from indexer.lexical import ANALYZERS, TOKEN, WHOLE_WORDS, analyze, words
from indexer.pipeline import run_index
from server.fusion import DENSE_WEIGHT, convex_combination
from server.search import search
from server.service import SearchService, Settings
from tests.conftest import write_config
from tests.fakes.openai_server import FakeOpenAI

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "docs"


def lexical_index(texts: list[str], folder: Path) -> LexicalIndex:
    build_lexical_segment(texts, folder)
    return LexicalIndex([(folder, 0, np.zeros(0, np.int64))], len(texts))


def test_no_chunk_scores_above_the_query_ceiling(tmp_path):
    texts = [
        "Refunds go back to the original card within five days.",
        "Refund refund refund: every refund request is read by a person.",
        "Parcels leave the warehouse within two business days.",
    ]
    index = lexical_index(texts, tmp_path / "lexical")
    for query in ("refund to the card", "refund refund card days", "parcels warehouse refund"):
        scores, ceiling = index.scores(query)
        assert 0 < scores.max() <= ceiling
    scores, ceiling = index.scores("the of and")  # only stopwords
    assert ceiling == 0 and not scores.any()


@settings(max_examples=300, deadline=None)
@given(text=st.one_of(st.text(alphabet=st.characters(max_codepoint=127), max_size=300), st.text(max_size=300)))
def test_word_tokens_are_the_analyzers_pattern_whatever_the_text(text):
    # ASCII text takes a faster path than the regex (indexer/lexical.py `words`): it must cut the same words.
    assert words(text) == TOKEN.findall(text)


def test_a_question_in_words_finds_the_identifier_a_page_documents(tmp_path):
    """Docs name their subjects as code: `add_library`, `addEventListener`, and papers their genes
    and proteins `IL6` or `IL-6`. A question asks in words; the index holds an identifier's whole
    word and its parts, so both find the page."""
    texts = [
        "Use add_library() to build the target from its sources. STATIC or SHARED is the kind.",
        "addEventListener(type, handler) calls the handler on every event of that type.",
        "Each target may set COMPILE_OPTIONS. A library of helpers adds the options for you.",
        "Levels of miRNA fell in treated cells; NGOs and RNAs are no identifiers.",
        "Serum IL6 rose after the second dose in every cohort.",
    ]
    index = lexical_index(texts, tmp_path / "lexical")

    def best(query: str) -> int:
        scores, _ = index.scores(query)
        assert scores.max() > 0, query
        return int(np.argmax(scores))

    assert best("how do I add a static library?") == 0
    assert best("add_library") == 0 and best("addLibrary") == 0
    assert best("how to add an event listener") == 1
    assert best("compile options of a target") == 2
    assert best("IL-6 levels") == 4, "letters and digits meet: IL6 is also IL and 6"
    # Words that only look like identifiers stay whole: "rna" alone matches none of them.
    scores, _ = index.scores("rna")
    assert not scores.any()


def test_the_blend_weights_cosine_and_matched_share():
    fused = convex_combination({1: 0.8, 2: 0.3, 3: -0.2}, {1: 0.1, 2: 0.9, 3: 0.5}, dense_weight=0.5)
    assert fused == pytest.approx({1: 0.45, 2: 0.6, 3: 0.25})  # a negative cosine counts as 0
    assert convex_combination({1: 0.6}, {}, dense_weight=0.5) == pytest.approx({1: 0.3})
    assert convex_combination({1: 1.0}, {1: 0.0}) == pytest.approx({1: DENSE_WEIGHT}), "the default weight"


def test_unknown_query_terms_count_toward_the_ceiling_and_question_words_never_match(tmp_path):
    texts = ["What can you get here? Refunds, within sixty days.", "Parcels leave the warehouse within two business days."]
    index = lexical_index(texts, tmp_path / "lexical")
    scores, ceiling = index.scores("what can I get")
    assert not scores.any() and ceiling == 0, "question words alone are not a match"
    known, known_ceiling = index.scores("refunds")
    with_unknown, ceiling = index.scores("refunds in Mongolia")
    assert (known == with_unknown).all() and ceiling > known_ceiling
    assert with_unknown.max() / ceiling < 0.6 < known.max() / known_ceiling, "half the query unmatched is not a full match"


class NoiseOpenAI(FakeOpenAI):
    """An embedding endpoint whose vectors carry no meaning: one random direction per exact text."""

    @staticmethod
    def vector(text: str, dimensions: int) -> np.ndarray:
        seed = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")
        return np.random.default_rng(seed).standard_normal(dimensions)


@pytest.fixture
def noise_space(tmp_path, monkeypatch):
    fake = NoiseOpenAI().start()
    monkeypatch.setenv("OPENAI_API_KEY", fake.api_key)
    monkeypatch.setenv("OPENAI_BASE_URL", f"{fake.url}/v1")
    sources = "".join(f'[[sources]]\nname = "{name}"\ntype = "files"\npath = "{EXAMPLES / name}"\n' for name in ("guide", "articles"))
    config = load_config(write_config(tmp_path, sources + '[[spaces]]\nprovider = "openai"\n'))
    run_index(config)
    service = SearchService(Settings(artifacts=config.artifacts))
    generation = service.load()
    (space,) = generation.spaces.values()
    yield service, generation, space
    fake.close()


QUERIES = [
    "undo a bad index run with rollback",
    "exit status 4 nightly job",
    "HNSW nearest neighbour index",
    "stemming and stopwords",
    "citing sources in chatbot answers",
    "incremental runs content hash",
]


def test_hybrid_follows_lexical_when_the_vectors_are_noise(noise_space):
    service, generation, space = noise_space

    def top(query: str, mode: str) -> list[str]:
        hits = search(generation, space, service.query_vector(space, query), query, top_k=3, mode=mode).hits
        return [h.doc_id for h in hits]

    for query in QUERIES:
        vector = service.query_vector(space, query)
        lexical = search(generation, space, vector, query, top_k=3, mode="lexical").hits
        assert lexical, query
        best = search(generation, space, vector, query, top_k=1, mode="hybrid").hits[0]
        # The noise's cosines (|x| < 0.05) may reorder documents whose lexical shares tie within 10%, no more.
        assert best.lexical >= 0.9 * lexical[0].score, (query, best.doc_id, best.lexical, lexical[0].doc_id, lexical[0].score)


def test_indexes_from_before_segments_score_as_the_new_format_does(tmp_path):
    """A schema-1 generation's bm25s index (precomputed scores, written here with bm25s as older
    versions did) serves the same scores and ceilings as the postings this version writes."""
    import json

    import bm25s

    texts = [p.read_text(encoding="utf-8") for p in sorted(EXAMPLES.rglob("*.md"))]
    retriever = bm25s.BM25(k1=ANALYZERS[WHOLE_WORDS]["k1"], b=ANALYZERS[WHOLE_WORDS]["b"])
    retriever.index([analyze(t, WHOLE_WORDS) for t in texts], show_progress=False)
    retriever.save(str(tmp_path / "old"), show_progress=False)
    (tmp_path / "old" / "analyzer.json").write_text(json.dumps({**ANALYZERS[WHOLE_WORDS], "documents": len(texts)}))
    build_lexical_segment(texts, tmp_path / "new", WHOLE_WORDS)  # the analyzer of those versions
    old, new = LegacyLexicalIndex(tmp_path / "old"), LexicalIndex([(tmp_path / "new", 0, np.zeros(0, np.int64))], len(texts))
    for query in ("how do I undo a bad index run", "widget widget origin", "refund policy in Mongolia", "what can I get"):
        (old_scores, old_ceiling), (new_scores, new_ceiling) = old.scores(query), new.scores(query)
        assert np.allclose(old_scores, new_scores, atol=1e-5) and old_ceiling == pytest.approx(new_ceiling, abs=1e-5), query


def test_the_analyzer_drops_lucenes_english_stopwords_as_recorded():
    """analyzer.json says "lucene-english": the list the indexer carries is the one bm25s ships (and
    older generations were built with), so old and new segments agree on every term."""
    from bm25s.stopwords import STOPWORDS_EN

    from indexer.lexical import LUCENE_ENGLISH_STOPWORDS, analyze_words

    english = [a for a in ANALYZERS.values() if a["stemmer"] == "snowball-english"]
    assert LUCENE_ENGLISH_STOPWORDS == frozenset(STOPWORDS_EN) and len(english) == 4 and all(a["stopwords"] == "lucene-english" for a in english)
    words = "The refunds were not shipped to their couriers".split()
    assert analyze_words(words) == [[], ["refund"], ["were"], [], ["ship"], [], [], ["courier"]]
    assert [t for w in words for t in analyze(w)] == [t for terms in analyze_words(words) for t in terms]


def test_a_spaces_hybrid_weight_sets_the_blend(tmp_path, local_embedder):
    """`[[spaces]] hybrid_weight` is the dense share of the blend, as `index eval --tune` prints it:
    1.0 ranks a hybrid search as the dense one does, 0.0 as the keyword one (among chunks that match).
    The second run changes only the weight: it reuses the first's vectors."""
    source = f'[[sources]]\nname = "guide"\ntype = "files"\npath = "{EXAMPLES / "guide"}"\n'
    ranked = {}
    for weight in (0.0, 1.0):
        config = load_config(write_config(tmp_path, source + f'[[spaces]]\nprovider = "local"\nhybrid_weight = {weight}\n'))
        assert not run_index(config).errors
        service = SearchService(Settings(artifacts=config.artifacts))
        generation = service.load()
        (space,) = generation.spaces.values()
        for query in QUERIES:
            vector = service.query_vector(space, query)
            ranked[weight, query] = {mode: [h.chunk_ids for h in search(generation, space, vector, query, top_k=5, mode=mode, max_chunks_per_doc=None).hits]
                                     for mode in ("hybrid", "dense", "lexical")}
    for query in QUERIES:
        assert ranked[1.0, query]["hybrid"] == ranked[1.0, query]["dense"], query
        matched = ranked[0.0, query]["lexical"]
        assert matched and ranked[0.0, query]["hybrid"][: len(matched)] == matched, query  # then chunks of no shared word, at 0
    assert any(ranked[0.0, q]["hybrid"] != ranked[1.0, q]["hybrid"] for q in QUERIES), "the two blends rank apart"
