"""A search that can say "nothing here answers that": `answerable`, calibrated `relevance`, and a
lexical score that function words cannot inflate — on the bundled example corpus, as a new user
would try it.

The off-topic questions share no content word with the corpus (checked below, so an edit to
`examples/` that breaks that is caught); the on-topic ones are paraphrases, not headings. All 24
on-topic questions reach the default threshold (the lowest at 0.050; the measured abstain rate on
our labeled sets is up to 8%, so a change to the calibration may cost one: bench/README.md,
"Abstaining").
"""

from pathlib import Path

import pytest
from litestar.testing import TestClient

from indexer.evaluation import load_queries
from indexer.lexical import query_terms
from server.app import create_app
from server.relevance import MIN_RELEVANCE
from server.service import Settings

ON_TOPIC = [
    "how can I go back to the previous index after a bad run?",
    "which exit code means some documents failed?",
    "do I need an API key from OpenAI to use this?",
    "how are long documents split into pieces?",
    "what happens when a web page cannot be fetched?",
    "how do I restrict results to one source?",
    "can I search only pages updated last week?",
    "how does the server pick up a newly published index?",
    "what is reciprocal rank fusion?",
    "why normalize embedding vectors before using inner product?",
    "how does BM25 score a document?",
    "what does nDCG@10 measure?",
    "how do I give the chatbot citations for its answers?",
    "how many tokens fit in the local model's input?",
    "can two people run the indexer at the same time?",
    "what should I check when the search returns nothing?",
    "how do I share Notion pages with the integration?",
    "what is a memory-mapped file good for?",
    "how is an HNSW index different from a flat index?",
    "how do token buckets limit request rates?",
    "why are stop words removed from keyword search?",
    "how do I replace a file atomically on disk?",
    "which languages does the search support?",
    "what's in the space manifest?",
]
OFF_TOPIC = [
    "What is the capital of Mongolia?",
    "what is the capital of France",
    "What's the weather forecast for Paris tomorrow?",
    "Who painted the Mona Lisa?",
    "When did the Roman empire fall?",
    "How tall is Mount Everest?",
    "Symptoms of seasonal flu in toddlers",
    "Which planets have rings?",
    "How to bake sourdough bread at home",
    "Lyrics of Bohemian Rhapsody",
    "What do giraffes eat?",
    "Cheap flights from Madrid to Lisbon",
    "How to repair a punctured bicycle tyre",
    "What's the population of Brazil?",
    "Rules of cricket for beginners",
    "Where do monarch butterflies migrate?",
    "How to knit a scarf",
    "Who wrote Pride and Prejudice?",
    "How do volcanoes erupt?",
    "Is it safe to swim after eating?",
    "Tell me a joke about cats",
    "what can I get?",
]

# 151 questions a website's chatbot gets that its documents do not answer (bench/everyday/README.md).
EVERYDAY = Path(__file__).resolve().parent.parent / "bench" / "everyday"


@pytest.fixture(scope="module")
def client(examples_client):
    return examples_client


def ask(client, query: str, **body) -> dict:
    response = client.post("/v1/search", json={"query": query, **body})
    assert response.status_code == 200, response.text
    return response.json()


def test_the_off_topic_questions_share_no_content_word_with_the_corpus(examples_artifacts):
    from server.reader import Generation

    generation = Generation.open_current(examples_artifacts)
    try:
        (space,) = generation.spaces.values()
        shared = {q: [t for t in query_terms(q) if space.lexical.known(t)] for q in OFF_TOPIC}
        assert not any(shared.values()), shared
    finally:
        generation.close()


@pytest.mark.parametrize("query", OFF_TOPIC)
def test_off_topic_questions_are_not_answerable(client, query):
    result = ask(client, query)
    assert result["answerable"] is False, (query, result["hits"][0]["title"], result["hits"][0]["relevance"])
    assert result["hits"], "the hits are still there for a client that wants them"
    assert all(h["scores"]["lexical"] in (None, 0.0) for h in result["hits"]), "function words alone never match"


@pytest.mark.parametrize("query", ["C++", "R", "c", "5"])
def test_a_question_of_single_letters_is_not_answered_by_a_page_that_has_the_letter(client, query):
    """"C++" was answerable on `examples/` (relevance 0.062, lexical 1.0): its one term, "c", is
    the `-c` of `index run -c`. Beside other words a letter still counts."""
    result = ask(client, query)
    assert result["answerable"] is False and result["hits"][0]["scores"]["lexical"] is None, (result["hits"][0]["title"], result["hits"][0]["scores"])
    flag = ask(client, "what does index run -c do")["hits"][0]
    assert flag["scores"]["lexical"] > 0.5, "'c' among other words"


def test_everyday_questions_are_rarely_answerable(client):
    """Unlike OFF_TOPIC, these may share words with the corpus ("how do I write a will?"): a word
    in common must not make a question answerable. The target is at most 5% answered (3 of 151
    are, measured: bench/README.md, "Everyday questions")."""
    questions = list(load_queries(EVERYDAY).values())  # as `index eval --off-topic bench/everyday` reads them
    assert len(questions) >= 150
    answered = [q for q in questions if ask(client, q)["answerable"]]
    assert len(answered) <= 0.05 * len(questions), answered


