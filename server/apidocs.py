"""`/schema`: the API reference as one HTML page rendered on the server from the OpenAPI schema.

Litestar's documentation UIs (ReDoc, Swagger, …) load their scripts from a CDN, so on a machine
without internet `/schema` was a blank page. This page needs nothing but itself: every operation
with its parameters, request body, responses and error codes, then every schema, as plain HTML.
The machine-readable schema stays at `/schema/openapi.json` (and `.yaml`).
"""

from __future__ import annotations

from html import escape
from typing import Any

from litestar import Request
from litestar.openapi.plugins import JsonRenderPlugin, OpenAPIRenderPlugin, YamlRenderPlugin

STYLE = """<style>
body { font: 15px/1.5 system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem; color: #222; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.2rem; margin-top: 2.2rem; border-bottom: 1px solid #ddd; }
h3 { font-size: 1rem; margin: 1.4rem 0 .3rem; } .method { font: 600 .85rem ui-monospace, monospace; padding: .1rem .4rem; border-radius: 4px; background: #e8eefc; }
code, .type { font-family: ui-monospace, monospace; font-size: .88em; } table { border-collapse: collapse; width: 100%; margin: .3rem 0 1rem; }
th, td { text-align: left; vertical-align: top; padding: .3rem .5rem; border-bottom: 1px solid #eee; } th { font-weight: 600; background: #fafafa; }
.muted { color: #666; } nav a { margin-right: .8rem; } pre { white-space: pre-wrap; }
</style>"""


class ApiReference(OpenAPIRenderPlugin):
    """The page at `/schema` (and `/schema/reference`)."""

    def __init__(self) -> None:
        super().__init__(path=["/", "/reference"])  # the page writes its own head

    def render(self, request: Request, openapi_schema: dict[str, Any]) -> bytes:
        base = request.app.openapi_config.path if request.app.openapi_config else "/schema"
        return page(openapi_schema, base).encode("utf-8")


def render_plugins() -> list[OpenAPIRenderPlugin]:
    return [ApiReference(), JsonRenderPlugin(), YamlRenderPlugin()]


def page(schema: dict[str, Any], base: str = "/schema") -> str:
    info = schema.get("info", {})
    title = escape(f"{info.get('title', 'API')} {info.get('version', '')}".strip())
    parts = [f"<!doctype html><html lang='en'><head><meta charset='utf-8'><meta name='viewport' content='width=device-width, initial-scale=1'>"
             f"<title>{title}</title><link rel='icon' href='data:,'>{STYLE}</head><body><h1>{title}</h1>",
             f"<nav><a href='#operations'>Operations</a><a href='#schemas'>Schemas</a><a href='{escape(base)}/openapi.json'>openapi.json</a>"
             f"<a href='{escape(base)}/openapi.yaml'>openapi.yaml</a></nav>",
             "<h2 id='operations'>Operations</h2>"]
    for path, item in schema.get("paths", {}).items():
        for method, op in item.items():
            if isinstance(op, dict) and method in {"get", "post", "put", "patch", "delete"}:
                parts.append(_operation(method, path, op))
    parts.append("<h2 id='schemas'>Schemas</h2>")
    for name, body in schema.get("components", {}).get("schemas", {}).items():
        parts.append(f"<h3 id='schema-{escape(name)}'>{escape(name)}</h3>{_description(body)}{_properties(body)}")
    parts.append("</body></html>")
    return "\n".join(parts)


def _operation(method: str, path: str, op: dict) -> str:
    out = [f"<h3><span class='method'>{method.upper()}</span> <code>{escape(path)}</code> {escape(op.get('summary', ''))}</h3>", _description(op)]
    params = op.get("parameters") or []
    if params:
        rows = "".join(f"<tr><td><code>{escape(p['name'])}</code></td><td>{escape(p.get('in', ''))}</td><td class='type'>{_type(p.get('schema', {}))}</td>"
                       f"<td>{'required' if p.get('required') else ''}</td><td>{escape(p.get('description', ''))}</td></tr>" for p in params)
        out.append(f"<table><tr><th>parameter</th><th>in</th><th>type</th><th></th><th></th></tr>{rows}</table>")
    body = (op.get("requestBody") or {}).get("content", {})
    for media, content in body.items():
        out.append(f"<p>Request body (<code>{escape(media)}</code>): <span class='type'>{_type(content.get('schema', {}))}</span></p>")
    responses = op.get("responses") or {}
    if responses:
        rows = "".join(f"<tr><td><code>{escape(str(code))}</code></td><td>{escape(r.get('description', ''))}</td>"
                       f"<td class='type'>{_type(next(iter(r.get('content', {}).values()), {}).get('schema', {}))}</td></tr>" for code, r in responses.items())
        out.append(f"<table><tr><th>status</th><th>meaning</th><th>body</th></tr>{rows}</table>")
    return "\n".join(out)


def _description(node: dict) -> str:
    text = node.get("description")
    return f"<pre class='muted'>{escape(text)}</pre>" if text else ""


def _properties(node: dict) -> str:
    props = node.get("properties") or {}
    if not props:
        return f"<p class='type'>{_type(node)}</p>" if node.get("type") or node.get("enum") else ""
    required = set(node.get("required") or ())
    rows = "".join(f"<tr><td><code>{escape(name)}</code></td><td class='type'>{_type(p)}</td><td>{'required' if name in required else ''}</td>"
                   f"<td>{escape(p.get('description', ''))}{_limits(p)}</td></tr>" for name, p in props.items())
    return f"<table><tr><th>field</th><th>type</th><th></th><th></th></tr>{rows}</table>"


def _limits(p: dict) -> str:
    found = [f"{key} {p[key]}" for key in ("minimum", "maximum", "minLength", "maxLength", "default") if key in p]
    enum = p.get("enum")
    if enum and len(enum) <= 12:
        found.append("one of " + ", ".join(map(str, enum)))
    return f" <span class='muted'>({escape('; '.join(found))})</span>" if found else ""


def _type(node: dict) -> str:
    """A schema's type in one line, references linked to their schema."""
    if not node:
        return ""
    if "$ref" in node:
        name = node["$ref"].rsplit("/", 1)[-1]
        return f"<a href='#schema-{escape(name)}'>{escape(name)}</a>"
    for combinator in ("oneOf", "anyOf", "allOf"):
        if combinator in node:
            return " | ".join(_type(n) for n in node[combinator])
    kind = node.get("type", "object")
    if isinstance(kind, list):
        return " | ".join(escape(k) for k in kind)
    if kind == "array":
        return f"array of {_type(node.get('items', {}))}"
    return escape(str(kind)) + (f" ({escape(node['format'])})" if node.get("format") else "")
