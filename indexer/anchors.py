"""Where a hit can link inside its page: the URL fragment of each linkable heading, with the
offset in the document's text where that heading begins.

- HTML: a heading's own `id`, an `<a id>` / `<a name>` inside it or just before it, or the `id`
  of the section it opens. Read from the whole page (the main-content extractor drops
  attributes), then placed on the heading lines of the extracted text, in order.
- Markdown with a `url` in its front matter: an explicit `{#id}` on the heading, else the slug
  site generators give it: GitHub's (and Docusaurus's): lowercase, punctuation dropped but
  `_` inside a word, each space a hyphen, a repeated slug numbered -1, -2, …; or, for a MkDocs site
  (`url_rules = "mkdocs"`), Python-Markdown's: accents dropped to ASCII, runs of spaces and hyphens
  one hyphen, a repeated slug numbered _1, _2, …; or, for Jekyll (`url_rules = "jekyll"`),
  kramdown's: GitHub's, but `--` and `---` outside code are dashes first, which go (`## Use
  --force` is #use-force, GitHub's #use---force); or, for Hugo (`url_rules = "hugo"`), goldmark's:
  GitHub's from the heading's source, so emphasis underscores stay (`## _Why_` is #_why_); or, for
  Sphinx (`url_rules = "sphinx"`), docutils' section ids, which MyST pages get too
  (`## cl100k_base notes` is #cl100k-base-notes, a repeat #id1).
- Notion: every top-level block (indexer/sources/notion.py), as `#<block id without dashes>`.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_left

from indexer.rst import DocutilsIds

HEADING_LINE = re.compile(r"^(#{1,6}) (.+)$", re.MULTILINE)
FENCE = re.compile(r"^(```|~~~)", re.MULTILINE)
EXPLICIT_ID = re.compile(r"\s*\{#([\w\-.:]+)\}\s*$")
HEADING_TAGS = ("h1", "h2", "h3", "h4", "h5", "h6")


PERMALINK_MARKS = " ¶§#🔗\u200b\n\t"  # what Sphinx, MkDocs, Docusaurus and Hugo themes show as a heading's own link


def heading_text(node) -> str:
    """A heading's words without the link a site generator puts beside it: an `<a href="#…">`
    showing only ¶, #, § or 🔗 (Sphinx, MkDocs, Hugo) or nothing (Docusaurus's zero-width space)."""
    return " ".join(_text_without_permalinks(node, top=True).split())


def _text_without_permalinks(element, top: bool = False) -> str:
    # The href is "#…", or the page's URL and "#…" once readability has made links absolute.
    if not top and element.tag == "a" and "#" in (element.get("href") or "#") and not element.text_content().strip(PERMALINK_MARKS):
        return element.tail or ""
    text = element.text or ""
    for child in element:
        text += _text_without_permalinks(child) if isinstance(child.tag, str) else (child.tail or "")
    return text if top else text + (element.tail or "")


def html_heading_ids(page) -> list[tuple[str, str]]:
    """(heading text, fragment) for every heading of an lxml page that can be linked to, in order."""
    found = []
    for heading in page.iter(*HEADING_TAGS):
        fragment = heading.get("id") or _inner_anchor(heading) or _anchor_before(heading) or _opened_section(heading)
        text = heading_text(heading)
        if fragment and text:
            found.append((text, fragment.strip()))
    return found


def _inner_anchor(heading) -> str | None:
    for a in heading.iter("a"):
        if a.get("id") or a.get("name"):
            return a.get("id") or a.get("name")
    return None


def _anchor_before(heading) -> str | None:
    previous = heading.getprevious()
    if previous is not None and previous.tag == "a" and not previous.text_content().strip():
        return previous.get("id") or previous.get("name")
    return None


def _opened_section(heading) -> str | None:
    parent = heading.getparent()
    if parent is not None and parent.tag in ("section", "div", "article") and parent.get("id"):
        first = next((c for c in parent if isinstance(c.tag, str)), None)
        if first is heading:
            return parent.get("id")
    return None


def place(text: str, ids: list[tuple[str, str]]) -> tuple[tuple[int, str], ...]:
    """Put (heading text, fragment) pairs on the heading lines of `text`, in order: a heading
    the extractor dropped is skipped, a heading line with no linkable heading gets nothing."""
    placed, next_id = [], 0
    for match in _heading_lines(text):
        wanted = " ".join(match.group(2).split())
        for i in range(next_id, len(ids)):
            if ids[i][0] == wanted:
                placed.append((match.start(), ids[i][1]))
                next_id = i + 1
                break
    return tuple(placed)


