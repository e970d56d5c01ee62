"""Repeated passages: does a page of hits say the same thing twice, and does the rule that skips
repeats (server/search.py `_Shown`) skip anything else?

    .venv/bin/python bench/repeated.py twins
    .venv/bin/python bench/repeated.py corpus --artifacts /tmp/ds/nfcorpus/artifacts --queries ../shared/data/nfcorpus
    .venv/bin/python bench/repeated.py cost --artifacts artifacts --queries bench/everyday

`twins`: examples/docs/guide indexed twice, as its Markdown files and as the HTML site built from
them (markdown-it, each page in a site's navigation and footer), as a team indexes its docs folder
and crawls its docs site. The on-topic questions of tests/test_answerable.py run at top_k 5, with
the rule and with exact repeats only: how many hits repeat the hits above them (by the rule: all
their words and all but at most `_Shown.MAX_NEW_RUNS` of their runs of three words shown), how
many new runs the hits that share most of their runs with those above bring, and how many pages
the hits cover.

`corpus`: an index of a corpus without copies made on purpose (`index eval --artifacts`, or an
index of BEIR files as bench/README.md builds them). Every query of the BEIR folder runs at top_k
10 both ways; each hit the rule drops is printed beside the hit that holds its words. The dropped
share is what the rule costs where repeats are rare.

`cost`: what the rule costs in time. Each query (embedded once beforehand) is searched in
process, `--rounds` times with the rule and as many with no repeat check at all (`repeated_texts`,
as `index eval` searches: no word of any chunk is read), alternated so that a busy machine slows
both alike; per query the median of each, then the median over the queries and of the per-query
differences. The exact-text check that came before the rule costs a set lookup per chunk.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from indexer.config import ServerConfig, load_config  # noqa: E402
from indexer.evaluation import load_queries  # noqa: E402
from indexer.pipeline import run_index  # noqa: E402
from server import search as search_module  # noqa: E402
from server.search import SearchFilters, search, word_runs  # noqa: E402
from server.service import SearchService, Settings  # noqa: E402

HERE = Path(__file__).resolve().parent


def ranked(service: SearchService, queries: list[str], top_k: int, rule: bool) -> list[list]:
    """Each query's hits, with the rule or (MAX_NEW_RUNS set to -1) with exact repeats only."""
    saved = search_module._Shown.MAX_NEW_RUNS
    search_module._Shown.MAX_NEW_RUNS = saved if rule else -1
    try:
        return [service.search(q, top_k=top_k, filters=SearchFilters()).hits for q in queries]
    finally:
        search_module._Shown.MAX_NEW_RUNS = saved


def repeats(hits: list) -> int:
    """Hits the rule counts as repeating the hits above them."""
    shown, count = search_module._Shown(), 0
    for hit in hits:
        count += shown.holds(hit.text)
        shown.add(hit.text)
    return count


def new_runs(hits: list) -> list[tuple[int, float]]:
    """(new runs, share held) of each hit that shares at least half its runs with the hits above."""
    seen: set = set()
    out = []
    for hit in hits:
        runs = word_runs(hit.text)[1]
        held = len(runs & seen)
        if runs and held >= len(runs) / 2:
            out.append((len(runs) - held, held / len(runs)))
        seen |= runs
    return out


def open_service(artifacts: Path) -> SearchService:
    service = SearchService(Settings(artifacts=artifacts, server=ServerConfig(requests_per_minute=0, max_query_chars=100_000)))  # ArguAna asks in whole arguments
    service.load()
    return service


def twins() -> None:
    from markdown_it import MarkdownIt

    from tests.test_answerable import ON_TOPIC

    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        shutil.copytree(HERE.parent / "examples" / "docs" / "guide", root / "docs")
        (root / "site").mkdir()
        render = MarkdownIt("commonmark").enable("table")
        for page in sorted((root / "docs").glob("*.md")):
            body = page.read_text(encoding="utf-8").split("---\n", 2)[-1]  # the front matter is not on the site
            html = (f"<html><head><title>{page.stem} · Docs</title></head><body><nav><a href='/'>Home</a> <a href='/guide/'>Guide</a></nav>"
                    f"<main>{render.render(body)}</main><footer>© 2026 Example</footer></body></html>")
            (root / "site" / f"{page.stem}.html").write_text(html, encoding="utf-8")
        (root / "index.toml").write_text('artifacts = "artifacts"\n[[sources]]\nname = "folder"\ntype = "files"\npath = "docs"\n'
                                         '[[sources]]\nname = "site"\ntype = "files"\npath = "site"\n[[spaces]]\nprovider = "local"\n')
        config = load_config(root / "index.toml")
        report = run_index(config)
        if report.errors:
            sys.exit(f"indexing failed: {report.errors}")
        service = open_service(config.artifacts)
        try:
            print(f"{len(ON_TOPIC)} questions, top_k 5, examples/docs/guide as Markdown and as HTML\n")
            print("| | questions with a repeat | hits repeating a passage | pages (of the 14) per top 5 (mean) |")
            print("| --- | --- | --- | --- |")
            overlaps = {}
            for name, rule in (("exact repeats only", False), ("the rule", True)):
                results = ranked(service, ON_TOPIC, 5, rule)
                counts = [repeats(hits) for hits in results]
                pages = sum(len({h.doc_id.rsplit("/", 1)[-1].rsplit(".", 1)[0] for h in hits}) for hits in results) / len(results)
                print(f"| {name} | {sum(c > 0 for c in counts)} | {sum(counts)} of {sum(len(h) for h in results)} | {pages:.2f} |")
                overlaps[name] = sorted(n for hits in results for n, _ in new_runs(hits))
            for name, found in overlaps.items():
                print(f"\n{name}: new runs of the {len(found)} hits holding at least half their runs above them: {found}")
        finally:
            service.close()


