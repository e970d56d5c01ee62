"""Turn raw bytes into the text we index: readability for HTML, front matter for Markdown.

The output is Markdown-like plain text: headings as `#` lines (they feed `heading_path`),
list items as `- ` lines, table rows one per line, code fenced. The chunker reads that
structure; readers of a chunk see clean text.
"""

from __future__ import annotations

import codecs
import re
import zipfile
import zlib
from dataclasses import dataclass, field
from datetime import date, datetime, time, timezone
from typing import Callable
from urllib.parse import urljoin

from lxml import etree
from lxml import html as lxml_html

from indexer.anchors import heading_text, html_heading_ids, markdown_anchors, place
from indexer.crosscheck import cross_check
from indexer.errors import ExtractionError
from indexer.frontmatter import split_front_matter
from indexer.markup import strip_markup
from indexer.myst import myst_to_markdown

# What the readers make of the same bytes. Raise it with any change to the text or metadata a file
# is read as: a files source skips reading a file whose bytes (and this) are the last run's.
EXTRACTION_VERSION = 7  # 2: byte order marks read, not kept as text; no base64 data URIs; file-name titles keep their capitals;
#                         titles a program filled in ("Microsoft Word - x.docx", "Untitled Document") give way to the first heading
#                         3: Markdown without HTML comments and tags, Hugo shortcodes and Liquid tags; .mdx read as
#                         Markdown (indexer/markup.py); Hugo's TOML front matter; lastmod / last_modified_at as updated_at;
#                         Word with tracked changes accepted and without hidden text
#                         4: .rst read as reStructuredText (indexer/rst.py), MyST directives and roles (indexer/myst.py),
#                         .adoc as AsciiDoc (indexer/asciidoc.py), .ipynb as notebooks (indexer/notebook.py); MDX partials shown in the pages that import them;
#                         Jekyll's _drafts as drafts; url_rules
#                         5: GitHub slugs keep `_` inside a word (`## cl100k_base` is #cl100k_base); MkDocs', Jekyll's and Hugo's own slugs (url_rules);
#                         Docusaurus 3 heading ids in MDX comments
#                         6: a MyST page's repeated heading gets Sphinx's numbered id (#id1), not the first one's
#                         7: titles and headings past 300 characters cut at a word (indexer/documents.py `shortened`);
#                         a front matter's title given as a list reads as its items, not as the list's Python form
BLOCK_TAGS = {"p", "div", "section", "article", "main", "header", "footer", "aside", "figure", "figcaption", "dl", "dd", "dt", "form", "details", "summary", "center"}
HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
SKIP_TAGS = {"script", "style", "noscript", "template", "svg", "button", "nav"}
XML_DECLARATION = re.compile(r"\A\s*<\?xml[^>]*\?>")
# Titles the writing program filled in, not the author: "Microsoft Word - handbook.docx", a file
# name, "Document1", "Untitled Document", "PowerPoint Presentation", "Slide 1". The first heading names the document better.
PLACEHOLDER_TITLE = re.compile(
    r"microsoft (?:word|powerpoint|excel|office word)\s*-.*|.*\.(?:docx?|pdf|pptx?|xlsx?|odt|odp|rtf|tex|indd|pages|key|txt|md|html?)"
    r"|(?:document|presentation|book|untitled(?: document| page)?)[\s-]*\d*|powerpoint presentation|slide \d+|\(?unspecified\)?|title|none",
    re.IGNORECASE,
)


# What a damaged Office Open XML file (a zip of XML parts) raises in the zip and XML readers: a cut or
# corrupted copy is the file's error ("not a readable …"), not an unexpected one.
DAMAGED_PACKAGE = (zipfile.BadZipFile, zlib.error, NotImplementedError, RuntimeError, EOFError, KeyError, ValueError, SyntaxError)
MAX_PACKAGE_PART_BYTES = 64 * 1024 * 1024  # one XML part that unpacks beyond this is a zip bomb, not a slide or a sheet
_PACKAGE_XML = etree.XMLParser(resolve_entities=False, no_network=True, remove_comments=True)