def markdown_anchors(text: str, style: str = "github") -> tuple[str, tuple[tuple[int, str], ...]]:
    """A Markdown text without the `{#id}` attributes of its headings (an id is a link target,
    not words), and every heading's fragment: its explicit id, else its slug in `style`
    ("github"; "python-markdown", "kramdown", "goldmark" or "docutils": fileurls.HEADING_IDS)."""
    headings = _heading_lines(text)
    explicit = [(found.group(1) if (found := EXPLICIT_ID.search(m.group(2))) else None) for m in headings]
    if any(explicit):
        text = HEADING_LINE.sub(lambda m: f"{m.group(1)} {EXPLICIT_ID.sub('', m.group(2))}", text)
        headings = _heading_lines(text)
    anchors, seen, used, docutils_ids = [], {}, set(), DocutilsIds()
    for match, given in zip(headings, explicit):
        if given:
            slug = given
        elif style == "python-markdown":
            slug = _unique_python_markdown(python_markdown_slug(match.group(2)), used)
        elif style == "docutils":  # Sphinx's section ids, MyST's too
            slug = docutils_ids.next(_INLINE_MARKS.sub("", match.group(2)))
        else:
            heading = _without_typographic_dashes(match.group(2)) if style == "kramdown" else match.group(2)
            slug = slugify(heading, keep_underscores=style == "goldmark")
            if not slug:
                continue
            count = seen.get(slug, 0)
            seen[slug] = count + 1
            slug = slug if count == 0 else f"{slug}-{count}"
        anchors.append((match.start(), slug))
    return text, tuple(anchors)


# Inline Markdown marks, as a rendered heading lacks them: `_` only at a word's edge (emphasis),
# not inside one (`cl100k_base` is one word to GitHub and Python-Markdown alike).
_INLINE_MARKS = re.compile(r"[`*~\[\]()]|(?<!\w)_+|_+(?!\w)")
_CODE_MARKS = re.compile(r"[`*~\[\]()]")


def slugify(heading: str, keep_underscores: bool = False) -> str:
    """GitHub's slug of a heading (github-slugger, which Docusaurus follows); Hugo's (goldmark's
    "github" ids, from the heading's source) keeps every underscore."""
    text = (_CODE_MARKS if keep_underscores else _INLINE_MARKS).sub("", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return re.sub(r" ", "-", text).strip("-")


def python_markdown_slug(heading: str) -> str:
    """Python-Markdown's `toc` slug of a heading (MkDocs): ASCII, runs of spaces and hyphens one hyphen."""
    text = unicodedata.normalize("NFKD", _INLINE_MARKS.sub("", heading.strip())).encode("ascii", "ignore").decode("ascii")
    return re.sub(r"[-\s]+", "-", re.sub(r"[^\w\s-]", "", text).strip().lower())


def _without_typographic_dashes(heading: str) -> str:
    """A heading as kramdown slugs it: `--` and `---` outside code spans are dashes (– —), not
    hyphens, and a slug drops them."""
    parts = heading.split("`")
    return "`".join(part if i % 2 else re.sub(r"-{2,3}", "", part) for i, part in enumerate(parts))


_NUMBERED = re.compile(r"^(.*)_([0-9]+)$")


def _unique_python_markdown(slug: str, used: set[str]) -> str:
    """Python-Markdown's `toc.unique`: a taken (or empty) id gets _1, or its number one up."""
    while slug in used or not slug:
        numbered = _NUMBERED.match(slug)
        slug = f"{numbered.group(1)}_{int(numbered.group(2)) + 1}" if numbered else f"{slug}_1"
    used.add(slug)
    return slug


def _heading_lines(text: str) -> list[re.Match]:
    """Heading-line matches outside fenced code (10,000 documents are read on every run: the
    common cases, no heading or no fence, cost one substring test)."""
    if "#" not in text:
        return []
    starts = [0] if text.startswith("#") else []  # candidate lines found with str.find: a regex over every line is 10× slower
    at = text.find("\n#")
    while at != -1:
        starts.append(at + 1)
        at = text.find("\n#", at + 1)
    headings = [m for m in (HEADING_LINE.match(text, start) for start in starts) if m]
    if "```" not in text and "~~~" not in text:
        return headings
    fences = [m.start() for m in FENCE.finditer(text)]
    return [m for m in headings if bisect_left(fences, m.start()) % 2 == 0]
