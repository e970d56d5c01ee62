"""The plan: a pure function of (previous generation, this crawl) → one decision per document.

    full      new, or its content or title changed: chunk and embed (reusing vectors of unchanged
              chunk texts); a title is indexed with its chunks' words (lexical.indexed_text)
    metadata  only url/tags/... changed: rewrite its row, keep its chunks and vectors
    skip      nothing changed: keep everything as it was
    failed    this run could not read it: keep its last good version (if it had one)
    delete    gone from a source whose listing completed: drop it

A source whose listing failed deletes nothing. A run that would delete more than
`max_delete_fraction` of a source's documents is stopped by the caller (DeleteGuard).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, replace
from enum import StrEnum

from indexer.documents import Document
from indexer.errors import StaticRagError
from indexer.textspill import text_holder


class Action(StrEnum):
    FULL = "full"
    METADATA = "metadata"
    SKIP = "skip"
    FAILED = "failed"
    DELETE = "delete"


@dataclass(frozen=True)
class PreviousDocument:
    doc_id: str
    source: str
    content_hash: str
    metadata_hash: str
    title: str


@dataclass(frozen=True)
class Decision:
    doc_id: str
    source: str
    action: Action
    reason: str
    moved_to: str | None = None  # a deleted document found at another doc_id (indexer/deciding.py): moved, not lost

    def as_dict(self) -> dict:
        """As report.json and a dry run's --json list it."""
        return {"doc_id": self.doc_id, "source": self.source, "decision": str(self.action), "reason": self.reason}


class DeleteGuard(StaticRagError):
    """The run would delete too much of a source; nothing is published (exit 3)."""


def plan(
    previous: dict[str, PreviousDocument],
    crawled: list[Document],
    complete_sources: set[str],
    failed: dict[str, str],
    not_modified: set[str] = frozenset(),
) -> list[Decision]:
    """Decide what happens to every document of the previous generation and of this crawl.

    `complete_sources`: sources whose listing finished without error this run.
    `failed`: doc_id → error code, for documents this run tried and could not read.
    `not_modified`: documents known unchanged without a download (an HTTP 304 to a conditional
    request; a Notion page whose last_edited_time is the stored one) or without reading them
    again (a file whose bytes are the ones read last time).
    """
    decisions: list[Decision] = []
    seen: set[str] = set()
    for doc in crawled:
        seen.add(doc.doc_id)
        before = previous.get(doc.doc_id)
        if before is None:
            decisions.append(Decision(doc.doc_id, doc.source, Action.FULL, "new"))
        elif before.content_hash != doc.content_hash:
            decisions.append(Decision(doc.doc_id, doc.source, Action.FULL, "content changed"))
        elif before.title != doc.title:  # a title is part of the metadata hash too
            decisions.append(Decision(doc.doc_id, doc.source, Action.FULL, "title changed"))
        elif before.metadata_hash != doc.metadata_hash:
            decisions.append(Decision(doc.doc_id, doc.source, Action.METADATA, "metadata changed"))
        else:
            decisions.append(Decision(doc.doc_id, doc.source, Action.SKIP, "unchanged"))
    for doc_id in sorted(not_modified):
        if doc_id in previous and doc_id not in seen:
            seen.add(doc_id)
            if doc_id.startswith("file:"):
                why = "not modified since the last run (same bytes)"
            else:
                why = f"not modified since the last fetch ({'Notion last_edited_time' if doc_id.startswith('notion:') else 'HTTP 304'})"
            decisions.append(Decision(doc_id, previous[doc_id].source, Action.SKIP, why))
    for doc_id, code in failed.items():
        if doc_id not in seen:
            seen.add(doc_id)
            source = previous[doc_id].source if doc_id in previous else ""
            kept = "keeps its last good version" if doc_id in previous else "no previous version to keep"
            decisions.append(Decision(doc_id, source, Action.FAILED, f"{code}; {kept}"))
    for doc_id, before in previous.items():
        if doc_id in seen:
            continue
        if before.source in complete_sources:
            decisions.append(Decision(doc_id, before.source, Action.DELETE, "no longer listed by its source"))
        else:
            decisions.append(Decision(doc_id, before.source, Action.SKIP, "its source could not be listed this run; kept"))
    return decisions


EMPTIED_SHARE = 0.25  # a changed document left with less than this share of its text counts as lost to the delete guard
EMPTIED_MIN_CHARS = 200  # … when it had at least this much: a short note edited shorter is an edit
SAME_PAGE_MIN = 3  # changed documents of a source, different before, that now read one same text count as lost too
LONG_TEXT = 100_000  # characters: no login or error page is longer, and a longer text is not read again to compare it


@dataclass(frozen=True)
class Emptied:
    """A changed document that kept less than EMPTIED_SHARE of its text, or that now reads the
    text SAME_PAGE_MIN or more changed documents of its source, different before, now read."""

    doc_id: str
    source: str
    chars_before: int
    chars_now: int
    text_key: int  # hash of the new text: many documents with one new text are one page served for all of them
    opening: str = ""  # the new text's first words, to show what the source answered with
    shared: bool = False  # counted for the text it shares, not for its length


