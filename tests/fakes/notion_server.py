"""A loopback Notion API (version 2025-09-03) for `notion-client`: pages, block children,
databases with their data sources, data source queries — paginated with cursors, shaped like the
responses recorded in ../shared/data/notion/ (object/list envelopes, `has_more`/`next_cursor`,
`{object: "error", status, code, message}` errors).

A workspace is built in Python with the helpers below (`page`, `database`, `paragraph`, …);
`faults` scripts answers for one path (`{"status": 429, "headers": {"Retry-After": "1"}}`,
`{"status": 500}`, `{"expire_cursor": True}`), and `calls` records every request with its time.

    .venv/bin/python -m tests.fakes.notion_server --pages 2000 --port 8093
    NOTION_BASE_URL=http://127.0.0.1:8093 NOTION_TOKEN=test-token index run ...
"""

from __future__ import annotations

import argparse
import itertools
import threading
import uuid
from dataclasses import dataclass, field
from urllib.parse import parse_qs, urlsplit

from tests.fakes.service import Call, FakeService

VERSION = "2025-09-03"
EDITED = "2026-11-01T09:00:00.000Z"
USER = {"object": "user", "id": "2200a911-6a96-44bb-bd38-6bfb1e01b9f6"}
_ids = itertools.count(1)


def new_id() -> str:
    return str(uuid.UUID(int=next(_ids) * 7919 + 0x10000000000000000000000000000000))


def rich(text: str, mention: str | None = None) -> list[dict]:
    """A rich_text array: plain text, or a page mention (`mention` = page id) as the real API sends it."""
    if mention:
        return [{"type": "mention", "mention": {"type": "page", "page": {"id": mention}}, "annotations": _ANNOTATIONS, "plain_text": text, "href": f"https://www.notion.so/{mention.replace('-', '')}"}]
    return [{"type": "text", "text": {"content": text, "link": None}, "annotations": _ANNOTATIONS, "plain_text": text, "href": None}]


_ANNOTATIONS = {"bold": False, "italic": False, "strikethrough": False, "underline": False, "code": False, "color": "default"}


def block(kind: str, payload: dict | None = None, children: list[dict] | None = None) -> dict:
    return {"type": kind, kind: payload or {}, "children": children or []}


def paragraph(text: str, *children: dict) -> dict:
    return block("paragraph", {"rich_text": rich(text), "color": "default"}, list(children))


def heading(level: int, text: str, *children: dict) -> dict:
    return block(f"heading_{level}", {"rich_text": rich(text), "is_toggleable": bool(children), "color": "default"}, list(children))


def bullet(text: str, *children: dict) -> dict:
    return block("bulleted_list_item", {"rich_text": rich(text), "color": "default"}, list(children))


def numbered(text: str, *children: dict) -> dict:
    return block("numbered_list_item", {"rich_text": rich(text), "color": "default"}, list(children))


def to_do(text: str, checked: bool = False) -> dict:
    return block("to_do", {"rich_text": rich(text), "checked": checked, "color": "default"})


def toggle(text: str, *children: dict) -> dict:
    return block("toggle", {"rich_text": rich(text), "color": "default"}, list(children))


def quote(text: str) -> dict:
    return block("quote", {"rich_text": rich(text), "color": "default"})


def callout(text: str, emoji: str = "💡") -> dict:
    return block("callout", {"rich_text": rich(text), "icon": {"type": "emoji", "emoji": emoji}, "color": "gray_background"})


def code(text: str, language: str) -> dict:
    return block("code", {"caption": [], "rich_text": rich(text), "language": language})


def table(*rows: list[str], header: bool = True) -> dict:
    cells = [block("table_row", {"cells": [rich(c) for c in row]}) for row in rows]
    return block("table", {"table_width": len(rows[0]), "has_column_header": header, "has_row_header": False}, cells)


def columns(*cols: list[dict]) -> dict:
    return block("column_list", {}, [block("column", {"width_ratio": 1 / len(cols)}, list(c)) for c in cols])


def synced_original(*children: dict) -> dict:
    return block("synced_block", {"synced_from": None}, list(children))


def synced_copy(original_id: str) -> dict:
    return block("synced_block", {"synced_from": {"type": "block_id", "block_id": original_id}}, [])


def equation(expression: str) -> dict:
    return block("equation", {"expression": expression})


def bookmark(url: str, caption: str = "") -> dict:
    return block("bookmark", {"caption": rich(caption) if caption else [], "url": url})


