"""Notion pages as text: a page's blocks (already fetched, children under `children`) rendered to
the Markdown-like text the chunker reads, with the links to follow, the block types left out, and
the offsets of headings that carry a block id (deep links); page titles and property values as
plain text. No requests are made here: `notion.py` fetches, this module only renders.
"""

from __future__ import annotations

import re


def page_title(page: dict) -> str:
    for prop in page.get("properties", {}).values():
        if prop.get("type") == "title":
            return plain_text(prop.get("title", [])).strip() or "Untitled"
    return "Untitled"


# Blocks with nothing to index, skipped without a warning.
SILENT = {"divider", "table_of_contents", "breadcrumb", "template", "column", "column_list", "synced_block", "image", "video", "audio", "file", "pdf"}
HEADING = {"heading_1": 1, "heading_2": 2, "heading_3": 3, "heading_4": 4}


def render_page(page: dict, blocks: list[dict], follow_links: bool = True) -> tuple[str, list[str], dict[str, int], tuple[tuple[int, str], ...]]:
    """Markdown-like text (as the HTML extractor writes it: `#` headings, `- ` lists, `a | b`
    table rows, fenced code), the page's links (`page:<id>` / `database:<id>`), the counts of
    block types we do not read, and where each top-level block begins in the text (offset, block
    id without dashes: Notion links to a block as `<page url>#<that id>`). A database row starts
    with its properties, one `Name: value` line each."""
    lines: list[str] = []
    links: list[str] = []
    unsupported: dict[str, int] = {}
    if page.get("_database") or page.get("parent", {}).get("type") in ("data_source_id", "database_id"):
        for name, prop in page.get("properties", {}).items():
            value = property_text(prop)
            if value and prop.get("type") != "title":
                lines.append(f"{name}: {value}")
        if lines:
            lines.append("")
    starts: list[tuple[int, str]] = []
    _render(blocks, 0, lines, links, unsupported, follow_links, starts)
    text, anchors = _anchored(lines, starts)
    return text, links, unsupported, anchors


BLOCK_MARK = re.compile("\x00([0-9a-f]+)\x01")


def _anchored(lines: list[str], starts: list[tuple[int, str]]) -> tuple[str, tuple[tuple[int, str], ...]]:
    """The tidy text and the offset of each top-level block's first line in it: the first line a
    block wrote is marked, the text tidied, the marks taken out and their places kept."""
    ends = [line for line, _ in starts[1:]] + [len(lines)]
    for (first, block_id), end in zip(starts, ends):
        line = next((i for i in range(first, end) if lines[i].strip()), None)
        if line is not None:
            lines[line] = f"\x00{block_id}\x01{lines[line]}"
    marked = _tidy(lines)
    text, anchors, position, length = [], [], 0, 0
    for match in BLOCK_MARK.finditer(marked):
        text.append(marked[position : match.start()])
        length += match.start() - position
        anchors.append((length, match.group(1)))
        position = match.end()
    text.append(marked[position:])
    return "".join(text), tuple(anchors)


