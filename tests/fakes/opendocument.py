"""OpenDocument text (.odt) and spreadsheets (.ods) made with odfpy, as LibreOffice writes them.

A text document from blocks: ("h1"/"h2", text), ("p", text), ("note", text, footnote) a paragraph
with a footnote, ("deleted", text) a paragraph whose tracked deletion of `text` is not accepted
yet, ("li", text) / ("li2", text) list items, ("table", rows). A spreadsheet from sheets of rows;
`hidden` names the sheets Calc hides.
"""

from __future__ import annotations

from pathlib import Path


def make_odt(path: Path, blocks: list[tuple], title: str | None = None, author: str | None = None, keywords: tuple[str, ...] = ()) -> None:
    from odf import dc
    from odf.meta import InitialCreator, Keyword
    from odf.namespaces import XMLNS
    from odf.opendocument import OpenDocumentText
    from odf.office import ChangeInfo
    from odf.table import Table, TableCell, TableColumn, TableRow
    from odf.text import H, P, Change, ChangedRegion, Deletion, List, ListItem, Note, NoteBody, NoteCitation, TrackedChanges

    document = OpenDocumentText()
    _meta(document, title, author, keywords, dc, InitialCreator, Keyword)
    changes = None
    lists: list = []  # the open list and, when the last item was nested, its inner list
    for kind, content, *more in blocks:
        if kind not in ("li", "li2"):
            lists = []
        if kind in ("h1", "h2", "h3"):
            document.text.addElement(H(outlinelevel=int(kind[1]), text=content))
        elif kind == "p":
            document.text.addElement(P(text=content))
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
