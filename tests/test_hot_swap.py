"""A running server picks up each newly published generation without a restart and without
failing a request; a broken generation is refused and the old one keeps serving."""

import threading
import time

import pytest
from litestar.testing import TestClient

from indexer.config import ServerConfig, load_config
from indexer.pipeline import run_index
from server.app import create_app
from server.service import Settings
from tests.conftest import api_client, flip_bits, write_config


def corpus(tmp_path, text: str):
    docs = tmp_path / "docs"
    docs.mkdir(exist_ok=True)
    (docs / "policy.md").write_text(f"# Policy\n\n{text}\n")
    (docs / "hours.md").write_text("# Hours\n\nThe shop opens at nine and closes at six on weekdays.\n")
    return load_config(write_config(tmp_path, '[[sources]]\nname = "d"\ntype = "files"\npath = "docs"\n[[spaces]]\nprovider = "local"\n'))


def wait_for(predicate, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def test_new_generations_are_served_without_dropping_requests(tmp_path, local_embedder):
    config = corpus(tmp_path, "Refunds are paid within 30 days.")
    first = run_index(config).generation_id
    with api_client(config.artifacts, poll_seconds=0.1) as client:
        assert client.get("/v1/info").json()["generation"] == first
        failures, answered, stop = [], [0], threading.Event()

        ends = time.monotonic() + 300  # the load stops by itself too, should a publish never return

        def load():
            while not stop.is_set() and time.monotonic() < ends:
                response = client.post("/v1/search", json={"query": "when are refunds paid", "top_k": 2})
                if response.status_code != 200:
                    failures.append(response.text)
                answered[0] += 1

        threads = [threading.Thread(target=load) for _ in range(3)]
        for t in threads:
            t.start()
        published = []
        try:
            for days in range(81, 91):  # ten publishes under load
                config = corpus(tmp_path, f"Refunds are paid within {days} days.")
                published.append(run_index(config).generation_id)
                assert wait_for(lambda: client.get("/v1/info").json()["generation"] == published[-1]), "swapped within the poll interval"
        finally:
            stop.set()
            for t in threads:
                t.join()
        assert failures == [] and answered[0] > 10, f"{len(failures)} of {answered[0]} requests failed"
        top = client.post("/v1/search", json={"query": "when are refunds paid", "top_k": 1}).json()["hits"][0]
        assert "90 days" in top["text"], "the newest generation answers"
        service = client.app.state.service
        assert service.generation.id == published[-1] and not service.generation.closed


def test_a_server_started_over_a_damaged_generation_serves_the_kept_one_before_it(tmp_path, local_embedder):
    """A server restarted while CURRENT names a generation whose meta.duckdb fails its checksums
    (bit rot, a bad copy) answered 503 NO_GENERATION to every request until the next run. It now
    serves the kept generation an `index rollback` would, says so in /v1/info and the log, and
    takes the next good generation as usual. `index search` still says the generation is damaged."""
    config = corpus(tmp_path, "Refunds are paid within 30 days.")
    older = run_index(config).generation_id
    damaged = run_index(corpus(tmp_path, "Refunds are paid within 60 days.")).generation_id
    flip_bits(config.artifacts / "generations" / damaged / "meta.duckdb")
    with TestClient(create_app(Settings(artifacts=config.artifacts, poll_seconds=0.1))) as client:
        info = client.get("/v1/info").json()
        assert info["generation"] == older and info["refused"][0]["generation"] == damaged, info
        assert "the generation is damaged" in info["refused"][0]["error"]
        top = client.post("/v1/search", json={"query": "when are refunds paid", "top_k": 1})
        assert top.status_code == 200 and "30 days" in top.json()["hits"][0]["text"]
        assert top.json()["fallback"]["instead_of"] == damaged and "the generation is damaged" in top.json()["fallback"]["reason"]
        assert client.get("/readyz").status_code == 200
        newer = run_index(corpus(tmp_path, "Refunds are paid within 14 days.")).generation_id
        assert wait_for(lambda: client.get("/v1/info").json()["generation"] == newer), "the next good generation is served"
        answer = client.post("/v1/search", json={"query": "when are refunds paid", "top_k": 1}).json()
        assert "14 days" in answer["hits"][0]["text"] and "fallback" not in answer


def test_answers_from_an_older_generation_say_so_while_current_cannot_be_read(tmp_path, local_embedder):
    """A server that refuses what CURRENT names keeps answering from the generation before it, and
    said so only in /v1/info and its log: a chatbot got the older documents as if they were the
    latest. Every search response now carries `fallback` (which generation, why), the metrics a
    gauge to alert on, until CURRENT names a generation that is served."""
    import re

    config = corpus(tmp_path, "Refunds are paid within 30 days.")
    good = run_index(config).generation_id
    broken = config.artifacts / "generations" / "20991231T000000.000000Z-broken"
    broken.mkdir(parents=True)
    (broken / "manifest.json").write_text("{ half written")
    current = config.artifacts / "CURRENT"

    def answer() -> dict:
        response = client.post("/v1/search", json={"query": "when are refunds paid", "top_k": 1, "parse_time": True})
        assert response.status_code == 200, response.text
        return response.json()

    def gauge() -> float:
        return float(re.search(r"^static_rag_generation_fallback (\S+)$", client.get("/metrics").text, re.M).group(1))

    unlimited = ServerConfig(requests_per_minute=0)  # polled until each change shows: more requests than a browser's budget
    with TestClient(create_app(Settings(artifacts=config.artifacts, server=unlimited, poll_seconds=0.1))) as client:
        assert "fallback" not in answer() and gauge() == 0
        current.write_text(broken.name + "\n")
        assert wait_for(lambda: "fallback" in answer()), "the refusal shows in the answers"
        said = answer()
        assert said["generation"] == good and "30 days" in said["hits"][0]["text"]
        assert said["fallback"]["instead_of"] == broken.name and "manifest.json is corrupt" in said["fallback"]["reason"], said
        assert gauge() == 1
        listed = client.post("/v1/search", json={"query": "what changed this week", "parse_time": True}).json()
        assert listed["time_filter"]["only_time"] and listed["fallback"]["instead_of"] == broken.name, "a listing of recent changes says so too"
        current.write_text(good + "\n")  # `index rollback` to the generation served
        assert wait_for(lambda: "fallback" not in answer()) and gauge() == 0
        current.write_text(broken.name + "\n")  # pointed back at the refused one: not retried, flagged again
        assert wait_for(lambda: "fallback" in answer()) and gauge() == 1
        newer = run_index(corpus(tmp_path, "Refunds are paid within 14 days.")).generation_id
        assert wait_for(lambda: answer()["generation"] == newer)
        assert "fallback" not in answer() and "14 days" in answer()["hits"][0]["text"] and gauge() == 0


def test_a_broken_generation_is_refused_and_the_old_one_keeps_serving(tmp_path, local_embedder):
    config = corpus(tmp_path, "Refunds are paid within 30 days.")
    good = run_index(config).generation_id
    broken = config.artifacts / "generations" / "20991231T000000.000000Z-broken"
    broken.mkdir(parents=True)
    (broken / "manifest.json").write_text("{ half written")
    with TestClient(create_app(Settings(artifacts=config.artifacts, poll_seconds=0.1))) as client:
        (config.artifacts / "CURRENT").write_text(broken.name + "\n")
        assert wait_for(lambda: "refused" in client.get("/v1/info").json()), "the refusal shows in /v1/info (and the log)"
        info = client.get("/v1/info").json()
        assert info["generation"] == good and info["refused"][0]["generation"] == broken.name and "manifest.json is corrupt" in info["refused"][0]["error"]
        assert client.post("/v1/search", json={"query": "refunds", "top_k": 1}).status_code == 200
        newer = run_index(corpus(tmp_path, "Refunds are paid within 14 days.")).generation_id
        assert wait_for(lambda: client.get("/v1/info").json()["generation"] == newer), "a good generation after a broken one is served"


def test_a_retired_generation_closes_only_after_its_last_request(tmp_path, local_embedder):
    config = corpus(tmp_path, "Refunds are paid within 30 days.")
    run_index(config)
    from server.service import SearchService

    service = SearchService(Settings(artifacts=config.artifacts))
    old = service.load()
    with service.leased() as held:
        run_index(corpus(tmp_path, "Refunds are paid within 10 days."))
        new = service.load()
        assert held is old and new is not old and not old.closed, "a request in flight keeps its generation open"
        assert held.query("document_by_id", {"doc_id": "file:policy.md"})[0]["text"].endswith("30 days.")
    assert old.closed and not new.closed
    service.close()
    assert new.closed


def _resident_share(path) -> float:
    """The share of a file's pages in the page cache (mincore on a private mapping of it)."""
    import ctypes
    import mmap

    size = path.stat().st_size
    with open(path, "rb") as f:
        mapping = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_COPY)
    try:
        view = (ctypes.c_char * size).from_buffer(mapping)
        pages = -(-size // mmap.PAGESIZE)
        flags = (ctypes.c_ubyte * pages)()
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.mincore(ctypes.c_void_p(ctypes.addressof(view)), ctypes.c_size_t(size), flags) != 0:
            pytest.skip(f"mincore failed: errno {ctypes.get_errno()}")
        del view
        return sum(b & 1 for b in flags) / pages
    finally:
        mapping.close()


def test_a_generation_is_read_into_memory_before_it_serves(tmp_path, local_embedder):
    """A generation whose files are not in the page cache (unpacked elsewhere, after a reboot)
    would make its first queries wait on the disk; loading it reads them first (server/warming.py)."""
    import os

    from server.service import SearchService

    config = corpus(tmp_path, "Refunds are paid within thirty days.")
    run_index(config)
    generation = tmp_path / "artifacts" / "generations"
    for path in (p for p in generation.rglob("*") if p.is_file()):  # written and synced: clean pages the kernel can drop
        fd = os.open(path, os.O_RDONLY)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        os.close(fd)
    stores = list(generation.rglob("chunks.jsonl"))  # only queries read the chunk store
    if not stores or max(_resident_share(p) for p in stores) > 0.5:
        pytest.skip("this filesystem keeps the files in memory whatever we ask")
    SearchService(Settings(artifacts=tmp_path / "artifacts")).load()
    assert min(_resident_share(p) for p in stores) == 1.0


def test_postings_of_a_newer_analyzer_are_refused_by_name_and_the_old_generation_keeps_serving(tmp_path, local_embedder):
    """Upgrade the servers first: a generation whose postings an analyzer this version does not
    know wrote (a newer indexer's) is refused with what it is, not searched with the wrong terms."""
    import json
    import shutil

    from tests.test_old_generations import reseal

    config = corpus(tmp_path, "Refunds are paid within 30 days.")
    good = run_index(config).generation_id
    future = config.artifacts / "generations" / "20991231T000000.000000Z-future"
    shutil.copytree(config.artifacts / "generations" / good, future)  # copies, not links: the served generation stays as it is
    for info in future.glob("spaces/*/segments/*/lexical/analyzer.json"):
        info.write_text(json.dumps(json.loads(info.read_text()) | {"name": "english-snowball-v99"}))
    reseal(future, json.loads((future / "manifest.json").read_text()) | {"generation_id": future.name})
    with TestClient(create_app(Settings(artifacts=config.artifacts, poll_seconds=0.1))) as client:
        (config.artifacts / "CURRENT").write_text(future.name + "\n")
        assert wait_for(lambda: "refused" in client.get("/v1/info").json())
        info = client.get("/v1/info").json()
        assert info["generation"] == good and info["refused"][0]["generation"] == future.name
        said = info["refused"][0]["error"]
        assert "'english-snowball-v99'" in said and "english-snowball-v3" in said and "upgrade the servers first" in said, said
        assert client.post("/v1/search", json={"query": "refunds", "top_k": 1}).json()["hits"][0]["title"] == "Policy"
