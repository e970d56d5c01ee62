"""AsciiDoc (.adoc; Asciidoctor, Antora, GitHub) as the Markdown the rest of the reader understands:
what the rendered page shows.

- `= Title` and `== Section` … become `#` headings with Asciidoctor's ids (`_proxy_settings`, or
  the `[[id]]` / `[#id]` written above them); the header's author, revision and `:attribute:`
  lines are not text, and `{attribute}` reads as its value.
- Listing and literal blocks (`----`, `....`, a `[source,python]` above) are code; example,
  sidebar and quote blocks their text; a table's rows read `a | b`; `NOTE: …` and `[NOTE]` blocks
  read "Note: …"; comments, passthrough blocks, block images and page breaks are left out.
- Inline: `xref:install.adoc[Installing]`, `<<proxy,the proxy section>>`, `https://…[the site]`
  and `image:x.png[a diagram]` read as their text; `kbd:[Ctrl+C]` and `btn:[Save]` as the keys;
  footnotes go.
- `include::other.adoc[]` of a file inside the site's folder reads that file in place, and so
  does an Antora resource id (`include::partial$x.adoc[]`; indexer.partials).
"""

from __future__ import annotations

import re
from pathlib import Path

from indexer.partials import included_file

ADMONITIONS = ("NOTE", "TIP", "IMPORTANT", "WARNING", "CAUTION")
_TITLE = re.compile(r"(={1,6})[ \t]+(.+?)[ \t]*(?:=+[ \t]*)?$")
_ATTRIBUTE = re.compile(r":(!?[\w-]+!?):(?:[ \t]+(.*))?$")
_BLOCK_ATTRIBUTES = re.compile(r"\[([^\[\]]*)\]$")
_ANCHOR = re.compile(r"\[\[([\w:.-]+)(?:,[^\]]*)?\]\]$|\[#([\w:.-]+)[^\]]*\]$")
_DELIMITER = re.compile(r"(-{4,}|\.{4,}|={4,}|\*{4,}|_{4,}|\+{4,}|/{4,}|\|={3,}|-{2})$")
_INLINE = [
    (re.compile(r"(?:xref|link|mailto):([^\s\[]*)\[([^\]]*)\]"), lambda m: m.group(2) or m.group(1)),
    (re.compile(r"<<([\w:.#/-]+)(?:,\s*([^>]+))?>>"), lambda m: m.group(2) or m.group(1)),
    (re.compile(r"\b(https?://[^\s\[<>]+)\[([^\]]*)\]"), lambda m: m.group(2) or m.group(1)),
    (re.compile(r"\bimage:[^\s\[]+\[([^\],]*)[^\]]*\]"), lambda m: m.group(1)),
    (re.compile(r"\b(?:kbd|btn):\[([^\]]*)\]"), lambda m: m.group(1)),
    (re.compile(r"\bmenu:([^\s\[]+)\[([^\]]*)\]"), lambda m: " > ".join(p for p in (m.group(1), *m.group(2).split(">")) if p.strip())),
    (re.compile(r"\bfootnote(?:ref)?:[\w-]*\[(?:[^\]\\]|\\.)*\]"), lambda m: ""),
    (re.compile(r"\bpass:[a-z,]*\[([^\]]*)\]"), lambda m: m.group(1)),
    (re.compile(r"(?<![\w+])\+([^+\n]+)\+(?![\w+])"), lambda m: m.group(1)),  # passthrough: `+*.war+` is `*.war`
    (re.compile(r"(?<![\w#])#([^#\n]+)#(?![\w#])"), lambda m: m.group(1)),
]