def _render(blocks: list[dict], level: int, out: list[str], links: list[str], unsupported: dict[str, int], follow: bool,
            starts: list[tuple[int, str]] | None = None) -> None:
    indent = "  " * level
    number = 0
    for block in blocks:
        if starts is not None and block.get("id"):
            starts.append((len(out), block["id"].replace("-", "")))
        kind = block.get("type", "")
        data = block.get(kind) or {}
        children = block.get("children", [])
        number = number + 1 if kind == "numbered_list_item" else 0
        text = plain_text(data.get("rich_text", []), links if follow else None)
        nested = level
        if not text and not children and kind in ("bulleted_list_item", "numbered_list_item", "to_do", "toggle", "quote", "callout"):
            continue  # an empty item says nothing
        if kind == "paragraph":
            out.extend([text, ""] if text else [])
        elif kind in HEADING:
            out.extend(["", f"{'#' * HEADING[kind]} {text}", ""] if text else [])
        elif kind == "bulleted_list_item":
            out.append(f"{indent}- {text}")
            nested = level + 1
        elif kind == "numbered_list_item":
            out.append(f"{indent}{number}. {text}")
            nested = level + 1
        elif kind == "to_do":
            out.append(f"{indent}- [{'x' if data.get('checked') else ' '}] {text}")
            nested = level + 1
        elif kind == "toggle":
            out.append(f"{indent}- {text}" if level else text)
            nested = level + 1 if level else level
        elif kind == "quote":
            out.extend([f"> {text}", ""])
        elif kind == "callout":
            emoji = (data.get("icon") or {}).get("emoji", "")
            out.extend([f"> {emoji} {text}".replace(">  ", "> "), ""])
        elif kind == "code":
            language = data.get("language", "")
            out.extend(["", f"```{'' if language == 'plain text' else language}", plain_text(data.get("rich_text", [])), "```", ""])
            caption = plain_text(data.get("caption", []))
            out.extend([caption, ""] if caption else [])
        elif kind == "table":
            out.append("")
            for row in children:
                cells = [plain_text(cell, links if follow else None) for cell in (row.get("table_row") or {}).get("cells", [])]
                if any(cells):
                    out.append(" | ".join(cells))
            out.append("")
            continue  # its rows were its children
        elif kind == "equation":
            out.extend([data.get("expression", ""), ""])
        elif kind in ("bookmark", "embed", "link_preview"):
            caption = plain_text(data.get("caption", []))
            url = data.get("url", "")
            out.extend([f"{caption} ({url})" if caption else url, ""] if url or caption else [])
        elif kind in ("image", "video", "audio", "file", "pdf"):
            caption = plain_text(data.get("caption", []))  # the file URL itself expires: never indexed
            out.extend([caption, ""] if caption else [])
        elif kind == "child_page":
            links.append(f"page:{block['id']}")
            continue
        elif kind == "child_database":
            links.append(f"database:{block['id']}")
            continue
        elif kind == "link_to_page":
            target = data.get(data.get("type", ""), "")
            if follow and target:
                links.append(f"{'database' if data.get('type') == 'database_id' else 'page'}:{target}")
            continue
        elif kind not in SILENT:
            unsupported[kind or "?"] = unsupported.get(kind or "?", 0) + 1
            continue
        if children:
            _render(children, nested, out, links, unsupported, follow)


def plain_text(rich_text: list[dict], links: list[str] | None = None) -> str:
    """The visible text of a rich_text array; page and database mentions are added to `links`."""
    if links is not None:
        for part in rich_text:
            mention = part.get("mention") or {}
            if part.get("type") == "mention" and mention.get("type") in ("page", "database"):
                links.append(f"{mention['type']}:{mention[mention['type']]['id']}")
    return "".join(part.get("plain_text", "") for part in rich_text)


def property_text(prop: dict) -> str:
    kind = prop.get("type")
    value = prop.get(kind)
    if value is None:
        return ""
    if kind in ("rich_text", "title"):
        return plain_text(value)
    if kind in ("select", "status"):
        return value.get("name", "")
    if kind == "multi_select":
        return ", ".join(o.get("name", "") for o in value)
    if kind == "number":
        return f"{value:g}" if isinstance(value, float) else str(value)
    if kind == "checkbox":
        return "yes" if value else "no"
    if kind in ("url", "email", "phone_number"):
        return str(value)
    if kind == "date":
        return value.get("start", "") + (f" → {value['end']}" if value.get("end") else "")
    if kind == "people":
        return ", ".join(p.get("name", "") for p in value if p.get("name"))
    if kind == "unique_id":
        return f"{value.get('prefix') + '-' if value.get('prefix') else ''}{value.get('number', '')}"
    if kind == "formula":
        inner = value.get(value.get("type", ""))
        return "" if inner is None else str(inner.get("start", "") if isinstance(inner, dict) else inner)
    return ""  # relations, rollups, files, timestamps, people ids: not text a reader searches for


def _tidy(lines: list[str]) -> str:
    out: list[str] = []
    for line in (line.rstrip() for line in lines):
        if line or (out and out[-1]):
            out.append(line)
    return "\n".join(out).strip("\n")
