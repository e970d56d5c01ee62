"""Retrieval quality measured through the product: BEIR datasets, trec_eval metrics, a gate.

A dataset folder holds `corpus.jsonl` (`_id`, `title`, `text`), `queries.jsonl` (`_id`,
`text`) and `qrels/<split>.tsv` (`query-id  corpus-id  score`, header line optional).
The corpus is indexed by the normal pipeline (each document a Markdown file of a `files`
source), and every query runs through `server.search.search`, the code the API runs.
A document's rank is that of its best chunk.

Questions about an index of your own (`index eval --artifacts`) need no corpus.jsonl: the index
is the corpus, and the qrels name its documents by the doc ids `index search --json` shows
(`notion:<page uuid>`, a page's URL id, `file:<path>`).
"""

from __future__ import annotations

import json
import math
import tomllib
from dataclasses import dataclass
from pathlib import Path

from indexer.errors import ConfigError, StaticRagError
from indexer.extract import not_text

CUTOFFS = {"ndcg@10": 10, "recall@10": 10, "recall@100": 100, "mrr@10": 10}
DEPTH = 100  # documents ranked per query


@dataclass(frozen=True)
class Dataset:
    name: str
    corpus: dict[str, tuple[str, str]]  # doc id → (title, text)
    queries: dict[str, str]  # query id → text, only queries with judgements
    qrels: dict[str, dict[str, int]]  # query id → doc id → graded relevance


def load_dataset(folder: Path, split: str = "test", limit_queries: int | None = None, corpus_required: bool = True) -> Dataset:
    """`corpus_required` False: a folder without corpus.jsonl is questions about an existing index
    (its corpus is then empty)."""
    folder = Path(folder)
    paths = {"corpus": folder / "corpus.jsonl", "queries": folder / "queries.jsonl", "qrels": folder / "qrels" / f"{split}.tsv"}
    missing = [str(p) for name, p in paths.items() if not p.is_file() and (corpus_required or name != "corpus")]
    if missing:
        hint = ("; with --artifacts (an index of your own) queries.jsonl and the qrels are enough"
                if missing == [str(paths["corpus"])] else "")
        raise StaticRagError(f"not a BEIR dataset folder, missing: {', '.join(missing)}{hint}")
    corpus = {}
    for row in (_json_lines(paths["corpus"]) if paths["corpus"].is_file() else ()):
        corpus[str(row["_id"])] = (row.get("title") or "", row.get("text") or "")
    qrels: dict[str, dict[str, int]] = {}
    for number, (query_id, doc, score) in _qrels_rows(paths["qrels"]):
        if not score.lstrip("-").isdigit():
            raise StaticRagError(f"{paths['qrels']}, line {number}: the score must be a whole number (query-id, corpus-id, score); got {score!r}")
        # a product doc id of a file (`file:guide.md`) is judged as the corpus id its hits get
        qrels.setdefault(query_id, {})[corpus_id(doc) if doc.startswith("file:") else doc] = int(score)
    queries = {}
    for row in _json_lines(paths["queries"], "text"):
        if str(row["_id"]) in qrels:
            queries[str(row["_id"])] = row["text"]
    # Found out before the corpus is indexed, not as "0 queries" after it.
    if not qrels:
        raise StaticRagError(f"{paths['qrels']}: no judgments; each line is: query-id, corpus-id, score (tab-separated)")
    if not any(grade > 0 for judged in qrels.values() for grade in judged.values()):
        raise StaticRagError(f"{paths['qrels']}: every score is 0 or less, so no document is judged relevant; "
                             "give each relevant document a score of 1 or more (0 marks one that is not)")
    if not queries:
        raise StaticRagError(f"{paths['qrels']}: none of the {len(qrels)} questions it judges (e.g. {min(qrels)!r}) is in "
                             f"{paths['queries']}: check that both use the same query ids")
    if corpus and not any(doc in corpus for judged in qrels.values() for doc in judged):
        raise StaticRagError(f"{paths['qrels']}: none of the documents it judges (e.g. {min(min(j) for j in qrels.values() if j)!r}) is in "
                             f"{paths['corpus']}: check that both use the same corpus ids")
    ids = sorted(queries, key=lambda q: (len(q), q))[:limit_queries] if limit_queries else sorted(queries, key=lambda q: (len(q), q))
    return Dataset(folder.name, corpus, {q: queries[q] for q in ids}, {q: qrels[q] for q in ids})


