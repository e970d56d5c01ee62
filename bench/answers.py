"""How well curated answers are matched: the default `min_answer_relevance`.

    .venv/bin/python bench/answers.py [--mode hybrid]

Indexes bench/answers/faq.toml (20 answers of a shoe shop, 27 phrasings) beside examples/docs
(pages of another domain, so lexical statistics are not the answers' alone) with the bundled
local model, threshold 0, and puts three kinds of questions from bench/answers/questions.toml:
paraphrases of a curated question (should get that answer), near misses (the shop's domain, no
curated answer), and off-topic questions (should get none). For each threshold: the share of
paraphrases answered correctly, answered wrongly (another answer on top), and of near-miss and
off-topic questions given an answer. A wrong curated answer, shown first and with authority, is
the failure a support team notices; a missed paraphrase still gets the ordinary hits. So the
default is the lowest threshold at which no off-topic question, at most 10% of near misses and
at most 5% of paraphrases get an answer they should not.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import tomllib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from indexer.config import ServerConfig, load_config  # noqa: E402
from indexer.pipeline import run_index  # noqa: E402
from server.search import SearchFilters  # noqa: E402
from server.service import SearchService, Settings  # noqa: E402

HERE = Path(__file__).resolve().parent
THRESHOLDS = (0.02, 0.03, 0.035, 0.04, 0.045, 0.05, 0.055, 0.06, 0.07, 0.1)


def best_answers(queries: list[str], mode: str) -> list[tuple[str | None, float]]:
    with tempfile.TemporaryDirectory() as folder:
        config_path = Path(folder) / "index.toml"
        config_path.write_text(f"""
artifacts = "artifacts"
[[sources]]
name = "faq"
type = "answers"
path = "{HERE / 'answers' / 'faq.toml'}"
min_answer_relevance = 0.0
[[sources]]
name = "docs"
type = "files"
path = "{HERE.parent / 'examples' / 'docs'}"
[[spaces]]
provider = "local"
""")
        config = load_config(config_path)
        report = run_index(config)
        if report.errors:
            sys.exit(f"indexing failed: {report.errors}")
        service = SearchService(Settings(artifacts=config.artifacts, server=ServerConfig(requests_per_minute=0)))
        service.load()
        try:
            out = []
            for query in queries:
                answers = service.search(query, top_k=5, mode=mode, filters=SearchFilters()).answers
                out.append((answers[0].doc_id.rsplit("/", 1)[1], answers[0].relevance) if answers else (None, 0.0))
            return out
        finally:
            service.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mode", default="hybrid", choices=("hybrid", "dense", "lexical"))
    args = parser.parse_args()
    questions = tomllib.loads((HERE / "answers" / "questions.toml").read_text(encoding="utf-8"))
    paraphrases = [(q, answer_id) for answer_id, qs in questions["paraphrases"].items() for q in qs]
    near, off = questions["near_miss"], questions["off_topic"]
    results = best_answers([q for q, _ in paraphrases] + near + off, args.mode)
    para = results[: len(paraphrases)]
    near_r = results[len(paraphrases) : len(paraphrases) + len(near)]
    off_r = results[len(paraphrases) + len(near) :]
    print(f"mode {args.mode}: {len(paraphrases)} paraphrases, {len(near)} near misses, {len(off)} off-topic questions\n")
    print("| min_answer_relevance | paraphrases answered right | answered wrong | near misses answered | off-topic answered | worst error |")
    print("| --- | --- | --- | --- | --- | --- |")
    chosen = None
    for t in THRESHOLDS:
        right = sum(1 for (got, r), (_, want) in zip(para, paraphrases) if got == want and r >= t) / len(para)
        wrong = sum(1 for (got, r), (_, want) in zip(para, paraphrases) if got != want and r >= t) / len(para)
        near_answered = sum(1 for _, r in near_r if r >= t) / len(near_r)
        off_answered = sum(1 for _, r in off_r if r >= t) / len(off_r)
        worst = max(1 - right, wrong, near_answered, off_answered)
        print(f"| {t:.3f} | {right:.1%} | {wrong:.1%} | {near_answered:.1%} | {off_answered:.1%} | {worst:.1%} |")
        if chosen is None and off_answered == 0 and near_answered <= 0.10 and wrong <= 0.05:
            chosen = t
    if chosen is None:
        sys.exit("no threshold meets the rule")
    print(f"\nlowest threshold with no off-topic, <= 10% near-miss and <= 5% wrong answers: min_answer_relevance = {chosen:.3f}")
    misses = [(q, want, got, r) for (got, r), (q, want) in zip(para, paraphrases) if got != want]
    for q, want, got, r in misses:
        print(f"  paraphrase {q!r}: wanted {want}, top answer {got} ({r:.2f})")
    for q, (got, r) in zip(near + off, near_r + off_r):
        if r >= chosen:
            print(f"  answered {q!r} with {got} ({r:.2f})")


if __name__ == "__main__":
    main()
