"""reStructuredText (Sphinx, Read the Docs) as the Markdown the rest of the reader understands: what a
reader of the built page sees, with its structure.

- Section titles (underlined, or over- and underlined) become `#` headings, levels in the order
  their styles first appear, each with the id docutils gives it (`{#id}`), so hits link to them.
- Directives: code (`code-block`, `::` literal blocks, `doctest`) becomes fenced code; admonitions
  (`note`, `warning`, `versionadded`, ...) keep their text after their name ("Note: ..."); an API
  entry (`.. function:: connect(host)`) keeps its signature and text; what draws no text on the
  page (`toctree`, `image`, `index`, `include`, `raw`, `meta`, automodule's) and comments, link
  targets and substitution definitions are left out; any other directive keeps its text.
- Inline markup reads as its words: ``code`` as `code`, :role:`title <target>` as its title
  (:func:`~pkg.mod.connect` as `connect`; :ref:`label` as the title of the section the label
  stands above, on any page: indexer/labels.py), `link <url>`_ as "link", footnote marks go.
Without docutils: Sphinx's roles and directives are not docutils', and a reader that fails on
them would index nothing of the page.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

from indexer.partials import included_file

ADORNMENT = re.compile(r"""([!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~])\1{2,}\s*""")
DIRECTIVE = re.compile(r"\.\.\s+(?:\|[^|]+\|\s+)?([\w:.+-]+)::(?:\s+(.*))?")
CODE = {"code-block", "code", "sourcecode", "doctest", "testcode", "testoutput", "testsetup", "parsed-literal", "math", "productionlist"}
SILENT = {"toctree", "index", "include", "literalinclude", "raw", "image", "meta", "contents", "highlight", "currentmodule", "module",
          "sectionauthor", "moduleauthor", "codeauthor", "tabularcolumns", "role", "default-role", "title",
          "automodule", "autoclass", "autofunction", "automethod", "autoattribute", "autodata", "autoexception", "autosummary",
          "graphviz", "inheritance-diagram", "plot", "mermaid", "include-markdown", "program", "default-domain", "sidebar-links"}
ADMONITIONS = {"note", "warning", "tip", "important", "caution", "danger", "attention", "hint", "error", "seealso", "todo",
               "versionadded", "versionchanged", "deprecated", "versionremoved", "admonition"}
API = {"function", "class", "method", "attribute", "data", "exception", "decorator", "decoratormethod", "classmethod",
       "staticmethod", "property", "envvar", "option", "describe", "object", "type", "module-level", "confval"}
FILE_WIDE = {"orphan", "nocomments", "nosearch", "tocdepth", "hide-toc", "hide-navigation", "og:description", "html_theme.sidebar_secondary.remove"}

_ROLE = re.compile(r":(?:[\w.+-]+:)*([\w.+-]+):`([^`]+)`")
_LITERAL = re.compile(r"``(.+?)``")
_LINK = re.compile(r"`([^`<]*?)\s*<[^`>]*>`__?")
_NAMED_REF = re.compile(r"`([^`]+)`__?")
_WORD_REF = re.compile(r"(?<=[A-Za-z0-9])__?(?=[\s.,;:!?)\]]|$)")
_FOOTNOTE_REF = re.compile(r"\s?\[(?:#[\w-]*|\*|\d+|[A-Za-z][\w.-]*)\]_")
_SUBSTITUTION = re.compile(r"\|([^|\s][^|]*?)\|(?:__?)?")
CODE_ROLES = {"func", "meth", "class", "mod", "attr", "data", "exc", "obj", "const", "envvar", "file", "command", "program",
              "option", "samp", "kbd", "code", "member", "var", "type", "macro", "struct", "enum", "confval"}


def rst_to_markdown(text: str, ids: bool = True, file: Path | None = None, site: Path | None = None,
                    labels: dict[str, str] | None = None) -> str:
    """`text` (reStructuredText) as Markdown; see the module's docstring. `ids`: each heading's
    docutils id as `{#id}` (which the Markdown reader takes for a link target only where the page
    is published: without a URL, leave them out). `file` and `site`: where the text is, so that an
    `.. include::` of a file inside `site` shows that file's text (indexer.partials.included_file).
    `labels`: the project's section labels (indexer/labels.py), so that a `:ref:` without a title
    reads as the title of the section it names, as Sphinx shows it."""
    lines = text.replace("\r\n", "\n").expandtabs(8).split("\n")
    substitutions = {m.group(1): m.group(2).strip() for m in re.finditer(r"^\.\.\s+\|([^|]+)\|\s+replace::\s*(.*)$", text, re.MULTILINE)}
    converter = _Converter(substitutions, ids, site, labels or {})
    return re.sub(r"\n{3,}", "\n\n", converter.convert(lines, file)).strip() + "\n"


class _Converter:
    def __init__(self, substitutions: dict[str, str], ids: bool, site: Path | None, labels: dict[str, str]):
        self.substitutions = substitutions
        self.labels = labels
        self.with_ids = ids
        self.site = site
        self.files: list[Path] = []  # the file being read, and each that included it
        self.styles: list[tuple[str, bool]] = []  # heading styles in the order they first appear
        self.ids = DocutilsIds()

    def convert(self, lines: list[str], file: Path | None = None) -> str:
        if file is not None:
            self.files.append(file)
            try:
                return self.convert(lines)
            finally:
                self.files.pop()
        out: list[str] = []
        i, n = 0, len(lines)
        while i < n:
            line = lines[i]
            stripped = line.strip()
            if not stripped:
                out.append("")
                i += 1
                continue
            heading = self._heading(lines, i, out)
            if heading:
                title, used = heading
                out.append(title)
                i += used
                continue
            if stripped.startswith(".. ") or stripped == "..":
                block, i = _block(lines, i)
                out.append(self._explicit(stripped, block))
                continue
            if ADORNMENT.fullmatch(stripped) or re.fullmatch(r"[+=|-][-=+| ]*[+=|]|=+( +=+)+|-+( +-+)+", stripped):
                i += 1  # a transition, or a table's border
                continue
            if stripped.endswith("::") and not DIRECTIVE.match(stripped):
                said = stripped[:-2].rstrip()
                if said:
                    out.append(self._inline(said + (":" if not stripped.endswith(" ::") else "")))
                block, i = _block(lines, i)
                if block:
                    out.append("\n```\n" + "\n".join(_dedent(block)).strip("\n") + "\n```\n")
                continue
            if stripped.startswith("|") and stripped.endswith("|") and len(stripped) > 1:  # a grid table's row
                out.append(" | ".join(self._inline(c.strip()) for c in stripped.strip("|").split("|") if c.strip()))
            elif re.fullmatch(r":([\w:.-]+):.*", stripped) and stripped.split(":")[1] in FILE_WIDE:
                pass
            elif stripped.startswith("| "):  # a line block
                out.append(self._inline(stripped[2:]))
            else:
                out.append(self._inline(re.sub(r"^#\.\s", "- ", stripped)))
            i += 1
        return "\n".join(out)

    def _heading(self, lines: list[str], i: int, out: list[str]) -> tuple[str, int] | None:
        """A section title at line i: (its Markdown heading, lines it takes), or None."""
        line = lines[i]
        n = len(lines)
        if out and out[-1].strip() and not out[-1].startswith("#"):
            return None  # a title starts a block
        over = ADORNMENT.fullmatch(line.strip()) and not line[:1].isspace()
        if over and i + 2 < n and lines[i + 1].strip() and ADORNMENT.fullmatch(lines[i + 2].strip() or "-") \
                and lines[i + 2].strip()[0] == line.strip()[0]:
            return self._title(lines[i + 1].strip(), (line.strip()[0], True)), 3
        if line[:1].isspace() or i + 1 >= n or ADORNMENT.fullmatch(line.strip()):
            return None
        under = lines[i + 1].rstrip()
        if ADORNMENT.fullmatch(under) and not under[:1].isspace() and len(under) >= min(len(line.strip()), 4):
            return self._title(line.strip(), (under[0], False)), 2
        return None

    def _title(self, raw: str, style: tuple[str, bool]) -> str:
        if style not in self.styles:
            self.styles.append(style)
        words = self._inline(raw).replace("`", "")
        anchor = self.ids.next(words)
        level = "#" * min(self.styles.index(style) + 1, 6)
        return f"{level} {words} {{#{anchor}}}" if self.with_ids else f"{level} {words}"

    def _explicit(self, first: str, block: list[str]) -> str:
        """An explicit markup block: a directive, a footnote, or a comment / target / substitution (nothing)."""
        found = DIRECTIVE.match(first)
        if not found:
            footnote = re.match(r"\.\.\s+\[[^\]]+\]\s+(.*)", first)
            if footnote:
                return self._inline(" ".join([footnote.group(1), *(b.strip() for b in block)]))
            return ""  # a comment, a link target or a substitution definition
        name = found.group(1).split(":")[-1].lower()
        argument = (found.group(2) or "").strip()
        if first.startswith(".. |"):
            return ""
        if name == "include" and self.files and self.site:
            return self._include(argument, block)
        content = _dedent(_without_options(block))
        if name in SILENT:
            return ""
        if name in CODE:
            language = argument.split()[0] if argument and name in ("code-block", "code", "sourcecode") else ""
            return f"\n```{language}\n" + "\n".join(content).strip("\n") + "\n```\n"
        body = self.convert(content).strip() if content else ""
        if name in ADMONITIONS:
            return admonition_text(name, self._inline(argument), body)
        if name in API or found.group(1).startswith(("py:", "c:", "cpp:", "js:", "rst:", "std:")):
            return api_text(argument, body)
        return "\n\n".join(part for part in (self._inline(argument) if name in ("rubric", "topic", "sidebar") else "", body) if part)

    def _include(self, target: str, block: list[str]) -> str:
        """The text of an included file (its :start-after: / :end-before: part), read in place."""
        path = included_file(target, self.files[-1], self.site)
        if path is None or path in self.files or len(self.files) > 5:
            return ""
        try:
            text = path.read_text(encoding="utf-8-sig")
        except (OSError, UnicodeDecodeError):
            return ""
        options = dict(re.findall(r"^\s*:([\w-]+):\s*(.*?)\s*$", "\n".join(block), re.MULTILINE))
        if options.get("start-after") and options["start-after"] in text:
            text = text.split(options["start-after"], 1)[1]
        if options.get("end-before") and options["end-before"] in text:
            text = text.split(options["end-before"], 1)[0]
        lines = text.replace("\r\n", "\n").expandtabs(8).split("\n")
        if "literal" in options or "code" in options:
            return "\n```\n" + "\n".join(lines).strip("\n") + "\n```\n"
        if path.suffix.lower() in (".md", ".markdown"):  # MyST's include of Markdown: read as it is
            return "\n".join(lines)
        return self.convert(lines, path)

    def _inline(self, text: str) -> str:
        text = _FOOTNOTE_REF.sub("", text)
        text = _ROLE.sub(lambda m: role_text(m.group(1), m.group(2), self.labels), text)
        text = _LITERAL.sub(lambda m: f"`{m.group(1)}`", text)
        text = _LINK.sub(lambda m: m.group(1), text)
        text = _NAMED_REF.sub(lambda m: m.group(1), text)
        text = _WORD_REF.sub("", text)
        return _SUBSTITUTION.sub(lambda m: self.substitutions.get(m.group(1), m.group(1)), text)


def rst_empty_reason(raw: bytes) -> str:
    """Why a page read as no text: Sphinx builds its text from elsewhere (`.. automodule::`,
    `.. cmake-module::`, an include outside the folder)."""
    named = sorted({m.decode() for m in re.findall(rb"^\.\.\s+([\w:.+-]+)::", raw, re.MULTILINE)} - {"toctree", "index", "meta", "contents"})
    if not named:
        return "no text found"
    return (f"no text of its own: Sphinx builds it from elsewhere ({', '.join(f'.. {n}::' for n in named[:3])}); "
            "to index such pages, index the built site (a urls source with its sitemap)")


def admonition_text(name: str, argument: str, body: str) -> str:
    """An admonition as its words: "Note: …", "Version added 2.1: …", a generic one's own title."""
    label = argument if name == "admonition" else name.replace("version", "version ").capitalize()
    if name.startswith(("version", "deprecated")) and argument:
        label = f"{label} {argument}"
    elif argument and name != "admonition":
        body = f"{argument} {body}".strip()
    return f"{label}: {body}".strip()


