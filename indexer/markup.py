"""What a reader of a published Markdown page sees of the HTML and MDX in its source.

Markdown lets a writer put HTML in the text, and MDX (Docusaurus, Nextra, Astro) adds JSX
components and ES module lines; Hugo and Jekyll sites call their templates from the text
(`{{< figure >}}`, `{% include note.html %}`). A site shows none of it as text: a comment `<!-- … -->` is not
shown at all (writers keep notes there that are not for readers), `<br>` and `<details>` are
layout, `<Tabs>` is a component, `import Tabs from '@theme/Tabs'` is code that builds the page. Left
in, each was indexed as words — a comment's note could be cited to a visitor — and shown in
snippets as tags.

What is kept: the words between tags, an image's alt text, `<h1>`–`<h6>` as Markdown headings (a
README's `<h1 align="center">` names the file), and code as written — fenced blocks and `inline
code` show HTML as text on the page too.
"""

from __future__ import annotations

import re
from html import unescape

_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})")

# HTML elements a Markdown writer uses. A word in angle brackets that is none of them stays
# ("Authorization: Bearer <your token>", "x <y and y> z").
_INLINE = frozenset(
    "a abbr b bdi bdo big cite code data del dfn em font i img input ins kbd label mark q s samp small "
    "span strike strong sub sup time tt u var wbr picture source video audio iframe svg path".split()
)
_BLOCK = frozenset(
    "address article aside blockquote br center dd details dialog div dl dt fieldset figcaption figure "
    "footer form h1 h2 h3 h4 h5 h6 header hr li main nav ol p pre section summary table tbody td tfoot th "
    "thead tr ul".split()
)
_HEADING = re.compile(r"h([1-6])")

_PROSE = re.compile(
    r"(?=[`<{&])(?:"  # every form starts with one of these: a search that tries the others only there is 6× faster
    r"(?P<code>(`+)[^`]*\2)"  # inline code: kept as written
    r"|<!--.*?(?:-->|\Z)"  # a comment, to its end (an unclosed one hides the rest of the page, as in a browser)
    r"|(?P<mdx_comment>\{/\*.*?\*/\})"
    r"|\{%-?\s*comment\s*-?%\}.*?(?:\{%-?\s*endcomment\s*-?%\}|\Z)"  # a Liquid comment: hidden, as an HTML one
    r"|\{\{[<%](?:[^\n]|\n(?!\s*\n))*?[>%]\}\}|\{%(?:[^\n]|\n(?!\s*\n))*?%\}"  # Hugo shortcodes, Liquid tags: the site's templates
    r"|(?P<tag><(?P<close>/)?(?P<name>[A-Za-z][\w.:-]*)?(?P<attrs>(?:\s[^<>]*?)?)/?>)"
    r"|(?P<entity>&(?:#\d{1,7}|#[xX][\da-fA-F]{1,6}|[A-Za-z][A-Za-z\d]{1,31});)"  # &amp; &nbsp; &#8212;: the character shown
    r")",
    re.DOTALL,
)
# An HTML table's row: one line, its cells between " | ", as the HTML extractor writes a row.
_ROW = re.compile(r"\s*<tr\b[^>]*>(.*?)(?:</tr\s*>|(?=\s*<tr\b)|(?=\s*</table\s*>))", re.DOTALL | re.IGNORECASE)
_CELL = re.compile(r"<t[dh]\b[^>]*>", re.IGNORECASE)
_ALT = re.compile(r"""\balt\s*=\s*(?:"([^"]*)"|'([^']*)')""", re.IGNORECASE)
_ESM = re.compile(r"(?:import|export)\s")
# A module import as MDX writes it, outside code: the sign that a .md file is MDX (Docusaurus 3
# reads every .md file as MDX).
_MDX_HEADING_ID = re.compile(r"^(#{1,6} .*?)[ \t]*\{/\*\s*#([\w\-.:]+)\s*\*/\}[ \t]*$", re.MULTILINE)
_IMPORT_LINE = re.compile(r"""^import\s+(?:[\w*{}\s,]+\sfrom\s+)?['"][^'"\n]+['"];?[ \t]*$""", re.MULTILINE)


