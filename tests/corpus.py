"""Generated corpora for tests and benchmarks: many Markdown documents with headings and paragraphs."""

from __future__ import annotations

import random
from pathlib import Path

WORDS = (
    "index search chunk vector token model query server cache refund shipping warranty policy customer order "
    "page section answer question source document update delete publish generation space embedding retrieval "
    "ranking filter budget retry limit batch provider metadata title heading paragraph editor workspace team"
).split()


def paragraph(rng: random.Random, words: int) -> str:
    text = " ".join(rng.choice(WORDS) for _ in range(words))
    return text[0].upper() + text[1:] + "."


def document(rng: random.Random, number: int, min_words: int, max_words: int) -> str:
    """A document of min..max words in sections of 2-4 paragraphs, each section under a heading."""
    target = rng.randint(min_words, max_words)
    parts = [f"---\ntitle: Document {number}\n---\n# Document {number}\n"]
    written, section = 0, 0
    while written < target:
        section += 1
        parts.append(f"## Section {section}\n")
        for _ in range(rng.randint(2, 4)):
            n = rng.randint(40, 120)
            parts.append(paragraph(rng, n) + "\n")
            written += n
    return "\n".join(parts)


def write_corpus(folder: Path, count: int, min_words: int = 300, max_words: int = 3000, seed: int = 1) -> list[Path]:
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(count):
        path = folder / f"doc-{i:05d}.md"
        path.write_text(document(rng, i, min_words, max_words), encoding="utf-8")
        paths.append(path)
    return paths