def api_text(signature: str, body: str) -> str:
    """An API entry (`.. function:: connect(host)`): its signature as code, then its text."""
    return "\n\n".join(part for part in (f"`{signature}`" if signature else "", body) if part)


def role_text(role: str, content: str, labels: dict[str, str] | None = None) -> str:
    """What a role shows: its title, or its target's last name; a `:ref:` without a title, the
    title of the section its label names (`labels`), when known."""
    role = role.lower()
    titled = re.fullmatch(r"(.*?)\s*<([^<>]*)>", content, re.DOTALL)
    if titled and titled.group(1):
        content = titled.group(1)
    elif role == "ref" and labels and (title := labels.get(label_key(content))):
        return title
    elif content.startswith("~"):
        content = content[1:].rsplit(".", 1)[-1]
    content = content.lstrip("!")
    if role == "rfc":
        return f"RFC {content}"
    if role == "pep":
        return f"PEP {content}"
    return f"`{content}`" if role in CODE_ROLES else content


_LABELS = re.compile(r"^\.\.[ \t]+_(`?)([^`\n]+?)\1:[ \t]*\n(?:[ \t]*\n)*", re.MULTILINE)  # labels, then blank lines


def label_key(label: str) -> str:
    """A label as Sphinx keys it: lower case, its spaces one."""
    return " ".join(label.lower().split())


