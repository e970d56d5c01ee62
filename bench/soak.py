"""Soak: many `index run`s under randomized faults, with an invariant check after each one.

    .venv/bin/python bench/soak.py --runs 40 --seed 1            # ≈ 1 s to 20 s a run
    .venv/bin/python bench/soak.py --runs 200 --minutes 60       # stops at whichever comes first

Loopback only: a fake Notion API (tests/fakes/notion_server.py) with 31 pages in a tree, a web
site of 10 pages (tests/conftest.py's Site) listed in a sitemap with a `<lastmod>` per page (an edit
moves it; pages 7-9, never edited, are not asked for again), and the fake OpenAI embedder. Each run, at
random: Notion block listings answer 429 / 500 / 503 for a while (sometimes past every retry), the search
listing is rate limited, the sitemap or web pages answer 503 / 500 (pages also close the connection before their body),
`--full-refresh` is passed, one or two pages are edited, and the `index run` process is stopped
at a random moment: SIGKILLed, or sent SIGTERM (what `timeout`, systemd and `docker stop` send).
Nothing is ever deleted from the sources, so:

- **no document ever published may go missing**: the served generation holds every doc id any
  earlier generation held (a failed page keeps its last good version; a transient error never
  turns into a deletion);
- **the served generation always opens** (manifest sizes, DuckDB, FAISS, BM25, chunk store), and
  it holds every page once a run succeeds without faults;
- **every run is in the run log**, a killed one as `in_progress` (unless it was killed within
  STARTUP_SECONDS, before it could begin; the summary counts those);
- **SIGTERM stops a run cleanly and at once**: within TERM_SECONDS, ending by the signal with
  "Stopped by SIGTERM." and no traceback, its end logged (`failed`, or `success` / `partial` when it
  had just finished).

Prints one line per run and a JSON summary; exits 1 if any invariant broke.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.conftest import Site  # noqa: E402
from tests.fakes.notion_server import FakeNotion, paragraph  # noqa: E402
from tests.fakes.openai_server import FakeOpenAI  # noqa: E402

INDEX = Path(sys.executable).with_name("index")
STARTUP_SECONDS = 0.5  # a run killed sooner may not have logged itself yet (see check)
TERM_SECONDS = 15  # a run sent SIGTERM must have ended by then; it is SIGKILLed ("hung") after it


def build_notion(notion: FakeNotion) -> list[str]:
    ws = notion.workspace
    root = ws.page("Handbook", paragraph("How the team works."))
    pages = [root]
    for s in range(3):
        section = ws.page(f"Section {s}", paragraph(f"Section {s} gathers ten guides."), parent=root)
        pages.append(section)
        pages += [ws.page(f"Guide {s}.{i}", paragraph(f"Guide {s}.{i} explains step {i} of part {s}."), parent=section) for i in range(9)]
    return pages


def web_page(i: int, version: int) -> bytes:
    return (f"<html><head><title>Help {i}</title></head><body><main><h1>Help {i}</h1>"
            f"<p>Help page {i}, version {version}, answers question {i} about refunds, parcels and accounts.</p></main></body></html>").encode()


def served_documents(artifacts: Path) -> set[str]:
    """The doc ids of the generation CURRENT names, after opening it the way a server does."""
    from server.reader import Generation

    generation = Generation.open_current(artifacts)
    try:
        (space,) = generation.spaces.values()
        assert space.size == len(space.chunks.rows(list(range(space.size)))) if space.chunks else True
        return {row["doc_id"] for row in generation.query("document_ids")}
    finally:
        generation.close()


class World:
    """The loopback sources one soak run indexes, and the faults and edits it injects before each run."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.notion, self.openai, self.site = FakeNotion().start(), FakeOpenAI().start(), Site()
        self.pages = build_notion(self.notion)
        self.versions = {i: 0 for i in range(10)}
        self.failing: dict[str, int] = {}  # web path -> failures still to give
        self.lastmod = {i: "2026-11-01" for i in range(10)}
        for i in range(10):
            self.site.routes[f"/help/{i}"] = self._route(i)
        self.site.routes["/sitemap.xml"] = self._sitemap
        self.folder = Path(tempfile.mkdtemp(prefix="static-rag-soak-"))
        self.artifacts = self.folder / "artifacts"
        self.config = self.folder / "index.toml"
        self.config.write_text(
            f'[[sources]]\nname = "wiki"\ntype = "notion"\nroots = ["{self.pages[0]}"]\nrequests_per_second = 100\nmax_depth = 4\n'
            f'[[sources]]\nname = "help"\ntype = "urls"\nsitemaps = ["{self.site.url("/sitemap.xml")}"]\ntrust_lastmod = true\nallow_private_networks = ["127.0.0.0/8"]\nper_host_delay_seconds = 0\ntimeout_seconds = 5\n'
            '[[spaces]]\nprovider = "openai"\ndimensions = 256\n', encoding="utf-8")
        self.env = {**os.environ, "NOTION_TOKEN": self.notion.api_key, "NOTION_BASE_URL": self.notion.url, "OPENAI_API_KEY": self.openai.api_key,
                    "OPENAI_BASE_URL": f"{self.openai.url}/v1", "HF_HUB_OFFLINE": "1", "STATIC_RAG_DEBUG": "1"}

    @property
    def documents(self) -> int:
        return len(self.pages) + 10

    def _route(self, i: int):
        def answer():
            path = f"/help/{i}"
            if self.failing.get(path, 0) > 0:
                self.failing[path] -= 1
                return self.rng.choice([(503, "text/plain", b"busy", {"Retry-After": "0"}), (500, "text/plain", b"oops")])
            return 200, "text/html; charset=utf-8", web_page(i, self.versions[i])
        return answer

    def _sitemap(self):
        if self.failing.get("/sitemap.xml", 0) > 0:
            self.failing["/sitemap.xml"] -= 1
            return 503, "text/plain", b"busy", {"Retry-After": "0"}
        entries = "".join(f"<url><loc>{self.site.url(f'/help/{i}')}</loc><lastmod>{said}</lastmod></url>" for i, said in self.lastmod.items())
        return 200, "application/xml", f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{entries}</urlset>'.encode()

    def inject(self, n: int) -> list[str]:
        """Faults for run `n`, and edits so that it has work to do; returns the kinds of fault."""
        rng, faults = self.rng, []
        for page in rng.sample(self.pages, rng.randint(0, 4)):  # block listings failing for a while, sometimes past every retry
            self.notion.path_faults[f"/v1/blocks/{page}/children"] = [{"status": rng.choice([429, 500, 503]), "headers": {"Retry-After": "0"}}] * rng.randint(1, 8)
            faults.append("notion-page")
        if rng.random() < 0.2:
            self.notion.path_faults["/v1/search"] = [{"status": 429, "headers": {"Retry-After": "0"}}] * rng.randint(1, 3)
            faults.append("notion-search")
        for i in rng.sample(range(10), rng.randint(0, 3)):
            self.failing[f"/help/{i}"] = rng.randint(1, 4)
            faults.append("web-page")
        if rng.random() < 0.1:
            self.failing["/sitemap.xml"] = 1
            faults.append("sitemap")
        for page in rng.sample(self.pages[1:], rng.randint(0, 2)):
            self.notion.workspace.set_blocks(page, paragraph(f"Edited in run {n}: {rng.random():.6f}"), edited=f"2026-11-{10 + n % 15:02d}T10:00:00.000Z")
        for i in rng.sample(range(7), rng.randint(0, 2)):  # pages 7-9 are never edited: their lastmod spares them every run
            self.versions[i] += 1
            self.lastmod[i] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        return faults

    def heal(self) -> None:
        self.notion.path_faults.clear()
        self.failing.clear()

    def close(self) -> None:
        self.notion.close()
        self.openai.close()
        self.site.close()


