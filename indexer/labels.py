"""What a Sphinx cross-reference shows: `:ref:`proxy-setup`` (reStructuredText) or
{ref}`proxy-setup` (MyST) without a title of its own reads as the title of the section that label
stands above — `.. _proxy-setup:` before a title, `(proxy-setup)=` before a Markdown heading — on
any page of the project. Labels are read from every page once a run; a page's validator holds the
titles its references show, so retitling a section re-reads the pages that link to it.
"""

from __future__ import annotations

import re
from pathlib import Path

from indexer.myst import myst_labels
from indexer.rst import label_key, section_labels

_REF = re.compile(r"(?::ref:|\{ref\})`([^`<]+)`")


def project_labels(paths: list[str], markdown: bool = False) -> dict[str, str]:
    """The section labels of every reStructuredText page among `paths`, and of every Markdown
    (MyST) page when `markdown` (a Sphinx source: a plain Markdown folder is not read twice for them)."""
    kinds = (".rst", ".md") if markdown else (".rst",)
    labels: dict[str, str] = {}
    for path in (p for p in paths if p.lower().endswith(kinds)):
        try:
            raw = Path(path).read_bytes()
        except OSError:
            continue
        if path.lower().endswith(".rst"):
            found = section_labels(raw.decode("utf-8", errors="replace")) if b".. _" in raw else {}
        else:
            found = myst_labels(raw.decode("utf-8", errors="replace")) if b")=" in raw else {}
        labels.update(found)
    return labels


def referenced_titles(raw: bytes, labels: dict[str, str]) -> bytes:
    """The titles a page's references show, for its validator."""
    if not labels or (b":ref:`" not in raw and b"{ref}`" not in raw):
        return b""
    named = {label_key(m) for m in _REF.findall(raw.decode("utf-8", errors="replace"))}
    return "\0".join(f"{name}={labels[name]}" for name in sorted(named) if name in labels).encode()