def section_labels(text: str) -> dict[str, str]:
    """Each label (`.. _install-guide:`) right above a section title of `text`, with the title's
    words: what Sphinx shows for a `:ref:` that gives no title of its own."""
    if ".. _" not in text:
        return {}
    text = text.replace("\r\n", "\n")
    found: dict[str, str] = {}
    waiting: list[str] = []
    for label in _LABELS.finditer(text):
        waiting.append(label_key(label.group(2)))
        after = text[label.end():label.end() + 600].split("\n", 3)  # what follows: another label, or the title
        if after[0].startswith(".. _") and _LABELS.match(after[0] + "\n"):
            continue
        title = _title_at(after)
        if title:
            found.update(dict.fromkeys(waiting, title))
        waiting = []
    return found


def _title_at(lines: list[str]) -> str | None:
    """The words of the section title that starts `lines` (over- and underlined, or underlined), or None."""
    line, n = lines[0].rstrip(), len(lines)
    if ADORNMENT.fullmatch(line) and n > 2 and lines[1].strip() and lines[2].strip()[:1] == line[:1]:
        raw = lines[1].strip()
    elif not line[:1].isspace() and n > 1 and ADORNMENT.fullmatch(lines[1].rstrip()) and not lines[1][:1].isspace():
        raw = line.strip()
    else:
        return None
    return _Converter({}, False, None, {})._inline(raw).replace("`", "").strip() or None


