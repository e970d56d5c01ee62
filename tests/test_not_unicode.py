"""Text that is not Unicode — lone UTF-16 surrogates, which JSON ("\\ud800") and undecodable file
names carry into Python strings — is mended as a source reads it (indexer/sources/__init__.py).
Runs over such documents: tests/test_notion.py, tests/test_index_run.py."""

import re
from dataclasses import fields

import pytest

from indexer.documents import Document
from indexer.sources import valid_unicode

SURROGATE_IN = {  # a lone surrogate in each field of a Document that holds text
    "doc_id": "file:a\udce9.md", "source": "s\ud800", "source_type": "files\ud800", "title": "T\ud800", "text": "caf\udce9 au lait",
    "url": "https://x.test/\udc80", "path": "/d/a\udce9.md", "tags": ("ok", "t\ud800"), "authors": ("A\udfff",),
    "metadata": {"k": ["v", {"n": "\ud800"}]}, "anchors": ((0, "top"), (3, "s\ud800")), "etag": '"\ud800"',
    "last_modified": "\ud800", "links": ("page:\ud800",),
}
PLAIN = dict(doc_id="d", source="s", source_type="files", title="Té", text="naïve text", metadata={"k": ["v"]}, anchors=((0, "top"),))


def strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, (tuple, list)):
        for v in value:
            yield from strings(v)
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from strings(k)
            yield from strings(v)


@pytest.mark.parametrize("name", sorted(SURROGATE_IN))
def test_a_lone_surrogate_in_any_text_field_becomes_a_replacement_character(name):
    document, mended = valid_unicode(Document(**{**PLAIN, name: SURROGATE_IN[name]}))
    assert mended == [name]
    found = list(strings(getattr(document, name)))
    assert any("\ufffd" in s for s in found) and not any(re.search("[\ud800-\udfff]", s) for s in found)
    assert all(s.encode("utf-8") for s in found), "storable now"


def test_a_document_that_is_unicode_is_returned_as_it_is():
    document = Document(**PLAIN)
    assert valid_unicode(document) == (document, []) and valid_unicode(document)[0] is document


def test_every_text_field_of_a_document_is_checked():
    not_text = {"updated_at", "fetched_at", "fetch_seconds", "pages"}
    assert {f.name for f in fields(Document)} - not_text == set(SURROGATE_IN), "a new field of Document: add it here and to sources._unicode"