def package_part(package: zipfile.ZipFile, part: str) -> bytes:
    """One part of an office file or e-book (a zip), its unpacked size bounded; raises one of DAMAGED_PACKAGE."""
    info = package.getinfo(part)
    if info.file_size > MAX_PACKAGE_PART_BYTES:
        raise ValueError(f"{part} unpacks to {info.file_size:,} bytes")
    return package.read(info)


def package_xml(package: zipfile.ZipFile, part: str):
    """One XML part of an office file (a zip: .pptx, .odt…), its unpacked size bounded, entities
    never resolved, nothing fetched; raises one of DAMAGED_PACKAGE."""
    return etree.fromstring(package_part(package, part), _PACKAGE_XML)


# How an OLE compound file begins: an Office 97–2003 file (.doc, .ppt, .xls) renamed to the newer
# extension, or an Office file saved with a password, which is encrypted inside such a container.
OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # an Office 97–2003 file, or a newer one saved with a password
ZIP_MAGIC = b"PK\x03\x04"  # an Office 2007+ or OpenDocument file


def join_blocks(blocks: list[str]) -> str:
    """Blocks separated by blank lines, except consecutive list items, which stay one list."""
    out = ""
    for block in blocks:
        if out:
            out += "\n" if block.lstrip().startswith("- ") and out.rsplit("\n", 1)[-1].lstrip().startswith("- ") else "\n\n"
        out += block
    return out


def own_title(stored: str | None) -> str:
    """A stored title with its spaces squashed, or "" when the writing program filled it in."""
    title = " ".join((stored or "").split())
    return "" if PLACEHOLDER_TITLE.fullmatch(title) else title


# An image inlined as base64 (Typora, Obsidian and Notion exports): kilobytes of noise to embed and match, not text.
DATA_URI = re.compile(r"data:[a-z]+/[\w.+-]+(?:;[\w.+-]+=[\w.+-]+)*;base64,[A-Za-z0-9+/=]*", re.IGNORECASE)
_BASE64 = re.compile(";base64,", re.IGNORECASE)  # what every data URI holds: a search for it is 10× faster than DATA_URI's
# When the date a page changed is not given as `updated_at`: Hugo's `lastmod`, Jekyll's `last_modified_at`.
UPDATED_ALIASES = ("lastmod", "last_modified_at", "last_modified")


# A page whose text a script writes in the browser: the empty mount point of a single-page app
# (React, Vue, Next.js, Gatsby, Svelte) or a <noscript> asking for JavaScript.
APP_SHELL = re.compile(rb"""<div[^>]*\bid=["']?(?:root|app|__next|___gatsby|svelte|q-app)\b["']?[^>]*>\s*</div>|<noscript[^>]*>[^<]*javascript""",
                       re.IGNORECASE)
NEEDS_JAVASCRIPT = ("the page writes its text with JavaScript (a single-page app), and static-rag reads the HTML the server sends: "
                    "index pages the server renders (a prerendered or server-rendered build), or the site's Markdown as a files source")


def empty_page_reason(raw: bytes | str) -> str:
    """Why an HTML page has no text, for its FILE_EXTRACTION_EMPTY error."""
    shell = APP_SHELL.search(raw.encode("utf-8", "replace") if isinstance(raw, str) else raw)
    return f"no main content found: {NEEDS_JAVASCRIPT}" if shell else "no main content found"


@dataclass(frozen=True)
class Extracted:
    title: str
    text: str
    url: str | None = None
    tags: tuple[str, ...] = ()
    authors: tuple[str, ...] = ()
    updated_at: datetime | None = None
    metadata: dict = field(default_factory=dict)
    links: tuple[str, ...] = ()  # absolute http(s) links of an HTML page (none when it says nofollow)
    pages: tuple[int, ...] = ()  # paged formats (PDF): the offset in `text` where each page begins
    anchors: tuple[tuple[int, str], ...] = ()  # (offset in `text`, URL fragment) where a linkable heading begins
    robots: frozenset[str] = frozenset()  # an HTML page's robots meta directives for every crawler or ours (noindex, nofollow, …)
    refresh: str | None = None  # an HTML page's <meta http-equiv="refresh"> target: a redirect stub, not a page