class DocutilsIds:
    """The ids docutils gives a page's section titles, in order: `make_id` of the title; a taken
    or empty one is id1, id2, … (docutils counts the ids it makes up apart from named ones)."""

    def __init__(self):
        self.used: set[str] = set()
        self.numbered = 0

    def next(self, title: str) -> str:
        anchor = make_id(title)
        while anchor in self.used or not anchor:
            self.numbered += 1
            anchor = f"id{self.numbered}"
        self.used.add(anchor)
        return anchor


def make_id(text: str) -> str:
    """The id docutils gives a section title (docutils.nodes.make_id)."""
    ascii_text = unicodedata.normalize("NFKD", text.lower()).encode("ascii", "ignore").decode("ascii")
    return re.sub(r"^[-0-9]+|-+$", "", re.sub(r"[^a-z0-9]+", "-", " ".join(ascii_text.split())))


def _block(lines: list[str], i: int) -> tuple[list[str], int]:
    """The indented lines after line i (blank lines within kept), and the index after them."""
    start = len(lines[i]) - len(lines[i].lstrip())
    j, block = i + 1, []
    while j < len(lines) and (not lines[j].strip() or len(lines[j]) - len(lines[j].lstrip()) > start):
        block.append(lines[j])
        j += 1
    while block and not block[-1].strip():
        block.pop()
        j -= 1
    return block, j


def _without_options(block: list[str]) -> list[str]:
    """A directive's block without its `:option: value` lines (the first lines, up to a blank one)."""
    k = 0
    while k < len(block) and re.match(r"\s*:[\w-]+:", block[k]):
        k += 1
    return block[k:]


def _dedent(block: list[str]) -> list[str]:
    indents = [len(b) - len(b.lstrip()) for b in block if b.strip()]
    cut = min(indents) if indents else 0
    return [b[cut:] for b in block]
