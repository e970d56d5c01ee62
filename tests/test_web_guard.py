"""The SSRF guard: web fetches never reach private, loopback or link-local addresses — on the
first hop or after a redirect — unless the source's allow_private_networks lists the network."""

import pytest

from indexer.config import ConfigError, SourceConfig, parse_config
from indexer.errors import ErrorCode
from indexer.sources.netguard import refused_reason
from indexer.sources.web import crawl_urls

PAGE = b"<html><head><title>Returns</title></head><body><article><h1>Returns</h1><p>Shoes can be returned within sixty days of delivery for a full refund to the original card.</p></article></body></html>"


def fetch(urls, allow=()):
    return crawl_urls(SourceConfig(name="w", type="urls", urls=tuple(urls), timeout_seconds=2, allow_private_networks=tuple(allow), per_host_delay_seconds=0))


@pytest.mark.parametrize(
    "address, reason",
    [
        ("127.0.0.1", "loopback"),
        ("::1", "loopback"),
        ("::ffff:127.0.0.1", "loopback"),
        ("169.254.169.254", "link-local"),
        ("fe80::1", "link-local"),
        ("10.1.2.3", "private"),
        ("192.168.0.10", "private"),
        ("172.16.5.4", "private"),
        ("100.64.0.1", "private"),
        ("fd00::1", "private"),
        ("224.0.0.1", "multicast"),
        ("0.0.0.0", "unspecified"),
        ("93.184.216.34", None),
        ("2606:4700::1111", None),
    ],
)
def test_address_classes(address, reason):
    assert refused_reason(address) == reason


def test_an_allowed_network_is_reachable_and_only_that_one():
    import ipaddress

    allowed = (ipaddress.ip_network("10.0.0.0/8"),)
    assert refused_reason("10.9.8.7", allowed) is None
    assert refused_reason("192.168.1.1", allowed) == "private"


def test_loopback_pages_are_refused_unless_allowed(site):
    site.routes["/returns"] = (200, "text/html", PAGE)
    for url in (site.url("/returns"), site.url("/returns").replace("127.0.0.1", "localhost")):
        result = fetch([url])
        assert not result.documents and [e.code for e in result.errors] == [ErrorCode.WEB_ADDRESS_REFUSED]
        assert "loopback address; refused (list its network in the source's allow_private_networks" in result.errors[0].message
    assert site.requests == [], "nothing was sent"
    allowed = fetch([site.url("/returns")], allow=["127.0.0.0/8"])
    assert [d.title for d in allowed.documents] == ["Returns"] and not allowed.errors


@pytest.mark.parametrize("target", ["http://169.254.169.254/latest/meta-data/", "http://10.0.0.1/admin", "http://[::1]:1/"])
def test_a_redirect_chain_ending_at_a_private_address_is_refused(site, target):
    site.routes["/start"] = (302, "text/plain", b"", {"Location": "/middle"})
    site.routes["/middle"] = (301, "text/plain", b"", {"Location": target})
    result = fetch([site.url("/start")], allow=["127.0.0.0/8"])  # the site itself may be reached; the target not
    assert not result.documents
    assert [e.code for e in result.errors] == [ErrorCode.WEB_ADDRESS_REFUSED]
    assert site.requests == ["/robots.txt", "/start", "/middle"]


def test_allow_private_networks_must_be_cidrs(tmp_path):
    raw = {"sources": [{"name": "w", "type": "urls", "urls": ["http://intranet/"], "allow_private_networks": ["10.0.0.0/8", "intranet"]}], "spaces": [{"provider": "local"}]}
    with pytest.raises(ConfigError, match=r"sources\[0\].allow_private_networks\[1\]: must be a network in CIDR form .* got 'intranet'"):
        parse_config(raw, base_dir=tmp_path)
