"""The plan is a pure function: every path of (previous generation, crawl) → decision."""

import pytest

from indexer.documents import Document
from indexer.plan import Action, DeleteGuard, PreviousDocument, check_deletions, counts, emptied, plan


def doc(doc_id: str, text: str = "body", title: str = "T", source: str = "s") -> Document:
    return Document(doc_id, source, "files", title, text)


def prev(d: Document) -> PreviousDocument:
    return PreviousDocument(d.doc_id, d.source, d.content_hash, d.metadata_hash, d.title)


def decide(previous_docs, crawled, complete=("s",), failed=None):
    previous = {p.doc_id: p for p in map(prev, previous_docs)}
    return {d.doc_id: (d.action, d.reason) for d in plan(previous, crawled, set(complete), failed or {})}


def test_every_decision_path():
    a, b, c, d, f = doc("a"), doc("b"), doc("c"), doc("d"), doc("f")
    decisions = decide(
        [a, b, c, d, f],
        [doc("a"), doc("b", text="new body"), doc("c", title="New title"), doc("e"), Document("f", "s", "files", "T", "body", tags=("new",))],
    )
    assert decisions == {
        "a": (Action.SKIP, "unchanged"),
        "b": (Action.FULL, "content changed"),
        "c": (Action.FULL, "title changed"),  # its words are indexed with its chunks
        "d": (Action.DELETE, "no longer listed by its source"),
        "e": (Action.FULL, "new"),
        "f": (Action.METADATA, "metadata changed"),
    }


def test_a_source_whose_listing_failed_deletes_nothing():
    decisions = decide([doc("a", source="wiki"), doc("b", source="s")], [], complete=("s",))
    assert decisions == {"a": (Action.SKIP, "its source could not be listed this run; kept"), "b": (Action.DELETE, "no longer listed by its source")}


def test_a_document_that_failed_keeps_its_last_good_version():
    decisions = decide([doc("a")], [], failed={"a": "WEB_HTTP_STATUS", "new": "WEB_FETCH_FAILED"})
    assert decisions == {
        "a": (Action.FAILED, "WEB_HTTP_STATUS; keeps its last good version"),
        "new": (Action.FAILED, "WEB_FETCH_FAILED; no previous version to keep"),
    }


def test_a_first_run_adds_everything():
    assert decide([], [doc("a"), doc("b")]) == {"a": (Action.FULL, "new"), "b": (Action.FULL, "new")}


def test_counts_split_full_into_added_and_updated():
    previous = {p.doc_id: p for p in map(prev, [doc("a"), doc("b"), doc("c"), doc("d")])}
    decisions = plan(previous, [doc("a"), doc("b", text="x"), Document("c", "s", "files", "T", "body", url="https://example.com/c"), doc("e")], {"s"}, {"f": "WEB_FETCH_FAILED"})
    assert counts(decisions, previous) == {"added": 1, "updated": 1, "metadata_only": 1, "skipped": 1, "deleted": 1, "failed": 1}


def test_the_delete_guard_counts_per_source():
    previous_docs = [doc(f"s{i}", source="site") for i in range(10)] + [doc(f"w{i}", source="wiki") for i in range(10)]
    previous = {p.doc_id: p for p in map(prev, previous_docs)}
    keep_site = [doc(f"s{i}", source="site") for i in range(7)]  # 3 of 10 deleted: 30% is allowed
    keep_wiki = [doc(f"w{i}", source="wiki") for i in range(6)]  # 4 of 10: over the limit
    decisions = plan(previous, keep_site + keep_wiki, {"site", "wiki"}, {})
    with pytest.raises(DeleteGuard, match="delete 4 of 10 documents \\(40%\\) of source 'wiki'.*--allow-mass-delete"):
        check_deletions(decisions, previous, 0.3)
    check_deletions(plan(previous, keep_site + [doc(f"w{i}", source="wiki") for i in range(10)], {"site", "wiki"}, {}), previous, 0.3)


def test_a_small_source_may_lose_a_page_but_not_all_of_them():
    """On a site of three pages, removing one is 33% — over the fraction — and stopped every night
    until someone allowed it by hand. Fewer than `min_count` documents pass; all of them never do."""
    previous = {p.doc_id: p for p in map(prev, [doc(f"p{i}", source="site") for i in range(3)])}

    def check(kept, min_count=3):
        check_deletions(plan(previous, [doc(f"p{i}", source="site") for i in kept], {"site"}, {}), previous, 0.3, min_count=min_count)

    check([0, 1])
    check([0])  # two of three: still fewer than three
    with pytest.raises(DeleteGuard, match="delete 3 of 3 documents \\(100%\\) of source 'site'"):
        check([])
    with pytest.raises(DeleteGuard, match="delete 1 of 3 documents"):
        check([0, 1], min_count=1)  # the guard as strict as before



def test_documents_left_with_a_remnant_of_their_text_count_as_lost():
    """A consent wall or a login page answered with status 200 in place of every page replaced
    each page's text and was published: the site's answers vanished from search and the run said
    "12 updated". Such documents now count toward the delete guard."""
    article = "Refunds reach the card used for the order within five business days. " * 20
    pages = [doc(f"p{i}", text=f"{i} {article}", source="site") for i in range(10)]
    note = doc("note", text="A short note.", source="site")
    previous = {p.doc_id: p for p in map(prev, [*pages, note])}
    lengths = {d.doc_id: (len(d.text), d.text) for d in [*pages, note]}  # what stored_texts gives, a digest aside

    def check(crawled):
        decisions = plan(previous, crawled, {"site"}, {})
        by_id = {d.doc_id: d for d in crawled}
        check_deletions(decisions, previous, 0.3, emptied([(d.doc_id, by_id[d.doc_id]) for d in decisions if d.action is Action.FULL], lengths))

    def walled(i):
        return doc(f"p{i}", text="Before you continue: we use cookies. Accept all or reject all.", source="site")

    with pytest.raises(DeleteGuard, match=r"leave 4 of the 11 documents of source 'site' \(36%\) with less than a quarter of their text, more than "
                                          r"max_delete_fraction 30%.* characters → 62\. 4 of them now read the same text "
                                          r'\("Before you continue: we use cookies\. Accept all or reject all\.…"\): a consent wall.*--allow-mass-delete'):
        check([*map(walled, range(4)), *pages[4:], note])
    check([walled(0), *pages[1:], note])  # one page of eleven
    cut = [doc(f"p{i}", text=article[:300], source="site") for i in range(3)]  # 21% of their text each
    check([*cut, *pages[3:], doc("note", text="Short.", source="site")])  # 3 of 11; a note this short edited shorter is an edit
    with pytest.raises(DeleteGuard, match=r"delete 2 of the 11 documents of source 'site' and leave 2 more with less than a quarter of their text \(36% in all\)"):
        check([walled(0), walled(1), *pages[4:], note])  # p2 and p3 gone