def embed(url: str, caption: str = "") -> dict:
    return block("embed", {"caption": rich(caption) if caption else [], "url": url})


def link_to_page(page_id: str) -> dict:
    return block("link_to_page", {"type": "page_id", "page_id": page_id})


def mention_paragraph(before: str, page_id: str, title: str) -> dict:
    return block("paragraph", {"rich_text": rich(before) + rich(title, mention=page_id), "color": "default"})


@dataclass
class Workspace:
    """Pages and databases the integration can see. A child page or child database is a page /
    database whose parent is another page; it shows up as a `child_page` / `child_database`
    block at the end of its parent's blocks."""

    pages: dict[str, dict] = field(default_factory=dict)
    databases: dict[str, dict] = field(default_factory=dict)
    blocks: dict[str, dict] = field(default_factory=dict)  # block id -> block object (children as ids)

    def page(self, title: str, *blocks: dict, parent: str | None = None, edited: str = EDITED, properties: dict | None = None, page_id: str | None = None,
             public_url: str | None = None) -> str:
        """`public_url`: where the page is published to the web (Share → Publish); None: only members can open it."""
        page_id = page_id or new_id()
        self.pages[page_id] = {"title": title, "parent": parent, "edited": edited, "in_trash": False, "properties": properties or {}, "blocks": [],
                               "database": None, "public_url": public_url}
        self.set_blocks(page_id, *blocks)
        if parent in self.pages:
            self.pages[parent]["blocks"].append(self._store(block("child_page", {"title": title}), page_id, parent))
        return page_id

    def database(self, title: str, parent: str | None = None, database_id: str | None = None) -> str:
        database_id = database_id or new_id()
        self.databases[database_id] = {"title": title, "parent": parent, "data_source": new_id(), "rows": []}
        if parent in self.pages:
            self.pages[parent]["blocks"].append(self._store(block("child_database", {"title": title}), database_id, parent))
        return database_id

    def row(self, database_id: str, title: str, *blocks: dict, edited: str = EDITED, **properties) -> str:
        page_id = self.page(title, *blocks, edited=edited, properties=properties)
        self.pages[page_id]["database"] = database_id
        self.databases[database_id]["rows"].append(page_id)
        return page_id

    def set_blocks(self, page_id: str, *blocks: dict, edited: str | None = None) -> None:
        """Replace a page's content (child page and database blocks stay)."""
        kept = [b for b in self.pages[page_id]["blocks"] if self.blocks[b]["type"] in ("child_page", "child_database")]
        self.pages[page_id]["blocks"] = [self._store(b, None, page_id) for b in blocks] + kept
        if edited:
            self.pages[page_id]["edited"] = edited

    def _store(self, spec: dict, block_id: str | None, parent: str) -> str:
        block_id = block_id or new_id()
        kind = spec["type"]
        children = [self._store(c, None, block_id) for c in spec.get("children", [])]
        has_children = bool(children) or (kind == "synced_block" and spec[kind].get("synced_from") is not None)
        self.blocks[block_id] = {
            "object": "block", "id": block_id, "parent": {"type": "page_id" if parent in self.pages else "block_id", ("page_id" if parent in self.pages else "block_id"): parent},
            "created_time": EDITED, "last_edited_time": EDITED, "created_by": USER, "last_edited_by": USER,
            "has_children": has_children, "archived": False, "in_trash": False, "type": kind, kind: spec[kind], "_children": children,
        }
        return block_id

    def page_object(self, page_id: str) -> dict:
        page = self.pages[page_id]
        if page["database"]:
            db = self.databases[page["database"]]
            parent = {"type": "data_source_id", "data_source_id": db["data_source"], "database_id": page["database"]}
        elif page["parent"]:
            parent = {"type": "page_id", "page_id": page["parent"]}
        else:
            parent = {"type": "workspace", "workspace": True}
        properties = {"title": {"id": "title", "type": "title", "title": rich(page["title"])}}
        for name, value in page["properties"].items():
            properties[name] = _property(name, value)
        if page["database"]:
            properties = {"Name": {**properties.pop("title"), "id": "title"}, **properties}
        slug = "-".join(page["title"].split()) or "Untitled"
        return {
            "object": "page", "id": page_id, "created_time": EDITED, "last_edited_time": page["edited"], "created_by": USER, "last_edited_by": USER,
            "cover": None, "icon": None, "parent": parent, "archived": page["in_trash"], "in_trash": page["in_trash"], "properties": properties,
            "url": f"https://www.notion.so/{slug}-{page_id.replace('-', '')}", "public_url": page.get("public_url"),
        }

    def database_object(self, database_id: str) -> dict:
        db = self.databases[database_id]
        parent = {"type": "page_id", "page_id": db["parent"]} if db["parent"] else {"type": "workspace", "workspace": True}
        return {
            "object": "database", "id": database_id, "title": rich(db["title"]), "parent": parent, "is_inline": True, "in_trash": False,
            "created_time": EDITED, "last_edited_time": EDITED, "data_sources": [{"id": db["data_source"], "name": db["title"]}],
            "icon": None, "cover": None, "url": f"https://www.notion.so/{database_id.replace('-', '')}", "public_url": None,
        }


