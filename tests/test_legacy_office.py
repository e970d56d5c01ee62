"""Office 97–2003 and Rich Text files, as an old shared drive keeps them: a Word .doc, a Rich Text
.rtf, Excel .xls files (a price list, a FAQ of curated answers) and a PowerPoint .ppt deck written by
a real office program (LibreOffice, from the files tests/data/legacy_office/make.py builds), and a
TextEdit note, are searchable as their newer formats are; one saved with a password, under the
other extension, or damaged is named, and the run goes on."""

import shutil
import struct
from pathlib import Path

import pytest
from click.testing import CliRunner

from indexer.cli import cli
from indexer.config import load_config
from tests.conftest import indexed_and_served, search_hits
from tests.fakes.sheets import make_xlsx
from tests.fakes.slides import make_pptx
from tests.fakes.word import make_docx

LEGACY = Path(__file__).parent / "data" / "legacy_office"
HANDBOOK, PRICES, BRIEFING = LEGACY / "handbook.doc", LEGACY / "prices.xls", LEGACY / "briefing.ppt"
# A note as macOS TextEdit saves it (Format → Make Rich Text): its own header, a list of its kind,
# `\` + line end as the paragraph mark, Windows-1252 bytes and \uc0\u escapes for other characters.
TEXTEDIT = rb"""{\rtf1\ansi\ansicpg1252\cocoartf2761
\cocoatextscaling0\cocoaplatform0{\fonttbl\f0\fswiss\fcharset0 Helvetica;\f1\fswiss\fcharset0 Helvetica-Bold;}
{\colortbl;\red255\green255\blue255;}
{\*\expandedcolortbl;;}
{\*\listtable{\list\listtemplateid1\listhybrid{\listlevel\levelnfc23\levelnfcn23\leveljc0\leveljcn0\levelfollow0\levelstartat1\levelspace360\levelindent0{\*\levelmarker \{disc\}}{\leveltext\leveltemplateid1\'01\uc0\u8226 ;}{\levelnumbers;}\fi-360\li720\lin720 }{\listname ;}\listid1}}
{\*\listoverridetable{\listoverride\listid1\listoverridecount0\ls1}}
\paperw11900\paperh16840\margl1440\margr1440\vieww11520\viewh8400\viewkind0
\pard\tx566\tx1133\pardirnatural\partightenfactor0

\f1\b\fs28 \cf0 Store opening checklist
\f0\b0\fs24 \
\
Unlock the front door at nine.\
Switch off the alarm first \'96 the panel is behind the counter.\
\pard\tx220\tx720\pardirnatural\partightenfactor0
\ls1\ilvl0\cf0 {\listtext	\uc0\u8226 	}Caf\'e9 staff arrive at half past eight.\
{\listtext	\uc0\u8226 	}The till float is 150 \uc0\u8364 .\
\pard\tx566\tx1133\pardirnatural\partightenfactor0
\cf0 Na\uc0\u239 ve questions are welcome.}
"""


def locked(raw: bytes) -> bytes:
    """The .doc as Word saves it with a password: the same file with its FIB's fEncrypted flag set."""
    fib = raw.index(b"\xec\xa5")  # the Word magic that opens the WordDocument stream (and its FIB)
    changed = bytearray(raw)
    changed[fib + 0x0B] |= 0x01
    return bytes(changed)


def word_95(raw: bytes) -> bytes:
    """The .doc with the file format version (nFib) Word 95 writes, whose FIB is laid out otherwise."""
    fib = raw.index(b"\xec\xa5")
    return raw[: fib + 2] + (0x0068).to_bytes(2, "little") + raw[fib + 4 :]


def lock_deck(path: Path) -> None:
    """The .ppt as PowerPoint saves it with a password: its last edit (UserEditAtom) 4 bytes longer,
    naming its encryption session (encryptSessionPersistIdRef), the records it leads to encrypted.
    Made in place, every stream keeping its size: the persist directory written before that edit
    gives up its last entry to make room, and the Current User stream points at the moved edit."""
    import olefile

    with olefile.OleFileIO(str(path), write_mode=True) as ole:
        document, user = bytearray(ole.openstream("PowerPoint Document").read()), bytearray(ole.openstream("Current User").read())
        edit = struct.unpack_from("<I", user, 16)[0]
        directory = struct.unpack_from("<I", document, edit + 20)[0]
        assert directory + 8 + struct.unpack_from("<I", document, directory + 4)[0] == edit == len(document) - 36, "the layout LibreOffice writes"
        entries = document[directory + 8 : edit]
        user_edit = (struct.pack("<HHI", 0, 0x0FF5, 32) + document[edit + 8 : edit + 20] + struct.pack("<I", directory + 40)
                     + document[edit + 24 : edit + 36] + struct.pack("<I", 1))
        persist = struct.pack("<HHII", 0, 0x1772, len(entries) - 4, struct.unpack_from("<I", entries)[0] - (1 << 20)) + entries[4:-4]
        document[directory:] = user_edit + persist
        struct.pack_into("<I", user, 16, directory)
        ole.write_stream("PowerPoint Document", bytes(document))
        ole.write_stream("Current User", bytes(user))