def run_index(world: World, flags: list[str], kill_after: float | None, stop: signal.Signals = signal.SIGKILL) -> tuple[int | str, bytes]:
    """One `index run` process, sent `stop` after `kill_after` seconds when given: (exit code,
    "killed", "terminated" (ended by SIGTERM) or "hung" (still alive TERM_SECONDS after it), stderr)."""
    process = subprocess.Popen([str(INDEX), "run", "-c", str(world.config), "--json", *flags], env=world.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        _, err = process.communicate(timeout=kill_after if kill_after is not None else 300)
        return process.returncode, err
    except subprocess.TimeoutExpired:
        process.send_signal(stop)
    if stop == signal.SIGKILL:
        return "killed", process.communicate()[1]
    try:
        err = process.communicate(timeout=TERM_SECONDS)[1]
    except subprocess.TimeoutExpired:
        process.kill()
        return "hung", process.communicate()[1]
    return ("terminated" if process.returncode == -signal.SIGTERM else process.returncode), err


def logged_runs(artifacts: Path, ended: bool = False) -> set[str]:
    """The run ids in the run log; with `ended`, only those with an end line."""
    log = artifacts / "runs.jsonl"
    lines = [json.loads(line) for line in log.read_text().split("\n") if line.strip()] if log.exists() else []
    return {line["run_id"] for line in lines if not ended or line["status"] != "in_progress"}


def check(world: World, code, err: bytes, faults: list[str], ever: set[str], logged_before: set[str], kill_after: float | None) -> list[str]:
    """The invariants after a run (module docstring); adds what is served now to `ever`. A process
    killed within STARTUP_SECONDS may not have reached its run yet (Python and the CLI load first:
    0.1-0.3 s on two busy cores), so it need not be in the log; any later one must."""
    problems = []
    artifacts = world.artifacts
    if (artifacts / "CURRENT").exists():
        try:
            now = served_documents(artifacts)
        except Exception as exc:
            problems.append(f"the served generation does not open: {type(exc).__name__}: {exc}")
            now = set()
        missing = ever - now
        if missing:
            problems.append(f"{len(missing)} published document(s) missing, e.g. {sorted(missing)[:3]}")
        ever |= now
        if code == 0 and not faults and len(now) != world.documents:
            problems.append(f"a clean run serves {len(now)} documents, not {world.documents}")
    new = logged_runs(artifacts) - logged_before
    if len(new) > 1:
        problems.append(f"one run logged {len(new)} run ids")
    elif not new and code != 2 and not (code in ("killed", "terminated") and kill_after < STARTUP_SECONDS):
        problems.append("the run is missing from runs.jsonl")
    if code == "terminated" and new and not new & logged_runs(artifacts, ended=True):
        problems.append("SIGTERM ended the run without its end in runs.jsonl")
    if code == "terminated" and kill_after >= STARTUP_SECONDS and (b"Stopped by SIGTERM." not in err or b"Traceback" in err):
        problems.append(f"SIGTERM did not stop it cleanly: {err.decode(errors='replace').strip()[-300:]}")
    if code not in (0, 4, "killed", "terminated"):
        crash = world.artifacts.parent / f"stderr-{len(logged_before) + 1}.txt"  # the whole of it: a native crash's thread stacks
        crash.write_bytes(err)
        problems.append(f"exit {code}: {err.decode(errors='replace').strip()[-300:]} (stderr in {crash})")
    return problems


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--kill-rate", type=float, default=0.25, help="share of runs stopped at a random moment")
    parser.add_argument("--term-share", type=float, default=0.5, help="share of those stops sent SIGTERM instead of SIGKILL")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    world = World(rng)
    ever: set[str] = set()
    stats: Counter = Counter()
    violations: list[str] = []
    unstarted = 0  # killed before the run wrote its first log line
    deadline = time.monotonic() + args.minutes * 60
    for n in range(1, args.runs + 1):
        if time.monotonic() > deadline:
            break
        faults = world.inject(n)
        flags = ["--full-refresh"] if rng.random() < 0.3 else []
        kill_after = rng.uniform(0.2, 4.0) if rng.random() < args.kill_rate else None
        stop = signal.SIGTERM if rng.random() < args.term_share else signal.SIGKILL
        started, logged_before = time.monotonic(), logged_runs(world.artifacts)
        code, err = run_index(world, flags, kill_after, stop)
        stats[f"exit {code}"] += 1
        stats.update(faults)
        world.heal()
        problems = check(world, code, err, faults, ever, logged_before, kill_after)
        unstarted += code in ("killed", "terminated") and logged_runs(world.artifacts) == logged_before
        violations += [f"run {n}: {p}" for p in problems]
        print(f"run {n:3d}: exit {code!s:10} {time.monotonic() - started:5.1f} s  flags {flags or '-'}  faults {dict(Counter(faults)) or '-'}  "
              f"served {len(ever)}  {'; '.join(problems) or 'ok'}", flush=True)
    world.close()
    summary = {"runs": sum(v for k, v in stats.items() if k.startswith("exit")), "exits": {k: v for k, v in stats.items() if k.startswith("exit")},
               "faults": {k: v for k, v in stats.items() if not k.startswith("exit")}, "documents_served": len(ever), "killed_before_their_run_began": unstarted, "violations": violations,
               "artifacts": str(world.artifacts)}
    print(json.dumps(summary, indent=2))
    sys.exit(1 if violations else 0)


if __name__ == "__main__":
    main()
