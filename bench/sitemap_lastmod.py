"""What a sitemap's <lastmod> saves a nightly run of a web source, measured beside the run that asks
for every page (`trust_lastmod = false`, the default, and what every run did before), in the same process.

    .venv/bin/python bench/sitemap_lastmod.py --pages 400                # the default politeness, 0.25 s
    .venv/bin/python bench/sitemap_lastmod.py --pages 2000 --delay 0.05

A loopback site of N pages behind a sitemap with a <lastmod> per page and an ETag per page (a static
host: an unchanged page answers 304). For each setting, in a folder of its own: `index run` cold,
again with nothing changed, then with 1% of the pages edited and their lastmod moved. Prints wall
seconds and the requests the site saw per run. Then how many pages of a 10,000-page site nightly runs
ask for on their weekly turn (`Lastmods.due`), over 60 nights after every page was downloaded once.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from indexer.sources.sitemaps import Lastmods  # noqa: E402
from tests.conftest import Site  # noqa: E402

WORDS = "returns sizes care gifts shipping warranty repairs boots leather laces".split()


class LastmodSite:
    def __init__(self, pages: int):
        self.site, self.pages, self.lastmod = Site(), pages, {}
        for i in range(pages):
            self.page(i, 1, "2026-10-01")
        self.write_sitemap()

    def page(self, i: int, edition: int, lastmod: str) -> None:
        text = " ".join(WORDS[(i + k) % len(WORDS)] for k in range(60)) + f" page {i} edition {edition}."
        html = f"<html><head><title>Page {i}</title></head><body><article><h1>Page {i}</h1><p>{text}</p></article></body></html>"
        self.site.routes[f"/p{i}"] = (200, "text/html", html.encode(), {"ETag": f'"{i}-{edition}"'})
        self.lastmod[i] = lastmod

    def write_sitemap(self) -> None:
        entries = "".join(f"<url><loc>{self.site.url(f'/p{i}')}</loc><lastmod>{said}</lastmod></url>" for i, said in self.lastmod.items())
        self.site.routes["/sitemap.xml"] = (200, "application/xml",
                                            f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{entries}</urlset>'.encode())

    def edit_one_percent(self) -> None:
        now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        for i in range(0, self.pages, 100):
            self.page(i, 2, now)
        self.write_sitemap()


def runs(pages: int, delay: float, trust: bool) -> list[tuple[str, float, int, int]]:
    served = LastmodSite(pages)
    folder = Path(tempfile.mkdtemp(prefix="bench-lastmod-"))
    (folder / "index.toml").write_text(
        f'[[sources]]\nname = "site"\ntype = "urls"\nallow_private_networks = ["127.0.0.0/8"]\nper_host_delay_seconds = {delay}\n'
        f'max_pages = {pages + 10}\nsitemaps = ["{served.site.url("/sitemap.xml")}"]\ntrust_lastmod = {str(trust).lower()}\n'
        '[[spaces]]\nprovider = "local"\n')
    index = str(Path(sys.executable).with_name("index"))
    out = []
    for label in ("cold", "nothing changed", "1% edited"):
        if label == "1% edited":
            served.edit_one_percent()
        served.site.requests.clear()
        served.site.not_modified.clear()
        started = time.perf_counter()
        done = subprocess.run([index, "run", "-c", str(folder / "index.toml"), "--silent"], cwd=folder, capture_output=True, text=True,
                              env={**os.environ, "HF_HUB_OFFLINE": "1"})
        seconds = time.perf_counter() - started
        if done.returncode != 0:
            sys.exit(f"index run exited {done.returncode}: {done.stderr[-2000:]}")
        out.append((label, seconds, len(served.site.requests), len(served.site.not_modified)))
    served.site.close()
    return out


def turn_night(pages: int, delay: float) -> list[tuple[str, float, int, int]]:
    """The crawl alone (no index run) of a night a week after every page was downloaded, the last
    run a day before: the pages whose turn came that day are asked for, all answering 304; beside
    the same crawl asking for every page."""
    from indexer.config import SourceConfig
    from indexer.documents import FetchState
    from indexer.sources.web import crawl_urls

    served = LastmodSite(pages)
    week_ago, now = datetime.now(timezone.utc) - timedelta(days=7, hours=1), datetime.now(timezone.utc)
    state = {f"url:{served.site.url(f'/p{i}')}": FetchState(etag=f'"{i}-1"', fetched_at=week_ago) for i in range(pages)}
    out = []
    for trust in (False, True):
        source = SourceConfig(name="site", type="urls", sitemaps=(served.site.url("/sitemap.xml"),), max_pages=pages + 10,
                              allow_private_networks=("127.0.0.0/8",), per_host_delay_seconds=delay, trust_lastmod=trust)
        served.site.requests.clear()
        served.site.not_modified.clear()
        started = time.perf_counter()
        crawl_urls(source, fetch_state=state, last_run=now - timedelta(days=1))
        out.append((f"{'trust' if trust else 'every page'}", time.perf_counter() - started, len(served.site.requests), len(served.site.not_modified)))
    served.site.close()
    return out


def nightly_turns(pages: int = 10_000, nights: int = 60) -> list[int]:
    """Pages asked for on their turn by each of `nights` nightly runs, every page downloaded on the
    night before the first and answering 304 since (so the time it was downloaded stays)."""
    urls = [f"https://help.example.com/articles/{i}-how-to-{i % 97}" for i in range(pages)]
    start = datetime(2026, 12, 1, 2, 0, tzinfo=timezone.utc)
    counts, last_run = [], start
    for night in range(1, nights + 1):
        lastmods = Lastmods(now=start + timedelta(days=night, minutes=(night * 7) % 40), since=last_run)  # the job starts minutes apart
        counts.append(sum(lastmods.due(u, start) for u in urls))
        last_run = lastmods.now
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=400)
    parser.add_argument("--delay", type=float, default=0.25, help="per_host_delay_seconds (the product's default: 0.25)")
    args = parser.parse_args()
    results = {trust: runs(args.pages, args.delay, trust) for trust in (False, True)}
    print(f"{args.pages} pages, per_host_delay_seconds = {args.delay}")
    print(f"{'run':<16} {'every page asked':>26} {'trust_lastmod = true':>30} {'ratio':>7}")
    for (label, base, asked, answered304), (_, ours, ours_asked, ours_304) in zip(results[False], results[True]):
        print(f"{label:<16} {base:>7.1f} s {asked:>5} req ({answered304:>4} 304) {ours:>9.1f} s {ours_asked:>5} req ({ours_304:>4} 304) "
              f"{ours / base:>7.3f}")
    base, ours = turn_night(args.pages, args.delay)
    print(f"{'a turn night':<16} {base[1]:>7.1f} s {base[2]:>5} req ({base[3]:>4} 304) {ours[1]:>9.1f} s {ours[2]:>5} req ({ours[3]:>4} 304) "
          f"{ours[1] / base[1]:>7.3f}   (the crawl alone)")
    counts = nightly_turns()
    print(f"10,000 pages, 60 nightly runs after all were downloaded: asked for on their turn {min(counts)}–{max(counts)} a night "
          f"(mean {sum(counts) / len(counts):.0f}, {sum(counts) / len(counts) / 100:.1f}%)")


if __name__ == "__main__":
    main()
