"""Each document's decision in a run: the plan (indexer/plan.py) over what the sources gave, the
problems they reported, and the delete guard over the result."""

from __future__ import annotations

import hashlib
from collections import defaultdict
from dataclasses import replace

from indexer.config import Config
from indexer.documents import Document
from indexer.errors import ErrorCode, IngestError
from indexer.plan import Action, Decision, DeleteGuard, check_deletions, emptied, plan
from indexer.previous import PreviousGeneration
from indexer.runreport import RunReport
from indexer.sources.sitemaps import TRUST_DAYS
from indexer.textspill import text_holder

# Problems that keep no last good version: the source asks for the document to go (or it is indexed under another source).
NO_LAST_VERSION = (ErrorCode.DUPLICATE_DOCUMENT, ErrorCode.WEB_NOINDEX, ErrorCode.WEB_GONE, ErrorCode.WEB_REFRESH,
                   ErrorCode.WEB_REDIRECTED_AWAY, ErrorCode.FILE_DRAFT, ErrorCode.NOTION_DRAFT, ErrorCode.FILE_NAVIGATION,
                   ErrorCode.FILE_LINK_BROKEN, ErrorCode.FILE_TYPE_UNREAD)


def decide(previous: PreviousGeneration | None, before: dict, crawled: dict[str, Document], complete: set[str], not_modified: set[str],
            report: RunReport, config: Config, allow_mass_delete: bool, dry_run: bool) -> dict[str, Decision]:
    """Each document's decision (indexer/plan.py). Raises DeleteGuard when the run would delete
    more than `max_delete_fraction` (counting documents left with a small remnant of their text, or
    with one text that several, different before, now share)
    and at least `mass_delete_min` documents of a source, or all of them,
    unless allowed; a dry run records it in `report` instead."""
    _leave_out_empty_new_pages(report, before)
    # A page that was indexed and now fails, or now answers with something we skip (a warning), keeps its last good
    # version; one that asks not to be indexed (noindex, a draft), answers 410 Gone or became a redirect stub is removed,
    # as a page gone from its source is (NO_LAST_VERSION). A new one that we skip (a scan, a blank page: a warning) is
    # left out, not counted as failed.
    problems = report.errors + [w for w in report.warnings if w.doc_id in before]
    unreadable = {e.doc_id: str(e.code) for e in problems
                  if e.doc_id and e.code not in NO_LAST_VERSION and e.doc_id not in crawled}
    decisions = {d.doc_id: d for d in plan(before, list(crawled.values()), complete, unreadable, not_modified)}
    _said_by_lastmod(decisions, report)
    moved = _moved(decisions, crawled, report.moved)
    renamed = _renamed(decisions, crawled, before, previous, set(moved))  # the very text they had: nothing to compare
    try:
        if not allow_mass_delete:
            changed = [(d.doc_id, crawled[d.doc_id]) for d in decisions.values() if d.action is Action.FULL and d.doc_id in before]
            changed += [(old, crawled[new]) for old, new in moved.items()]  # a moved page compared with what it read before the move
            stored = previous.stored_texts({old for old, _ in changed}) if previous is not None else {}
            causes = {**report.why_gone, **{e.doc_id: (str(e.code), e.message) for e in problems if e.doc_id and e.code in NO_LAST_VERSION}}
            check_deletions(list(decisions.values()), before, config.max_delete_fraction, emptied(changed, stored), config.mass_delete_min,
                            causes, moved=set(moved) | set(renamed))
    except DeleteGuard as exc:
        if not dry_run:
            raise
        report.delete_guard = str(exc)
    return decisions


def _moved(decisions: dict[str, Decision], crawled: dict[str, Document], found: dict[str, str]) -> dict[str, str]:
    """Indexed documents this run found at another address (`found`: a redirect, a canonical link),
    each with the one that replaces it: removed under the old id, not lost (their decisions say
    where they went)."""
    moved = {old: new for old, new in found.items() if new in crawled and old in decisions and decisions[old].action is Action.DELETE}
    for old, new in moved.items():
        decisions[old] = replace(decisions[old], reason=f"moved: now indexed as {new}", moved_to=new)
    return moved


def _renamed(decisions: dict[str, Decision], crawled: dict[str, Document], before: dict, previous: PreviousGeneration | None,
             moved: set[str]) -> dict[str, str]:
    """Removed documents whose very text a new document of their source now holds (a file renamed
    or moved to another folder, a page republished at a new address without a redirect): moved,
    not lost. Each new document stands for one removed one."""
    gone = [d for d in decisions.values() if d.action is Action.DELETE and d.doc_id not in moved]
    new = [crawled[d.doc_id] for d in decisions.values() if d.action is Action.FULL and d.doc_id not in before]
    if not gone or not new or previous is None:
        return {}
    stored = previous.stored_texts({d.doc_id for d in gone})
    lengths = {length for length, _ in stored.values()}
    candidates = defaultdict(list)  # (source, length, digest) → new documents holding that text
    for document in new:
        text = text_holder(document)  # a text waiting on disk knows its length without being read
        if len(text) in lengths:
            candidates[document.source, len(text), hashlib.md5(str(text).encode()).hexdigest()].append(document.doc_id)
    moved = {}
    for d in gone:
        if d.doc_id in stored and (found := candidates.get((d.source, *stored[d.doc_id]))):
            moved[d.doc_id] = found.pop()
            decisions[d.doc_id] = replace(d, reason=f"moved: now indexed as {moved[d.doc_id]} (the same text)", moved_to=moved[d.doc_id])
    return moved


def _said_by_lastmod(decisions: dict[str, Decision], report: RunReport) -> None:
    """Pages not requested on their sitemap's word say so. Pages read again although it vouched for
    them, and found changed, make one warning per source: that sitemap's lastmod is not kept up to
    date, and its pages' changes wait until each is read again."""
    for doc_id, lastmod in report.by_lastmod.items():
        if doc_id in decisions and decisions[doc_id].action is Action.SKIP:
            decisions[doc_id] = replace(decisions[doc_id], reason=f"not modified since the last fetch (sitemap lastmod {lastmod})")
    changed = defaultdict(list)
    for doc_id, said in sorted(report.lastmod_checked.items()):
        if doc_id in decisions and decisions[doc_id].action in (Action.FULL, Action.METADATA):
            changed[decisions[doc_id].source].append(f"{doc_id.removeprefix('url:')}: {said}")
    for source, pages in changed.items():
        message = (f"{len(pages)} page(s) had changed although the sitemap's lastmod said not since they were last read (e.g. {pages[0]}): "
                   f"a change to such a page is found only when it is asked for on its turn, once in {TRUST_DAYS} days; "
                   "have the site keep <lastmod> up to date, or set trust_lastmod = false to ask for every page each run")
        report.warnings.append(IngestError(ErrorCode.WEB_LASTMOD_STALE, "list", message, source=source, level="warning"))


def _leave_out_empty_new_pages(report: RunReport, before: dict) -> None:
    """A page or file without text that was never indexed (a blank landing page, a redirect
    stub) is left out with a warning, not an error that made every run exit 4; one that had text
    stays an error: it keeps its last good version and someone should look."""
    empty = [e for e in report.errors if e.code is ErrorCode.FILE_EXTRACTION_EMPTY and e.doc_id not in before]
    if empty:
        report.errors[:] = [e for e in report.errors if e not in empty]
        report.warnings.extend(replace(e, level="warning", message=f"{e.message}; left out") for e in empty)