def emptied(changed: list[tuple[str, Document]], stored: dict[str, tuple[int, str]]) -> list[Emptied]:
    """The documents this run would update to a small remnant of their stored text, or to one text
    served for many of them: a login page or an error page answered with status 200 in place of
    each page is as long as the pages it replaces as often as not. `changed`: (stored doc_id, the
    document that replaces it: itself, or where it moved); `stored`: doc_id → (length, digest) of
    the stored text (PreviousGeneration.stored_texts)."""
    out, shared = [], defaultdict(list)
    for doc_id, document in changed:
        if doc_id not in stored:
            continue
        before, digest = stored[doc_id]
        text = text_holder(document)  # a text waiting on disk knows its length without being read
        remnant = before >= EMPTIED_MIN_CHARS and len(text) < EMPTIED_SHARE * before
        if remnant or len(text) < LONG_TEXT:  # one page served for all: a page's length, read as it is
            words = str(text)
            found = Emptied(doc_id, document.source, before, len(text), hash(words), opening=_opening(words))
            shared[document.source, found.text_key].append((found, digest, remnant))
            if remnant:
                out.append(found)
    for group in shared.values():
        if len({digest for _, digest, _ in group}) >= SAME_PAGE_MIN:  # not copies of one page, edited alike
            out += [replace(found, shared=True) for found, _, remnant in group if not remnant]
    return out


def _opening(text: str) -> str:
    """The first words of a text, as a person reads them: no heading or list marks, one line."""
    lines = (line.strip().lstrip("#>*-").strip() for line in text[:400].splitlines())
    return " ".join(" ".join(lines).split())[:80]


def check_deletions(decisions: list[Decision], previous: dict[str, PreviousDocument], max_fraction: float,
                    emptied_documents: list[Emptied] = (), min_count: int = 3, causes: dict[str, tuple[str, str]] | None = None,
                    moved: set[str] = frozenset()) -> None:
    """Raise DeleteGuard when a source would lose more than `max_fraction` of its documents,
    counting as lost those that keep less than a quarter of their text or now read one text with
    others (`emptied`): a consent wall, a login page or an error page answered with status 200 in
    place of every page.
    A loss of fewer than `min_count` documents passes unless it is all of the source's: on a
    site of three pages, removing one is an edit, not an outage (config `mass_delete_min`).
    `causes`: doc_id → (code, message) of a problem that removes the document rather than its
    source no longer listing it (a noindex tag, 410 Gone, a draft), for the message to say why.
    `moved`: documents removed because they are indexed at another address now: not lost (what
    they read there is in `emptied_documents`)."""
    before = Counter(p.source for p in previous.values())
    deleted = Counter(d.source for d in decisions if d.action is Action.DELETE and d.doc_id not in moved)
    hollowed = Counter(e.source for e in emptied_documents)
    for source in sorted(set(deleted) | set(hollowed)):
        count = deleted[source] + hollowed[source]
        if count / before[source] > max_fraction and (count >= min_count or count == before[source]):
            source_emptied = [e for e in emptied_documents if e.source == source]
            raise DeleteGuard(
                f"this run would {_losses(source, deleted[source], source_emptied, before[source])}, "
                f"more than max_delete_fraction {max_fraction:.0%}; nothing was published."
                f"{_deleted_hint([d.doc_id for d in decisions if d.action is Action.DELETE and d.source == source and d.doc_id not in moved], causes or {})}"
                f"{_emptied_hint(source_emptied)} "
                "If that is intended, run again with --allow-mass-delete."
            )


def _losses(source: str, deleted: int, hollowed: list[Emptied], total: int) -> str:
    share = f"{(deleted + len(hollowed)) / total:.0%}"
    if not hollowed:
        return f"delete {deleted} of {total} documents ({share}) of source {source!r}"
    how = " or ".join(way for way, found in (("with less than a quarter of their text", not all(e.shared for e in hollowed)),
                                              ("reading one and the same text", any(e.shared for e in hollowed))) if found)
    if not deleted:
        return f"leave {len(hollowed)} of the {total} documents of source {source!r} ({share}) {how}"
    return f"delete {deleted} of the {total} documents of source {source!r} and leave {len(hollowed)} more {how} ({share} in all)"


def _deleted_hint(doc_ids: list[str], causes: dict[str, tuple[str, str]]) -> str:
    """Why the documents go, when their source says so: all pages marked noindex at once is a
    staging setting deployed to the live site more often than a decision."""
    by_code: dict[str, list[str]] = defaultdict(list)
    for doc_id in doc_ids:
        if doc_id in causes:
            by_code[causes[doc_id][0]].append(doc_id)
    said = [f"{len(ids)} of them for {code} (e.g. {causes[ids[0]][1]})" for code, ids in sorted(by_code.items(), key=lambda item: -len(item[1]))]
    return f" {'; '.join(said)}." if said else ""


def _emptied_hint(source_emptied: list[Emptied]) -> str:
    """One example, and what it suggests when many documents now hold one and the same text."""
    if not source_emptied:
        return ""
    first = max(source_emptied, key=lambda e: e.chars_before - e.chars_now)
    hint = f" E.g. {first.doc_id}: {first.chars_before:,} characters → {first.chars_now:,}."
    key, same = Counter(e.text_key for e in source_emptied).most_common(1)[0]
    if same > 1:
        opening = next(e.opening for e in source_emptied if e.text_key == key)
        hint += (f" {same} of them now read the same text (\"{opening}…\"): a consent wall, a login page or an error page"
                 " answered with status 200? `index extract URL` shows what the indexer reads.")
    return hint


def counts(decisions: list[Decision], previous: dict[str, PreviousDocument]) -> dict[str, int]:
    """The run summary's document counts: added/updated split `full` by whether the document existed."""
    out = {"added": 0, "updated": 0, "metadata_only": 0, "skipped": 0, "deleted": 0, "failed": 0}
    names = {Action.METADATA: "metadata_only", Action.SKIP: "skipped", Action.DELETE: "deleted", Action.FAILED: "failed"}
    for d in decisions:
        key = ("updated" if d.doc_id in previous else "added") if d.action is Action.FULL else names[d.action]
        out[key] += 1
    return out
