"""PDF text extraction quality and speed, on PDFs generated from known text.

    .venv/bin/python bench/pdf_extraction.py ../shared/data/scifact [--docs 8] [--out /tmp/pdfs]

Builds `--docs` PDFs per layout (tests/fakes/pdfs.py: one column with running header, footer and
page numbers; two columns; lines drawn by hand with words hyphenated at line ends; one column
with an outline and no running lines) from the abstracts of a BEIR corpus — titles as headings,
every few abstracts a table — and scores each extractor's text against the text the PDF was made
from. Score: character-level F1 over an order-preserving alignment of the two word sequences
(difflib; a word counts its characters plus one separator), Markdown heading marks and table
cell separators removed first. Also: the share of pages whose running header or footer survived,
pages per second (extraction alone, files in memory), and for ours the share of the source's
headings found as heading lines at their level.

Extractors: ours (`indexer.pdf.read_pdf`: PDFium characters → lines, paragraphs, headings,
running lines removed, hyphens joined), PDFium's plain page text (`get_text_range`), and
pypdf's `extract_text()` — the two permissively licensed libraries considered.
"""

from __future__ import annotations

import argparse
import difflib
import json
import random
import re
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from indexer.pdf import read_pdf  # noqa: E402
from tests.fakes.pdfs import FOOTER, HEADER, make_pdf, source_text  # noqa: E402

LAYOUTS = {
    "one column, running lines": dict(layout="single", running=True),
    "two columns, running lines": dict(layout="two_columns", running=True),
    "hand-set, hyphenated": dict(layout="manual", running=True),
    "one column, outline": dict(layout="single", running=False, outline=True),
}


def corpus_blocks(corpus: Path, docs: int, seed: int = 7) -> list[list[tuple]]:
    rows = [json.loads(line) for line in corpus.open(encoding="utf-8")]
    rows = [r for r in rows if len(r.get("text", "")) > 400 and r.get("title")]
    rng = random.Random(seed)
    out = []
    for _ in range(docs):
        picked = rng.sample(rows, 12)
        blocks: list[tuple] = [("h1", picked[0]["title"][:90])]
        for i, row in enumerate(picked):
            if i % 3 == 0:
                blocks.append(("h2", row["title"][:80]))
            for paragraph in _paragraphs(row["text"], rng):
                blocks.append(("p", paragraph))
            if i % 4 == 3:
                words = [w for w in re.findall(r"[A-Za-z]{4,12}", row["text"])][:9]
                if len(words) == 9:
                    blocks.append(("table", [words[0:3], words[3:6], words[6:9]]))
        out.append(blocks)
    return out


def _paragraphs(text: str, rng: random.Random) -> list[str]:
    sentences = re.split(r"(?<=[.!?])\s+", text.strip())
    cut = rng.randint(1, max(1, len(sentences) - 1))
    return [p for p in (" ".join(sentences[:cut]), " ".join(sentences[cut:])) if p]


def words(text: str) -> list[str]:
    text = re.sub(r"(?m)^#{1,6} ", "", text).replace(" | ", " ")
    return text.split()


def char_f1(extracted: str, expected: str) -> tuple[float, float, float]:
    got, want = words(extracted), words(expected)
    matcher = difflib.SequenceMatcher(None, got, want, autojunk=False)
    matched = sum(len(w) + 1 for block in matcher.get_matching_blocks() for w in got[block.a : block.a + block.size])
    precision = matched / max(1, sum(len(w) + 1 for w in got))
    recall = matched / max(1, sum(len(w) + 1 for w in want))
    return precision, recall, 2 * precision * recall / max(precision + recall, 1e-9)


def headings_found(text: str, blocks: list[tuple]) -> tuple[int, int]:
    """(source headings found at their level, source headings): in order, each found once."""
    lines = [line for line in text.splitlines() if line.startswith("#")]
    wanted = [("#" * int(kind[1]) + " " + " ".join(content.split())) for kind, content in blocks if kind in ("h1", "h2", "h3")]
    found, position = 0, 0
    for heading in wanted:
        if heading in lines[position:]:
            position = lines.index(heading, position) + 1
            found += 1
    return found, len(wanted)


def ours(raw: bytes) -> tuple[str, list[str]]:
    result = read_pdf(raw)
    bounds = list(result.pages) + [len(result.text)]
    return result.text, [result.text[bounds[i] : bounds[i + 1]] for i in range(result.page_count)]


def pdfium_plain(raw: bytes) -> tuple[str, list[str]]:
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(raw)
    pages = [pdf[i].get_textpage().get_text_range() for i in range(len(pdf))]
    pdf.close()
    return "\n".join(pages), pages


def pypdf_text(raw: bytes) -> tuple[str, list[str]]:
    import io

    from pypdf import PdfReader

    pages = [page.extract_text() or "" for page in PdfReader(io.BytesIO(raw)).pages]
    return "\n".join(pages), pages


EXTRACTORS = {"ours (PDFium + structure)": ours, "PDFium plain text": pdfium_plain, "pypdf extract_text": pypdf_text}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dataset", type=Path, help="a BEIR dataset folder (its corpus.jsonl gives the text)")
    parser.add_argument("--docs", type=int, default=8, help="PDFs per layout")
    parser.add_argument("--out", type=Path, default=Path("/tmp/static-rag-pdf-bench"))
    args = parser.parse_args()
    corpus = args.dataset / "corpus.jsonl"
    if not corpus.exists():
        sys.exit(f"{corpus} not found: pass a BEIR dataset folder, e.g. ../shared/data/scifact")
    args.out.mkdir(parents=True, exist_ok=True)
    documents = corpus_blocks(corpus, args.docs)
    print("| layout | extractor | precision | recall | F1 (worst doc) | running lines left (pages) | headings at their level | pages/s |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    totals: dict[str, list[float]] = {}
    for name, options in LAYOUTS.items():
        files = []
        for i, blocks in enumerate(documents):
            path = args.out / f"{options['layout']}-{int(options.get('outline', False))}-{i}.pdf"
            make_pdf(path, blocks, title=blocks[0][1], author="Bench", **options)
            files.append((path.read_bytes(), source_text(blocks), blocks))
        for label, extract in EXTRACTORS.items():
            scores, leaked, pages, seconds, heads = [], 0, 0, 0.0, [0, 0]
            for raw, expected, blocks in files:
                started = time.perf_counter()
                text, per_page = extract(raw)
                seconds += time.perf_counter() - started
                scores.append(char_f1(text, expected))
                pages += len(per_page)
                if extract is ours:
                    heads = [a + b for a, b in zip(heads, headings_found(text, blocks))]
                if options.get("running"):
                    leaked += sum(HEADER in p or FOOTER in p for p in per_page)
            f1s = [s[2] for s in scores]
            totals.setdefault(label, []).extend(f1s)
            running = f"{leaked}/{pages}" if options.get("running") else "–"
            print(f"| {name} | {label} | {statistics.mean(s[0] for s in scores):.4f} | {statistics.mean(s[1] for s in scores):.4f} "
                  f"| {statistics.mean(f1s):.4f} ({min(f1s):.4f}) | {running} | {f'{heads[0]}/{heads[1]}' if heads[1] else '–'} | {pages / seconds:.0f} |")
    for label, f1s in totals.items():
        print(f"{label}: mean F1 {statistics.mean(f1s):.4f}, worst {min(f1s):.4f} over {len(f1s)} PDFs")


if __name__ == "__main__":
    main()