def _property(name: str, value) -> dict:
    if isinstance(value, bool):
        return {"id": name[:4], "type": "checkbox", "checkbox": value}
    if isinstance(value, (int, float)):
        return {"id": name[:4], "type": "number", "number": value}
    if isinstance(value, list):
        return {"id": name[:4], "type": "multi_select", "multi_select": [{"id": new_id(), "name": v, "color": "default"} for v in value]}
    if isinstance(value, dict) and "status" in value:
        return {"id": name[:4], "type": "status", "status": {"id": new_id(), "name": value["status"], "color": "default"}}
    return {"id": name[:4], "type": "rich_text", "rich_text": rich(str(value))}


@dataclass
class FakeNotion(FakeService):
    api_key: str = "test-token"
    workspace: Workspace = field(default_factory=Workspace)
    path_faults: dict[str, list[dict]] = field(default_factory=dict)  # path (no query) -> answers to give first

    def __post_init__(self):
        super().__post_init__()
        self._cursor_lock = threading.Lock()

    def error_body(self, status: int, message: str, code: str | None = None) -> dict:
        codes = {400: "validation_error", 401: "unauthorized", 403: "restricted_resource", 404: "object_not_found", 429: "rate_limited", 500: "internal_server_error", 503: "service_unavailable"}
        return {"object": "error", "status": status, "code": code or codes.get(status, "internal_server_error"), "message": message, "request_id": str(uuid.uuid4())}

    def handle(self, path, body, headers, call: Call, wrong_dimensions):
        parts = urlsplit(path)
        route, query = parts.path, {k: v[0] for k, v in parse_qs(parts.query).items()}
        with self._cursor_lock:
            faults = self.path_faults.get(route)
            fault = faults.pop(0) if faults else {}
        if "status" in fault:
            message = {429: "You have been rate limited. Please try again in a few minutes.", 500: "Unexpected error occurred."}.get(fault["status"], "scripted fault")
            return fault["status"], self.error_body(fault["status"], message), fault.get("headers", {})
        if headers.get("authorization") != f"Bearer {self.api_key}":
            return 401, self.error_body(401, "API token is invalid."), {}
        if headers.get("notion-version") != VERSION:
            return 400, self.error_body(400, f"Notion-Version {headers.get('notion-version')!r} is not served by this fake; use {VERSION}.", "missing_version"), {}
        ws = self.workspace
        segments = route.strip("/").split("/")
        if segments[:2] == ["v1", "pages"] and len(segments) == 3 and call.method == "GET":
            page_id = segments[2]
            if page_id not in ws.pages:
                return 404, self.error_body(404, f"Could not find page with ID: {page_id}. Make sure the relevant pages and databases are shared with your integration."), {}
            if ws.pages[page_id].get("forbidden"):
                return 403, self.error_body(403, "Insufficient permissions for this endpoint."), {}
            return 200, ws.page_object(page_id), {}
        if segments[:2] == ["v1", "blocks"] and len(segments) == 4 and segments[3] == "children" and call.method == "GET":
            block_id = segments[2]
            if block_id in ws.pages:
                children = ws.pages[block_id]["blocks"]
            elif block_id in ws.blocks:
                children = ws.blocks[block_id]["_children"]
            else:
                return 404, self.error_body(404, f"Could not find block with ID: {block_id}. Make sure the relevant pages and databases are shared with your integration."), {}
            items = [{k: v for k, v in ws.blocks[c].items() if k != "_children"} for c in children]
            return self._page_of(items, query.get("start_cursor"), query.get("page_size"), "block", fault)
        if segments[:2] == ["v1", "databases"] and len(segments) == 3 and call.method == "GET":
            if segments[2] not in ws.databases:
                return 404, self.error_body(404, f"Could not find database with ID: {segments[2]}. Make sure the relevant pages and databases are shared with your integration."), {}
            return 200, ws.database_object(segments[2]), {}
        if segments[:2] == ["v1", "data_sources"] and len(segments) == 4 and segments[3] == "query" and call.method == "POST":
            found = [d for d in ws.databases.values() if d["data_source"] == segments[2]]
            if not found:
                return 404, self.error_body(404, f"Could not find data_source with ID: {segments[2]}."), {}
            rows = [ws.page_object(p) for p in found[0]["rows"] if not ws.pages[p]["in_trash"]]
            return self._page_of(rows, body.get("start_cursor"), body.get("page_size"), "page_or_data_source", fault)
        if route == "/v1/search" and call.method == "POST":
            wanted = (body.get("filter") or {}).get("value")
            found = [ws.page_object(p) for p, page in ws.pages.items() if not page["in_trash"] and not page.get("forbidden") and not page.get("unlisted")] if wanted in (None, "page") else []
            return self._page_of(found, body.get("start_cursor"), body.get("page_size"), "page_or_data_source", fault)
        return 400, self.error_body(400, f"Invalid request URL: {call.method} {route}", "invalid_request_url"), {}

    def _page_of(self, items: list[dict], cursor: str | None, page_size, kind: str, fault: dict):
        size = min(int(page_size or 100), 100)
        start = 0
        if cursor:
            if fault.get("expire_cursor") or not cursor.startswith("cursor-"):
                return 400, self.error_body(400, f"The start_cursor provided is invalid: {cursor}"), {}
            start = int(cursor.split("-")[1])
        chunk = items[start : start + size]
        more = start + size < len(items)
        return 200, {
            "object": "list", "results": chunk, "next_cursor": f"cursor-{start + size}" if more else None, "has_more": more,
            "type": kind, kind: {}, "request_id": str(uuid.uuid4()),
        }, {}

    # What the tests and the benchmark read
    def requests(self, kind: str | None = None) -> list[Call]:
        """Calls by kind: page (GET page), children (GET block children), database, query, search."""
        def kind_of(c: Call) -> str:
            p = urlsplit(c.path).path
            if p.endswith("/children"):
                return "children"
            if p.endswith("/query"):
                return "query"
            return "search" if p == "/v1/search" else p.split("/")[2][:-1] if p.count("/") >= 3 else "other"
        return [c for c in self.calls if kind is None or kind_of(c).startswith(kind)]


