"""EPUB books → Markdown-like text: a manual, a handbook or a report published as an e-book. Its
chapters (the spine's XHTML documents, in reading order) are read as HTML pages are, with their
headings, lists and tables; the navigation document (a generated table of contents), auxiliary
documents the spine marks non-linear, notes and their marks, and pictures are left out. The package's
metadata give the title, authors, subjects (→ tags) and the modification date. A book whose
chapters are encrypted (DRM) says so.
"""

from __future__ import annotations

import io
import posixpath
import zipfile
from urllib.parse import unquote

from lxml import etree
from lxml import html as lxml_html

from indexer.extract import (
    DAMAGED_PACKAGE, ExtractionError, Extracted, first_heading, html_to_text, join_blocks, normalize_text, own_title, package_part,
    package_xml, parse_timestamp,
)

KIND = "EPUB book"
CONTAINER = "{urn:oasis:names:tc:opendocument:xmlns:container}"
OPF = "{http://www.idpf.org/2007/opf}"
DC = "{http://purl.org/dc/elements/1.1/}"
ENC = "{http://www.w3.org/2001/04/xmlenc#}"
CHAPTER_TYPES = ("application/xhtml+xml", "text/html", "application/x-dtbook+xml")
# Footnote marks and the notes themselves (EPUB 3 semantics, and the ARIA roles Pandoc writes):
# left out, as a Word file's footnotes are.
NOTES = frozenset({"noteref", "footnote", "footnotes", "endnote", "endnotes", "rearnote", "rearnotes", "doc-noteref", "doc-footnote",
                   "doc-endnote", "doc-endnotes"})


def extract_epub(raw: bytes, fallback_title: str) -> Extracted:
    try:
        with zipfile.ZipFile(io.BytesIO(raw)) as book:
            return _extracted(book, fallback_title)
    except ExtractionError:
        raise  # already says what is wrong (a ValueError too, which the line below would wrap)
    except (etree.XMLSyntaxError, *DAMAGED_PACKAGE) as exc:
        raise ExtractionError(f"not a readable {KIND} ({type(exc).__name__}: {exc})") from None


def _extracted(book: zipfile.ZipFile, fallback_title: str) -> Extracted:
    rootfile = package_xml(book, "META-INF/container.xml").find(f".//{CONTAINER}rootfile")
    if rootfile is None or not rootfile.get("full-path"):
        raise ExtractionError(f"not a readable {KIND}: META-INF/container.xml names no package document")
    opf_path = rootfile.get("full-path")
    package = package_xml(book, opf_path)
    folder = posixpath.dirname(opf_path)
    manifest = {item.get("id"): item for item in package.iter(f"{OPF}item")}
    encrypted = _encrypted(book)
    chapters = []
    for itemref in package.iter(f"{OPF}itemref"):
        item = manifest.get(itemref.get("idref"))
        if item is None or itemref.get("linear") == "no" or "nav" in (item.get("properties") or "").split():
            continue
        if item.get("media-type") not in CHAPTER_TYPES:
            continue
        path = posixpath.normpath(posixpath.join(folder, unquote(item.get("href") or "")))
        if path in encrypted:
            raise ExtractionError(f"not a readable {KIND}: its chapters are encrypted (DRM); index a DRM-free copy or its PDF")
        chapters.append(_chapter_text(book, path))
    metadata = package.find(f"{OPF}metadata")
    if metadata is None:
        metadata = etree.Element("metadata")
    title = own_title(_first(metadata, f"{DC}title"))
    text = normalize_text(join_blocks([c for c in chapters if c]))
    modified = next((m.text for m in metadata.iter(f"{OPF}meta") if m.get("property") == "dcterms:modified" and m.text), None)
    return Extracted(
        title=title or first_heading(text) or fallback_title,
        text=text,
        authors=tuple(dict.fromkeys(" ".join(c.text.split()) for c in metadata.iter(f"{DC}creator") if c.text and c.text.strip())),
        tags=tuple(dict.fromkeys(" ".join(s.text.split()) for s in metadata.iter(f"{DC}subject") if s.text and s.text.strip())),
        updated_at=parse_timestamp(modified or _first(metadata, f"{DC}date")),
    )


def _chapter_text(book: zipfile.ZipFile, path: str) -> str:
    data = package_part(book, path)
    if not data.strip():
        return ""
    try:
        page = lxml_html.document_fromstring(data)
    except (etree.ParserError, ValueError):
        return ""
    etree.strip_elements(page, etree.Comment, etree.ProcessingInstruction, with_tail=False)  # not text, but html_to_text would print them
    for element in list(page.iter()):
        kinds = set((element.get("epub:type") or "").split()) | set((element.get("role") or "").split())
        if kinds & NOTES and element.getparent() is not None:
            element.drop_tree()  # keeps the text after it (its tail)
    body = page.find("body")
    return html_to_text(body if body is not None else page).strip()


def _encrypted(book: zipfile.ZipFile) -> set[str]:
    """Paths the book's encryption.xml lists (fonts are often obfuscated so; chapters only under DRM)."""
    if "META-INF/encryption.xml" not in book.namelist():
        return set()
    listed = package_xml(book, "META-INF/encryption.xml")
    return {posixpath.normpath(unquote(ref.get("URI") or "")) for ref in listed.iter(f"{ENC}CipherReference")}


def _first(metadata, tag: str) -> str:
    found = next(metadata.iter(tag), None)  # anywhere inside: EPUB 2 writers may nest it in <dc-metadata>
    return " ".join((found.text or "").split()) if found is not None else ""

