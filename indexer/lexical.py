"""The lexical side of hybrid search: a BM25 index (bm25s) over one space's chunks.

Documents and queries go through the same analyzer: lowercase, word tokens, English
stopwords removed (Lucene's list), Snowball English stemming. The analyzer is recorded
in `lexical/analyzer.json` so a reader can tell what it is searching.
"""

from __future__ import annotations

import json
import logging
import re
from functools import lru_cache
from pathlib import Path

import numpy as np

ANALYZER = {"name": "english-snowball-v1", "lowercase": True, "token_pattern": r"\w+", "stopwords": "lucene-english", "stemmer": "snowball-english", "k1": 1.2, "b": 0.75}
TOKEN = re.compile(ANALYZER["token_pattern"])


@lru_cache(maxsize=1)
def _stemmer_and_stopwords():
    import Stemmer
    from bm25s.stopwords import STOPWORDS_EN

    return Stemmer.Stemmer("english"), frozenset(STOPWORDS_EN)


def analyze(text: str) -> list[str]:
    stemmer, stopwords = _stemmer_and_stopwords()
    words = [w for w in TOKEN.findall(text.lower()) if w not in stopwords]
    return stemmer.stemWords(words)


def build_lexical_index(texts: list[str], folder: Path) -> None:
    import bm25s

    logging.getLogger("bm25s").setLevel(logging.WARNING)
    retriever = bm25s.BM25(k1=ANALYZER["k1"], b=ANALYZER["b"])
    corpus = [analyze(t) for t in texts]
    if corpus and not any(corpus):
        # bm25s cannot build an empty vocabulary; a term no query can produce keeps every score at 0.
        corpus[0:1] = [["\x00"]]
    retriever.index(corpus, show_progress=False)
    folder.mkdir(parents=True, exist_ok=True)
    retriever.save(str(folder), show_progress=False)
    (folder / "analyzer.json").write_text(json.dumps({**ANALYZER, "documents": len(texts)}, indent=2) + "\n")


class LexicalIndex:
    """A memory-mapped BM25 index; `scores(query)` returns one score per chunk row."""

    def __init__(self, folder: Path):
        import bm25s

        info = json.loads((folder / "analyzer.json").read_text())
        if info.get("name") != ANALYZER["name"]:
            raise ValueError(f"lexical index uses analyzer {info.get('name')!r}; this version reads {ANALYZER['name']!r}")
        self.size = int(info["documents"])
        self.retriever = bm25s.BM25.load(str(folder), mmap=True, show_progress=False)

    def scores(self, query: str) -> np.ndarray:
        tokens = analyze(query)
        if not tokens or self.size == 0:
            return np.zeros(self.size, dtype=np.float32)
        return np.asarray(self.retriever.get_scores(tokens), dtype=np.float32)
