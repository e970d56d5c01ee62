"""Snippets: the part of a hit's text that best shows why it matched, with query terms in `<mark>`.

Words are matched the way the lexical index matches them (lowercase, stopwords ignored, Snowball
stems), so a query for "rolling back" marks "rolled back" too. The snippet is HTML: everything but the `<mark>` tags is escaped, so a page may insert it as is.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from html import escape

from indexer.lexical import ANALYZER, CJK_CHARACTER, analyze_words, analyzer_for, language_of, query_terms, stem_words, stemmer_and_stopwords

WIDTH = 240  # characters of text in a snippet, about two lines of a chat widget


def snippet(text: str, query: str, width: int = WIDTH, shown: Sequence[str] = (), analyzer: str = ANALYZER["name"]) -> str:
    """The best `width` characters of `text` as a person reads it (Markdown syntax removed), query terms marked.
    `shown`: the hit's title and heading path, which a result shows above its snippet; lines that
    open `text` and only repeat them are left out (unless nothing else is left). `analyzer`: the
    space's lexical index's, whose stems decide which words are the query's."""
    text = readable(_after_repeated_names(text, shown) if shown else text)
    terms = _terms(query, analyzer)
    matches = _matches(text, terms, language_of(analyzer)) if terms else []
    start, end = _window(text, matches, width)
    out, cursor = [], start
    for s, e in matches:
        if s < start or e > end:
            continue
        out.append(escape(text[cursor:s], quote=False))
        out.append(f"<mark>{escape(text[s:e], quote=False)}</mark>")
        cursor = e
    out.append(escape(text[cursor:end], quote=False))
    body = " ".join("".join(out).split())  # one line: newlines and runs of spaces collapse
    return ("…" if start > 0 else "") + body + ("…" if end < len(text) else "")


def _after_repeated_names(text: str, shown: Sequence[str]) -> str:
    """`text` from its first line that is neither blank nor a repeat of a name in `shown`: a
    heading ("## Rolling back a bad run" under that heading path said it twice: once as the path,
    once as the snippet's start) or a plain line (a text file's first line is its title)."""
    shown = [name for name in shown if name]  # a document without a title has none to repeat
    if not shown:
        return text
    names = {_plain(name) for name in shown}
    longest = max(map(len, shown)) + 12  # room for Markdown around a name: a longer plain line is not one
    cursor = 0
    while cursor < len(text):
        end = text.find("\n", cursor)
        end = len(text) if end < 0 else end + 1
        line = text[cursor:end].strip()
        if line:
            heading = _HEADING_TEXT.fullmatch(line)  # compared whatever its length: its syntax (a link's URL) may be most of it
            if (not heading and len(line) > longest) or _plain(heading.group(1) if heading else line) not in names:
                return text[cursor:]
        cursor = end
    return text  # repeats only: they are the snippet


@lru_cache(maxsize=4096)
def _plain(heading: str) -> str:
    """A heading as compared with the hit's names: its words, case and Markdown aside."""
    return " ".join(readable(heading).casefold().split())


def _matches(text: str, terms: frozenset[str], language: str = "english") -> list[tuple[int, int]]:
    """Spans of the words of `text` whose index term is one of `terms`. Only words that begin as
    a term does are stemmed: Snowball changes a word's ending, never its first two letters but for
    y ↔ i (dying → die), so no other word can match. Stemming every word of every hit was most of
    the time a hybrid search spent after ranking (2,000-doc bench: ~5 ms for 10 hits).

    The words are found in the lowercased text by a case-sensitive pattern: compiling a
    case-insensitive one cost 0.34 ms per query and matching with it twice as long (10 hits of the
    10,000-document harness corpus: 0.37 ms against 0.19). Lowercasing keeps every offset unless a
    character lowercases to two (İ), which a text of that kind is then matched as it is. Other
    languages' stemmers change more ("Häuser" → haus): there every word is a candidate."""
    _, stopwords = stemmer_and_stopwords(language)
    paired = _paired(terms)
    if paired:
        terms = terms - paired
        if not terms:
            return _pair_matches(text, paired)
    lowered = text.lower()
    pattern = _candidates(terms) if language == "english" else _ANY_WORD
    if len(lowered) == len(text):
        found = [(m.start(), m.end(), m.group()) for m in pattern.finditer(lowered)]
    else:
        found = [(m.start(), m.end(), m.group().lower()) for m in _any_case(pattern).finditer(text)]
    distinct = list({word for _, _, word in found} - stopwords)
    stem_of = dict(zip(distinct, stem_words(distinct, language)))
    spans = [(s, e) for s, e, word in found if stem_of.get(word) in terms]
    spans = _identifier_matches(text, terms, spans, language)
    if paired:  # a word's span and a pair's overlap only when a word runs into Chinese ("Python入門"): the word's is kept
        words_at = spans
        spans = sorted(words_at + [(s, e) for s, e in _pair_matches(text, paired) if not any(a < e and s < b for a, b in words_at)])
    return spans


