"""EPUB books, as a team publishes a handbook or a manual for e-readers: searchable chapter by
chapter with their headings; the book's own table of contents, cover and pop-up notes left out; a
book under DRM or a damaged one named, and the run goes on."""

import zipfile

from click.testing import CliRunner

from indexer.cli import cli
from tests.conftest import indexed_and_served, search_hits
from tests.fakes.epub import make_epub

CHAPTERS = [
    ("Returns", '<!-- chapter 1 from returns.md --><h1>Returns</h1><p>Items can be returned within <em>30 days</em> of delivery<a href="#fn1" class="footnote-ref" '
                'role="doc-noteref"><sup>1</sup></a>.</p><ul><li>Keep the receipt</li><li>Use the prepaid label in the parcel</li></ul>'
                '<section class="footnotes" role="doc-endnotes"><ol><li id="fn1"><p>Sale items: 14 days.</p></li></ol></section>'),  # as Pandoc writes notes
    ("Shipping", '<section epub:type="chapter"><h1>Shipping</h1><h2>Islands</h2><p>Parcels to the islands take three extra days'
                 '<a epub:type="noteref" href="notes.xhtml#n1">1</a>.</p>'
                 "<table><tr><th>Zone</th><th>Days</th></tr><tr><td>Mainland</td><td>2</td></tr><tr><td>Islands</td><td>5</td></tr></table></section>"),
]


def test_an_epub_is_searched_chapter_by_chapter(tmp_path, local_embedder):
    shelf = tmp_path / "shelf"
    shelf.mkdir()
    make_epub(shelf / "handbook.epub", CHAPTERS, title="Customer handbook", author="Support team", subjects=("returns", "shipping"),
              notes='<section id="n1"><p>Ferries do not sail on public holidays.</p></section>')
    make_epub(shelf / "locked.epub", [("Pricing", "<h1>Pricing</h1><p>Secret prices.</p>")], title="Price book", author="Sales", drm=True)
    (shelf / "cut.epub").write_bytes((shelf / "handbook.epub").read_bytes()[:700])
    with indexed_and_served(tmp_path, '[[sources]]\nname = "shelf"\ntype = "files"\npath = "shelf"\n[[spaces]]\nprovider = "local"\n') as (report, client):
        errors = {e.doc_id: e.message for e in report.errors}
        assert set(errors) == {"file:locked.epub", "file:cut.epub"}, errors
        assert errors["file:locked.epub"] == "locked.epub: not a readable EPUB book: its chapters are encrypted (DRM); index a DRM-free copy or its PDF"
        assert errors["file:cut.epub"].startswith("cut.epub: not a readable EPUB book ("), errors
        hit = search_hits(client, "how long does delivery to the islands take")[0]
        assert hit["doc_id"] == "file:handbook.epub" and hit["title"] == "Customer handbook" and hit["heading_path"] == ["Shipping", "Islands"], hit
        assert "Parcels to the islands take three extra days.\n\nZone | Days\nMainland | 2\nIslands | 5" in hit["text"], hit["text"]
        assert hit["updated_at"].startswith("2026-11-02T08:00:00")
        document = client.get(f"/v1/documents/{hit['doc_id']}").json()
        assert document["authors"] == ["Support team"] and document["tags"] == ["returns", "shipping"]
        hit = search_hits(client, "can I send items back")[0]
        assert hit["heading_path"] == ["Returns"] and "- Keep the receipt\n- Use the prepaid label in the parcel" in hit["text"]
        texts = [h["text"] for h in search_hits(client, "contents ferries public holidays sale items 14 days", mode="lexical", top_k=10)]
        assert texts and not any(w in t for t in texts for w in ("Ferries", "Contents", "14 days")), "notes and the table of contents are not the text"


def test_index_extract_prints_a_book_and_names_what_is_not_one(tmp_path):
    make_epub(tmp_path / "book.epub", CHAPTERS, title="Customer handbook", author="Support team")
    result = CliRunner().invoke(cli, ["extract", str(tmp_path / "book.epub")])
    assert result.exit_code == 0 and "# Returns\n\nItems can be returned within 30 days of delivery.\n" in result.output, result.output
    assert "returns.md" not in result.output, "a comment is not text"
    with zipfile.ZipFile(tmp_path / "nobook.epub", "w") as package:
        package.writestr("mimetype", "application/epub+zip")
    result = CliRunner().invoke(cli, ["extract", str(tmp_path / "nobook.epub")])
    assert result.exit_code == 1 and "nobook.epub: not a readable EPUB book (KeyError:" in result.output and "unexpected" not in result.output, result.output