# Longest first: UTF-32 LE's mark begins with UTF-16 LE's.
BYTE_ORDER_MARKS = ((codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF32_LE, "utf-32-le"), (codecs.BOM_UTF32_BE, "utf-32-be"),
                    (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))


def byte_order_mark(body: bytes) -> tuple[str | None, bytes]:
    """The encoding a byte order mark names, and the bytes after it (None and the bytes when
    there is none). Windows editors start UTF-8 files with one, and save "Unicode" text as UTF-16."""
    for mark, encoding in BYTE_ORDER_MARKS:
        if body.startswith(mark):
            return encoding, body[len(mark):]
    return None, body


def decode_file_text(body: bytes, fallback: str = "") -> str:
    """A text file's bytes: UTF-8, or what its byte order mark says; else, when given, the `fallback`
    encoding (a folder of files saved as Windows "ANSI"). UnicodeDecodeError when they are none of them.
    UTF-8 comes first because text in another encoding is almost never valid UTF-8 by chance: a folder
    that mixes the two reads both right."""
    encoding, body = byte_order_mark(body)
    try:
        return body.decode(encoding or "utf-8")
    except UnicodeDecodeError:
        if encoding or not fallback:
            raise
        return body.decode(fallback)


def not_text(exc: UnicodeDecodeError) -> str:
    """What decode_file_text's error means to the person who saved the file."""
    return f"not {exc.encoding.upper()} text (byte {exc.start}: {exc.reason}); save it as UTF-8"


def decode_text(body: bytes, charset: str | None) -> str:
    """Bytes as text in the declared charset; an unknown charset name is read as UTF-8 (bad bytes
    replaced). A byte order mark wins over the declared charset, as in browsers."""
    encoding, body = byte_order_mark(body)
    try:
        return body.decode(encoding or charset or "utf-8", errors="replace")
    except LookupError:
        return body.decode("utf-8", errors="replace")


def extract_markdown(raw: str, fallback_title: str, mdx: bool = False, url: str | Callable[[dict], str | None] | None = None,
                     heading_ids: str = "github", labels: dict[str, str] | None = None) -> Extracted:
    """Front matter (YAML between `---` lines) is metadata, not text: title, url, updated_at, tags, authors.
    HTML comments and tags (and in MDX, components and import / export lines) are not text either.
    `url`: where the page is published when its front matter does not say, or a function of the
    front matter that gives it (a site's `slug`; None: the site publishes no page for it).
    `heading_ids`: whose slugs the site gives its headings (indexer/anchors.py); `labels`: a Sphinx
    project's section labels, for MyST's {ref} (indexer/labels.py)."""
    meta, body = split_front_matter(raw)
    url = _own_url(meta, url(meta) if callable(url) else url)
    text = normalize_text(strip_markup(myst_to_markdown(without_data_uris(body), ids=bool(url), labels=labels), mdx))  # ![logo](data:…) keeps its alt text: ![logo]()
    anchors: tuple = ()
    if url:  # headings can be linked to only where the page is published
        text, anchors = markdown_anchors(text, heading_ids)
    title = _title_text(meta.pop("title", "")) or first_heading(text) or fallback_title
    return Extracted(
        title=title,
        text=text,
        url=url,
        anchors=anchors,
        tags=_str_tuple(meta.pop("tags", ())),
        authors=_str_tuple(meta.pop("authors", meta.pop("author", ()))),
        updated_at=parse_timestamp(meta.pop("updated_at", None) or next((meta[k] for k in UPDATED_ALIASES if meta.get(k)), None)),
        metadata={k: _jsonable(v) for k, v in meta.items()},
    )


