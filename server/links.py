"""Where a hit points inside its document: the PDF pages it spans and a link to its place.

`page_starts` and the anchors come from the documents table (`artifacts/README.md`); a hit's
span is character offsets into the document's text.
"""

from __future__ import annotations

import re
from bisect import bisect_right

from indexer.documents import refused_link

LEADING_HEADINGS = re.compile(r"\A(?:#{1,6} [^\n]*(?:\n+|\Z))+")


def followable(url: str | None) -> str | None:
    """A document's url as the API gives it: None for one no reader may follow (a `javascript:` url
    that a generation written before the indexer refused them may hold; indexer.documents).
    Applied once, to the citations a generation keeps in memory (server/reader.py)."""
    return None if refused_link(url) else url


def body_start(text: str, start: int) -> int:
    """Where a passage's first line that is not a heading begins: a passage that opens with
    "# Manual / ## Lacing" is about Lacing, and links there."""
    leading = LEADING_HEADINGS.match(text)
    return start + (leading.end() if leading else 0)


def page_span(page_starts, start: int, end: int) -> tuple[int | None, int | None]:
    """The first and last page (from 1) a span of a paged document covers; (None, None) otherwise."""
    if not page_starts:
        return None, None
    first = max(bisect_right(page_starts, start), 1)
    last = max(bisect_right(page_starts, max(start, end - 1)), first)
    return first, last


def deep_link(url: str | None, start: int, page: int | None, anchor_offsets, anchor_names) -> str | None:
    """`url` pointed at the span: `#page=N` for a PDF (browsers' PDF viewers open that page), else
    `#fragment` of the nearest linkable heading at or above `start`; the plain url when there is none."""
    if not url:
        return url
    base = url.split("#", 1)[0]
    if page is not None:
        return f"{base}#page={page}"
    i = bisect_right(anchor_offsets or (), start) - 1
    return f"{base}#{anchor_names[i]}" if i >= 0 else url
