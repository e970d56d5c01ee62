"""What a fetched file is: its media type as the server declares it, as its name says when the
server does not know (a download sent as bare bytes), and as its own first bytes show when the
server says text but sends a file."""

from __future__ import annotations

import io
import re
from urllib.parse import unquote, urlsplit

import httpx

from indexer.config import OFFICE_FORMS
from indexer.extract import OLE_MAGIC, ZIP_MAGIC

# What a server sends a file as when it does not know its type (S3 an upload stored without one, a
# download script "attachment" bytes): such a file is read by the extension of its name, as a
# browser saving it would; a PDF served so was skipped as "content type application/octet-stream".
GENERIC_TYPES = frozenset({"application/octet-stream", "binary/octet-stream", "application/x-download", "application/force-download",
                           "application/download", "application/unknown"})
TYPE_OF_SUFFIX = {
    ".pdf": "application/pdf", ".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    ".doc": "application/msword", ".rtf": "application/rtf", ".pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    ".ppt": "application/vnd.ms-powerpoint", ".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    ".xls": "application/vnd.ms-excel", ".odt": "application/vnd.oasis.opendocument.text", ".ods": "application/vnd.oasis.opendocument.spreadsheet",
    ".odp": "application/vnd.oasis.opendocument.presentation", ".epub": "application/epub+zip",
    ".md": "text/markdown", ".markdown": "text/markdown", ".txt": "text/plain",
}
TYPE_OF_SUFFIX |= {form: TYPE_OF_SUFFIX[base] for form, base in OFFICE_FORMS.items()}  # read as the format each is a form of
# The media types servers give those forms, and the format each is read as.
FORM_TYPES = {
    "application/vnd.ms-word.document.macroenabled.12": ".docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.template": ".docx",
    "application/vnd.ms-word.template.macroenabled.12": ".docx", "application/vnd.ms-powerpoint.presentation.macroenabled.12": ".pptx",
    "application/vnd.openxmlformats-officedocument.presentationml.slideshow": ".pptx", "application/vnd.ms-powerpoint.slideshow.macroenabled.12": ".pptx",
    "application/vnd.openxmlformats-officedocument.presentationml.template": ".pptx", "application/vnd.ms-powerpoint.template.macroenabled.12": ".pptx",
    "application/vnd.ms-excel.sheet.macroenabled.12": ".xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.template": ".xlsx",
    "application/vnd.ms-excel.template.macroenabled.12": ".xlsx",
}


def media_type_of(response: httpx.Response) -> str:
    """The response's media type; for a generic one (GENERIC_TYPES), the type its name's extension
    says, when it says one: the name a download gives itself (Content-Disposition), else its URL's.
    Plain text whose name says Markdown is Markdown: GitHub's raw files and most static servers
    send a README.md as text/plain, and it was indexed titled "# Returns", its headings unread."""
    declared = response.headers.get("content-type", "text/html").split(";")[0].strip().lower()
    if declared in FORM_TYPES:
        return TYPE_OF_SUFFIX[FORM_TYPES[declared]]
    if declared in GENERIC_TYPES or declared == "text/plain":
        name = (disposition_name(response.headers.get("content-disposition", "")) or urlsplit(str(response.url)).path.rsplit("/", 1)[-1]).lower()
        named = TYPE_OF_SUFFIX.get(name[name.rfind("."):] if "." in name else "")
        if declared in GENERIC_TYPES:
            return named or declared
        return named if named == "text/markdown" else declared
    return declared


_FILENAME = re.compile(r"""filename\*\s*=\s*[\w-]*'[^']*'([^;]+)|filename\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;]+))""", re.IGNORECASE)


def disposition_name(header: str) -> str:
    """The file name a Content-Disposition header gives ("attachment; filename=\"manual.pdf\"",
    or RFC 6266's filename*=UTF-8''…, which wins); "" when it gives none."""
    names = [(unquote(m.group(1).strip()), True) if m.group(1) else ((m.group(2) or m.group(3) or "").strip(), False) for m in _FILENAME.finditer(header)]
    return next((n for n, extended in names if extended), names[0][0] if names else "")


# The package part each kind of Office Open XML file has, and the OLE stream each Office 97–2003 file does.
_ZIP_PARTS = {"word/document.xml": TYPE_OF_SUFFIX[".docx"], "ppt/presentation.xml": TYPE_OF_SUFFIX[".pptx"], "xl/workbook.xml": TYPE_OF_SUFFIX[".xlsx"]}
_OLE_STREAMS = {"WordDocument": TYPE_OF_SUFFIX[".doc"], "PowerPoint Document": TYPE_OF_SUFFIX[".ppt"], "Workbook": TYPE_OF_SUFFIX[".xls"],
                "Book": TYPE_OF_SUFFIX[".xls"]}
_BOMS = (b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")


def sniffed_type(body: bytes, charset: str | None) -> str | None:
    """What a body sent as text is by its own bytes, when it is not text: a PDF, Rich Text, an
    Office or OpenDocument file or an EPUB (their media type), another container ("application/zip",
    "application/x-ole-storage"), other binary bytes ("application/octet-stream"); None for text.
    An old Apache's default type is text/plain, and a server that misnames a file may call it
    text/html: read as text, a PDF was indexed as "%PDF-1.4 %“Œ‹ž 1 0 obj <<…" for a chatbot to cite."""
    if body.startswith(b"%PDF-"):
        return TYPE_OF_SUFFIX[".pdf"]
    if body.startswith(b"{\\rtf"):
        return TYPE_OF_SUFFIX[".rtf"]
    if body.startswith(ZIP_MAGIC):
        return _zip_type(body)
    if body.startswith(OLE_MAGIC):
        return _ole_type(body)
    wide = (charset or "").lower().replace("-", "").startswith(("utf16", "utf32"))
    head = body[:4096]
    if not wide and not body.startswith(_BOMS) and head.count(b"\x00") * 100 >= len(head):  # a stray NUL in a page is no binary file
        return "application/octet-stream"
    return None


def _zip_type(body: bytes) -> str:
    import zipfile

    try:
        package = zipfile.ZipFile(io.BytesIO(body))
        names = set(package.namelist())
        declared = package.read("mimetype")[:100].decode("ascii", "replace").strip() if "mimetype" in names else ""  # OpenDocument, EPUB
    except (zipfile.BadZipFile, OSError, ValueError, KeyError, EOFError):
        return "application/zip"
    if declared in TYPE_OF_SUFFIX.values():
        return declared
    return next((kind for part, kind in _ZIP_PARTS.items() if part in names), "application/zip")


def _ole_type(body: bytes) -> str:
    import olefile

    try:
        with olefile.OleFileIO(io.BytesIO(body)) as ole:
            return next((kind for name, kind in _OLE_STREAMS.items() if ole.exists(name)), "application/x-ole-storage")
    except (OSError, ValueError, IndexError, TypeError, AssertionError, OverflowError):
        return "application/x-ole-storage"


_HTML_START = re.compile(rb"\s*(?:<!doctype\s+html|<html|<head|<body)", re.IGNORECASE)
_TITLE = re.compile(rb"<title[^>]*>([^<]{1,200})</title>", re.IGNORECASE)


def html_page_title(body: bytes) -> str | None:
    """The title of a body that is an HTML page ("" when it has none), None when it is not one: a
    sign-in or error page a server sends where a PDF was linked."""
    if not _HTML_START.match(body[:1024].lstrip(b"\xef\xbb\xbf")):
        return None
    found = _TITLE.search(body[:65536])
    return " ".join(found.group(1).decode("utf-8", "replace").split()) if found else ""