def without_data_uris(text: str) -> str:
    """`text` without inline base64 data (an image pasted into Markdown is kilobytes of it: never words)."""
    return DATA_URI.sub("", text) if _BASE64.search(text) else text


def _own_url(meta: dict, published: str | None) -> str | None:
    """Where the page says it is published: front matter `url`, or Jekyll's `permalink`. Hugo and
    Jekyll write them as paths ("/about/"), which a chatbot cannot open: with the source's
    `url_template` (`published`) they are read against its site; without, a path stays a path (a
    widget on the same site can still follow it)."""
    own = _str_or_none(meta.pop("url", None))
    permalink = _str_or_none(meta.get("permalink"))
    if not own and permalink and ":" not in permalink:  # "/:categories/:title/" is a pattern, not a path
        own = permalink
    if own and published and not own.startswith(("http://", "https://")):
        own = urljoin(published, own)
    return own or published


def extract_text(raw: str, fallback_title: str) -> Extracted:
    text = normalize_text(without_data_uris(raw))
    first_line = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return Extracted(title=first_line[:120] if len(first_line) <= 120 else fallback_title, text=text)


def extract_html(raw: bytes | str, url: str | None = None, fallback_title: str = "", encoding: str | None = None) -> Extracted:
    """Main content by readability-lxml, with headings, lists, tables and code kept as structure,
    minus the captions and teasers a second extractor does not see as content (`indexer.crosscheck`).

    Bytes are parsed with `encoding` (e.g. from the Content-Type header) or else the page's
    declared / sniffed charset, the same one readability picks, so titles and text agree.
    """
    from readability import Document as Readability
    from readability.encoding import get_encoding

    if isinstance(raw, bytes):
        try:
            encoding = encoding or get_encoding(raw)
        except LookupError:  # the page declares a charset Python does not know
            encoding = None
        raw = decode_text(raw, encoding)
    # lxml refuses str input that still carries an XML encoding declaration.
    raw = XML_DECLARATION.sub("", raw, count=1)
    try:
        page = lxml_html.fromstring(raw)
    except (ValueError, lxml_html.etree.ParserError) as exc:
        raise ExtractionError(f"not parseable as HTML: {exc}") from None
    title = _without_site_name(_meta(page, "og:title") or _page_title(page), page)  # og:title too: "Refunds - Shop Help" from WordPress SEO plugins
    try:
        summary = Readability(raw, url=url).summary(html_partial=True)
    except Exception as exc:  # readability raises bare Exceptions (Unparseable) for odd pages
        raise ExtractionError(f"readability could not find main content: {exc}") from None
    text = normalize_text(cross_check(html_to_text(lxml_html.fromstring(summary)), raw, url))
    if not own_title(title):  # "Untitled Document": an editor's default
        title = first_heading(text) or fallback_title
    published = parse_timestamp(_meta(page, "article:published_time"))
    modified = parse_timestamp(_meta(page, "article:modified_time") or _meta(page, "og:updated_time"))
    metadata = {"published_at": published.isoformat()} if published else {}
    canonical = _canonical(page, url)
    anchors = place(text, html_heading_ids(page)) if canonical or url else ()
    robots = robots_directives(page)
    return Extracted(
        title=title, text=text, url=canonical, updated_at=modified or published, metadata=metadata,
        links=() if robots & NOFOLLOW else _links(page, url), anchors=anchors, robots=robots, refresh=_refresh_target(page),
    )


def html_to_text(root) -> str:
    lines: list[str] = []
    _walk(root, lines, list_depth=0)
    return "\n".join(lines)


