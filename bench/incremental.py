"""Incremental runs on 2,000 generated documents, embedding through the zero-latency fake OpenAI
server with the real openai client. Prints one JSON object.

    .venv/bin/python bench/incremental.py --docs 2000

Measures, each run a fresh `index run` process:
- cold run; no-op rerun (embedding inputs must be 0; wall time as a fraction of the cold run);
- 1% of documents edited in content, 1% metadata-only, 0.5% deleted, 0.5% added: embedding
  inputs against the chunk texts that really changed (new chunk hashes), and whether the
  metadata-only documents show their new title in search;
- a one-paragraph edit in a 20-section document: chunks re-embedded.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.corpus import document, paragraph, write_corpus  # noqa: E402
from tests.fakes.openai_server import FakeOpenAI  # noqa: E402

INDEX = Path(sys.executable).parent / "index"
SPACE = "openai-text-embedding-3-small-1536"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    fake = FakeOpenAI().start()
    env = {**os.environ, "OPENAI_API_KEY": fake.api_key, "OPENAI_BASE_URL": f"{fake.url}/v1"}

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        docs = root / "docs"
        paths = write_corpus(docs, args.docs, 300, 3000, seed=args.seed)
        twenty = docs / "twenty-sections.md"
        twenty.write_text("# Twenty sections\n\n" + "\n\n".join(f"## Part {i}\n\n{paragraph(rng, 90)}\n\n{paragraph(rng, 90)}" for i in range(20)))
        config = root / "index.toml"
        config.write_text('[[sources]]\nname = "docs"\ntype = "files"\npath = "docs"\n[[spaces]]\nprovider = "openai"\n')

        def run(label: str) -> dict:
            inputs = fake.inputs
            start = time.perf_counter()
            result = subprocess.run([str(INDEX), "run", "-c", str(config), "--json", "--allow-mass-delete"], capture_output=True, text=True, env=env)
            seconds = time.perf_counter() - start
            if result.returncode != 0:
                sys.exit(f"{label}: exit {result.returncode}\n{result.stderr}")
            summary = json.loads(result.stdout)
            return {"seconds": round(seconds, 2), "embedding_inputs": fake.inputs - inputs, "summary": summary}

        cold = run("cold")
        noop = run("no-op")

        # The mixed change.
        n = args.docs
        sample = rng.sample(paths, int(n * 0.01) + int(n * 0.01) + int(n * 0.005))
        edited, renamed, deleted = sample[: int(n * 0.01)], sample[int(n * 0.01) : int(n * 0.02)], sample[int(n * 0.02) :]
        for path in edited:
            text = path.read_text()
            start = text.index("## Section 1")
            end = text.index(".", start) + 1
            path.write_text(text[: start] + "## Section 1\n\n" + paragraph(rng, 80) + text[end:])
        for path in renamed:
            path.write_text(path.read_text().replace("title: Document", "title: Renamed document", 1))
        for path in deleted:
            path.unlink()
        for i in range(int(n * 0.005)):
            (docs / f"added-{i}.md").write_text(document(rng, 100_000 + i, 300, 3000))
        before = chunk_hashes(root, cold_or(noop))
        mixed = run("mixed")
        after = chunk_hashes(root, mixed)
        changed_texts = len(after - before)

        renamed_ids = [f"file:{p.name}" for p in renamed]
        titles_ok = check_titles(root / "artifacts", renamed_ids, env)

        text = twenty.read_text()
        part = text.index("## Part 7")
        cut = text.index("\n\n", text.index("\n\n", part) + 2)
        twenty.write_text(text[:cut] + " One more sentence added to this paragraph." + text[cut:])
        paragraph_edit = run("one paragraph")

    fake.close()
    print(json.dumps({
        "documents": n + 1,
        "chunks": cold["summary"]["chunks"]["embedded"],
        "cold": {"seconds": cold["seconds"], "embedding_inputs": cold["embedding_inputs"]},
        "noop": {"seconds": noop["seconds"], "embedding_inputs": noop["embedding_inputs"], "fraction_of_cold": round(noop["seconds"] / cold["seconds"], 4)},
        "mixed": {
            "seconds": mixed["seconds"],
            "decisions": mixed["summary"]["documents"],
            "embedding_inputs": mixed["embedding_inputs"],
            "changed_chunk_texts": changed_texts,
            "inputs_over_changed": round(mixed["embedding_inputs"] / max(changed_texts, 1), 3),
            "metadata_only_titles_in_search": titles_ok,
        },
        "one_paragraph_edit": {"embedding_inputs": paragraph_edit["embedding_inputs"], "decisions": paragraph_edit["summary"]["documents"]},
    }, indent=2))


def cold_or(run: dict) -> str:
    return run["summary"]["generation"]


def chunk_hashes(root: Path, generation) -> set[str]:
    import duckdb

    generation_id = generation if isinstance(generation, str) else generation["summary"]["generation"]
    db = duckdb.connect(str(root / "artifacts" / "generations" / generation_id / "meta.duckdb"), read_only=True)
    hashes = {h for (h,) in db.execute("SELECT DISTINCT chunk_hash FROM chunks WHERE space_id = ?", [SPACE]).fetchall()}
    db.close()
    return hashes


def check_titles(artifacts: Path, doc_ids: list[str], env: dict) -> str:
    """Search each renamed document (filtered to it, lexical: no query embedding) and read the title back."""
    os.environ.update({k: env[k] for k in ("OPENAI_API_KEY", "OPENAI_BASE_URL")})
    from server.search import SearchFilters
    from server.service import SearchService, Settings

    service = SearchService(Settings(artifacts=artifacts))
    service.load()
    found = 0
    for doc_id in doc_ids:
        hits = service.search("section", top_k=1, mode="lexical", filters=SearchFilters(doc_id=doc_id)).hits
        found += bool(hits) and hits[0].title.startswith("Renamed document")
    service.close()
    return f"{found}/{len(doc_ids)}"


if __name__ == "__main__":
    main()