def _tree(data, start, end):
    """The records of data[start:end]: [version/instance, type, children (a container) or body bytes]."""
    nodes, at = [], start
    while at + 8 <= end:
        version_instance, kind, length = struct.unpack_from("<HHI", data, at)
        body = (at + 8, at + 8 + length)
        nodes.append([version_instance, kind, _tree(data, *body) if version_instance & 0xF == 0xF else data[body[0]:body[1]], at])
        at = body[1]
    return nodes


def _bytes(node):
    body = b"".join(_bytes(child) for child in node[2]) if isinstance(node[2], list) else node[2]
    return struct.pack("<HHI", node[0], node[1], len(body)) + body


def _find(nodes, kind):
    for node in nodes:
        if node[1] == kind:
            yield node
        if isinstance(node[2], list):
            yield from _find(node[2], kind)


def placeholders_in_slide_list(path: Path, slide_number: int) -> None:
    """The .ppt as PowerPoint writes a slide's placeholders: their text (header, characters, style)
    kept in the document's slide list after the slide's SlidePersistAtom, each shape's text box
    holding only an OutlineTextRefAtom that points at it. Rewritten in place: the streams keep
    their sizes (the PowerPoint Document stream padded at its end), the persist directory, the
    last edit and the Current User stream moved to the records' new places."""
    import olefile

    with olefile.OleFileIO(str(path), write_mode=True) as ole:
        data, user = ole.openstream("PowerPoint Document").read(), bytearray(ole.openstream("Current User").read())
        top = _tree(data, 0, len(data))
        edit = next(n for n in top if n[1] == 0x0FF5)
        directory = next(n for n in top if n[1] == 0x1772)
        entries = struct.unpack_from(f"<{len(directory[2]) // 4}I", directory[2])
        persist = dict(zip(range(entries[0] & 0xFFFFF, 1 << 20), entries[1:]))
        slide_list = next(n for n in _find(top, 0x0FF0) if n[0] >> 4 == 0)
        atom = [n for n in slide_list[2] if n[1] == 0x03F3][slide_number - 1]
        slide = next(n for n in top if n[3] == persist[struct.unpack_from("<I", atom[2])[0]])
        moved = []
        for box in _find(slide[2], 0xF00D):
            text = [n for n in box[2] if n[1] in (0x0F9F, 0x0FA0, 0x0FA8, 0x0FA1)]
            if any(n[1] in (0x0FA0, 0x0FA8) for n in text):
                box[2] = [[0, 0x0F9E, struct.pack("<I", len(moved)), 0]]
                moved.append(text)
        at = slide_list[2].index(atom) + 1
        slide_list[2][at:at] = [n for text in moved for n in text]
        placed, offset = {}, 0
        for node in top:
            placed[node[3]] = offset
            offset += len(_bytes(node))
        directory[2] = struct.pack(f"<{len(entries)}I", entries[0], *(placed[o] for o in entries[1:]))
        edit[2] = edit[2][:8] + struct.pack("<II", 0, placed[directory[3]]) + edit[2][16:]
        struct.pack_into("<I", user, 16, placed[edit[3]])
        rebuilt = b"".join(_bytes(node) for node in top)
        assert len(rebuilt) <= len(data), "the text boxes gave up more than the slide list took"
        ole.write_stream("PowerPoint Document", rebuilt + bytes(len(data) - len(rebuilt)))
        ole.write_stream("Current User", bytes(user))


@pytest.fixture(scope="module")
def drive(tmp_path_factory, local_embedder):
    folder = tmp_path_factory.mktemp("legacy")
    drive = folder / "drive"
    drive.mkdir()
    shutil.copy(HANDBOOK, drive / "travel-handbook.doc")
    shutil.copy(PRICES, drive / "winter-prices.xls")
    (drive / "locked.doc").write_bytes(locked(HANDBOOK.read_bytes()))
    shutil.copy(BRIEFING, drive / "store-briefing.ppt")
    shutil.copy(BRIEFING, drive / "locked.ppt")
    lock_deck(drive / "locked.ppt")
    make_docx(drive / "visas.doc", [("h1", "Visas"), ("p", "The office applies for business visas three weeks ahead.")], title="Visas")  # a .docx named .doc
    make_xlsx(drive / "rates.xls", {"Rates": [["Currency", "Rate"], ["Swiss franc", "0.95"]]})  # an .xlsx named .xls
    with indexed_and_served(folder, '[[sources]]\nname = "drive"\ntype = "files"\npath = "drive"\n[[spaces]]\nprovider = "local"\n') as served:
        yield served


