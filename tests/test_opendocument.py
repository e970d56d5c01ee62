"""LibreOffice's own formats, as a public office's shared folder holds them: a Writer document with
its headings, lists and tables (tracked deletions, footnotes left out), a Calc spreadsheet a row at
a time with its columns' names (hidden sheets left out), an Impress deck slide by slide (hidden
slides and footers left out); one saved with a password says so."""

import zipfile

import pytest

from tests.conftest import indexed_and_served, search_hits as search
from tests.fakes.opendocument import make_odp, make_ods, make_odt

TRAVEL = [
    ("h1", "Travel policy"), ("note", "Employees book trains for trips under four hours.", "Measured door to door."),
    ("deleted", "Employees may fly business class on any trip."),
    ("h2", "Per diem"), ("li", "Meals are reimbursed up to forty euros a day"), ("li2", "Breakfast is included in hotel rates"),
    ("h2", "City rates"), ("table", [["City", "Hotel cap"], ["Lisbon", "140 EUR"], ["Oslo", "210 EUR"]]),
]


@pytest.fixture(scope="module")
def office(tmp_path_factory, local_embedder):
    folder = tmp_path_factory.mktemp("odf")
    (folder / "docs").mkdir()
    make_odt(folder / "docs" / "travel.odt", TRAVEL, title="Travel policy", author="People team", keywords=("travel", "expenses"))
    make_ods(folder / "docs" / "rates.ods", {"Hotels": [["City", "Nightly cap"], ["Bergen", "190 EUR"]],
                                             "Margins": [["City", "Margin"], ["Bergen", "eleven percent on snowshoes"]]}, hidden=("Margins",))
    make_odp(folder / "docs" / "briefing.odp", [
        {"title": "Opening the store", "bullets": [(0, "Two staff members open the store"), (1, "One of them keeps the keys")],
         "notes": "The alarm code changes every Monday.", "footer": "Internal use only"},
        {"title": "Draft margins", "bullets": [(0, "Margins fall to eleven percent on snowshoes")], "hidden": True},
        {"title": "Closing", "bullets": [(0, "Count the till before locking the door")], "footer": "Internal use only"},
    ], title="Store briefing")
    with zipfile.ZipFile(folder / "docs" / "salaries.odt", "w") as locked:  # what LibreOffice writes for "Save with password"
        locked.writestr("mimetype", "application/vnd.oasis.opendocument.text")
        locked.writestr("content.xml", bytes(range(256)))  # ciphertext
        locked.writestr("META-INF/manifest.xml", '<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0">'
                        '<manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml">'
                        '<manifest:encryption-data manifest:checksum-type="SHA1/1K"/></manifest:file-entry></manifest:manifest>')
    with indexed_and_served(folder, '[[sources]]\nname = "docs"\ntype = "files"\npath = "docs"\n[[spaces]]\nprovider = "local"\n') as served:
        yield served


def test_a_writer_document_keeps_its_headings_lists_and_tables(office):
    _, client = office
    hit = search(client, "how much are meals reimbursed per day")[0]
    assert hit["title"] == "Travel policy" and hit["heading_path"] == ["Travel policy", "Per diem"]
    assert "- Meals are reimbursed up to forty euros a day\n  - Breakfast is included in hotel rates" in hit["text"]
    hit = search(client, "hotel cap in Oslo")[0]
    assert "Oslo | 210 EUR" in hit["text"] and hit["heading_path"][-1] == "City rates"
    document = client.get(f"/v1/documents/{hit['doc_id']}").json()
    assert document["tags"] == ["travel", "expenses"] and document["authors"] == ["People team"]
    assert "trains for trips under four hours" in document["text"]
    assert "business class" not in document["text"], "a tracked deletion is not the document's text"
    assert "door to door" not in document["text"], "a footnote is not the paragraph's text"


def test_a_calc_sheet_reads_a_row_at_a_time_and_a_hidden_sheet_not_at_all(office):
    _, client = office
    hit = search(client, "nightly hotel cap in Bergen")[0]
    assert hit["path"] == "rates.ods" and "City: Bergen; Nightly cap: 190 EUR" in hit["text"]
    assert not [h for h in search(client, "margin snowshoes", mode="lexical", top_k=10) if "snowshoes" in h["text"]]


def test_an_impress_deck_reads_slide_by_slide_without_its_hidden_slides_and_footers(office):
    _, client = office
    hit = search(client, "who keeps the keys when the store opens")[0]
    assert hit["title"] == "Store briefing" and hit["heading_path"] == ["Slide 1: Opening the store"]
    assert "- Two staff members open the store\n  - One of them keeps the keys" in hit["text"]
    assert "Speaker notes: The alarm code changes every Monday." in hit["text"]
    hit = search(client, "count the till before locking")[0]
    assert hit["heading_path"] == ["Slide 3: Closing"], "the hidden slide keeps its number"
    document = client.get(f"/v1/documents/{hit['doc_id']}").json()
    assert "Internal use only" not in document["text"] and "snowshoes" not in document["text"]


def test_a_document_saved_with_a_password_says_so(office):
    report, _ = office
    assert [(e.code, e.doc_id) for e in report.errors] == [("FILE_EXTRACTION_FAILED", "file:salaries.odt")]
    assert "not a readable OpenDocument text (.odt) document: it is saved with a password" in report.errors[0].message
    assert report.counts["added"] == 3
