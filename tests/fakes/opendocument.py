"""OpenDocument text (.odt) and spreadsheets (.ods) made with odfpy, as LibreOffice writes them.

A text document from blocks: ("h1"/"h2", text), ("p", text), ("note", text, footnote) a paragraph
with a footnote, ("link", before, anchor, href, after) a paragraph with a link, ("deleted", text) a paragraph whose tracked deletion of `text` is not accepted
yet, ("li", text) / ("li2", text) list items, ("table", rows), ("toc", entries) a generated table of contents. A spreadsheet from sheets of rows;
`hidden` names the sheets Calc hides. A presentation from slides, as for tests/fakes/slides.py:
"title", "bullets" [(level, text)] in the outline frame, "notes", "footer", "hidden".
"""

from __future__ import annotations

from pathlib import Path


def make_odt(path: Path, blocks: list[tuple], title: str | None = None, author: str | None = None, keywords: tuple[str, ...] = (),
             modified: str | None = None) -> None:
    from odf import dc
    from odf.meta import InitialCreator, Keyword
    from odf.namespaces import XMLNS
    from odf.opendocument import OpenDocumentText
    from odf.office import ChangeInfo
    from odf.table import Table, TableCell, TableColumn, TableRow
    from odf.text import (
        A, Change, ChangedRegion, Deletion, H, IndexBody, IndexTitleTemplate, List, ListItem, Note, NoteBody, NoteCitation, P, TableOfContent,
        TableOfContentSource, TrackedChanges,
    )

    document = OpenDocumentText()
    _meta(document, title, author, keywords, dc, InitialCreator, Keyword)
    if modified:  # when it was last saved, as Writer stores it: 2026-11-02T08:00:00
        document.meta.addElement(dc.Date(text=modified))
    changes = None
    lists: list = []  # the open list and, when the last item was nested, its inner list
    for kind, content, *more in blocks:
        if kind not in ("li", "li2"):
            lists = []
        if kind in ("h1", "h2", "h3"):
            document.text.addElement(H(outlinelevel=int(kind[1]), text=content))
        elif kind == "p":
            document.text.addElement(P(text=content))
        elif kind == "link":
            paragraph = P(text=content)
            paragraph.addElement(A(href=more[1], type="simple", text=more[0]))
            paragraph.addText(more[2])
            document.text.addElement(paragraph)
        elif kind == "toc":
            contents = TableOfContent(name="Contents")
            source = TableOfContentSource(outlinelevel=3)
            source.addElement(IndexTitleTemplate(text="Contents"))
            contents.addElement(source)
            body = IndexBody()
            for entry in content:
                body.addElement(P(text=entry))
            contents.addElement(body)
            document.text.addElement(contents)
        elif kind == "note":
            paragraph = P(text=content)
            note = Note(id=f"n{len(blocks)}", noteclass="footnote")
            note.addElement(NoteCitation(text="1"))
            body = NoteBody()
            body.addElement(P(text=more[0]))
            note.addElement(body)
            paragraph.addElement(note)
            document.text.addElement(paragraph)
        elif kind == "deleted":  # Writer keeps a tracked deletion apart, and marks where it was in the paragraph
            if changes is None:
                changes = TrackedChanges()
                document.text.addElement(changes)
            change_id = f"ct{len(changes.childNodes) + 1}"
            region = ChangedRegion(qattributes={(XMLNS, "id"): change_id})
            deletion = Deletion()
            info = ChangeInfo()
            info.addElement(dc.Creator(text="Editor"))
            info.addElement(dc.Date(text="2026-11-02T08:00:00"))
            deletion.addElement(info)
            deletion.addElement(P(text=content))
            region.addElement(deletion)
            changes.addElement(region)
            marked = P(text="")
            marked.addElement(Change(changeid=change_id))
            document.text.addElement(marked)
        elif kind in ("li", "li2"):
            if not lists:
                lists = [List()]
                document.text.addElement(lists[0])
            item = ListItem()
            item.addElement(P(text=content))
            if kind == "li":
                lists[0].addElement(item)
                lists = lists[:1] + [item]
            else:
                inner = List()
                inner.addElement(item)
                lists[1].addElement(inner)
        elif kind == "table":
            table = Table(name=f"Table{len(blocks)}")
            table.addElement(TableColumn(numbercolumnsrepeated=len(content[0])))
            for row in content:
                table.addElement(_row(row, TableRow, TableCell, P))
            document.text.addElement(table)
    document.save(str(path))