def test_a_word_97_document_is_searched_by_its_headings_lists_and_tables(drive):
    _, client = drive
    hit = search_hits(client, "how much is the daily meal allowance")[0]
    assert hit["doc_id"] == "file:travel-handbook.doc" and hit["title"] == "Travel handbook", hit
    assert hit["heading_path"][-1] == "Per diem" and "The daily allowance for meals is 45 euros." in hit["text"]
    assert hit["updated_at"].startswith("2026-11-02T08:00:00")
    document = client.get(f"/v1/documents/{hit['doc_id']}").json()
    assert document["authors"] == ["Ana Silva"] and document["tags"] == ["travel", "policy"]
    hit = search_hits(client, "hotel nightly limit in Lisbon")[0]
    assert hit["heading_path"][-1] == "Hotels", hit
    assert ("See the hotel list before booking a room.\n\n- Breakfast is included in the nightly limit.\n- Parking at the hotel is refunded.\n\n"
            "City | Nightly limit (EUR)\nLisbon | 120\nReykjavik |") in hit["text"], "a link reads as its words, a list as items, a table a row per line"


def test_what_word_does_not_show_as_the_text_is_not_indexed(drive):
    _, client = drive
    assert any("45 euros" in h["text"] for h in search_hits(client, "allowance 30 euros before 2026", mode="lexical")), "where the deletion was"
    # a footnote, a tracked deletion, a link's address, the generated table of contents
    for words in ("manager approval flights", "allowance 30 euros before 2026", "intranet.example.com", "Per diem 2 Hotels 1"):
        texts = [h["text"] for h in search_hits(client, words, mode="lexical", top_k=10)]
        assert not any(t in text for text in texts for t in ("approval", "30 euros", "intranet", "Hotels 1")), (words, texts)


def test_a_powerpoint_97_deck_is_searched_slide_by_slide_with_its_notes(drive):
    """As a .pptx is: each hit names its slide, bullets keep their levels, a table is a row per line,
    the speaker notes count; a hidden slide, and the slide number field of a notes page, do not."""
    _, client = drive
    hit = search_hits(client, "who keeps the alarm keys")[0]
    assert hit["doc_id"] == "file:store-briefing.ppt" and hit["title"] == "Store briefing" and hit["heading_path"] == ["Slide 2: Before nine"], hit
    assert "- Two staff members open the store together\n  - One of them keeps the alarm keys" in hit["text"], hit["text"]
    assert hit["text"].endswith("Speaker notes: The alarm code changes every Monday; ask the manager for the new one."), hit["text"]  # no "*" of its slide number field after it
    assert hit["updated_at"].startswith("2026-11-02T08:00:00")
    document = client.get(f"/v1/documents/{hit['doc_id']}").json()
    assert document["authors"] == ["Retail team"] and document["tags"] == ["stores", "opening"]
    hit = search_hits(client, "when does the Oslo store open")[0]
    assert hit["heading_path"] == ["Slide 3: Opening hours"] and "Store | Opens\nLisbon | 9:00\nOslo | 10:00" in hit["text"], hit
    hit = search_hits(client, "what is the last thing to do when the store closes")[0]
    assert hit["heading_path"] == ["Slide 5: At closing time"], "a hidden slide keeps its number"
    assert "Count the till before locking the door\n\nLights off in the stockroom\n\nSet the alarm last" in hit["text"], "a text box, then a group's two"
    texts = [h["text"] for h in search_hits(client, "bonuses twelve percent weekend shifts", mode="lexical", top_k=10)]
    assert not any("twelve percent" in text for text in texts), texts


def test_a_deck_whose_placeholders_keep_their_text_in_the_slide_list_reads_the_same(tmp_path):
    """PowerPoint itself keeps a title's and a body's text in the document's slide list, the shapes
    only pointing at it (LibreOffice writes it in the shapes): both read alike."""
    shutil.copy(BRIEFING, tmp_path / "as-libreoffice.ppt")
    shutil.copy(BRIEFING, tmp_path / "as-powerpoint.ppt")
    placeholders_in_slide_list(tmp_path / "as-powerpoint.ppt", 2)
    results = [CliRunner().invoke(cli, ["extract", str(tmp_path / name)]) for name in ("as-libreoffice.ppt", "as-powerpoint.ppt")]
    assert [r.exit_code for r in results] == [0, 0] and results[0].output == results[1].output, results[1].output
    assert "# Slide 2: Before nine\n\n- Two staff members open the store together\n  - One of them keeps the alarm keys" in results[1].output