def queries_are_documents(dataset: Dataset) -> bool:
    """True when most queries are also corpus documents with the same text (ArguAna): then, as in
    BEIR's `ignore_identical_ids`, a query's own document is left out of its ranking."""
    same = sum(1 for q, text in dataset.queries.items() if q in dataset.corpus and " ".join(dataset.corpus[q][1].split()) == " ".join(text.split()))
    return same * 2 > len(dataset.queries)


def load_queries(folder: Path, split: str = "test") -> dict[str, str]:
    """The judged queries of a BEIR folder (all of them when it has no qrels for `split`): off-topic questions for another corpus."""
    folder = Path(folder)
    path = folder / "queries.jsonl"
    if not path.is_file():
        raise StaticRagError(f"{folder}: not a BEIR dataset folder, missing: {path}")
    judged = None
    qrels = folder / "qrels" / f"{split}.tsv"
    if qrels.is_file():
        judged = {query_id for _, (query_id, _, _) in _qrels_rows(qrels)}
    queries = {str(row["_id"]): row["text"] for row in _json_lines(path, "text") if judged is None or str(row["_id"]) in judged}
    if not queries:
        raise StaticRagError(f"{path}: no questions{' judged in ' + str(qrels) if judged is not None else ''}")
    return dict(sorted(queries.items()))


def _qrels_rows(path: Path):
    """(line number, (query id, corpus id, score)) of each row of a qrels file, tab- or
    space-separated; blank lines and the header line are left out."""
    for number, line in enumerate(_text(path).split("\n"), 1):
        parts = [part.strip() for part in (line.split("\t") if "\t" in line else line.split())]
        if len(parts) < 3 or (number == 1 and not parts[2].lstrip("-").isdigit()):
            continue  # blank, or the header line
        yield number, (parts[0], parts[1], parts[2])


def _text(path: Path) -> str:
    """A dataset file's text: UTF-8, with or without a byte order mark; otherwise an error naming it."""
    try:
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise StaticRagError(f"{path}: {not_text(exc)}") from None