def _walk(node, out: list[str], list_depth: int) -> None:
    tag = node.tag if isinstance(node.tag, str) else ""
    if tag in SKIP_TAGS:
        return
    if tag in HEADINGS:
        text = heading_text(node)
        if text:
            out.extend(["", f"{'#' * HEADINGS[tag]} {text}", ""])
        return
    if tag == "pre":
        code = node.text_content().strip("\n")
        if code.strip():
            out.extend(["", "```", code, "```", ""])
        return
    if tag == "table":
        out.append("")
        for row in node.iter("tr"):
            cells = [_inline(c) for c in row if isinstance(c.tag, str) and c.tag in ("td", "th")]
            if any(cells):
                out.append(" | ".join(cells))
        out.append("")
        return
    if tag in ("ul", "ol"):
        if list_depth == 0:
            out.append("")
        for i, item in enumerate((c for c in node if c.tag == "li"), start=1):
            marker = f"{i}." if tag == "ol" else "-"
            nested = [c for c in item if isinstance(c.tag, str) and c.tag in ("ul", "ol")]
            for n in nested:
                item.remove(n)
            text = _inline(item)
            if text:
                out.append(f"{'  ' * list_depth}{marker} {text}")
            for n in nested:
                _walk(n, out, list_depth + 1)
        if list_depth == 0:
            out.append("")
        return
    if tag == "blockquote":
        text = _inline(node)
        if text:
            out.extend(["", f"> {text}", ""])
        return
    if tag == "br":
        out.append("")
    block = tag in BLOCK_TAGS
    has_block_children = any(isinstance(c.tag, str) and (c.tag in BLOCK_TAGS or c.tag in HEADINGS or c.tag in ("ul", "ol", "pre", "table", "blockquote")) for c in node)
    if block and not has_block_children:
        text = _inline(node)
        if text:
            out.extend(["", text, ""])
        return
    if node.text and node.text.strip():
        out.append(_squash(node.text))
    for child in node:
        _walk(child, out, list_depth)
        if child.tail and child.tail.strip():
            out.append(_squash(child.tail))


def _inline(node) -> str:
    return _squash(node.text_content())


