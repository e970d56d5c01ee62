"""Serving at scale: a generated 100k-chunk generation searched in-process and over HTTP, and a
1M-vector index opened cold.

    .venv/bin/python bench/serve.py build   --work /tmp/serve-bench --chunks 100000   # once: ~25 min on 2 cores
    .venv/bin/python bench/serve.py search  --work /tmp/serve-bench                   # latency, QPS, recall, RSS
    .venv/bin/python bench/serve.py million --work /tmp/serve-bench                   # 1M vectors: start-up, RSS
    .venv/bin/python bench/serve.py million-generation --work /tmp/serve-bench        # a whole 1M-chunk generation: open time
    .venv/bin/python bench/serve.py update  --work /tmp/serve-bench                   # a 1% change written as a run does vs a full build

`build` writes generated Markdown (one heading + ~45 words per section, one section per chunk)
and indexes it with `index run` and the bundled local model, so the FAISS index type is the one
the indexer picks for that size. The words are real English from the example corpus, drawn
per document from a few topics, so the local model's vectors have the structure real text has
(random vectors would make any graph index look bad and any exact scan look the same).

`search` reports, in one run:
- in-process `search()` p50/p99 per mode with cached query vectors (the service's LRU cache),
  over 2,000 distinct queries, beside the same searches forced through an exact flat scan;
- recall@10 of the approximate (IVF) index against the exact scan of the same vectors;
- `index serve --workers 2`: time from start to /readyz, RSS per process, and p50/p99 and QPS
  of POST /v1/search from an asyncio client at 1, 2 and 16 connections (1–2: a request's own
  latency; 16: throughput, where p50 is mostly queueing), beside /healthz as the baseline.

`million` makes 1M vectors (the 100k model vectors, each repeated 10 times with small noise),
builds the index the indexer would (IVF), and measures opening it in a fresh process (cold page
cache is not forced: the machine is shared) and one search, with RSS.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from search_latency import percentile  # a sibling script: bench/ is on sys.path when this runs

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

SECTIONS_PER_DOC = 20
WORDS_PER_SECTION = 45
CONFIG = """
artifacts = "artifacts"
[[sources]]
name = "generated"
type = "files"
path = "corpus"
[[spaces]]
provider = "local"
[server]
requests_per_minute = 0   # one load generator is every client here
"""


def vocabulary() -> list[str]:
    words: dict[str, None] = {}
    for path in sorted((REPO / "examples" / "docs").rglob("*")):
        if path.is_file():
            for w in re.findall(r"[A-Za-z][a-z]{2,}", path.read_text(encoding="utf-8", errors="ignore")):
                words[w.lower()] = None
    return list(words)


def sentence_maker(seed: int):
    rng = random.Random(seed)
    words = vocabulary()
    topics = [rng.sample(words, 60) for _ in range(400)]

    def section(topic_ids: list[int]) -> str:
        pool = [w for t in topic_ids for w in topics[t]]
        return " ".join(rng.choice(pool) if rng.random() < 0.85 else rng.choice(words) for _ in range(WORDS_PER_SECTION))

    return rng, topics, section


def build(args) -> None:
    work = Path(args.work)
    corpus = work / "corpus"
    docs = args.chunks // SECTIONS_PER_DOC
    rng, topics, section = sentence_maker(7)
    corpus.mkdir(parents=True, exist_ok=True)
    for d in range(docs):
        chosen = rng.sample(range(len(topics)), 3)
        parts = [f"# Document {d}"]
        for s in range(SECTIONS_PER_DOC):
            parts.append(f"## Part {s}\n\n{section(rng.sample(chosen, 2)).capitalize()}.")
        (corpus / f"doc-{d:06}.md").write_text("\n\n".join(parts) + "\n", encoding="utf-8")
    (work / "index.toml").write_text(CONFIG, encoding="utf-8")
    started = time.perf_counter()
    subprocess.run([str(REPO / ".venv" / "bin" / "index"), "run", "--config", str(work / "index.toml")], check=True)
    print(f"built {docs} documents in {time.perf_counter() - started:.0f} s")


def queries(n: int) -> list[str]:
    rng, topics, section = sentence_maker(99)
    return [" ".join(section([rng.randrange(len(topics))]).split()[: rng.randint(4, 12)]) for _ in range(n)]


def rss_mb(pid: int | str = "self") -> float:
    return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def in_process(work: Path, texts: list[str]) -> dict:
    import faiss

    from server.service import SearchService, Settings

    faiss.omp_set_num_threads(1)
    service = SearchService(Settings(artifacts=work / "artifacts", query_cache_size=len(texts) + 10))
    generation = service.load()
    space = next(iter(generation.spaces.values()))
    vectors = [service.query_vector(space, q) for q in texts]  # fills the cache: what follows is search alone
    report = {"chunks": space.size, "index": "+".join(type(index).__name__ for index, _, _ in space.dense.parts)}

    exact = faiss.IndexFlatIP(space.dense.d)
    exact.add(space.dense.reconstruct_batch(np.arange(space.size)))  # a generation `build` wrote: one segment, no deletions
    truth = exact.search(np.stack(vectors), 10)[1]
    found = space.dense.search(np.stack(vectors), 10)[1]  # the segments as the server searches them
    report["recall@10_vs_exact"] = round(float(np.mean([len(set(a) & set(b)) / 10 for a, b in zip(found, truth)])), 4)

    def timed(fn) -> list[float]:
        out = []
        for q in texts:
            t = time.perf_counter()
            fn(q)
            out.append((time.perf_counter() - t) * 1000)
        return out

    for mode in ("dense", "lexical", "hybrid"):
        times = timed(lambda q: service.search(q, top_k=10, mode=mode))
        report[f"in_process_{mode}_ms"] = {"p50": round(percentile(times, 0.5), 3), "p99": round(percentile(times, 0.99), 3)}
    flat_times = timed(lambda q: exact.search(service.query_vector(space, q).reshape(1, -1), 100))
    report["exact_scan_top100_ms"] = {"p50": round(percentile(flat_times, 0.5), 3), "p99": round(percentile(flat_times, 0.99), 3)}
    service.close()
    return report


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def load(url: str, bodies: list[dict | None], connections: int) -> tuple[list[float], float, int]:
    import httpx

    queue = list(enumerate(bodies))
    times: list[float] = []
    failures = 0

    async def worker(client):
        nonlocal failures
        while queue:
            _, body = queue.pop()
            t = time.perf_counter()
            r = await (client.post(url, json=body) if body is not None else client.get(url))
            times.append((time.perf_counter() - t) * 1000)
            failures += r.status_code != 200

    limits = httpx.Limits(max_connections=connections)
    async with httpx.AsyncClient(limits=limits, timeout=30) as client:
        started = time.perf_counter()
        await asyncio.gather(*(worker(client) for _ in range(connections)))
        return times, time.perf_counter() - started, failures


def over_http(work: Path, texts: list[str], workers: int, concurrency: list[int]) -> dict:
    import httpx

    port = free_port()
    log = open(work / "serve-bench.log", "w+")  # a file, not a pipe nobody reads: a full pipe would block the server
    started = time.perf_counter()
    proc = subprocess.Popen(
        [str(REPO / ".venv" / "bin" / "index"), "serve", "--config", str(work / "index.toml"), "--port", str(port), "--workers", str(workers), "--no-access-log"],
        stdout=subprocess.DEVNULL, stderr=log, start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        while True:
            try:
                if httpx.get(f"{base}/readyz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if proc.poll() is not None:
                log.seek(0)
                raise SystemExit(f"server exited: {log.read()[-2000:]}")
            time.sleep(0.02)
        ready = time.perf_counter() - started
        children = subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True, text=True).stdout.split()
        # Warm: each query a few times per worker, so (nearly) every worker has its vector cached.
        for _ in range(3 * workers):
            asyncio.run(load(f"{base}/v1/search", [{"query": q, "top_k": 10} for q in texts], 4))
        report = {"workers": workers, "start_to_ready_s": round(ready, 2)}
        for connections in concurrency:
            # /healthz first at the same concurrency: what the HTTP stack and the client cost without a search.
            health, _, _ = asyncio.run(load(f"{base}/healthz", [None] * len(texts), connections))
            times, wall, failures = asyncio.run(load(f"{base}/v1/search", [{"query": q, "top_k": 10} for q in texts], connections))
            report[f"connections_{connections}"] = {
                "healthz_ms": {"p50": round(percentile(health, 0.5), 2), "p99": round(percentile(health, 0.99), 2)},
                "search_ms": {"p50": round(percentile(times, 0.5), 2), "p99": round(percentile(times, 0.99), 2)},
                "qps": round(len(times) / wall, 1),
                "failed": failures,
            }
        # The server's processes: the supervisor, its workers, and multiprocessing's resource tracker.
        report["rss_mb"] = {pid: round(rss_mb(pid)) for pid in [str(proc.pid), *children] if Path(f"/proc/{pid}").exists()}
        return report
    finally:
        proc.send_signal(signal.SIGTERM)  # to the supervisor, as a service manager would; it stops its workers
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            raise SystemExit(f"the server did not stop within 30 s of SIGTERM; its log: {log.name}")
        finally:
            log.close()


def search_bench(args) -> None:
    work = Path(args.work)
    texts = queries(args.queries)
    if not args.http_only:
        print(json.dumps({"in_process": in_process(work, texts)}, indent=2), flush=True)
    concurrency = [int(c) for c in args.connections.split(",")]
    print(json.dumps({"http": over_http(work, texts[: args.http_queries], args.workers, concurrency)}, indent=2), flush=True)


def million(args) -> None:
    import faiss

    from indexer.segments import build_dense_index
    from server.reader import Generation

    work = Path(args.work)
    path = work / "million.faiss"
    if not path.exists():
        generation = Generation.open_current(work / "artifacts")
        space = next(iter(generation.spaces.values()))
        base = space.dense.reconstruct_batch(np.arange(space.size))
        generation.close()
        rng = np.random.default_rng(1)
        copies = -(-args.vectors // len(base))
        vectors = np.concatenate([base + rng.normal(0, 0.02, base.shape).astype(np.float32) for _ in range(copies)])[: args.vectors]
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        faiss.omp_set_num_threads(2)
        started = time.perf_counter()
        index = build_dense_index(vectors)
        print(f"built {type(index).__name__} of {len(vectors)} vectors in {time.perf_counter() - started:.0f} s")
        faiss.write_index(index, str(path))
    probe = (
        "import numpy as np; from indexer.dense import open_index; import faiss; "
        f"faiss.omp_set_num_threads(1); index = open_index(__import__('pathlib').Path({str(path)!r})); opened = time.perf_counter() - t; "
        "q = np.ones((1, index.d), dtype='float32'); q /= np.linalg.norm(q); "
        "s = time.perf_counter(); index.search(q, 100); first = time.perf_counter() - s; "
        "fields = [index.ntotal, f'{opened:.3f}', f'{first * 1000:.1f}']"
    )
    for out in in_fresh_processes(probe):
        print(f"vectors {out[0]}: import + open {out[1]} s, first search {out[2]} ms, RSS {out[3]} MB, file {path.stat().st_size / 2**20:.0f} MB")


def in_fresh_processes(body: str, times: int = 3) -> list[list[str]]:
    """Run `body` (Python that sets `fields`, a list; `t` is its start time) in `times` new
    interpreters from the repository; each one's fields, then its RSS in MB."""
    code = (
        f"import os, time; t = time.perf_counter(); {body}; "
        "rss = int(open('/proc/self/statm').read().split()[1]) * os.sysconf('SC_PAGE_SIZE') / 2**20; print(*fields, f'{rss:.0f}')"
    )
    return [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True).stdout.split() for _ in range(times)]