def strip_markup(text: str, mdx: bool = False) -> str:
    """`text` (Markdown, or MDX when `mdx` or when it imports a module) without HTML comments and
    tags, Hugo shortcodes and Liquid tags; in MDX also without JSX components and comments and
    without import / export paragraphs."""
    if not mdx and "<" not in text and "&" not in text and "{" not in text and not may_import(text):
        return text
    segments = list(fenced_segments(text))
    mdx = mdx or any(not is_code and _IMPORT_LINE.search(part) for is_code, part in segments)
    out: list[str] = []
    for is_code, part in segments:
        if is_code:
            out.append(part)
            continue
        if "{/*" in part:  # Docusaurus 3's heading id, `## Setup {/* #install */}`: as `{#install}`, a link target
            part = _MDX_HEADING_ID.sub(r"\1 {#\2}", part)
        if mdx:
            part = _without_esm(part)
        if "<tr" in part or "<TR" in part:
            part = _ROW.sub(lambda m: _row(m, mdx), part)
        out.append(_prose(part, mdx))
    return "".join(out)


def may_import(text: str | bytes) -> bool:
    """Might `text` hold an MDX import line? "import" must start a line: the word in prose (as in
    most pages of any size) does not count, and the regexes after this test cost far more."""
    if isinstance(text, bytes):
        return text.startswith(b"import") or b"\nimport" in text
    return text.startswith("import") or "\nimport" in text


def fenced_segments(text: str):
    """(is_code, lines) for each run of lines; a fenced code block, fences included, is code. A
    fence not closed runs to the end of the text, as in CommonMark."""
    run: list[str] = []
    fence = ""
    for line in text.splitlines(keepends=True):
        match = _FENCE.match(line)
        if not fence and match:
            if run:
                yield False, "".join(run)
            run, fence = [line], match.group(1)
        elif fence and match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence) and not line[match.end():].strip():
            run.append(line)
            yield True, "".join(run)
            run, fence = [], ""
        else:
            run.append(line)
    if run:
        yield bool(fence), "".join(run)


def _without_esm(part: str) -> str:
    """MDX reads a paragraph that begins with `import ` or `export ` at the start of a line as
    JavaScript, to its first blank line."""
    kept: list[str] = []
    in_esm = False
    for line in part.splitlines(keepends=True):
        if not line.strip():
            in_esm = False
        elif not in_esm and (not kept or not kept[-1].strip()) and _ESM.match(line):
            in_esm = True
        if not in_esm:
            kept.append(line)
    return "".join(kept)


def _prose(part: str, mdx: bool) -> str:
    return _PROSE.sub(lambda m: _replace(m, mdx), part)


def _row(match: re.Match, mdx: bool) -> str:
    cells = (" ".join(_prose(cell, mdx).split()) for cell in _CELL.split(match.group(1))[1:])
    return "\n" + " | ".join(cells)


def _replace(match: re.Match, mdx: bool) -> str:
    if match.group("code"):
        return match.group("code")
    if match.group("entity"):
        return unescape(match.group("entity"))
    if match.group("mdx_comment"):
        return "" if mdx else match.group(0)
    if not match.group("tag"):
        return ""  # a comment
    name = match.group("name") or ""
    lowered = name.lower()
    component = mdx and (name[:1].isupper() or "." in name or match.group(0) in ("<>", "</>"))  # <Tabs>, <Foo.Bar>, fragments
    if not component and lowered not in _INLINE and lowered not in _BLOCK:
        return match.group(0)
    heading = _HEADING.fullmatch(lowered)
    if heading and not match.group("close"):
        return "\n\n" + "#" * int(heading.group(1)) + " "
    if lowered == "img":
        alt = _ALT.search(match.group("attrs"))
        return unescape(alt.group(1) if alt.group(1) is not None else alt.group(2)) if alt else ""
    if lowered in _BLOCK or (component and _starts_line(match)):
        return "\n"
    return ""


def _starts_line(match: re.Match) -> bool:
    """A component alone at the start of its line is a block (<Tabs>); one inside a sentence is not."""
    line_start = match.string.rfind("\n", 0, match.start()) + 1
    return not match.string[line_start : match.start()].strip()
