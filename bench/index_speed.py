"""Cold `index run` time against the pure encode time of the same chunks, measured in one run.

    .venv/bin/python bench/index_speed.py --config examples/index.toml --repeat 3

- cold: `index run` in a fresh process (imports, model load, crawl, chunk, embed, write, publish).
- warm: `run_index` in this process with the model already loaded (the pipeline's own overhead).
- encode: the model alone over exactly the chunk texts the run embedded, longest first, nothing else.
The ratios are what to track: the machine is shared and absolute seconds drift.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from indexer.config import load_config  # noqa: E402
from indexer.embedders import load_embedder  # noqa: E402
from indexer.pipeline import run_index  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", type=Path, default=Path("examples/index.toml"))
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    index_cmd = Path(sys.executable).parent / "index"

    cold, warm, encode = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.repeat):
            artifacts = Path(tmp) / f"cold{i}"
            start = time.perf_counter()
            subprocess.run([str(index_cmd), "run", "-c", str(args.config), "-a", str(artifacts), "-s"], check=True, capture_output=True)
            cold.append(time.perf_counter() - start)

        # Each warm run gets empty artifacts: with a previous generation every vector would be reused.
        def fresh(name: str):
            return load_config(args.config, artifacts_override=Path(tmp) / name)

        config = fresh("warmup")
        space = config.spaces[0]
        embedder = load_embedder(space)
        run_index(config)  # warm-up: imports, first-call allocations
        for i in range(args.repeat):
            config = fresh(f"warm{i}")
            start = time.perf_counter()
            report = run_index(config)
            warm.append(time.perf_counter() - start)

        import duckdb

        folder = config.artifacts / "generations" / report.generation_id
        db = duckdb.connect(str(folder / "meta.duckdb"), read_only=True)
        texts = [r[0] for r in db.execute("SELECT DISTINCT ON (chunk_hash) text FROM chunks WHERE space_id = ?", [space.space_id]).fetchall()]
        db.close()
        texts.sort(key=len, reverse=True)  # batches of similar length, as the embedder (and sentence-transformers) makes them
        for _ in range(args.repeat):
            start = time.perf_counter()
            for i in range(0, len(texts), space.batch_size):
                embedder.model.encode(texts[i : i + space.batch_size])
            encode.append(time.perf_counter() - start)

    result = {
        "config": str(args.config),
        "documents": report.documents,
        "chunks": report.spaces[space.space_id]["chunks"],
        "embedded_texts": len(texts),
        "cold_index_s": round(statistics.median(cold), 3),
        "warm_index_s": round(statistics.median(warm), 3),
        "encode_s": round(statistics.median(encode), 3),
        "cold_over_encode": round(statistics.median(cold) / statistics.median(encode), 2),
        "warm_over_encode": round(statistics.median(warm) / statistics.median(encode), 2),
        "repeat": args.repeat,
        "warm_stage_seconds": report.seconds,
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