def million_generation(args) -> None:
    """A whole 1M-chunk generation (the 100k generation's documents ten times over, under new doc
    ids, with million.faiss's vectors) written by the indexer's own writer; then the time and RSS
    of opening it as a server does (DuckDB, citations, FAISS, BM25, chunk store), in fresh processes."""
    import dataclasses
    from datetime import datetime, timezone

    from indexer import artifacts
    from indexer.documents import Chunk
    from indexer.previous import PreviousGeneration

    work = Path(args.work)
    target = work / "million-artifacts"
    if artifacts.read_current_id(target) is None:
        import faiss

        previous = PreviousGeneration.open(work / "artifacts")
        space_id = next(iter(previous.manifest["spaces"]))
        manifest = previous.space_manifest(space_id)
        base = previous.documents({row[0] for row in previous.db.execute("SELECT doc_id FROM documents").fetchall()})
        rows = previous.db.execute("SELECT doc_id, ordinal, start_offset, end_offset, text, heading_path, token_count FROM chunks ORDER BY vector_id").fetchall()
        previous.close()
        copies = args.vectors // len(rows)
        documents = [dataclasses.replace(d, doc_id=f"{d.doc_id}#{k}") for k in range(copies) for d in base]
        chunks = [Chunk(f"{doc}#{k}", o, s, e, t, tuple(h), n) for k in range(copies) for doc, o, s, e, t, h, n in rows]
        vectors = faiss.read_index(str(work / "million.faiss")).reconstruct_n(0, len(chunks))
        faiss.omp_set_num_threads(2)
        started = datetime.now(timezone.utc)
        summary = {"documents": {"added": len(documents)}, "chunks": {"embedded": 0, "reused": len(chunks)}, "tokens_embedded": 0, "cost_usd": 0.0, "errors": []}
        run = artifacts.RunRecord("run-bench-million", started, [], summary, [], ["local"])
        generation_id = artifacts.new_generation_id(started)
        t = time.perf_counter()
        folder, _ = artifacts.write_generation(target, generation_id, documents, [artifacts.SpaceBuild(space_id, manifest, np.zeros(0), chunks, vectors)], run)
        artifacts.verify_generation(folder)
        artifacts.publish(target, folder, generation_id, keep=1)
        print(f"wrote a generation of {len(documents)} documents and {len(chunks)} chunks in {time.perf_counter() - t:.0f} s")
    probe = (
        "from server.reader import Generation; import faiss; faiss.omp_set_num_threads(1); "
        f"g = Generation.open_current(__import__('pathlib').Path({str(target)!r})); opened = time.perf_counter() - t; "
        "space = next(iter(g.spaces.values())); s = time.perf_counter(); g.hits(space.space_id, list(range(0, 10**6, 50_000))); hits = time.perf_counter() - s; "
        "fields = [space.size, f'{opened:.3f}', f'{hits * 1000:.1f}']"
    )
    for out in in_fresh_processes(probe):
        print(f"generation of {out[0]} chunks: imports + Generation.open {out[1]} s, 20 hits {out[2]} ms, RSS {out[3]} MB")
    size = sum(p.stat().st_size for p in target.rglob("*") if p.is_file())
    print(f"generation on disk: {size / 2**30:.2f} GiB")


