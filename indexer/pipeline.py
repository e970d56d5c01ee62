"""One indexing run: crawl every source, chunk and embed per space, write and publish a generation."""

from __future__ import annotations

import secrets
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Callable, ContextManager, Iterator, Protocol

import numpy as np

from indexer import artifacts
from indexer.chunking import ChunkingParams, chunk_text
from indexer.config import Config
from indexer.documents import Chunk, Document
from indexer.embedders import Embedder, load_embedder
from indexer.errors import ErrorCode, IngestError, PublishRefused
from indexer.sources import count_items, crawl


class Progress(Protocol):
    def __call__(self, description: str, total: int | None) -> ContextManager[Callable[[int], None]]: ...


@contextmanager
def no_progress(description: str, total: int | None) -> Iterator[Callable[[int], None]]:
    yield lambda n: None


@dataclass
class RunReport:
    """What a run did, for people (`index run`) and machines (`index run --json`)."""

    run_id: str
    generation_id: str | None = None
    documents: int = 0
    chunks: dict[str, int] = field(default_factory=dict)
    embedded: dict[str, int] = field(default_factory=dict)
    errors: list[IngestError] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)

    def as_dict(self) -> dict:
        return {
            "run_id": self.run_id,
            "generation_id": self.generation_id,
            "documents": self.documents,
            "chunks": self.chunks,
            "embedded": self.embedded,
            "errors": [e.as_dict() for e in self.errors],
            "seconds": {k: round(v, 3) for k, v in self.seconds.items()},
        }


def run_index(config: Config, progress: Progress = no_progress) -> RunReport:
    """Build and publish a new generation from `config`. Raises PublishRefused if the result fails verification."""
    started = datetime.now(timezone.utc)
    report = RunReport(run_id=f"run-{started:%Y%m%dT%H%M%S}Z-{secrets.token_hex(3)}")
    timer = _Timer(report.seconds)

    with timer("crawl"):
        documents: list[Document] = []
        for source in config.sources:
            with progress(f"reading {source.name}", count_items(source)) as advance:
                result = crawl(source, advance)
            documents.extend(result.documents)
            report.errors.extend(result.errors)
    documents = _unique(documents, report.errors)
    if not documents:
        raise PublishRefused(_nothing_found(config, report.errors))

    loaded: dict[str, Embedder] = {}
    chunked: dict[str, list[Chunk]] = {}
    failed: set[str] = set()
    for space in config.spaces:
        with timer(f"load_model:{space.space_id}"):
            loaded[space.space_id] = load_embedder(space)
        with timer(f"chunk:{space.space_id}"):
            params = ChunkingParams(space.chunk_tokens, space.chunk_overlap)
            chunked[space.space_id], space_failed = chunk_documents(documents, params, loaded[space.space_id].fits, report.errors)
        failed |= space_failed
    # A document that failed to chunk in any space is left out of every space, so spaces agree.
    documents = [d for d in documents if d.doc_id not in failed]

    builds = []
    for space_id, embedder in loaded.items():
        chunks = [c for c in chunked[space_id] if c.doc_id not in failed]
        with timer(f"embed:{space_id}"):
            vectors, embedded = embed_unique(chunks, embedder, progress, f"embedding {space_id}")
        builds.append(artifacts.SpaceBuild(space_id, embedder.manifest(), chunks, vectors))
        report.chunks[space_id] = len(chunks)
        report.embedded[space_id] = embedded
    report.documents = len(documents)

    generation_id = artifacts.new_generation_id(started)
    with timer("write"):
        run = artifacts.RunRecord(report.run_id, started, report.errors, {k: v for k, v in report.as_dict().items() if k != "errors"})
        folder = artifacts.write_generation(config.artifacts, generation_id, documents, builds, run)
    try:
        artifacts.verify_generation(folder)
    except Exception:
        artifacts.discard(folder)
        raise
    with timer("publish"):
        artifacts.publish(config.artifacts, folder, generation_id, config.keep_generations)
    report.generation_id = generation_id
    return report


def _nothing_found(config: Config, errors: list[IngestError]) -> str:
    sources = ", ".join(f"{s.name} ({s.path or ', '.join(s.urls)})" for s in config.sources)
    first = f"; first error: {errors[0].code} {errors[0].message}" if errors else ""
    return f"the generation is empty: no source produced a document with text. Sources: {sources}{first}. Nothing was published."


def chunk_documents(
    documents: list[Document], params: ChunkingParams, fits: Callable[[str], bool], errors: list[IngestError]
) -> tuple[list[Chunk], set[str]]:
    chunks: list[Chunk] = []
    failed: set[str] = set()
    for doc in documents:
        try:
            chunks.extend(chunk_text(doc.text, params, fits, doc_id=doc.doc_id))
        except Exception as exc:  # one bad document never fails the run
            failed.add(doc.doc_id)
            errors.append(IngestError(ErrorCode.CHUNKING_FAILED, "chunk", f"{type(exc).__name__}: {exc}", doc_id=doc.doc_id, source=doc.source))
    return chunks, failed


def embed_unique(chunks: list[Chunk], embedder: Embedder, progress: Progress, label: str) -> tuple[np.ndarray, int]:
    """Embed each distinct chunk text once; identical chunks (boilerplate, copies) share a vector."""
    position: dict[str, int] = {}
    for c in chunks:
        position.setdefault(c.chunk_hash, len(position))
    unique_texts = [""] * len(position)
    for c in chunks:
        unique_texts[position[c.chunk_hash]] = c.text
    with progress(label, len(unique_texts)) as advance:
        unique_vectors = embedder.embed_documents(unique_texts, advance) if unique_texts else np.zeros((0, embedder.space.dimensions), np.float32)
    rows = np.fromiter((position[c.chunk_hash] for c in chunks), dtype=np.int64, count=len(chunks))
    return unique_vectors[rows], len(unique_texts)


def _unique(documents: list[Document], errors: list[IngestError]) -> list[Document]:
    """The first document with a given doc_id wins; later ones are reported, not silently merged."""
    seen: dict[str, Document] = {}
    for doc in documents:
        if doc.doc_id in seen:
            errors.append(IngestError(ErrorCode.DUPLICATE_DOCUMENT, "plan", f"duplicate doc_id {doc.doc_id} (also in source {seen[doc.doc_id].source})", doc_id=doc.doc_id, source=doc.source))
        else:
            seen[doc.doc_id] = doc
    return list(seen.values())


class _Timer:
    def __init__(self, into: dict[str, float]):
        self.into = into

    @contextmanager
    def __call__(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.into[name] = self.into.get(name, 0.0) + time.perf_counter() - start