def test_an_excel_97_workbook_is_read_a_row_at_a_time_with_its_column_names(drive):
    _, client = drive
    hit = search_hits(client, "how much are the Alpine boots")[0]
    assert hit["doc_id"] == "file:winter-prices.xls" and hit["title"] == "Winter price list" and hit["heading_path"] == ["Prices"], hit
    assert ("Winter prices, valid from 2 January\nProduct: Alpine boots; Price (EUR): 189; On sale since: 2026-01-02; Discount: 30%\n"
            "Product: Wool socks; Price (EUR): 12.5; On sale since: 2026-01-09; Discount: 10%; Note: Pack of two") in hit["text"]
    hit = search_hits(client, "when does the Porto store open")[0]
    assert hit["heading_path"] == ["Store hours"] and "Store: Porto; Hours: 10 to 20" in hit["text"]
    assert not any("confidential" in h["text"] for h in search_hits(client, "confidential margin figures", mode="lexical", top_k=10)), "a hidden sheet"


def test_a_locked_or_misnamed_old_office_file_is_named_or_read_for_what_it_is(drive, tmp_path):
    import olefile

    report, client = drive
    errors = {e.doc_id: (e.code, e.message) for e in report.errors}
    assert errors == {
        "file:locked.doc": ("FILE_EXTRACTION_FAILED", "locked.doc: not a readable Word 97–2003 (.doc) document: it is password-protected; save it without a password to index it"),
        "file:locked.ppt": ("FILE_EXTRACTION_FAILED", "locked.ppt: not a readable PowerPoint 97–2003 (.ppt) deck: it is password-protected; save it without a password to index it"),
    }, errors
    assert search_hits(client, "business visas")[0]["doc_id"] == "file:visas.doc", "a .docx saved as .doc"
    assert search_hits(client, "Swiss franc rate")[0]["doc_id"] == "file:rates.xls", "an .xlsx saved as .xls"
    (tmp_path / "memo.doc").write_bytes(word_95(HANDBOOK.read_bytes()))
    result = CliRunner().invoke(cli, ["extract", str(tmp_path / "memo.doc")])
    assert result.exit_code == 1 and "memo.doc: not a readable Word 97–2003 (.doc) document: it is a Word 6 or 95 file; save it as .docx" in result.output
    shutil.copy(HANDBOOK, tmp_path / "expenses.docx")
    shutil.copy(PRICES, tmp_path / "prices.xlsx")
    result = CliRunner().invoke(cli, ["extract", str(tmp_path / "expenses.docx")])
    assert result.exit_code == 0 and "## Per diem\n\nThe daily allowance for meals is 45 euros." in result.output, "a .doc saved as .docx"
    result = CliRunner().invoke(cli, ["extract", str(tmp_path / "prices.xlsx")])
    assert result.exit_code == 0 and "# Store hours\n\nStore: Lisbon; Hours: 9 to 21" in result.output, result.output
    shutil.copy(BRIEFING, tmp_path / "sealed.ppt")
    with olefile.OleFileIO(str(tmp_path / "sealed.ppt"), write_mode=True) as ole:  # its Current User marked as PowerPoint marks an encrypted deck's
        user = bytearray(ole.openstream("Current User").read())
        struct.pack_into("<I", user, 12, 0xF3D1C4DF)
        ole.write_stream("Current User", bytes(user))
    result = CliRunner().invoke(cli, ["extract", str(tmp_path / "sealed.ppt")])
    assert result.exit_code == 1 and "sealed.ppt: not a readable PowerPoint 97–2003 (.ppt) deck: it is password-protected" in result.output, result.output
    shutil.copy(BRIEFING, tmp_path / "briefing.pptx")
    result = CliRunner().invoke(cli, ["extract", str(tmp_path / "briefing.pptx")])
    assert result.exit_code == 0 and "# Slide 3: Opening hours\n\nStore | Opens" in result.output, "a .ppt saved as .pptx"
    make_pptx(tmp_path / "newer.ppt", [{"title": "Returns", "bullets": [(0, "Returns are free within thirty days")]}])
    result = CliRunner().invoke(cli, ["extract", str(tmp_path / "newer.ppt")])
    assert result.exit_code == 0 and "# Slide 1: Returns\n\n- Returns are free within thirty days" in result.output, "a .pptx saved as .ppt"


