"""How results are shaped for a chatbot: a few hits per document, merged neighbours, 0–1 scores,
highlighted snippets, pages, and "updated last week" filters.

The corpus is built so the easy implementation fails: one long manual says "zebra" in every one of
its ~150 small chunks, while twelve short notes say it once each. A fixed top-100 candidate list
holds nothing but the manual (and the herd page).
"""

import os
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone

import numpy as np
import pytest

from indexer.config import load_config
from indexer.pipeline import run_index
from server.timefilter import updated_range
from tests.conftest import api_client, write_config

CONFIG = """
[[sources]]
name = "zoo"
type = "files"
path = "zoo"
[[spaces]]
provider = "local"
chunk_tokens = 32
chunk_overlap = 8
"""


def ages(now: datetime) -> dict[int, datetime]:
    """note number -> when it was last changed"""
    midnight = now.replace(hour=0, minute=0, second=0, microsecond=0)
    return {0: now - timedelta(seconds=5), 1: midnight - timedelta(hours=12), 2: now - timedelta(days=5), 3: now - timedelta(days=400)}


@pytest.fixture
def dated_zoo(built_today, tmp_path_factory, local_embedder):
    """(now, client): the zoo with its notes dated around `now`, today's (UTC)."""
    return built_today(lambda now: _zoo(tmp_path_factory.mktemp("zoo"), now))


@pytest.fixture
def zoo(dated_zoo):
    return dated_zoo[1]


@contextmanager
def _zoo(folder, now: datetime):
    (folder / "zoo").mkdir()
    rules = "\n\n".join(f"Zebra rule {i}: the zebra keeper feeds each zebra hay, and a zebra foal stays near its zebra mother." for i in range(150))
    (folder / "zoo" / "manual.md").write_text(f"# Zebra keeping manual\n\n{rules}\n")
    # one run-on paragraph: too long for a chunk and no sentence to split at, so it is cut into
    # token windows that overlap
    (folder / "zoo" / "herd.md").write_text("# Herd\n\n" + ", ".join(["striped zebras grazing on the open savanna"] * 30) + "\n")
    for n in range(12):
        note = folder / "zoo" / f"note-{n:02}.md"
        note.write_text(f"# Note {n}\n\nThe reptile house needs new lamps. Visitors asked about the zebra. Feeding times moved to noon. <script>alert({n})</script>\n")
        when = ages(now).get(n, now - timedelta(days=30 + n))
        os.utime(note, (when.timestamp(), when.timestamp()))
    config = load_config(write_config(folder, CONFIG))
    report = run_index(config)
    assert not report.errors
    with api_client(config.artifacts) as client:
        yield client


def ask(client, **body):
    response = client.post("/v1/search", json={"query": "zebra", "mode": "lexical", **body})
    assert response.status_code == 200, response.text
    return response.json()


def test_a_long_document_does_not_crowd_out_the_rest(zoo):
    hits = ask(zoo, top_k=10)["hits"]
    docs = [h["doc_id"] for h in hits]
    assert len(hits) == 10, "the candidate pool widens until a full page is found"
    assert docs.count("file:manual.md") == 2, "at most two hits per document by default"
    one_each = ask(zoo, top_k=10, max_chunks_per_doc=1)["hits"]
    assert len({h["doc_id"] for h in one_each}) == 10
    unlimited = ask(zoo, top_k=10, max_chunks_per_doc=None)["hits"]
    assert [h["doc_id"] for h in unlimited].count("file:manual.md") > 2, "null lifts the limit"


def test_overlapping_chunks_merge_into_one_passage(zoo):
    hits = ask(zoo, query="grazing savanna", top_k=20, max_chunks_per_doc=None)["hits"]
    assert {h["doc_id"] for h in hits} == {"file:herd.md"}
    merged = [h for h in hits if len(h["chunk_ids"]) > 1]
    assert merged, "neighbouring chunks that share text become one hit"
    herd = zoo.get("/v1/documents/file:herd.md").json()["text"]
    for h in hits:
        assert herd[h["start"] : h["end"]] == h["text"], "a merged hit's text is the document's text at its offsets"
        assert h["chunk_id"] in h["chunk_ids"] and len(h["chunk_ids"]) <= 3
    for i, a in enumerate(hits):
        for b in hits[i + 1 :]:
            assert a["end"] <= b["start"] or b["end"] <= a["start"], "no two hits share text"