def make_ods(path: Path, sheets: dict[str, list[list[str]]], hidden: tuple[str, ...] = (), title: str | None = None) -> None:
    from odf import dc
    from odf.meta import InitialCreator, Keyword
    from odf.opendocument import OpenDocumentSpreadsheet
    from odf.style import Style, TableProperties
    from odf.table import Table, TableCell, TableRow
    from odf.text import P

    book = OpenDocumentSpreadsheet()
    _meta(book, title, None, (), dc, InitialCreator, Keyword)
    invisible = Style(name="hiddenTable", family="table")
    invisible.addElement(TableProperties(display="false"))
    book.automaticstyles.addElement(invisible)
    for name, rows in sheets.items():
        table = Table(name=name, stylename="hiddenTable") if name in hidden else Table(name=name)
        for row in rows:
            table.addElement(_row(row, TableRow, TableCell, P))
        rest = TableRow(numberrowsrepeated=1048000)  # as Calc writes the empty rest of a sheet
        rest.addElement(TableCell(numbercolumnsrepeated=1024))
        table.addElement(rest)
        book.spreadsheet.addElement(table)
    book.save(str(path))


def make_odp(path: Path, slides: list[dict], title: str | None = None) -> None:
    from odf import dc
    from odf.draw import Frame, Page, TextBox
    from odf.meta import InitialCreator, Keyword
    from odf.opendocument import OpenDocumentPresentation
    from odf.presentation import Notes
    from odf.style import DrawingPageProperties, MasterPage, PageLayout, PageLayoutProperties, Style
    from odf.text import List, ListItem, P

    deck = OpenDocumentPresentation()
    _meta(deck, title, None, (), dc, InitialCreator, Keyword)
    layout = PageLayout(name="Layout")
    layout.addElement(PageLayoutProperties(pagewidth="28cm", pageheight="21cm", printorientation="landscape"))
    deck.automaticstyles.addElement(layout)
    master = MasterPage(name="Default", pagelayoutname=layout)
    deck.masterstyles.addElement(master)
    hidden = Style(name="dpHidden", family="drawing-page")  # what Impress writes for Slide → Hide Slide
    hidden.addElement(DrawingPageProperties(visibility="hidden"))
    deck.automaticstyles.addElement(hidden)

    def frame(kind: str, content) -> Frame:
        shape = Frame(width="24cm", height="4cm", x="2cm", y="2cm", **{"class": kind})
        box = TextBox()
        box.addElement(content)
        shape.addElement(box)
        return shape

    for spec in slides:
        page = Page(masterpagename=master, stylename=hidden) if spec.get("hidden") else Page(masterpagename=master)
        deck.presentation.addElement(page)
        if "title" in spec:
            page.addElement(frame("title", P(text=spec["title"])))
        if "bullets" in spec:
            outline, lists = List(), {}
            for level, text in spec["bullets"]:
                item = ListItem()
                item.addElement(P(text=text))
                if level == 0:
                    outline.addElement(item)
                    lists = {0: item}
                else:
                    inner = List()
                    inner.addElement(item)
                    lists[level - 1].addElement(inner)
            page.addElement(frame("outline", outline))
        if "footer" in spec:
            page.addElement(frame("footer", P(text=spec["footer"])))
        if "notes" in spec:
            notes = Notes()
            notes.addElement(frame("notes", P(text=spec["notes"])))
            page.addElement(notes)
    deck.save(str(path))


def _row(cells, TableRow, TableCell, P):
    row = TableRow()
    for text in cells:
        cell = TableCell(valuetype="string")
        cell.addElement(P(text=text))
        row.addElement(cell)
    return row


def _meta(document, title, author, keywords, dc, InitialCreator, Keyword) -> None:
    if title:
        document.meta.addElement(dc.Title(text=title))
    if author:
        document.meta.addElement(InitialCreator(text=author))
    for keyword in keywords:
        document.meta.addElement(Keyword(text=keyword))
