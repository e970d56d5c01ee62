"""Partials: Markdown an MDX page imports and shows where it writes the component —
`import Warning from './_api-key-warning.mdx'`, then `<Warning />` — Docusaurus's way to share a
passage between pages. A reader of the page sees the passage there; without it the page's text had
a hole, and the passage was found (if at all) in a file the site publishes as no page.

Imports by a relative path or Docusaurus's `@site/` (the site's folder: the source folder's
parent) of a .md / .mdx file inside the site's folder are followed, to a depth of MAX_DEPTH and
never round a cycle; any other import stays what it was (a component, left out of the text).

reStructuredText's `.. include:: ../README.rst` (a Sphinx index page that shows the project's
README) is read in place by indexer/rst.py, AsciiDoc's `include::x.adoc[]` by indexer/asciidoc.py;
here their files count toward the page's validator too, and an included .txt fragment is no
document of its own.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from indexer.errors import ExtractionError
from indexer.frontmatter import split_front_matter
from indexer.markup import fenced_segments, may_import

MAX_DEPTH = 5
_IMPORT = re.compile(r"""^import\s+([A-Za-z_$][\w$]*)\s+from\s+(['"])([^'"\n]+\.mdx?)\2;?[ \t]*$""", re.MULTILINE)


def imported_partials(text: str, file: Path, site: Path) -> dict[str, Path]:
    """The component name → file of each partial `text` (the MDX of `file`) imports."""
    found: dict[str, Path] = {}
    for is_code, part in fenced_segments(text):
        if is_code or not may_import(part):
            continue
        for match in _IMPORT.finditer(part):
            name, target = match.group(1), match.group(3)
            if target.startswith("@site/"):
                target = str(site / target[len("@site/"):])
            elif not target.startswith(("./", "../")):
                continue  # a package's module, not a file of the site
            if path := included_file(target, file, site):
                found[name] = path
    return found


_RST_INCLUDE = re.compile(r"^[ \t]*\.\.[ \t]+include::[ \t]*(\S+)", re.MULTILINE)
_ADOC_INCLUDE = re.compile(r"^include::([^\[\s]+)\[", re.MULTILINE)


_ANTORA_ID = re.compile(r"(?:(?P<module>[\w.-]+):)?(?P<family>partial|example)\$(?P<path>.+)")


def included_file(target: str, file: Path, site: Path) -> Path | None:
    """The file an include (`.. include:: target`, `include::target[]`) in `file` reads, when it
    lies inside `site`. An Antora resource id (`partial$x.adoc`, `admin:example$y.py`) is read in
    the component's `modules/<module>/partials/` (or `examples/`), the file's own module by default."""
    antora = _ANTORA_ID.fullmatch(target)
    if antora:
        parts = file.parts
        if "modules" not in parts[:-2]:
            return None
        at = len(parts) - 1 - parts[::-1].index("modules")
        module = antora.group("module") or parts[at + 1]
        target = str(Path(*parts[: at + 1], module, antora.group("family") + "s", antora.group("path")))
    try:
        path = (file.parent / target).resolve()
    except (OSError, RuntimeError):
        return None
    return path if path.is_relative_to(site) and path.is_file() else None


def included_fragments(paths: list[str], site: Path) -> set[str]:
    """The files among `paths` that a page among them includes and that are no pages of their own:
    a .txt an .rst page includes (Sphinx builds no page of it; CMake's help includes 45 such), an
    .adoc another .adoc includes (Antora's partials, Asciidoctor's shared passages). The page shows
    their text; indexed alone, they were a second copy at a URL no site builds."""
    fragments = {".rst": (".txt",), ".adoc": (".adoc", ".asciidoc", ".txt"), ".asciidoc": (".adoc", ".asciidoc", ".txt")}
    wanted = {os.path.realpath(p): p for p in paths if p.lower().endswith((".txt", ".adoc", ".asciidoc"))}
    found: set[str] = set()
    for page in (p for p in paths if wanted and p.lower().endswith(tuple(fragments))):
        try:
            raw = Path(page).read_bytes()
        except OSError:
            continue
        if b"include::" in raw:
            for path in _shown(raw.decode("utf-8", errors="replace"), Path(page), site):
                if str(path) in wanted and str(path).lower().endswith(fragments[Path(page).suffix.lower()]):
                    found.add(wanted[str(path)])
    return found


def _shown(text: str, file: Path, site: Path) -> list[Path]:
    if file.suffix.lower() == ".rst":
        return [p for t in _RST_INCLUDE.findall(text) if (p := included_file(t, file, site))]
    if file.suffix.lower() in (".adoc", ".asciidoc"):
        return [p for t in _ADOC_INCLUDE.findall(text) if (p := included_file(t, file, site))]
    return list(imported_partials(text, file, site).values())


def partial_bytes(raw: bytes, file: str | Path, site: Path) -> bytes:
    """The bytes of every partial the Markdown (MDX imports) or reStructuredText (`.. include::`)
    `raw` shows, with their paths, for the page's validator: a changed partial changes each page
    that shows it. b"" when it shows none (the common case, decided before `file` is parsed)."""
    if not may_import(raw) and b"include::" not in raw:
        return b""
    file = Path(file)
    parts: list[bytes] = []

    def walk(text: str, at: Path, depth: int, seen: frozenset[Path]) -> None:
        for path in _shown(text, at, site):
            if path in seen or depth >= MAX_DEPTH:
                continue
            try:
                body = path.read_bytes()
            except OSError:
                continue
            parts.append(str(path).encode() + b"\0" + body)
            walk(body.decode("utf-8", errors="replace"), path, depth + 1, seen | {path})

    walk(raw.decode("utf-8", errors="replace"), file, 0, frozenset({file.resolve()}))
    return b"\0".join(parts)


def inline_partials(text: str, file: Path, site: Path, depth: int = 0, seen: frozenset[Path] = frozenset()) -> str:
    """`text` with each `<Name />` (or `<Name></Name>`) of an imported partial replaced by the
    partial's Markdown, its front matter left out and its own partials inlined."""
    if not may_import(text):
        return text
    seen = seen | {file.resolve()}
    for name, path in imported_partials(text, file, site).items():
        if path in seen or depth >= MAX_DEPTH:
            continue
        use = re.compile(rf"<{re.escape(name)}(?:\s[^<>]*)?(?:/>|>\s*</{re.escape(name)}\s*>)")
        if not use.search(text):
            continue
        try:
            _, body = split_front_matter(path.read_text(encoding="utf-8-sig"))
        except (OSError, UnicodeDecodeError, ExtractionError):
            continue
        body = inline_partials(body, path, site, depth + 1, seen).strip()
        text = "".join(part if is_code else use.sub(lambda _: f"\n\n{body}\n\n", part) for is_code, part in fenced_segments(text))
    return text