@pytest.mark.parametrize("mode", ["hybrid", "dense", "lexical"])
def test_scores_are_between_0_and_1_and_min_score_drops_weak_hits(zoo, mode):
    hits = ask(zoo, query="zebra foal feeding", mode=mode, top_k=20)["hits"]
    scores = [h["score"] for h in hits]
    assert hits and all(0 <= s <= 1 for s in scores) and scores == sorted(scores, reverse=True)
    cut = scores[len(scores) // 2]
    strong = ask(zoo, query="zebra foal feeding", mode=mode, top_k=20, min_score=cut)["hits"]
    assert strong and all(h["score"] >= cut for h in strong) and len(strong) < len(hits)
    best = ask(zoo, query="zebra foal feeding", mode=mode, top_k=20, min_score=scores[0])["hits"]
    assert best and {h["score"] for h in best} == {scores[0]}


def test_snippets_mark_query_terms_and_escape_the_rest(zoo):
    hits = ask(zoo, query="visitors asked", top_k=3, max_chunks_per_doc=1)["hits"]
    note = next(h for h in hits if h["doc_id"].startswith("file:note-"))
    assert "<mark>Visitors</mark> <mark>asked</mark>" in note["snippet"]
    assert "&lt;script&gt;" in note["snippet"] and "<script>" not in note["snippet"], "page text is escaped; only <mark> is markup"
    inside = next(h for h in ask(zoo, query="alert", top_k=3, max_chunks_per_doc=1)["hits"] if h["doc_id"].startswith("file:note-"))
    assert "&lt;script&gt;<mark>alert</mark>" in inside["snippet"] and "<script>" not in inside["snippet"], "escaped before a mark, too"
    long = ask(zoo, query="rule 140", top_k=1, max_chunks_per_doc=1)["hits"][0]
    assert "<mark>140</mark>" in long["snippet"] and len(long["snippet"]) < 400


def test_snippets_mark_exactly_the_words_whose_index_term_the_query_has():
    """Snippets stem only words that begin like a query term; checked against stemming every word,
    over every text of the examples and queries made of their own words (inflections, y/i stems
    such as "dying"/"die" and "studies"/"study", capitals, snake_case words whose parts match)."""
    import re
    from pathlib import Path

    from indexer.lexical import TOKEN, analyze, query_terms
    from server.snippets import readable, snippet

    texts = [p.read_text(encoding="utf-8") for p in sorted(Path("examples/docs").rglob("*.md"))]
    texts.append("Dying plants, the die is cast; Studies study STUDIED studying. Happy happiness HAPPILY; lying liars lie.")
    texts.append("ÉCOLES écoles; Études ÉTUDIÉES, the DYING Straße.")  # capitals beyond ASCII
    texts.append("İstanbul STUDIES: the İ lowercases to two characters, studied Dying plants.")  # offsets move when lowercased
    texts.append("Call add_library() or addEventListener; the HTTPServer runs target_link_libraries for libraries.")  # identifiers: their parts match
    queries = ["die", "study", "happy", "lie", "rolling back", "Index RUNS", "widget embed", "costs", "generations published",
               "école études", "istanbul", "add a library", "event listeners", "link libraries", "server"]
    queries += [" ".join(re.findall(r"[A-Za-z]+", t)[i:i + 3]) for t in texts for i in (5, 40)]
    for text in texts:
        plain = readable(text)
        for query in queries:
            terms = set(query_terms(query))
            # A snake_case word is marked for any of its parts; a camelCase one for the whole word only (server/snippets.py).
            expected = [w for w in (m.group() for m in TOKEN.finditer(plain)) if terms.intersection(analyze(w) if "_" in w else analyze(w)[:1])]
            marked = re.findall(r"<mark>(.*?)</mark>", snippet(text, query, width=100_000))
            assert marked == [escape_html(w) for w in expected], (query, text[:60])


def escape_html(word: str) -> str:
    from html import escape

    return escape(word, quote=False)


def test_offset_pages_through_the_results(zoo):
    whole = ask(zoo, top_k=14, max_chunks_per_doc=1)
    pages = [ask(zoo, top_k=5, offset=o, max_chunks_per_doc=1) for o in (0, 5, 10)]
    assert [h["chunk_id"] for p in pages for h in p["hits"]] == [h["chunk_id"] for h in whole["hits"]]
    assert [p["next_offset"] for p in pages] == [5, 10, None], "14 documents: the third page is the last"
    assert pages[2]["offset"] == 10 and len(pages[2]["hits"]) == 4


def test_updated_within_spans_and_phrases(dated_zoo):
    now, zoo = dated_zoo

    def docs(**filters):
        return {h["doc_id"] for h in ask(zoo, top_k=20, max_chunks_per_doc=1, filters=filters)["hits"]}

    assert docs(updated_within="2d") >= {"file:note-00.md", "file:note-01.md"}
    assert "file:note-02.md" not in docs(updated_within="2d") and "file:note-02.md" in docs(updated_within="last 7 days")
    assert "file:note-00.md" in docs(updated_within="today") and "file:note-01.md" not in docs(updated_within="today")
    assert docs(updated_within="yesterday") == {"file:note-01.md"}
    assert "file:note-03.md" not in docs(updated_within="this year") | docs(updated_within="this month")
    # with an explicit bound too, both apply (the manual was written by the fixture a moment ago)
    assert docs(updated_within="7d", updated_after=(now - timedelta(hours=1)).isoformat()) == {"file:note-00.md", "file:manual.md", "file:herd.md"}


def test_calendar_phrases_as_date_ranges():
    now = datetime(2026, 3, 4, 10, 30, tzinfo=timezone.utc)  # a Wednesday
    utc = lambda *a: datetime(*a, tzinfo=timezone.utc)  # noqa: E731
    assert updated_range("today", now) == (utc(2026, 3, 4), None)
    assert updated_range("Yesterday", now) == (utc(2026, 3, 3), utc(2026, 3, 4))
    assert updated_range("last week", now) == (utc(2026, 2, 23), utc(2026, 3, 2)), "Monday to Monday"
    assert updated_range("this month", now) == (utc(2026, 3, 1), None)
    assert updated_range("last month", now) == (utc(2026, 2, 1), utc(2026, 3, 1))
    assert updated_range("last month", utc(2026, 1, 15)) == (utc(2025, 12, 1), utc(2026, 1, 1))
    assert updated_range("7d", now) == (utc(2026, 2, 25, 10, 30), None)
    assert updated_range("past 24 hours", now) == (utc(2026, 3, 3, 10, 30), None)
    from zoneinfo import ZoneInfo

    # 00:30 UTC on 29 March is already 1:30 in Berlin, the day summer time starts (clocks jump at 2:00).
    berlin = updated_range("today", utc(2026, 3, 29, 0, 30), ZoneInfo("Europe/Berlin"))
    assert berlin == (utc(2026, 3, 28, 23), None), "Berlin's midnight was 23:00 UTC"
    assert updated_range("yesterday", utc(2026, 3, 30, 12), ZoneInfo("Europe/Berlin")) == (utc(2026, 3, 28, 23), utc(2026, 3, 29, 22)), "a 23-hour day"


def test_a_retrievers_candidates_are_its_best_scores_and_equal_scores_go_by_vector_id():
    """Candidates are the `depth` best positive scores, best first, ties (at the cut too) to the
    lower vector id: the same query gives the same candidates whatever the scores' pattern — many
    chunks scoring, few, or many equal scores (BM25 on common words)."""
    from server.search import _top

    rng = np.random.default_rng(5)
    for _ in range(300):
        n, depth = int(rng.integers(1, 3000)), int(rng.integers(1, 200))
        scores = np.where(rng.random(n) < rng.random(), rng.integers(0, 20, n) / 4, 0).astype(np.float32)
        best = sorted((-float(scores[i]), i) for i in range(n) if scores[i] > 0)[:depth]
        assert list(_top(scores, depth).items()) == [(i, -s) for s, i in best]


@pytest.mark.parametrize("mode", ["hybrid", "dense", "lexical"])
def test_a_passage_found_in_two_documents_is_one_hit(tmp_path, local_embedder, mode):
    """A page copied into an older docs version, or a file linked in twice: the same passage filled
    two of the top hits, once per document, and pushed a different answer down."""
    docs = tmp_path / "docs"
    (docs / "v1").mkdir(parents=True)
    refunds = "# Refunds\n\nA refund reaches the card used for the order within five business days.\n"
    (docs / "refunds.md").write_text(refunds)
    (docs / "v1" / "refunds.md").write_text(refunds)
    (docs / "credit.md").symlink_to("refunds.md")
    (docs / "store-credit.md").write_text("# Store credit\n\nA refund as store credit is on your account at once.\n")
    config = load_config(write_config(tmp_path, '[[sources]]\nname = "docs"\ntype = "files"\npath = "docs"\n[[spaces]]\nprovider = "local"\n'))
    assert not run_index(config).errors
    with api_client(config.artifacts) as client:
        hits = ask(client, query="how long does a refund take to reach my card", mode=mode)["hits"]
        texts = [h["text"] for h in hits]
        assert len(texts) == len(set(texts)), texts
        assert {h["title"] for h in hits} == {"Refunds", "Store credit"}, hits
        copy = ask(client, query="refund", mode=mode, filters={"doc_id": "file:v1/refunds.md"})["hits"]
        assert [h["doc_id"] for h in copy] == ["file:v1/refunds.md"], "each copy is still searchable on its own"


REFUNDS_MD = """# Refunds

A refund reaches the **card used for the order** within five business days of the parcel reaching our
warehouse in Porto. We email you the day it is sent, with the `RF-` number your bank shows.

- Sale items are refunded as store credit.
- Gift cards cannot be refunded.
"""
REFUNDS_HTML = """<html><head><title>Refunds · Shop help</title></head><body>
<nav><a href="/">Home</a> <a href="/help/">Help</a></nav>
<main><h1>Refunds</h1>
<p>A refund reaches the <strong>card used for the order</strong> within five business days of the parcel reaching our
warehouse in Porto. We email you the day it is sent, with the <code>RF-</code> number your bank shows.</p>
<ul><li>Sale items are refunded as store credit.</li><li>Gift cards cannot be refunded.</li></ul></main>
<footer>© 2026 Shop</footer></body></html>"""


@pytest.mark.parametrize("mode", ["hybrid", "dense", "lexical"])
def test_a_passage_found_again_in_another_form_is_one_hit(tmp_path, local_embedder, mode):
    """A docs folder indexed beside the site built from it (or a deck beside its PDF): the same
    section as Markdown and as HTML differ in markup, not in words, and filled two of the top hits."""
    for folder, name, text in (("docs", "refunds.md", REFUNDS_MD), ("site", "refunds.html", REFUNDS_HTML)):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / name).write_text(text)
    (tmp_path / "docs" / "credit.md").write_text("# Store credit\n\nA refund as store credit is on your account at once, and never expires.\n")
    for city, hours in (("Lisbon", "9:00 to 18:00"), ("Porto", "10:00 to 19:00")):  # one template, one fact apart
        (tmp_path / "docs" / f"{city.lower()}.md").write_text(
            f"# Our {city} store\n\nThe {city} store is open from {hours}, Monday to Saturday. Bring your order number for returns and "
            "exchanges; fitting rooms close fifteen minutes before the shop does, and the parking garage next door validates tickets. "
            "Staff can order any size we make for delivery to the store within three days, hold an item for you until the next "
            "evening, and take back shoes bought online if the soles are clean. Dogs on a lead are welcome inside.\n")
    sources = "".join(f'[[sources]]\nname = "{f}"\ntype = "files"\npath = "{f}"\n' for f in ("docs", "site"))
    config = load_config(write_config(tmp_path, sources + '[[spaces]]\nprovider = "local"\n'))
    assert not run_index(config).errors
    with api_client(config.artifacts) as client:
        hits = ask(client, query="how long until a refund reaches my card", mode=mode)["hits"]
        titles = [h["title"] for h in hits]
        assert titles[0] == "Refunds" and titles.count("Refunds") == 1 and "Store credit" in titles, [(h["doc_id"], h["text"][:40]) for h in hits]
        for source in ("docs", "site"):
            copy = ask(client, query="refund card", mode=mode, filters={"source": source})["hits"]
            assert copy[0]["doc_id"].startswith("file:refunds."), "each copy is still found on its own"
        stores = ask(client, query="when are the stores open on Saturday", mode=mode, top_k=3)["hits"]
        assert {"Our Lisbon store", "Our Porto store"} <= {h["title"] for h in stores}, "pages that differ in a fact are not repeats"