def _squash(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


# Characters that show nothing but split a word for search: a zero-width space (Docusaurus puts
# one in every heading's link), a soft hyphen ("docu&shy;mentation"), a word joiner, a stray BOM.
INVISIBLE = str.maketrans("", "", "\u200b\u00ad\u2060\ufeff")


def normalize_text(text: str) -> str:
    """Unix newlines, no trailing spaces, at most one blank line in a row, no outer blank lines,
    no INVISIBLE characters."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\u00a0", " ").translate(INVISIBLE)
    lines = [line.rstrip() for line in text.split("\n")]
    out: list[str] = []
    for line in lines:
        if line or (out and out[-1]):
            out.append(line)
    return "\n".join(out).strip("\n")


def first_heading(text: str) -> str:
    match = re.search(r"^#{1,6}[ \t]+(.+?)[ \t#]*$", text, re.MULTILINE)
    return match.group(1).strip() if match else ""


def _page_title(page) -> str:
    node = page.find(".//title")
    return _squash(node.text_content()) if node is not None else ""


TITLE_SEPARATOR = re.compile(r"\s+[|–—·•:-]\s+")


def _without_site_name(title: str, page) -> str:
    """"Size guide | Shop Help" → "Size guide": a `<title>` usually ends with the site's name. It
    is cut when the page says its name (`og:site_name`, `application-name`) and the title ends
    with it, or when the part before the first separator is the page's own first heading.
    Anything else is left as it is."""
    cuts = list(TITLE_SEPARATOR.finditer(title))
    if not cuts:
        return title
    site = (_meta(page, "og:site_name") or _meta(page, "application-name")).casefold()
    for cut in cuts:
        if site and title[cut.end():].strip().casefold() == site:
            return title[: cut.start()].strip()
    heading = page.find(".//h1")
    if heading is not None and heading_text(heading).casefold() == title[: cuts[0].start()].strip().casefold():
        return title[: cuts[0].start()].strip()
    return title


def _canonical(page, base: str | None) -> str | None:
    """The page's `<link rel="canonical">` as an absolute http(s) URL, if it declares one."""
    for href in page.xpath("//link[contains(concat(' ', normalize-space(translate(@rel, 'CANONICAL', 'canonical')), ' '), ' canonical ')]/@href"):
        try:
            absolute = urljoin(base or "", href.strip())
        except ValueError:  # e.g. a malformed IPv6 host
            continue
        if absolute.startswith(("http://", "https://")):
            return absolute
    return None


def _links(page, base: str | None) -> tuple[str, ...]:
    """Every `<a href>` as an absolute http(s) URL (resolved against `<base href>` if the page has
    one), first occurrence first, without those marked `rel="nofollow"`."""
    try:
        base = urljoin(base or "", (page.xpath("//base/@href") or [""])[0].strip())
    except ValueError:
        base = base or ""
    links: dict[str, None] = {}
    for anchor in page.iter("a"):
        href = (anchor.get("href") or "").strip()
        if not href or "nofollow" in (anchor.get("rel") or "").lower():
            continue
        try:
            absolute = urljoin(base, href)
        except ValueError:  # a malformed link (e.g. "http://[::1") is no link
            continue
        if absolute.startswith(("http://", "https://")):
            links[absolute] = None
    return tuple(links)


ROBOTS_META = ("robots", "static-rag")  # <meta name> of directives for every crawler, and for ours
NOINDEX, NOFOLLOW = frozenset({"noindex", "none"}), frozenset({"nofollow", "none"})  # "none" is both


def robots_directives(page) -> frozenset[str]:
    lower = "translate(@name, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')"
    return directives(content for name in ROBOTS_META for content in page.xpath(f"//meta[{lower}=$n]/@content", n=name))


def directives(values) -> frozenset[str]:
    """"noindex, nofollow" lists (robots meta contents, X-Robots-Tag values) as one set, lowercase."""
    return frozenset(d.strip().lower() for value in values for d in value.split(",")) - {""}


REFRESH = re.compile(r"\s*\d+(?:\.\d*)?\s*[;,]\s*(?:url\s*=\s*)?(['\"]?)(.+?)\1\s*", re.IGNORECASE)


def _refresh_target(page) -> str | None:
    """Where `<meta http-equiv="refresh" content="0; url=/new/">` sends the reader (Jekyll's
    redirect_from and moved GitHub Pages write such stubs); None for a page that only reloads itself."""
    for content in page.xpath("//meta[translate(@http-equiv, 'REFSH', 'refsh')='refresh']/@content"):
        match = REFRESH.fullmatch(content)
        if match:
            return match.group(2).strip()
    return None


def _meta(page, name: str) -> str:
    for attr in ("property", "name"):
        found = page.xpath(f"//meta[@{attr}=$n]/@content", n=name)
        if found and found[0].strip():
            return found[0].strip()
    return ""


def parse_timestamp(value) -> datetime | None:
    """ISO dates and datetimes (YAML may already have parsed them); naive times are taken as UTC."""
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        parsed = value
    elif isinstance(value, date):
        parsed = datetime(value.year, value.month, value.day)
    else:
        try:
            parsed = datetime.fromisoformat(str(value).strip().replace("Z", "+00:00"))
        except ValueError:
            return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)


def _str_or_none(value) -> str | None:
    return str(value).strip() or None if value is not None else None


def _title_text(value) -> str:
    """A front matter's title as text: `title: [Setup, Linux]` reads "Setup, Linux", not the
    list's Python form; a mapping is no title (the first heading names the page)."""
    if isinstance(value, (list, tuple)):
        return ", ".join(_str_tuple(value))
    return "" if isinstance(value, dict) or value is None else str(value).strip()


def _str_tuple(value) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [v for v in value.split(",")]
    if not isinstance(value, (list, tuple)):
        return ()
    return tuple(str(v).strip() for v in value if str(v).strip())


def _jsonable(value):
    if isinstance(value, (datetime, date, time)):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value