@lru_cache(maxsize=256)
def _paired(terms: frozenset[str]) -> frozenset[str]:
    """The terms that are pairs of Chinese, Japanese or Korean characters (or a lone one)."""
    return frozenset(term for term in terms if not term.isascii() and CJK_CHARACTER.search(term))


def _pair_matches(text: str, pairs: frozenset[str]) -> list[tuple[int, int]]:
    """Spans of `text` where the pairs of characters of a query in Chinese, Japanese or Korean
    stand, those that overlap or touch joined ("返品" and "品を" mark "返品を"): these languages
    have no spaces to find words by, so a pair is found wherever it is."""
    spans: list[tuple[int, int]] = []
    for match in _pairs_pattern(pairs).finditer(text):
        start, end = match.start(), match.start() + len(match.group(1))
        if spans and start <= spans[-1][1]:
            spans[-1] = (spans[-1][0], max(end, spans[-1][1]))
        else:
            spans.append((start, end))
    return spans


@lru_cache(maxsize=256)
def _pairs_pattern(pairs: frozenset[str]) -> re.Pattern:
    """Every place one of `pairs` starts, overlapping ones too (a lookahead consumes nothing)."""
    return re.compile("(?=(" + "|".join(map(re.escape, sorted(pairs, key=len, reverse=True))) + "))")


def _identifier_matches(text: str, terms: frozenset[str], spans: list[tuple[int, int]], language: str = "english") -> list[tuple[int, int]]:
    """`spans` and the snake_case words of `text` a part of which is one of `terms` ("add a
    library" marks `add_library`, as the index matched it), in order. Found from each `_`: a
    pass of a pattern over every text cost a snippet 70 µs (1,500 characters, 110 µs before);
    camelCase words, which no `_` gives away, are left unmarked for that reason."""
    found, n, at = [], len(text), text.find("_")
    while at >= 0:
        start, end = at, at + 1
        while start > 0 and (text[start - 1].isalnum() or text[start - 1] == "_"):
            start -= 1
        while end < n and (text[end].isalnum() or text[end] == "_"):
            end += 1
        found.append((start, end, text[start:end]))
        at = text.find("_", end)
    marked = set(spans)
    for s, e, word in found:
        if (s, e) not in marked and not terms.isdisjoint(_word_terms(word, language)):
            marked.add((s, e))
    return sorted(marked) if len(marked) > len(spans) else spans


@lru_cache(maxsize=8192)
def _word_terms(word: str, language: str = "english") -> tuple[str, ...]:
    """A word's index terms (its whole and parts): a docs corpus repeats its identifiers."""
    return tuple(analyze_words([word], analyzer_for(language))[0])


@lru_cache(maxsize=256)
def _candidates(terms: frozenset[str]) -> re.Pattern:
    """Whole lowercase words (as the index's token pattern finds them) that begin like one of `terms`."""
    starts = sorted({"".join("[iy]" if c in "iy" else re.escape(c) for c in term[:2]) for term in terms})
    return re.compile(rf"(?<!\w)(?:{'|'.join(starts)})\w*")


_ANY_WORD = re.compile(r"\w+")


@lru_cache(maxsize=16)
def _any_case(pattern: re.Pattern) -> re.Pattern:
    return re.compile(pattern.pattern, re.IGNORECASE)


@lru_cache(maxsize=256)
def _terms(query: str, analyzer: str) -> frozenset[str]:
    """A query's index terms; one search asks for them once per hit."""
    return frozenset(query_terms(query, analyzer))