def corpus(artifacts: Path, queries_folder: Path, split: str) -> None:
    queries = list(load_queries(queries_folder, split).values())
    service = open_service(artifacts)
    try:
        exact = ranked(service, queries, 10, rule=False)
        ruled = ranked(service, queries, 10, rule=True)
    finally:
        service.close()
    dropped = 0
    for query, before, after in zip(queries, exact, ruled):
        kept = {h.chunk_id for h in after}
        for i, hit in enumerate(before):
            if hit.chunk_id in kept:
                continue
            above = before[:i]
            shown = search_module._Shown()
            for h in above:
                shown.add(h.text)
            if not shown.holds(hit.text):
                continue  # pushed below the 10th by a hit the rule let in, not dropped by it
            dropped += 1
            runs = word_runs(hit.text)[1]
            held = {h.chunk_id: len(runs & word_runs(h.text)[1]) for h in above}
            holder = max(above, key=lambda h: held[h.chunk_id])
            share = held[holder.chunk_id] / len(runs)
            print(f"{query[:60]!r}: dropped {hit.doc_id} (#{i + 1}), {share:.0%} of its runs in {holder.doc_id}\n"
                  f"    dropped: {hit.text[:110]!r}\n    holder:  {holder.text[:110]!r}")
    total = sum(len(h) for h in exact)
    print(f"\n{len(queries)} queries, top_k 10: the rule dropped {dropped} of {total} hits ({dropped / max(total, 1):.2%})")


def cost(artifacts: Path, queries_folder: Path, split: str, rounds: int) -> None:
    queries = list(load_queries(queries_folder, split).values())
    service = open_service(artifacts)
    try:
        generation = service.generation
        (space,) = generation.spaces.values()
        vectors = np.asarray(service._embedder_for(space).embed_queries(queries), dtype=np.float32)
        for mode in ("lexical", "hybrid"):
            ruled, unchecked = [], []
            for query, vector in zip(queries, vectors):
                vector = None if mode == "lexical" else vector
                search(generation, space, vector, query, top_k=10, mode=mode)  # warms this query's pages, not counted
                times: dict[bool, list[float]] = {False: [], True: []}
                for turn in range(rounds):
                    for repeated in ((False, True) if turn % 2 == 0 else (True, False)):
                        start = time.perf_counter()
                        search(generation, space, vector, query, top_k=10, mode=mode, repeated_texts=repeated)
                        times[repeated].append((time.perf_counter() - start) * 1000)
                ruled.append(statistics.median(times[False]))
                unchecked.append(statistics.median(times[True]))
            differences = np.subtract(ruled, unchecked)
            print(f"{mode}: {len(queries)} queries, top_k 10, median search {statistics.median(ruled):.3f} ms with the rule, "
                  f"{statistics.median(unchecked):.3f} ms without any repeat check; per query the rule adds "
                  f"{np.median(differences):+.3f} ms (median), {np.percentile(differences, 90):+.3f} ms (90th percentile)")
    finally:
        service.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("twins", help="examples/docs/guide as Markdown beside its HTML site")
    indexed = argparse.ArgumentParser(add_help=False)  # what `corpus` and `cost` both read
    indexed.add_argument("--artifacts", type=Path, required=True, help="artifacts folder of an indexed corpus")
    indexed.add_argument("--queries", type=Path, required=True, help="a BEIR folder whose queries to run")
    indexed.add_argument("--split", default="test")
    commands.add_parser("corpus", parents=[indexed], help="what the rule drops on an index without copies made on purpose")
    timed = commands.add_parser("cost", parents=[indexed], help="the time the rule adds to a search")
    timed.add_argument("--rounds", type=int, default=5, help="searches of each query each way")
    args = parser.parse_args()
    if args.command == "twins":
        twins()
    elif args.command == "corpus":
        corpus(args.artifacts, args.queries, args.split)
    else:
        cost(args.artifacts, args.queries, args.split, args.rounds)


if __name__ == "__main__":
    main()