def _json_lines(path: Path, *required: str):
    """The objects of a JSON Lines file, each with an `_id` and the `required` keys; a line that is
    not one, or one whose `_id` an earlier line has (the later would silently replace it), is an
    error naming the file and line."""
    seen: dict[str, int] = {}
    # JSON Lines end in "\n" only: splitlines() would also cut at U+0085, U+2028 and others inside texts.
    for number, line in enumerate(_text(path).split("\n"), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise StaticRagError(f"{path}, line {number}: not JSON ({exc.msg})") from None
        missing = [key for key in ("_id", *required) if not isinstance(row, dict) or key not in row]
        if missing:
            raise StaticRagError(f"{path}, line {number}: an object with {', '.join(missing)} is expected")
        first = seen.setdefault(str(row["_id"]), number)
        if first != number:
            raise StaticRagError(f"{path}, line {number}: _id {str(row['_id'])!r} again (first on line {first}); ids must be unique")
        yield row


def ndcg(ranked: list[str], relevant: dict[str, int], k: int) -> float:
    """trec_eval ndcg_cut: gain = relevance, discount log2(rank + 1), ideal from the judged documents."""
    dcg = sum(relevant.get(doc, 0) / math.log2(rank + 2) for rank, doc in enumerate(ranked[:k]) if relevant.get(doc, 0) > 0)
    ideal = sorted((g for g in relevant.values() if g > 0), reverse=True)[:k]
    idcg = sum(g / math.log2(rank + 2) for rank, g in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def recall(ranked: list[str], relevant: dict[str, int], k: int) -> float:
    judged = {d for d, g in relevant.items() if g > 0}
    return len(judged & set(ranked[:k])) / len(judged) if judged else 0.0


def mrr(ranked: list[str], relevant: dict[str, int], k: int) -> float:
    return next((1.0 / (rank + 1) for rank, doc in enumerate(ranked[:k]) if relevant.get(doc, 0) > 0), 0.0)


METRICS = {"ndcg@10": ndcg, "recall@10": recall, "recall@100": recall, "mrr@10": mrr}


def score(rankings: dict[str, list[str]], qrels: dict[str, dict[str, int]]) -> dict[str, float]:
    """Mean of each metric over the judged queries (a query with no ranking scores 0)."""
    return {
        name: round(sum(METRICS[name](rankings.get(q, []), rel, CUTOFFS[name]) for q, rel in qrels.items()) / len(qrels), 4)
        for name in CUTOFFS
    }


def write_corpus_files(dataset: Dataset, folder: Path) -> None:
    """Each corpus document as a Markdown file for a `files` source, its title both in front
    matter and as the `#` heading, as real pages carry it — so, as in BEIR, the title is searchable text."""
    folder.mkdir(parents=True, exist_ok=True)
    for doc_id, (title, text) in dataset.corpus.items():
        safe = json.dumps(title or doc_id, ensure_ascii=False)
        heading = f"# {' '.join(title.split())}\n\n" if title.strip() else ""
        (folder / f"{_file_name(doc_id)}.md").write_text(f"---\ntitle: {safe}\n---\n{heading}{text}\n", encoding="utf-8")


def index_dataset(dataset: Dataset, folder: Path, spaces=None, progress=None) -> Path:
    """Index the corpus through the normal pipeline: Markdown files in `folder/corpus`, one `files`
    source named after the dataset, the configured `spaces` (default: the local model), artifacts
    in `folder/artifacts`, which is returned."""
    import dataclasses

    from indexer.config import parse_config
    from indexer.pipeline import no_progress, run_index

    folder = Path(folder)
    write_corpus_files(dataset, folder / "corpus")
    raw = {"sources": [{"name": dataset.name, "type": "files", "path": "corpus"}], "spaces": [{"provider": "local"}]}
    config = parse_config(raw, base_dir=folder, artifacts_override=folder / "artifacts")
    if spaces:
        config = dataclasses.replace(config, spaces=spaces)
    run_index(config, progress=progress or no_progress)
    return config.artifacts


def _file_name(doc_id: str) -> str:
    return doc_id.replace("/", "%2F")


def corpus_id(product_doc_id: str) -> str:
    """`file:<id>.md` → `<id>`."""
    return product_doc_id.removeprefix("file:").removesuffix(".md").replace("%2F", "/")


# The gate's [answerable] table (it needs `index eval --off-topic`): its key → (the abstain report's
# row field, whether the value is a minimum or a maximum, what is missing when the field is empty).
ANSWERABLE_LIMITS = {
    "min_auroc": ("auroc", "min", "questions on one side"),
    "max_off_topic_answered": ("off_topic_answered", "max", "off-topic questions"),
    "max_answerable_abstained": ("answerable_abstained", "max", "own question with a relevant document in the top 10"),
}


def load_gate(path: Path) -> dict[str, dict[str, float]]:
    """`[<mode>] <metric> = minimum` tables, e.g. `[hybrid] "ndcg@10" = 0.73`, and an optional
    `[answerable]` table of ANSWERABLE_LIMITS for the abstain report, e.g. `max_off_topic_answered = 0.05`."""
    try:
        raw = tomllib.loads(Path(path).read_text(encoding="utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: cannot read the gate: {not_text(exc)}") from None
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the gate: {exc}") from None
    for table, limits in raw.items():
        if table not in ("dense", "lexical", "hybrid", "answerable") or not isinstance(limits, dict):
            raise ConfigError(f"{path}: [{table}]: tables must be dense, lexical, hybrid or answerable")
        names = ANSWERABLE_LIMITS if table == "answerable" else CUTOFFS
        for name, value in limits.items():
            if name not in names or not isinstance(value, (int, float)) or isinstance(value, bool) or not 0 <= value <= 1:
                kind = "limits" if table == "answerable" else "metrics"
                raise ConfigError(f"{path}: [{table}].{name}: {kind} are {', '.join(names)} with a value between 0 and 1")
    return raw


def gate_failures(results: dict[str, dict[str, dict[str, float]]], gate: dict[str, dict[str, float]], abstain: dict | None = None) -> list[str]:
    """Every (space, mode, metric) below its floor, and every off-topic set's abstain rate past its
    `[answerable]` limit (`abstain`: quality.abstain's report), as readable lines."""
    failures = []
    for space, modes in results.items():
        for mode, floors in gate.items():
            if mode == "answerable":
                continue
            for metric, floor in floors.items():
                value = modes[mode][metric]
                if value < floor:
                    failures.append(f"{space} {mode} {metric} = {value:.4f} < {floor}")
    for space, info in (abstain or {}).items():
        for name, row in info["off_topic"].items():
            for key, limit in gate.get("answerable", {}).items():
                field, kind, needed = ANSWERABLE_LIMITS[key]
                value = row[field]
                where = f"{space} answerable vs {name}: {field}"
                if value is None or math.isnan(value):
                    failures.append(f"{where} cannot be measured: no {needed}")
                elif (value < limit) if kind == "min" else (value > limit):
                    failures.append(f"{where} = {value:.4f} {'<' if kind == 'min' else '>'} {limit}")
    return failures