def _window(text: str, matches: list[tuple[int, int]], width: int) -> tuple[int, int]:
    """The `width`-character stretch holding the most matches (the first such), widened to whole words."""
    if len(text) <= width:
        return 0, len(text)
    best, best_count = 0, 0
    right = 0
    for left, (s, _) in enumerate(matches):
        while right < len(matches) and matches[right][1] <= s + width:
            right += 1
        if right - left > best_count:
            best, best_count = s, right - left
    start = max(0, best - width // 4) if best_count else 0  # a little context before the first match
    end = min(len(text), start + width)
    start = max(0, end - width)
    return _word_start(text, start), _word_end(text, end)


def _word_start(text: str, i: int) -> int:
    if i == 0:
        return 0
    space = text.rfind(" ", 0, i + 1)
    return space + 1 if space >= 0 and i - space < 20 else i


def _word_end(text: str, i: int) -> int:
    if i >= len(text):
        return len(text)
    space = text.find(" ", i)
    return space if 0 <= space and space - i < 20 else i


# Markdown syntax a reader should not see in a snippet. Chunk texts are the extractors' Markdown-like
# text (headings, emphasis, code, tables, links); the hit's `text` keeps it for the chatbot.
_FENCE = re.compile(r"^\s*(```|~~~)(.*)$", re.MULTILINE)
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$", re.MULTILINE)
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.*?)(?:\s+#+)?[ \t]*$", re.MULTILINE)  # "## Refunds ##": its words
_HEADING_TEXT = re.compile(r"#{1,6}\s+(.*?)(?:\s+#+)?")  # one stripped heading line: its words
_QUOTE = re.compile(r"^\s{0,3}>\s?", re.MULTILINE)
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?", re.MULTILINE)
_RULE = re.compile(r"^\s*(?:[-*_]\s*){3,}$", re.MULTILINE)
# Wiki links of Obsidian, Foam and other note tools: [[Page]], [[Page#Part|shown words]]; an embed
# ![[diagram.png]] shows nothing readable. Then a footnote mark ([^1]).
_WIKILINK = re.compile(r"(!?)\[\[([^\]|#\n]*)(?:#[^\]|\n]*)?(?:\|([^\]\n]*))?\]\]")
_FOOTNOTE_MARK = re.compile(r"\[\^[^\]\s]+\](?::[ \t]*)?")
# Admonitions of Docusaurus, VuePress and MkDocs-style directives: ":::tip Pro tip", ":::note[Heads up]"
# and the closing ":::" show their title only.
_ADMONITION = re.compile(r"^[ \t]*:{3,}[ \t]*(?:[A-Za-z][\w-]*)?[ \t]*(?:\[([^\]\n]*)\]|([^\n]*))$", re.MULTILINE)
_IMAGE = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
# Reference-style links: "[the guide][1]" (or "[the guide][]") shows its words; the line that
# defines the reference ("[1]: https://… "Title"") shows nothing.
_REFERENCE_LINK = re.compile(r"\[([^\]\n]+)\]\[[^\]\n]*\]")
_REFERENCE_DEFINITION = re.compile(r"^ {0,3}\[[^\]\n^]+\]:[ \t]+\S+.*$", re.MULTILINE)
_LINK = re.compile(r"\[([^\]]+)\]\((?:[^()]|\([^)]*\))*\)")
# A delimiter next to a space or another `*` neither opens nor closes ("*args and **kwargs" is text).
_EMPHASIS = re.compile(r"(\*\*|__|\*|~~)(?=[^\s*])(.+?)(?<=[^\s*])\1")
_UNDERSCORE_EMPHASIS = re.compile(r"(?<!\w)_(?=\S)(.+?)(?<=\S)_(?!\w)")
_CODE = re.compile(r"`+([^`]*)`+")

_ITEM = "\x1f"  # where a list bullet was, until `readable` joins the items
# Where a code fence was. A chunk cut inside a long code block meets its closing fence first, so
# which fences open a block is read from the fence and what precedes it: one with an info string
# ("```sh") always does; a bare one does when it opens the text or follows a line ending in ":"
# ("or by hand:"), and otherwise only closes an open block (its lines read as prose, as before).
# (Not \x1c-\x1e: str.splitlines splits lines there.)
_FENCE_OPENS, _FENCE_BARE = "\x02", "\x03"


_SENTENCE_ENDS = (".", "!", "?", ":", ";", ",", "…")


def _wikilink(match: re.Match) -> str:
    return "" if match.group(1) else (match.group(3) or match.group(2)).strip()


def _admonition(match: re.Match) -> str:
    return (match.group(1) or match.group(2) or "").strip()


def _fence_mark(match: re.Match) -> str:
    return _FENCE_OPENS if match.group(2).strip() else _FENCE_BARE


# In order: (pattern, replacement, characters (or strings) without which it cannot match).
_STEPS = (
    (_FENCE, _fence_mark, "`~"), (_TABLE_RULE, "", "-"), (_RULE, "", "-*_"), (_HEADING, r"\1", "#"), (_QUOTE, "", ">"),
    (_ADMONITION, _admonition, (":::",)),
    (_BULLET, _ITEM, "-*+.)"), (_WIKILINK, _wikilink, ("[[",)), (_FOOTNOTE_MARK, "", ("[^",)), (_REFERENCE_DEFINITION, "", ("]:",)),
    (_IMAGE, r"\1", "!"), (_LINK, r"\1", "]"), (_REFERENCE_LINK, r"\1", ("][",)), (_CODE, r"\1", "`"), (_EMPHASIS, r"\2", "*_~"),
    (_UNDERSCORE_EMPHASIS, r"\1", "_"),
)


_INLINE_STEPS = tuple(step for step in _STEPS if step[0] in (_WIKILINK, _FOOTNOTE_MARK, _IMAGE, _LINK, _REFERENCE_LINK, _CODE, _EMPHASIS,
                                                            _UNDERSCORE_EMPHASIS))


@lru_cache(maxsize=8192)
def readable_name(name: str) -> str:
    """A title or heading as a person reads it: without the emphasis, code marks and link, image
    and footnote syntax inside it ("Install `widgetctl` from [the site](https://…)" reads "Install
    widgetctl from the site"), on one line. A name that is all syntax (an image without words)
    stays as it was."""
    text = name
    for pattern, replacement, marks in _INLINE_STEPS:
        if any(mark in text for mark in marks):
            text = pattern.sub(replacement, text)
    return " ".join(text.split()) or name


def readable(text: str) -> str:
    """`text` without Markdown syntax: headings, emphasis, code marks and fences, table pipes and
    rules, link (inline and reference-style), wiki link and image syntax (their words stay), link
    reference definitions, footnote marks, admonition fences (their titles stay), list bullets and
    quote marks. List items,
    table rows and lines of code stay apart when lines are joined: one that does not end a sentence
    ends with ";" when more text follows ("0 · success; 1 · a fatal error"); a row's cells have
    " · " between."""
    # Each pattern runs only when its characters occur: plain prose skips them all (10 hits of a
    # search spent ~0.7 ms here running every pattern over every text).
    for pattern, replacement, marks in _STEPS:
        if any(mark in text for mark in marks):
            text = pattern.sub(replacement, text)
    lines: list[str] = []
    last_item = None  # the index of the last non-blank line when it is a list item, table row or line of code
    in_code = False
    for line in text.splitlines():
        if line in (_FENCE_OPENS, _FENCE_BARE):
            before = next((kept.rstrip() for kept in reversed(lines) if kept.strip()), None)
            in_code = not in_code and (line == _FENCE_OPENS or before is None or before.endswith(":"))
            lines.append("")
            continue
        item = in_code or line.startswith(_ITEM)
        if line.startswith(_ITEM):
            line = line[len(_ITEM):]
        elif not in_code and (line.count("|") >= 2 or line.lstrip().startswith("|")):  # a table row: its cells, apart
            line, item = " · ".join(cell.strip() for cell in line.strip().strip("|").split("|") if cell.strip()), True
        if not line.strip():
            lines.append(line)
            continue
        if not item and last_item == len(lines) - 1 and line[:1] in (" ", "\t"):
            item = True  # an item's indented second line: the item ends after it
        elif last_item is not None and not lines[last_item].rstrip().endswith(_SENTENCE_ENDS):
            lines[last_item] = lines[last_item].rstrip() + ";"
        last_item = len(lines) if item else None
        lines.append(line)
    return "\n".join(lines)