@pytest.mark.parametrize("original", [HANDBOOK, PRICES, BRIEFING], ids=["doc", "xls", "ppt"])
def test_a_damaged_old_office_file_is_a_clear_error(tmp_path, original):
    raw = original.read_bytes()
    what = {".doc": "Word 97–2003 (.doc) document", ".xls": "Excel 97–2003 (.xls) workbook", ".ppt": "PowerPoint 97–2003 (.ppt) deck"}[original.suffix]
    damaged = {"cut": raw[: len(raw) // 3], "empty": b"", "zeroed": raw[:512] + bytes(len(raw) - 512), "text": b"Minutes of the May meeting\n"}
    if original.suffix == ".xls":  # its CODEPAGE record (Unicode, 1200) changed to a number no codec has
        record = raw.index(b"\x42\x00\x02\x00\xb0\x04")
        damaged["codepage"] = raw[: record + 4] + (1149).to_bytes(2, "little") + raw[record + 6 :]
    for name, content in damaged.items():
        (tmp_path / f"{name}{original.suffix}").write_bytes(content)
        result = CliRunner().invoke(cli, ["extract", str(tmp_path / f"{name}{original.suffix}")])
        assert result.exit_code == 1, result.output
        assert f"{name}{original.suffix}: not a readable {what}" in result.output and "unexpected" not in result.output, result.output


def test_rich_text_files_are_read_as_word_and_textedit_show_them(tmp_path, local_embedder):
    notes = tmp_path / "notes"
    notes.mkdir()
    shutil.copy(LEGACY / "handbook.rtf", notes / "travel.rtf")
    (notes / "opening.rtf").write_bytes(TEXTEDIT)
    (notes / "minutes.rtf").write_text("Minutes of the May meeting, saved as plain text under the wrong name.\n")
    with indexed_and_served(tmp_path, '[[sources]]\nname = "notes"\ntype = "files"\npath = "notes"\n[[spaces]]\nprovider = "local"\n') as (report, client):
        assert [(e.code, e.doc_id) for e in report.errors] == [("FILE_EXTRACTION_FAILED", "file:minutes.rtf")], report.errors
        assert "not a readable Rich Text (.rtf) document: it does not start with {\\rtf" in report.errors[0].message
        hit = search_hits(client, "how much is the daily meal allowance")[0]
        assert hit["doc_id"] == "file:travel.rtf" and hit["title"] == "Travel handbook" and hit["heading_path"][-1] == "Per diem", hit
        assert hit["updated_at"].startswith("2026-11-02T08:00:00")
        hit = search_hits(client, "hotel nightly limit in Lisbon")[0]
        assert "- Parking at the hotel is refunded.\n\nCity | Nightly limit (EUR)\nLisbon | 120" in hit["text"], hit
        for words in ("manager approval flights", "allowance 30 euros before 2026", "intranet.example.com", "Per diem 2 Hotels 1"):
            texts = [h["text"] for h in search_hits(client, words, mode="lexical", top_k=10)]
            assert not any(t in text for text in texts for t in ("approval", "30 euros", "intranet", "Hotels 1")), (words, texts)
        hit = search_hits(client, "who arrives at half past eight")[0]
        assert hit["doc_id"] == "file:opening.rtf" and hit["title"] == "Opening", "no title in its properties, no heading: its name"
        assert ("Switch off the alarm first – the panel is behind the counter.\n\n- Café staff arrive at half past eight.\n"
                "- The till float is 150 €.\n\nNaïve questions are welcome.") in hit["text"], hit["text"]


def test_an_excel_97_workbook_of_questions_and_answers_gives_curated_answers(tmp_path, monkeypatch, local_embedder):
    """A support team's FAQ kept in an .xls since before .xlsx: `index init faq.xls` makes it an answers source."""
    shutil.copy(LEGACY / "faq.xls", tmp_path / "faq.xls")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["init", "faq.xls", "-p", "local"])
    assert result.exit_code == 0, result.output
    (answers,) = load_config(tmp_path / "index.toml").sources
    assert (answers.type, answers.path) == ("answers", tmp_path / "faq.xls")
    with indexed_and_served(tmp_path, (tmp_path / "index.toml").read_text()) as (report, client):
        assert not report.errors
        response = client.post("/v1/search", json={"query": "when will I get my money back", "top_k": 3}).json()
    answer = response["answers"][0]
    assert answer["questions"] == ["How long does a refund take?", "When do I get my money back?"], "a cell's lines are its phrasings"
    assert answer["url"] == "https://shop.example/help/refunds" and answer["tags"] == ["returns", "money"]
