"""A second opinion on what a web page's main content is.

readability-lxml finds the main block of a page and we keep its structure (headings, lists,
tables, code). Inside that block, sites put photo captions, bylines, "read more" teasers and
newsletter pitches. trafilatura (precision mode), an extractor built on different rules, drops
most of them. A prose line of readability's text is kept only if at least half of its 4-word
shingles are also in trafilatura's text: boilerplate that fools one extractor rarely fools both.

What is never judged this way, because trafilatura's precision mode drops real content there:
section headings, code, table rows, quotes, and list items of up to 40 words (longer "items"
are usually captions in slideshow markup). When the two extractors disagree about the page as
a whole (less than half of either text in the other), or trafilatura finds nothing or fails,
readability's text is kept as it is. Measured by `bench/extraction.py`; see bench/README.md.
"""

from __future__ import annotations

import logging
import re
from collections import Counter

WORD = re.compile(r"\w+")
SHINGLE = 4  # words per shingle, as in the benchmark's metric
LINE_AGREEMENT = 0.5  # share of a line's shingles trafilatura must have kept too
PAGE_AGREEMENT = 0.5  # below this overlap (either way) the extractors disagree on the page
MAX_LIST_ITEM_WORDS = 40  # longer list items are judged like paragraphs
STRUCTURED = re.compile(r"\s*(?:[-*•] |\d+\. )|.* \| ")  # list items and table rows as html_to_text writes them


def cross_check(text: str, page_html: str, url: str | None = None) -> str:
    """readability's `text` without the prose lines trafilatura did not keep."""
    reference = _trafilatura(page_html, url)
    ours, theirs = _shingles(WORD.findall(text)), _shingles(WORD.findall(reference))
    common = sum((ours & theirs).values())
    if not theirs or common < PAGE_AGREEMENT * max(1, sum(ours.values())) or common < PAGE_AGREEMENT * sum(theirs.values()):
        return text
    reference_words = f" {' '.join(WORD.findall(reference))} "
    headings: set[tuple[str, ...]] = set()
    kept, in_code = [], False
    for line in text.splitlines():
        fence = line.startswith("```")
        if fence:
            in_code = not in_code
        words = WORD.findall(line)
        if in_code or fence or not words:
            keep = True
        elif line.startswith("#"):
            headings.add(tuple(words))
            keep = not line.startswith("# ") or _agrees(words, theirs, reference_words)  # a page headline is judged; section headings are kept
        elif tuple(words) in headings:
            keep = False  # a plain line repeating a heading (the headline again, under a photo)
        elif line.startswith("> ") or (STRUCTURED.match(line) and len(words) <= MAX_LIST_ITEM_WORDS):
            keep = True
        else:
            keep = _agrees(words, theirs, reference_words)
        if keep:
            kept.append(line)
    return "\n".join(kept)


def _agrees(words: list[str], theirs: Counter, reference_words: str) -> bool:
    shingles = _shingles(words)
    if not shingles:  # fewer than SHINGLE words: kept if trafilatura has them in a row
        return f" {' '.join(words)} " in reference_words
    return sum(count for shingle, count in shingles.items() if shingle in theirs) >= LINE_AGREEMENT * sum(shingles.values())


def _trafilatura(page_html: str, url: str | None) -> str:
    import trafilatura

    logging.getLogger("trafilatura").setLevel(logging.CRITICAL)  # it logs every page it finds odd
    try:
        return trafilatura.extract(page_html, url=url, favor_precision=True) or ""
    except Exception:  # a second opinion only: its failure must not cost the page
        return ""


def _shingles(words: list[str]) -> Counter:
    return Counter(tuple(words[i : i + SHINGLE]) for i in range(len(words) - SHINGLE + 1))
