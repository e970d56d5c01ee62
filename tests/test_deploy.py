"""The README's deploy recipe, end to end on loopback: the nightly side publishes a generation
(`index run`, then `index pack --latest` into a folder a static host serves); each server runs
`index pull` against that folder and answers; the next night's generation reaches the running
server the same way."""

import json
import re
import time

import httpx
from click.testing import CliRunner

from indexer.cli import cli
from tests.conftest import write_config
from tests.servers import running_server


def index(*args: str):
    result = CliRunner().invoke(cli, list(args))
    assert "Traceback" not in result.output, result.output
    return result


def publish(site, dist, prefix="/search"):
    """What the workflow's upload does: the folder's files, served as they are now."""
    for path in dist.iterdir():
        site.routes[f"{prefix}/{path.name}"] = lambda path=path: (200, "application/octet-stream", path.read_bytes())


def test_publish_then_every_server_pulls_the_newest_and_answers(tmp_path, local_embedder, site, monkeypatch):
    repo, dist, srv = tmp_path / "repo", tmp_path / "dist", tmp_path / "srv"
    (repo / "docs").mkdir(parents=True)
    (repo / "docs" / "refunds.md").write_text("# Refunds\n\nRefunds reach your card within five business days.\n")
    (repo / "docs" / "parcels.md").write_text("# Parcels\n\nParcels ship from Lisbon every weekday.\n")
    config = write_config(repo, '[[sources]]\nname = "help"\ntype = "files"\npath = "docs"\n[[spaces]]\nprovider = "local"\n')

    # The nightly job: run, pack with the pointer, upload the folder.
    assert index("run", "-c", str(config)).exit_code == 0
    packed = json.loads(index("pack", "-c", str(config), "-o", str(dist / "generation.tar.gz"), "--latest", "--json").output)
    assert json.loads((dist / "latest.json").read_text()) == {"generation": packed["generation"], "archive": "generation.tar.gz",
                                                              "sha256": packed["sha256"], "bytes": packed["bytes"]}
    publish(site, dist)

    # Each server: pull with its read token, then serve.
    monkeypatch.setenv("SEARCH_PULL_TOKEN", "pull-secret")
    pulled = index("pull", site.url("/search"), "--token-env", "SEARCH_PULL_TOKEN", "--artifacts", str(srv), "--json")
    assert pulled.exit_code == 0 and json.loads(pulled.output)["generation"] == packed["generation"]
    assert all(h.get("Authorization") == "Bearer pull-secret" for p, h in site.request_headers if p.startswith("/search"))
    again = index("pull", site.url("/search"), "--token-env", "SEARCH_PULL_TOKEN", "--artifacts", str(srv))
    assert again.exit_code == 0 and re.search(r"already served \(built \d+ hour\(s\) ago\); nothing downloaded", again.output), again.output
    assert [p for p, _ in site.request_headers].count("/search/generation.tar.gz") == 1, "nothing newer: no download"

    with running_server(srv, tmp_path) as server:
        def top(query):
            return httpx.post(f"{server.base}/v1/search", json={"query": query, "top_k": 1}, timeout=30).json()["hits"][0]

        assert top("how long do refunds take")["title"] == "Refunds"

        # The next night: a page changed; the same steps publish it, the same pull installs it.
        (repo / "docs" / "parcels.md").write_text("# Parcels\n\nParcels ship from Porto every weekday, and on Saturdays in December.\n")
        assert index("run", "-c", str(config)).exit_code == 0
        newer = json.loads(index("pack", "-c", str(config), "-o", str(dist / "generation.tar.gz"), "--latest", "--json").output)
        assert newer["generation"] > packed["generation"]
        assert index("pull", site.url("/search/latest.json"), "--token-env", "SEARCH_PULL_TOKEN", "--artifacts", str(srv)).exit_code == 0
        deadline = time.monotonic() + 30
        while httpx.get(f"{server.base}/v1/info", timeout=5).json()["generation"] != newer["generation"]:
            assert time.monotonic() < deadline, "the running server swapped to the pulled generation"
            time.sleep(0.2)
        assert "Porto" in top("where do parcels ship from")["text"]

    # A damaged download installs nothing; a missing pointer says what to publish.
    site.routes["/search/generation.tar.gz"] = (200, "application/octet-stream", b"\0" * newer["bytes"])
    (dist / "latest.json").write_text(json.dumps({**json.loads((dist / "latest.json").read_text()), "generation": "20991231T000000.000000Z-abcdef"}))
    broken = index("pull", site.url("/search"), "--token-env", "SEARCH_PULL_TOKEN", "--artifacts", str(srv))
    assert broken.exit_code == 1 and "nothing installed" in broken.output
    assert (srv / "CURRENT").read_text().strip() == newer["generation"]
    site.routes["/huge/latest.json"] = (200, "application/json", b" " * 200_000)
    huge = index("pull", site.url("/huge"), "--artifacts", str(srv))
    assert huge.exit_code == 1 and "is not a latest.json" in huge.output
    missing = index("pull", site.url("/elsewhere"), "--artifacts", str(srv))
    assert missing.exit_code == 1 and "HTTP 404" in missing.output and "index pack --latest" in missing.output
    unset = index("pull", site.url("/search"), "--token-env", "NO_SUCH_VARIABLE", "--artifacts", str(srv))
    assert unset.exit_code == 2 and "NO_SUCH_VARIABLE is not set" in unset.output
