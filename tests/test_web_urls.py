"""URL normalization: one page, one doc_id, however the link to it was written."""

import pytest

from indexer.config import parse_config
from indexer.sources.web import normalize_url


@pytest.mark.parametrize(
    "written, normalized",
    [
        ("HTTPS://Help.Example.COM:443/Returns?id=3#top", "https://help.example.com/Returns?id=3"),
        ("http://example.com:80", "http://example.com/"),
        ("http://example.com:8080/a", "http://example.com:8080/a"),
        ("https://example.com/a?utm_source=news&utm_MEDIUM=mail&id=7&fbclid=x&gclid=y", "https://example.com/a?id=7"),
        ("https://example.com/a?b=2&a=1&_ga=1.2.3", "https://example.com/a?b=2&a=1"),
        ("https://example.com/search?q=a%20b&utm_campaign=x", "https://example.com/search?q=a%20b"),
    ],
)
def test_links_to_one_page_normalize_to_one_url(written, normalized):
    assert normalize_url(written) == normalized


def test_the_tracking_list_is_configurable(tmp_path):
    def source(**keys):
        raw = {"sources": [{"name": "w", "type": "urls", "urls": ["https://example.com/"], **keys}], "spaces": [{"provider": "local"}]}
        return parse_config(raw, base_dir=tmp_path).sources[0]

    assert normalize_url("https://example.com/a?utm_source=x&ref=home", source().drop_parameters) == "https://example.com/a?ref=home"
    custom = source(drop_parameters=["ref", "session*"]).drop_parameters
    assert normalize_url("https://example.com/a?utm_source=x&ref=home&SessionId=9&p=2", custom) == "https://example.com/a?utm_source=x&p=2"
    assert normalize_url("https://example.com/a?utm_source=x", source(drop_parameters=[]).drop_parameters) == "https://example.com/a?utm_source=x"