def update(args) -> None:
    """A 1% change written two ways by the indexer's writer, from the 100k generation `build` made:
    as a run writes it (the previous generation's segments shared, one new segment, the changed
    documents' old rows deleted) and as a full build of the same chunks. Neither is published."""
    import dataclasses
    from datetime import datetime, timezone

    import faiss

    from indexer import artifacts
    from indexer.documents import Chunk
    from indexer.metadb import MetaUpdate, stored_chunks
    from indexer.previous import PreviousGeneration

    faiss.omp_set_num_threads(2)
    previous = PreviousGeneration.open(Path(args.work) / "artifacts")
    space_id = next(iter(previous.manifest["spaces"]))
    manifest = previous.space_manifest(space_id)
    doc_ids = sorted(row[0] for row in previous.db.execute("SELECT doc_id FROM documents").fetchall())
    changed = set(random.Random(7).sample(doc_ids, max(1, len(doc_ids) * args.percent // 100)))
    documents = [dataclasses.replace(d, text=d.text + "\n\nEdited.") if d.doc_id in changed else d for d in previous.documents(set(doc_ids))]
    kept_ids, _ = previous.carried_ids(space_id, set(doc_ids) - changed)
    edited_ids, _ = previous.carried_ids(space_id, changed)
    kept, edited = stored_chunks(previous.folder, space_id, kept_ids), stored_chunks(previous.folder, space_id, edited_ids)
    added = [Chunk(c.doc_id, c.ordinal, c.start, c.end, c.text + " Edited.", c.heading_path, c.token_count + 2) for c in edited]
    rng = np.random.default_rng(7)
    vectors = previous.vectors(space_id, edited_ids) + rng.normal(0, 0.02, (len(added), int(manifest["dimension"]))).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    space_folder, metadata = previous.space_folder(space_id), previous.folder / "meta.duckdb"
    all_vectors = np.concatenate([previous.vectors(space_id, kept_ids), vectors])
    previous.close()
    summary = {"documents": {"updated": len(changed)}, "chunks": {"embedded": len(added), "reused": 0}, "tokens_embedded": 0, "cost_usd": 0.0, "errors": []}
    run = artifacts.RunRecord("run-bench-update", datetime.now(timezone.utc), [], summary, [], ["local"])
    target = Path(args.work) / "update-artifacts"
    report = {"documents": len(documents), "changed_documents": len(changed), "chunks": len(kept) + len(added), "changed_chunks": len(added)}
    builds = {
        "update": artifacts.SpaceBuild(space_id, manifest, kept_ids, added, vectors, previous=space_folder),
        "full_build": artifacts.SpaceBuild(space_id, manifest, np.zeros(0), kept + added, all_vectors),
    }
    for name, build in builds.items():
        generation_id = artifacts.new_generation_id()
        started = time.perf_counter()
        update = MetaUpdate(metadata, frozenset(changed)) if name == "update" else None  # a run updates meta.duckdb too
        folder, written = artifacts.write_generation(target, generation_id, documents, [build], run, update=update)
        artifacts.verify_generation(folder)
        report[f"{name}_s"] = round(time.perf_counter() - started, 2)
        report[f"{name}_space"] = written[space_id]
        artifacts.discard(folder)
    report["update_over_full_build"] = round(report["update_s"] / report["full_build_s"], 3)
    print(json.dumps(report, indent=2))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build")
    b.add_argument("--work", required=True)
    b.add_argument("--chunks", type=int, default=100_000)
    s = sub.add_parser("search")
    s.add_argument("--work", required=True)
    s.add_argument("--queries", type=int, default=2000)
    s.add_argument("--workers", type=int, default=2)
    s.add_argument("--connections", default="1,2,16", help="client concurrencies to measure, comma-separated")
    s.add_argument("--http-queries", type=int, default=300, help="distinct queries over HTTP (each worker embeds every one while warming up)")
    s.add_argument("--http-only", action="store_true")
    m = sub.add_parser("million")
    m.add_argument("--work", required=True)
    m.add_argument("--vectors", type=int, default=1_000_000)
    g = sub.add_parser("million-generation")
    g.add_argument("--work", required=True)
    g.add_argument("--vectors", type=int, default=1_000_000)
    u = sub.add_parser("update")
    u.add_argument("--work", required=True)
    u.add_argument("--percent", type=int, default=1, help="share of the documents changed")
    args = parser.parse_args()
    {"build": build, "search": search_bench, "million": million, "million-generation": million_generation, "update": update}[args.command](args)


if __name__ == "__main__":
    main()
