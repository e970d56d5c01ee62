"""One indexing run: crawl every source, chunk and embed per space, write and publish a generation."""

from __future__ import annotations

import secrets
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Callable, Collection, ContextManager, Iterator, Protocol

import numpy as np

from indexer import artifacts
from indexer.chunking import ChunkingParams, chunk_text
from indexer.config import Config, SpaceConfig
from indexer.documents import Chunk, Document
from indexer.embedders import Embedder, load_embedder, space_manifest
from indexer.embedders.remote import Budget
from indexer.errors import ConfigError, ErrorCode, IngestError, PublishRefused
from indexer.previous import PreviousGeneration
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
    spaces: dict[str, dict] = field(default_factory=dict)  # per space: chunks, embedded, reused, usage, ...
    errors: list[IngestError] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)

    def as_dict(self) -> dict:
        return {
            "run_id": self.run_id,
            "generation_id": self.generation_id,
            "documents": self.documents,
            "spaces": self.spaces,
            "cost_usd": round(sum(s.get("usage", {}).get("cost_usd", 0.0) for s in self.spaces.values()), 8),
            "errors": [e.as_dict() for e in self.errors],
            "seconds": {k: round(v, 3) for k, v in self.seconds.items()},
        }


def run_index(
    config: Config,
    progress: Progress = no_progress,
    providers: Collection[str] | None = None,
    max_cost_usd: float | None = None,
) -> RunReport:
    """Build and publish a new generation from `config`.

    `providers` limits which spaces are rebuilt (`--provider`); other spaces already in the
    current generation are carried over for every document whose content is unchanged.
    Every unchanged chunk text reuses its vector from the current generation.
    Raises PublishRefused, BudgetExceeded, EmbeddingsFailed or MissingCredentials; in
    every case nothing is published.
    """
    started = datetime.now(timezone.utc)
    report = RunReport(run_id=f"run-{started:%Y%m%dT%H%M%S}Z-{secrets.token_hex(3)}")
    timer = _Timer(report.seconds)
    rebuilt = [s for s in config.spaces if providers is None or s.provider in providers]
    if not rebuilt:
        configured = ", ".join(sorted({s.provider for s in config.spaces}))
        raise ConfigError(f"no configured space uses provider {', '.join(sorted(providers or []))}; configured providers: {configured}")
    budget = Budget(max_cost_usd)
    # Credentials are checked before any crawling: a missing key should cost nothing.
    embedders: dict[str, Embedder] = {}
    for space in rebuilt:
        with timer(f"load_model:{space.space_id}"):
            embedders[space.space_id] = load_embedder(space, budget)

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

    chunked: dict[str, list[Chunk]] = {}
    failed: set[str] = set()
    for space_id, embedder in embedders.items():
        with timer(f"chunk:{space_id}"):
            space = embedder.space
            chunked[space_id], space_failed = chunk_documents(documents, ChunkingParams(space.chunk_tokens, space.chunk_overlap), embedder.fits, report.errors)
        failed |= space_failed
    # A document that failed to chunk in any space is left out of every space, so spaces agree.
    documents = [d for d in documents if d.doc_id not in failed]
    titles = {d.doc_id: d.title for d in documents}

    previous = PreviousGeneration.open(config.artifacts)
    try:
        builds = []
        for space_id, embedder in embedders.items():
            chunks = [c for c in chunked[space_id] if c.doc_id not in failed]
            with timer(f"embed:{space_id}"):
                vectors, stats = embed_chunks(chunks, embedder, previous, titles, progress)
            builds.append(artifacts.SpaceBuild(space_id, embedder.manifest(), chunks, vectors))
            report.spaces[space_id] = {"chunks": len(chunks), **stats, **_usage(embedder)}
        for space in config.spaces:
            if space.space_id not in embedders:
                carried = carry_space(previous, space, documents)
                if carried is None:
                    report.spaces[space.space_id] = {"skipped": f"not rebuilt (--provider) and not in the current generation"}
                    continue
                build, stale = carried
                builds.append(build)
                report.spaces[space.space_id] = {"chunks": len(build.chunks), "carried_over": True, "stale_documents": stale}
    finally:
        if previous is not None:
            previous.close()
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


def embed_chunks(
    chunks: list[Chunk], embedder: Embedder, previous: PreviousGeneration | None, titles: dict[str, str], progress: Progress
) -> tuple[np.ndarray, dict]:
    """Vectors for `chunks`: each distinct text once, and only texts the current generation has not embedded already."""
    space_id = embedder.space.space_id
    first: dict[str, Chunk] = {}
    for c in chunks:
        first.setdefault(c.chunk_hash, c)
    cached = previous.cached_vectors(space_id, set(first)) if previous and previous.compatible(space_id, embedder.manifest()) else {}
    missing = [h for h in first if h not in cached]
    with progress(f"embedding {space_id}", len(missing)) as advance:
        fresh = embedder.embed_documents([first[h].text for h in missing], advance, [titles[first[h].doc_id] for h in missing]) if missing else []
    table = {**cached, **dict(zip(missing, fresh))}
    vectors = np.stack([table[c.chunk_hash] for c in chunks]) if chunks else np.zeros((0, embedder.space.dimensions), np.float32)
    return vectors, {"embedded": len(missing), "reused": len(first) - len(missing)}


def carry_space(previous: PreviousGeneration | None, space: SpaceConfig, documents: list[Document]) -> tuple[artifacts.SpaceBuild, int] | None:
    """A space this run does not rebuild keeps its chunks of unchanged documents; returns (build, stale documents)."""
    if previous is None or not previous.compatible(space.space_id, space_manifest(space)):
        return None
    before = previous.content_hashes()
    unchanged = {d.doc_id for d in documents if before.get(d.doc_id) == d.content_hash}
    chunks, vectors = previous.chunks_with_vectors(space.space_id, unchanged)
    return artifacts.SpaceBuild(space.space_id, space_manifest(space), chunks, vectors), len(documents) - len(unchanged)


def _usage(embedder: Embedder) -> dict:
    usage = getattr(embedder, "usage", None)
    return {"usage": usage.as_dict()} if usage is not None else {}


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
