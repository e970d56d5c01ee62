"""The chunk and embed steps of an index run (indexer/pipeline.py): every document to chunk cut
on every core, and each distinct chunk text embedded once — only those the current generation
has not embedded already."""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Callable

import numpy as np

from indexer.chunking import ChunkingParams, chunk_text, count_tokens
from indexer.documents import Chunk, ChunkTexts, Document
from indexer.embedders import Embedder, space_manifest
from indexer.embedders.remote import EmbeddingsFailed
from indexer.errors import ErrorCode, IngestError
from indexer.previous import PreviousGeneration
from indexer.spill import release, vector_array
from indexer.textspill import text_holder

CACHED_ROWS = 8192  # cached vectors read from the previous generation at a time


def embed_chunks(
    chunks: list[Chunk], embedder: Embedder, previous: PreviousGeneration | None, titles: dict[str, str], progress,  # indexer.pipeline.Progress
    spill: Path | None = None,
) -> tuple[np.ndarray, dict, dict[str, IngestError]]:
    """Vectors for `chunks`: each distinct text once, and only texts the current generation has not embedded already.

    Returns the vectors (zeros where embedding failed), counts, and the documents left with
    an unembedded chunk, each with its EMBEDDINGS_FAILED error. Big arrays live in a file in
    `spill` (indexer/spill.py) and hold no memory until the segment's index reads them.
    """
    space_id = embedder.space.space_id
    first: dict[str, Chunk] = {}
    for c in chunks:
        first.setdefault(c.chunk_hash, c)
    cached = previous.cached_vector_ids(space_id, set(first)) if previous and previous.compatible(space_id, embedder.manifest()) else {}
    missing = [h for h in first if h not in cached]
    failed_hashes: set[str] = set()
    error: EmbeddingsFailed | None = None
    with progress(f"embedding {space_id}", len(missing)) as advance:
        try:
            texts, doc_titles, tokens = ChunkTexts([first[h] for h in missing]), [titles[first[h].doc_id] for h in missing], [first[h].token_count for h in missing]
            fresh = embedder.embed_documents(texts, advance, doc_titles, tokens, out=vector_array(len(missing), embedder.space.dimensions, spill)) if missing else []
        except EmbeddingsFailed as exc:
            if exc.vectors is None:
                raise
            error, fresh = exc, exc.vectors
            failed_hashes = {missing[i] for i in exc.failed_rows}
    vectors = _vector_per_chunk(chunks, missing, fresh, cached, lambda ids: previous.vectors(space_id, ids), embedder.space.dimensions, spill)
    release(vectors)
    failed = {
        c.doc_id: IngestError(ErrorCode.EMBEDDINGS_FAILED, "embed", str(error), retryable=error.retryable, doc_id=c.doc_id)
        for c in chunks
        if c.chunk_hash in failed_hashes
    }
    return vectors, {"embedded": len(missing) - len(failed_hashes), "reused": len(first) - len(missing)}, failed


def _vector_per_chunk(chunks: list[Chunk], missing: list[str], fresh, cached: dict[str, int], stored: Callable[[list[int]], np.ndarray],
                      dimension: int, spill: Path | None = None) -> np.ndarray:
    """One row per chunk from the new vectors (`fresh`, row i = text `missing[i]`) and the cached
    ones (`cached`: text → vector id in the previous generation, read by `stored`), each copied
    once. A cold run whose chunks are all distinct hands the embedder's array on as it is. The
    cached vectors are read CACHED_ROWS at a time: all at once they were 110 MB for a run
    re-chunking 10,000 documents at 256 dimensions (660 MB at OpenAI's default 1536)."""
    if len(missing) == len(chunks) and isinstance(fresh, np.ndarray):
        return fresh  # every chunk's text is new and distinct: `missing` is in chunk order
    row = {h: i for i, h in enumerate(missing)}
    vectors = vector_array(len(chunks), dimension, spill)
    reused: list[tuple[int, int]] = []  # (row in `vectors`, vector id in the previous generation)
    for i, c in enumerate(chunks):
        j = row.get(c.chunk_hash)
        if j is not None:
            vectors[i] = fresh[j]
        else:
            reused.append((i, cached[c.chunk_hash]))
    for start in range(0, len(reused), CACHED_ROWS):
        rows, ids = zip(*reused[start : start + CACHED_ROWS])
        vectors[list(rows)] = stored(list(ids))
        release(vectors, rows[0], rows[-1] + 1)  # a file-backed array's rows go back to the file (indexer/spill.py)
    return vectors


def estimate(chunks: list[Chunk], space, previous: PreviousGeneration | None) -> dict:
    """What embedding `chunks` would take: distinct texts not in the vector cache, their tokens and price."""
    texts = {c.chunk_hash: c.text for c in chunks}
    cached = previous.cached_vector_ids(space.space_id, set(texts)) if previous and previous.compatible(space.space_id, space_manifest(space)) else {}
    tokens = sum(count_tokens(t) for h, t in texts.items() if h not in cached)
    return {
        "chunks_to_embed": len(texts) - len(cached),
        "chunks_reused": len(cached),
        "tokens_to_embed": tokens,
        "estimated_cost_usd": round(tokens * space.info.price_per_million_tokens / 1e6, 8),
    }


def chunk_documents(
    documents: list[Document], params: ChunkingParams, fits: Callable[[str], bool] | None, errors: list[IngestError], advance: Callable[[int], None] = lambda n: None
) -> tuple[list[Chunk], set[str]]:
    """Every document's chunks, in order, on every core: tiktoken lets go of the GIL while it
    encodes, which is most of the work (2,000 documents: 4.2 s on one thread, 2.7 s on two)."""
    chunks: list[Chunk] = []
    failed: set[str] = set()
    one_at_a_time = threading.Lock()  # a model's tokenizer (`fits`) may not be called from two threads at once

    def checked(text: str) -> bool:
        with one_at_a_time:
            return fits(text)

    def chunk_one(doc: Document) -> list[Chunk] | Exception:
        try:
            return chunk_text(doc.text, params, checked if fits else None, doc_id=doc.doc_id, held=text_holder(doc))
        except Exception as exc:  # one bad document never fails the run
            return exc

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1, thread_name_prefix="chunk") as pool:
        for doc, result in zip(documents, pool.map(chunk_one, documents)):
            if isinstance(result, Exception):
                failed.add(doc.doc_id)
                errors.append(IngestError(ErrorCode.CHUNKING_FAILED, "chunk", f"{type(result).__name__}: {result}", doc_id=doc.doc_id, source=doc.source))
            else:
                chunks.extend(result)
            advance(1)
    return chunks, failed