def test_by_keywords_alone_everyday_questions_are_still_rarely_answerable(client):
    """Lexical mode, and what a degraded search answers with when the provider is down: a word in
    common with the corpus weighs more without a cosine beside it, so keyword-only searches have
    their own threshold (0.0625; at the hybrid's 0.045, 38 of 151 were answerable). Measured: 10
    of 151 answered, every off-topic question abstains, and every paraphrase is still answered
    (the lowest at 0.087): bench/README.md, "Keywords alone"."""
    questions = list(load_queries(EVERYDAY).values())
    answered = [q for q in questions if ask(client, q, mode="lexical")["answerable"]]
    assert len(answered) <= 0.08 * len(questions), answered
    assert not [q for q in OFF_TOPIC if ask(client, q, mode="lexical")["answerable"]]
    missed = [q for q in ON_TOPIC if not ask(client, q, mode="lexical")["answerable"]]
    assert len(missed) <= 2, missed


@pytest.mark.parametrize("query", ON_TOPIC)
def test_paraphrased_questions_are_answerable(client, query):
    result = ask(client, query)
    assert result["answerable"] is True, (query, result["hits"][0]["title"], result["hits"][0]["relevance"])


def test_relevance_orders_like_the_evidence_and_stays_in_range(client):
    on = ask(client, "what is reciprocal rank fusion?")["hits"]
    off = ask(client, "Who painted the Mona Lisa?")["hits"]
    assert all(0.0 <= h["relevance"] <= 1.0 for h in on + off)
    assert on[0]["relevance"] > 3 * MIN_RELEVANCE and off[0]["relevance"] < MIN_RELEVANCE / 2


def test_min_score_still_drops_hits(client):
    scored = ask(client, "what is reciprocal rank fusion?", min_score=0.99)
    assert scored["hits"] == [] and scored["answerable"] is False


def test_min_relevance_in_the_config_sets_the_space_threshold(copy_of_examples, local_embedder):
    from indexer.config import load_config
    from indexer.pipeline import run_index

    config_path = copy_of_examples / "index.toml"
    config_path.write_text(config_path.read_text().replace('chunk_overlap = 40', 'chunk_overlap = 40\nmin_relevance = 0.0\nmin_lexical_relevance = 0.99'))
    config = load_config(config_path)
    run_index(config)
    with TestClient(create_app(Settings(artifacts=config.artifacts))) as lenient:
        assert ask(lenient, "Who painted the Mona Lisa?")["answerable"] is True, "a threshold of 0 answers everything"
        (space,) = lenient.get("/v1/info").json()["spaces"]
        assert space["min_relevance"] == 0.0, "and a caller can see it is the one in use"
        assert ask(lenient, "what is reciprocal rank fusion?", mode="lexical")["answerable"] is False, "keywords alone have their own threshold"
        assert space["min_lexical_relevance"] == 0.99


# A shop's first index: two short pages. Its visitors word their questions their own way.
SHOP = {
    "shipping.md": "# Shipping\n\nWe ship parcels from Lisbon every weekday. Orders placed before 14:00 leave the same day.\n\n"
                   "## International\n\nParcels to the EU arrive in 3–5 working days; elsewhere in 7–12.\n",
    "returns.md": "# Returns\n\nYou can return any item within 30 days for a full refund. Print the label from your account page.\n",
}
ASKED_AT_THE_SHOP = [
    "can I get my money back",
    "how do I send something back",
    "do you deliver abroad",
    "how long does shipping to Germany take",
    "how many days until my order arrives in France",
]


def test_a_site_of_two_pages_answers_questions_worded_unlike_them(tmp_path, local_embedder):
    """A space's chance level is what word salad of its own words scores there. Compared with the
    chunks its words came from too, a salad of two pages' words is those pages shuffled: the level
    sat so high that 4 of these 5 questions abstained (relevance 0.032-0.035). Each salad is now
    compared with the other chunks only, and only when two or more are left (indexer/chance.py;
    bench/README.md, "Small corpora"): 3 of the 5 are answered (the other two at 0.041-0.042), and
    4 everyday questions, three of which share a word with the pages ("a refund for a cancelled
    train", two about Lisbon)."""
    from indexer.config import load_config
    from indexer.pipeline import run_index
    from tests.conftest import api_client, write_config

    (tmp_path / "docs").mkdir()
    for name, text in SHOP.items():
        (tmp_path / "docs" / name).write_text(text)
    config = load_config(write_config(tmp_path, '[[sources]]\nname = "shop"\ntype = "files"\npath = "docs"\n[[spaces]]\nprovider = "local"\n'))
    run_index(config)
    with api_client(config.artifacts) as shop:
        asked = {q: ask(shop, q) for q in ASKED_AT_THE_SHOP}
        missed = [(q, r["hits"][0]["relevance"]) for q, r in asked.items() if not r["answerable"]]
        assert len(missed) <= 2, missed
        everyday = list(load_queries(EVERYDAY).values())
        answered = [q for q in everyday + OFF_TOPIC if ask(shop, q)["answerable"]]
        assert len(answered) <= 0.05 * len(everyday), answered
