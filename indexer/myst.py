"""MyST Markdown (Sphinx with Markdown, Jupyter Book, Read the Docs) as the built page reads: its
directives are fences with a name in braces — ```{note} … ``` or :::{warning} … ::: —, its roles
{ref}`Title <label>`, its targets `(label)=` lines and its comments `%` lines.

Its headings get the ids Sphinx gives their sections (docutils', not GitHub's slugs). Read as
plain Markdown, a `{note}` was code (kept as written, "```{note}" and all), a role read
"{ref}`…`", a target was words. The directives read as indexer/rst.py reads their reStructuredText
twins: admonitions keep their words ("Note: …"), code stays code, `toctree` and `image` go,
`eval-rst` is read as reStructuredText. A fence whose name MyST does not define (Quarto's ```{r},
```{python}) is code and stays as written.
"""

from __future__ import annotations

import re

from indexer.rst import ADMONITIONS, API, CODE, SILENT, DocutilsIds, admonition_text, api_text, label_key, role_text, rst_to_markdown

_OPEN = re.compile(r"^[ \t]*(`{3,}|~{3,}|:{3,})\{([\w:.+-]+)\}[ \t]*(.*)$")
_ANY_OPEN = re.compile(r"^[ \t]*(?:`{3,}|~{3,}|:{3,})\{[\w:.+-]+\}", re.MULTILINE)
_CODE_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})")
# An inline code span, or a role: a code span right after {name}. Spans are read left to right, so a
# `{ident}` inside code is code.
_SPAN = re.compile(r"(?:\{(?:[\w.+-]+:)*([\w.+-]+)\})?(`+)(.+?)\2")
_HEADING = re.compile(r"(#{1,6}) +(.+?)[ \t#]*$")
_TARGET = re.compile(r"[ \t]*\([\w.:-]+\)=[ \t]*")
_OPTION = re.compile(r"[ \t]*:[\w-]+:")
CONTENT = {"tab-set", "tab-item", "tab", "tabbed", "dropdown", "card", "grid", "grid-item", "grid-item-card", "card-carousel",
           "margin", "sidebar", "topic", "epigraph", "pull-quote", "highlights", "glossary", "list-table", "table", "csv-table",
           "rubric", "container", "div", "centered", "hlist", "figure", "panels", "compound", "line-block", "parsed-literal"}
TITLED = {"tab-item", "tab", "dropdown", "card", "grid-item-card", "topic", "sidebar", "rubric", "table", "list-table", "csv-table"}


def myst_to_markdown(text: str, ids: bool = True, labels: dict[str, str] | None = None) -> str:
    """`text` with its MyST directives, roles, targets and comments read; Markdown that has none is
    returned as it is. `ids`: give each heading Sphinx's id (only where the page is published);
    `labels`: the project's section labels, for a {ref} without a title (indexer/labels.py)."""
    if "{" not in text or not (_ANY_OPEN.search(text) or ("}`" in text and any(m.group(1) for m in _SPAN.finditer(text)))):
        return text  # not MyST: its `%` lines and `(x)=` lines are text
    lines = text.split("\n")
    out: list[str] = []
    section_ids = DocutilsIds() if ids else None
    i = 0
    while i < len(lines):
        line = lines[i]
        opened = _OPEN.match(line)
        if opened:
            fence, name, argument = opened.groups()
            end = _closing(lines, i + 1, fence)
            read = _directive(name, argument.strip(), lines[i + 1:end], lines[i:end + 1], labels)
            out.append(f"\n{read}\n" if read else "")  # a block of its own
            i = end + 1
            continue
        code = _CODE_FENCE.match(line)
        if code:  # plain code, to its closing fence, as written
            end = _closing(lines, i + 1, code.group(1))
            out.extend(lines[i:end + 1])
            i = end + 1
            continue
        if not _TARGET.fullmatch(line) and not line.lstrip().startswith("%"):
            line = _SPAN.sub(lambda span: _role(span, labels), line) if "}`" in line else line
            out.append(_with_id(line, section_ids) if section_ids else line)
        i += 1
    return "\n".join(out)  # normalize_text takes the blank lines a block left down to one


def _with_id(line: str, section_ids: DocutilsIds) -> str:
    """A heading with the id Sphinx gives its section (docutils', not GitHub's slug: `acme_cli 2.0`
    is #acme-cli-2-0; a title repeated on the page is #id1, #id2, …), so that a hit links to it; a
    line that is no heading, or names its id, as it is."""
    heading = _HEADING.match(line)
    if not heading or "{#" in line:
        return line
    return f"{line} {{#{section_ids.next(heading.group(2).replace('`', ''))}}}"


def _role(span: re.Match, labels: dict[str, str] | None = None) -> str:
    return role_text(span.group(1), span.group(3), labels) if span.group(1) else span.group(0)


_LABELED_HEADING = re.compile(r"^\(([\w.:-]+)\)=[ \t]*\n(?:[ \t]*\n)*#{1,6} +(.+?)[ \t#]*$", re.MULTILINE)


def myst_labels(text: str) -> dict[str, str]:
    """Each target (`(proxy-setup)=`) right above a heading, with the heading's words."""
    return {label_key(m.group(1)): " ".join(_SPAN.sub(_role, m.group(2)).replace("`", "").split()) for m in _LABELED_HEADING.finditer(text)}


def _closing(lines: list[str], start: int, fence: str) -> int:
    """The index of the line that closes `fence` (the same character, at least as many, alone), or the last line."""
    closer = re.compile(rf"[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*")
    for j in range(start, len(lines)):
        if closer.fullmatch(lines[j]):
            return j
    return len(lines) - 1


def _directive(name: str, argument: str, body: list[str], written: list[str], labels: dict[str, str] | None) -> str:
    kind = name.split(":")[-1].lower()
    body = _without_options(body)
    if kind in CODE or kind == "code-cell":
        language = argument.split()[0] if argument else ""
        return f"```{language}\n" + "\n".join(body).strip("\n") + "\n```"
    if kind == "eval-rst":
        return rst_to_markdown("\n".join(body), ids=False, labels=labels)
    if kind in SILENT:
        return ""
    content = myst_to_markdown("\n".join(body), ids=False, labels=labels).strip()
    if kind in ADMONITIONS:
        return admonition_text(kind, argument, content)
    if kind in API:
        return api_text(argument, content)
    if kind in CONTENT:
        return "\n\n".join(part for part in (argument if kind in TITLED else "", content) if part)
    return "\n".join(written)  # not MyST's: code such as Quarto's ```{r}


def _without_options(body: list[str]) -> list[str]:
    """A directive's body without its options: `:key: value` lines, or a `---` YAML block, at its top."""
    if body and body[0].strip() == "---":
        for j in range(1, len(body)):
            if body[j].strip() == "---":
                return body[j + 1:]
        return body
    k = 0
    while k < len(body) and _OPTION.match(body[k]):
        k += 1
    return body[k:]
