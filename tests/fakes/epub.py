"""EPUB 3 books as Pandoc and Calibre write them: the `mimetype` entry first and stored, the
container pointing at the package document, a navigation document (a table of contents, listed
in the spine as Pandoc lists it), a cover page with a picture, XHTML chapters, and optionally an
encryption.xml that lists obfuscated fonts (harmless) or the chapters themselves (DRM)."""

from __future__ import annotations

import zipfile
from html import escape
from pathlib import Path

XHTML = ('<?xml version="1.0" encoding="UTF-8"?>\n<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops">'
         '<head><title>{title}</title><link rel="stylesheet" href="../css/book.css"/></head><body>{body}</body></html>')


def make_epub(path: Path, chapters: list[tuple[str, str]], title: str, author: str, subjects: tuple[str, ...] = (),
              modified: str = "2026-11-02T08:00:00Z", notes: str | None = None, drm: bool = False) -> None:
    """`chapters`: (title, XHTML body) pairs; `notes`: the body of a non-linear notes document."""
    files = {f"text/ch{i:02d}.xhtml": XHTML.format(title=escape(t), body=body) for i, (t, body) in enumerate(chapters, 1)}
    toc = "".join(f'<li><a href="text/ch{i:02d}.xhtml">{escape(t)}</a></li>' for i, (t, _) in enumerate(chapters, 1))
    files["nav.xhtml"] = XHTML.format(title="Contents", body=f'<nav epub:type="toc" id="toc"><h1>Contents</h1><ol>{toc}</ol></nav>')
    files["text/cover.xhtml"] = XHTML.format(title="Cover", body='<section epub:type="cover"><img src="../media/cover.png" alt=""/></section>')
    if notes:
        files["text/notes.xhtml"] = XHTML.format(title="Notes", body=notes)
    items = "".join(f'<item id="ch{i:02d}" href="text/ch{i:02d}.xhtml" media-type="application/xhtml+xml"/>' for i in range(1, len(chapters) + 1))
    spine = "".join(f'<itemref idref="ch{i:02d}"/>' for i in range(1, len(chapters) + 1))
    meta = "".join(f"<dc:subject>{escape(s)}</dc:subject>" for s in subjects)
    opf = (f'<?xml version="1.0" encoding="UTF-8"?>\n<package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="id">'
           f'<metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:identifier id="id">urn:uuid:0b5f3c1e-1d2e-4c1a-9d7e-4a1f0c2b3a4d</dc:identifier>'
           f'<dc:title>{escape(title)}</dc:title><dc:creator>{escape(author)}</dc:creator><dc:language>en</dc:language>{meta}'
           f'<meta property="dcterms:modified">{modified}</meta></metadata>'
           f'<manifest><item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>'
           f'<item id="cover" href="text/cover.xhtml" media-type="application/xhtml+xml"/>'
           f'<item id="cover-image" href="media/cover.png" media-type="image/png" properties="cover-image"/>'
           f'<item id="css" href="css/book.css" media-type="text/css"/>{items}'
           + ('<item id="notes" href="text/notes.xhtml" media-type="application/xhtml+xml"/>' if notes else "")
           + f'</manifest><spine><itemref idref="cover"/><itemref idref="nav"/>{spine}'
           + ('<itemref idref="notes" linear="no"/>' if notes else "") + "</spine></package>")
    encrypted = [f"EPUB/text/ch{i:02d}.xhtml" for i in range(1, len(chapters) + 1)] if drm else ["EPUB/fonts/serif.otf"]
    encryption = ('<?xml version="1.0" encoding="UTF-8"?>\n<encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container" '
                  'xmlns:enc="http://www.w3.org/2001/04/xmlenc#">'
                  + "".join(f'<enc:EncryptedData><enc:EncryptionMethod Algorithm="http://www.idpf.org/2008/embedding"/>'
                            f'<enc:CipherData><enc:CipherReference URI="{uri}"/></enc:CipherData></enc:EncryptedData>' for uri in encrypted)
                  + "</encryption>")
    with zipfile.ZipFile(path, "w") as book:
        book.writestr(zipfile.ZipInfo("mimetype"), "application/epub+zip")  # first and stored, as the format requires
        book.writestr("META-INF/container.xml", '<?xml version="1.0"?>\n<container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">'
                      '<rootfiles><rootfile full-path="EPUB/content.opf" media-type="application/oebps-package+xml"/></rootfiles></container>')
        book.writestr("META-INF/encryption.xml", encryption, zipfile.ZIP_DEFLATED)
        book.writestr("EPUB/content.opf", opf, zipfile.ZIP_DEFLATED)
        book.writestr("EPUB/css/book.css", "body { font-family: serif; }", zipfile.ZIP_DEFLATED)
        book.writestr("EPUB/media/cover.png", b"\x89PNG\r\n\x1a\n")
        book.writestr("EPUB/fonts/serif.otf", b"\x00\x01\x00\x00 obfuscated")
        for name, content in files.items():
            book.writestr(f"EPUB/{name}", content, zipfile.ZIP_DEFLATED)