def asciidoc_to_markdown(text: str, ids: bool = True, file: Path | None = None, site: Path | None = None, depth: int = 0) -> str:
    """`text` (AsciiDoc) as Markdown; see the module's docstring. `ids`: each heading's id as
    `{#id}`, for a page that has a URL; `file` and `site`: where `include::` may read."""
    attributes: dict[str, str] = {}
    out: list[str] = []
    lines = text.replace("\r\n", "\n").split("\n")
    pending: dict[str, str] = {}  # the block attributes, anchor and title written above the next block
    i = 0
    while i < len(lines):
        line = lines[i].rstrip()
        stripped = line.strip()
        i += 1
        if stripped.startswith("//") and not stripped.startswith("////"):
            continue  # a comment
        if (found := _ATTRIBUTE.match(line)) is not None:
            attributes[found.group(1).strip("!")] = (found.group(2) or "").strip()
            continue
        if (anchor := _ANCHOR.match(stripped)) is not None:
            pending["id"] = anchor.group(1) or anchor.group(2)
            continue
        if (block := _BLOCK_ATTRIBUTES.match(stripped)) is not None and not stripped.startswith("[["):
            pending["style"] = block.group(1).split(",")[0].strip().lstrip("#").split(".")[0].split("#")[0]
            pending["language"] = (block.group(1).split(",") + ["", ""])[1].strip() if pending["style"] == "source" else ""
            continue
        if re.match(r"\.[^\s.]", stripped) and i < len(lines) and lines[i].strip():
            pending["title"] = stripped[1:]  # a block title, shown above its block
            continue
        if (title := _TITLE.match(line)) is not None:  # "====" alone is an example block's delimiter: no title
            words = _inline(title.group(2), attributes)
            anchor = pending.pop("id", None) or (_auto_id(words, attributes) if ids else None)
            out += ["", f"{'#' * len(title.group(1))} {words}" + (f" {{#{anchor}}}" if ids and anchor else ""), ""]
            pending.clear()
            while len(title.group(1)) == 1 and i < len(lines) and lines[i].strip() and not _ATTRIBUTE.match(lines[i]):
                i += 1  # the document header's author and revision lines
            continue
        if (delimiter := _DELIMITER.match(stripped)) is not None:
            body, i = _delimited(lines, i, stripped)
            out.append(_block(delimiter.group(1), body, pending, attributes, file, site, depth, ids))
            pending.clear()
            continue
        if stripped.startswith("include::") and file is not None and site is not None:
            out.append(_include(stripped, file, site, depth, ids))
            continue
        if stripped.startswith(("image::", "video::", "audio::", "toc::", "ifdef::", "ifndef::", "ifeval::", "endif::")) or stripped in ("<<<", "'''", "+"):
            continue
        if "title" in pending:
            out.append(_inline(pending.pop("title"), attributes))
        admonition = next((a for a in ADMONITIONS if stripped.startswith(f"{a}: ")), None)
        if admonition:
            stripped = f"{admonition.capitalize()}: {stripped[len(admonition) + 2:]}"
        elif pending.get("style", "").upper() in ADMONITIONS:
            stripped = f"{pending['style'].capitalize()}: {stripped}"
        pending.pop("style", None)
        stripped = re.sub(r"^(\*{1,5}|\.{1,5}|-)\s+", "- ", stripped)  # list items
        stripped = re.sub(r"^(.+?)::\s*(.*)$", lambda m: f"{m.group(1)}: {m.group(2)}".rstrip(": ") + (":" if not m.group(2) else ""), stripped) \
            if "::" in stripped and not stripped.startswith("- ") else stripped
        out.append(_inline(stripped, attributes))
    return "\n".join(out).strip() + "\n"


def _delimited(lines: list[str], i: int, opener: str) -> tuple[list[str], int]:
    """The lines of a delimited block up to its closing delimiter (the same line), and the index after it."""
    for j in range(i, len(lines)):
        if lines[j].rstrip() == opener:
            return lines[i:j], j + 1
    return lines[i:], len(lines)


def _block(delimiter: str, body: list[str], pending: dict, attributes: dict, file, site, depth: int, ids: bool) -> str:
    kind = delimiter[0]
    style = pending.get("style", "").upper()
    title = _inline(pending["title"], attributes) + "\n\n" if "title" in pending else ""
    if kind == "/" or kind == "+" or style == "COMMENT":
        return ""
    if kind in "-." and delimiter != "--" or style in ("SOURCE", "LISTING", "LITERAL"):
        return f"{title}```{pending.get('language', '')}\n" + "\n".join(body).strip("\n") + "\n```"
    if kind == "|":  # a row's cells may stand on one line or one a line: the first row says how many
        widths = [len(row.split("|")) - 1 for row in body if row.strip().startswith("|")]
        cells = [c.strip() for row in body if row.strip().startswith("|") for c in row.strip().split("|")[1:]]
        width = max(widths[0] if widths else 1, 1)
        rows = [" | ".join(cells[k:k + width]) for k in range(0, len(cells), width)]
        return title + "\n".join(_inline(row, attributes) for row in rows)
    inner = asciidoc_to_markdown("\n".join(body), False, file, site, depth).strip()
    if style in ADMONITIONS:
        return f"{title}{style.capitalize()}: {inner}"
    return title + inner


def _include(line: str, file: Path, site: Path, depth: int, ids: bool) -> str:
    target = line[len("include::"):].split("[", 1)[0]
    path = included_file(target, file, site) if depth < 5 else None
    if path is None:
        return ""
    try:
        return asciidoc_to_markdown(path.read_text(encoding="utf-8-sig"), ids, path, site, depth + 1)
    except (OSError, UnicodeDecodeError):
        return ""


def _inline(text: str, attributes: dict[str, str]) -> str:
    text = re.sub(r"\{([\w-]+)\}", lambda m: attributes.get(m.group(1), m.group(0)), text)
    for pattern, replace in _INLINE:
        text = pattern.sub(replace, text)
    return text


def _auto_id(words: str, attributes: dict[str, str]) -> str:
    """Asciidoctor's id for a section title: idprefix ("_") and the words, lower case, joined by idseparator ("_")."""
    prefix, separator = attributes.get("idprefix", "_"), attributes.get("idseparator", "_")
    plain = re.sub(r"<[^>]+>|&\w+;|[`*]", "", words).lower()
    return prefix + re.sub(r"[^\w]+", separator, plain).strip(separator)