def generated_workspace(pages: int, per_parent: int = 8, rows_per_database: int = 40) -> tuple[Workspace, str]:
    """A workspace of about `pages` pages: a tree `per_parent` wide under one root, every tenth page
    holding a database, each page a few blocks of text."""
    ws = Workspace()
    root = ws.page("Handbook", heading(1, "Handbook"), paragraph("Everything the team knows, in one place."))
    queue, made = [root], 1
    topics = ["refunds", "shipping", "onboarding", "security", "billing", "support", "hiring", "releases", "pricing", "travel"]
    while made < pages:
        parent = queue.pop(0)
        for _ in range(per_parent):
            if made >= pages:
                break
            topic = topics[made % len(topics)]
            child = ws.page(f"{topic.title()} note {made}", heading(2, f"About {topic}"), paragraph(f"Page {made} explains how {topic} works for the team."),
                            bullet(f"First rule of {topic}"), bullet(f"Second rule of {topic}"), parent=parent)
            made += 1
            queue.append(child)
            if made % 10 == 0 and made + rows_per_database < pages:
                db = ws.database(f"{topic.title()} tracker {made}", parent=child)
                for r in range(rows_per_database):
                    ws.row(db, f"{topic.title()} item {made}-{r}", paragraph(f"Row {r} of the {topic} tracker."), Status={"status": "Done"})
                made += rows_per_database
    return ws, root


def main() -> None:
    parser = argparse.ArgumentParser(description="A loopback Notion API with a generated workspace.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8093)
    parser.add_argument("--pages", type=int, default=200)
    args = parser.parse_args()
    workspace, root = generated_workspace(args.pages)
    fake = FakeNotion(host=args.host, port=args.port, workspace=workspace)
    print(f"fake Notion API on {fake.url} (token 'test-token'); root page {root}; Ctrl-C to stop", flush=True)
    try:
        fake.server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
