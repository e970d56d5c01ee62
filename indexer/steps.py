"""The chunk and embed steps of an index run (indexer/pipeline.py), for every space it rebuilds:
every document to chunk cut on every core, and each distinct chunk text embedded once — only those
the current generation has not embedded already. `timer(name)` and `progress(description, total)`
are the run's (pipeline._Timer, pipeline.Progress)."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Callable

import numpy as np

from indexer.chance import measure_space, read_level, still_valid
from indexer.chunking import ChunkingParams, chunk_text, count_tokens
from indexer.documents import Chunk, ChunkTexts, Document
from indexer.embedders import Embedder, fits_for, same_space, space_manifest
from indexer.embedders.remote import BudgetExceeded, EmbeddingsFailed
from indexer.errors import ErrorCode, IngestError
from indexer.lexical import function_word_shares
from indexer import probe
from indexer.plan import Action, Decision
from indexer.pools import thread_pool
from indexer.previous import PreviousGeneration
from indexer.spill import release, vector_array
from indexer.textspill import text_holder

CACHED_ROWS = 8192  # cached vectors read from the previous generation at a time


def embed_chunks(
    chunks: list[Chunk], embedder: Embedder, previous: PreviousGeneration | None, titles: dict[str, str], progress,  # indexer.pipeline.Progress
    spill: Path | None = None,
) -> tuple[np.ndarray, dict, dict[str, IngestError], dict | None]:
    """Vectors for `chunks`: each distinct text once, and only texts the current generation has not embedded already.

    Returns the vectors (zeros where embedding failed), counts, the documents left with
    an unembedded chunk, each with its EMBEDDINGS_FAILED error, and the space's probe (indexer/probe.py;
    None when nothing was embedded). Big arrays live in a file in `spill` (indexer/spill.py) and hold
    no memory until the segment's index reads them. Raises EmbeddingDrift, before embedding any chunk,
    when the provider no longer embeds as it did for the vectors this space keeps.
    """
    space_id = embedder.space.space_id
    first: dict[str, Chunk] = {}
    for c in chunks:
        first.setdefault(c.chunk_hash, c)
    compatible = previous is not None and previous.compatible(space_id, embedder.manifest())
    cached = previous.cached_vector_ids(space_id, set(first)) if compatible else {}
    missing = [h for h in first if h not in cached]
    # Checked before anything is paid for; a space without a probe gets one after its chunks (a cold run's
    # requests go to the chunks first, the probe's two sentences last).
    kept_probe = probe.read_probe(previous.space_folder(space_id)) if compatible and missing else None
    if kept_probe is not None:
        _check_probe(embedder, kept_probe)
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
    kept_probe = kept_probe or (_new_probe(embedder) if missing and error is None else None)
    return vectors, {"embedded": len(missing) - len(failed_hashes), "reused": len(first) - len(missing)}, failed, kept_probe


def _check_probe(embedder: Embedder, kept: dict) -> None:
    """Raise EmbeddingDrift when the provider answers the probe sentences unlike `kept` (indexer/probe.py).
    A provider that does not answer is not checked: the chunks' own embedding then says why."""
    try:
        vectors = probe.embed(embedder)
    except (EmbeddingsFailed, BudgetExceeded):
        return
    probe.check(embedder.space.space_id, kept, vectors)


def _new_probe(embedder: Embedder) -> dict | None:
    """The probe sentences as the provider embeds them now (None when it does not answer, or the
    budget is spent: the next run that embeds tries again)."""
    try:
        return probe.new_probe(probe.embed(embedder))
    except (EmbeddingsFailed, BudgetExceeded):
        return None


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

    with thread_pool(os.cpu_count() or 1, "chunk") as pool:
        for doc, result in zip(documents, pool.map(chunk_one, documents)):
            if isinstance(result, Exception):
                failed.add(doc.doc_id)
                errors.append(IngestError(ErrorCode.CHUNKING_FAILED, "chunk", f"{type(result).__name__}: {result}", doc_id=doc.doc_id, source=doc.source))
            else:
                chunks.extend(result)
            advance(1)
    return chunks, failed


def chunk_spaces(rebuilt, documents: list[Document], decisions: dict[str, Decision], kept: set[str], carries: dict[str, bool],
                 stale_before: dict[str, set[str]], dry_run: bool, embedder_for, progress, timer,
                 errors: list[IngestError]) -> dict[str, list[Chunk]]:
    """The new chunks of each rebuilt space: of changed documents, and of kept ones where the space
    cannot keep their chunks (a new space, new chunking, a stale document). A changed document that
    cannot be chunked is marked FAILED in `decisions` and has no chunks in any space."""
    new_chunks: dict[str, list[Chunk]] = {}
    for space in rebuilt:
        space_id = space.space_id
        renew = stale_before[space_id]
        to_chunk = [d for d in documents if decisions[d.doc_id].action is Action.FULL or (d.doc_id in kept and (not carries[space_id] or d.doc_id in renew))]
        fits = (embedder_for(space).fits if space.provider == "local" and not dry_run else fits_for(space)) if to_chunk else None
        with timer(f"chunk:{space_id}"), progress(f"chunking {space_id}", len(to_chunk)) as advance:
            params = ChunkingParams(space.chunk_tokens, space.chunk_overlap)
            new_chunks[space_id], failed = chunk_documents(to_chunk, params, fits, errors, advance)
        for doc_id in failed & {i for i, d in decisions.items() if d.action is Action.FULL}:
            decisions[doc_id] = Decision(doc_id, decisions[doc_id].source, Action.FAILED, "CHUNKING_FAILED")
        new_chunks[space_id] = [c for c in new_chunks[space_id] if c.doc_id not in failed]
    return new_chunks


LANGUAGE_SAMPLE = 200  # new chunks read, spread over a run's, to tell the language its text is in
LANGUAGE_MIN_WORDS = 100  # fewer tell nothing (a night that changed a line)


def language_hint(language: str, new_chunks: dict[str, list[Chunk]]) -> list[IngestError]:
    """A LANGUAGE_HINT warning when most of the run's new text is in another of lexical.LANGUAGES
    than the config's `language`: a German site indexed as English finds no word in another form
    and matches every page by "ist" and "von". Its own language's function words are 28–45% of
    a text's words (SciFact, NFCorpus, ArguAna, CMake's help, `examples/`, a German shop), any
    other's under 9%: the other must have 20% and three times the configured one's (a site half in
    each language gets no hint)."""
    chunks = next((c for c in new_chunks.values() if c), [])
    total, shares = function_word_shares(c.text for c in chunks[:: max(1, len(chunks) // LANGUAGE_SAMPLE)][:LANGUAGE_SAMPLE])
    found = max(shares, key=shares.__getitem__)
    if total < LANGUAGE_MIN_WORDS or found == language or shares[found] < 0.2 or shares[found] < 3 * shares[language]:
        return []
    return [IngestError(ErrorCode.LANGUAGE_HINT, "chunk", f"most of the new text reads as {found.title()} ({shares[found]:.0%} of its words are "
                        f"{found.title()} function words, {shares[language]:.0%} {language.title()} ones): set language = \"{found}\" in the config, so "
                        f"that keyword search finds its words in other forms and leaves those out (the next run rewrites the keyword index, "
                        f"embedding nothing)", level="warning")]


def embed_spaces(rebuilt, new_chunks: dict[str, list[Chunk]], documents: list[Document], embedder_for, previous: PreviousGeneration | None,
                 progress, timer, spill) -> tuple[dict[str, tuple[np.ndarray, dict]], dict[str, IngestError], dict[str, dict]]:
    """Each rebuilt space's vectors for its new chunks (cached ones reused) with what embedding
    cost, the documents some chunk of which could not be embedded, with why, and the probe of each
    space that embedded something (indexer/probe.py)."""
    chunked = {c.doc_id for chunks in new_chunks.values() for c in chunks}
    titles = {d.doc_id: d.title for d in documents if d.doc_id in chunked}  # a kept document's fields are not read (StoredDocument)
    fresh: dict[str, tuple[np.ndarray, dict]] = {}
    unembedded: dict[str, IngestError] = {}
    probes: dict[str, dict] = {}
    for space in rebuilt:
        space_id = space.space_id
        if not new_chunks[space_id]:  # nothing to embed: no client, no model
            fresh[space_id] = (np.zeros((0, space.dimensions), np.float32), {"embedded": 0, "reused": 0})
            continue
        embedder = embedder_for(space)
        with timer(f"embed:{space_id}"):
            vectors, stats, failed, checked = embed_chunks(new_chunks[space_id], embedder, previous, titles, progress, spill=spill)
        fresh[space_id] = (vectors, {**stats, **_usage(embedder)})
        unembedded.update({doc_id: error for doc_id, error in failed.items() if doc_id not in unembedded})
        if checked is not None:
            probes[space_id] = checked
    return fresh, unembedded, probes


def drop_chunks_of(doc_ids, new_chunks: dict[str, list[Chunk]], fresh: dict[str, tuple[np.ndarray, dict]]) -> None:
    """Leave the new chunks of `doc_ids`, and their vectors, out of every space."""
    for space_id, (vectors, stats) in fresh.items():
        keep = [c.doc_id not in doc_ids for c in new_chunks[space_id]]
        new_chunks[space_id] = [c for c, k in zip(new_chunks[space_id], keep) if k]
        fresh[space_id] = (vectors[np.asarray(keep, dtype=bool)] if len(keep) else vectors, stats)


def _usage(embedder: Embedder) -> dict:
    usage = getattr(embedder, "usage", None)
    return {"usage": usage.as_dict()} if usage is not None else {}


class ChanceLevels:
    """Each space's chance level (indexer/chance.py), asked for as the generation is written
    (`artifacts.write_generation`'s `chance`). A space keeps its previous generation's level while
    its model is the same and its size moved less than chance.REMEASURE_CHANGE; a space this run
    rebuilds is otherwise measured anew, with its own embedder. A space not rebuilt keeps what it
    had (its provider may be out of reach here). A measurement the provider refuses leaves the
    space without a level, and a warning: its relevance then uses the fixed calibration."""

    def __init__(self, previous: PreviousGeneration | None, rebuilt, embedder_for, report, timer):
        """`report`: the run's (runreport.RunReport): warnings go there, and a provider's usage
        counts the measurement's requests too, as the provider does."""
        self.rebuilt = {space.space_id: space for space in rebuilt}
        self.embedder_for, self.report, self.timer = embedder_for, report, timer
        self.before = {} if previous is None else {
            space_id: (previous.space_manifest(space_id), read_level(previous.space_folder(space_id)))
            for space_id in previous.manifest["spaces"] if space_id not in previous.forgotten  # embedded anew: measured anew
        }

    def kept(self, build) -> dict | None:
        """The previous level this space keeps, if any."""
        stored, level = self.before.get(build.space_id, (None, None))
        if level is None or stored is None or same_space(stored, build.manifest):
            return None
        return level if build.space_id not in self.rebuilt or still_valid(level, build.size, build.analyzer) else None

    def to_measure(self, build) -> bool:
        return build.space_id in self.rebuilt and build.size > 0 and self.kept(build) is None

    def __call__(self, build, space_dir: Path) -> dict | None:
        if not self.to_measure(build):
            return self.kept(build)
        space = self.rebuilt[build.space_id]
        embedder = self.embedder_for(space)
        try:
            with self.timer(f"chance:{build.space_id}"):
                return measure_space(space_dir, space.dimensions, embedder.embed_queries, build.analyzer)
        except (EmbeddingsFailed, BudgetExceeded) as exc:
            self.report.warnings.append(IngestError(ErrorCode.EMBEDDINGS_FAILED, "chance", f"{build.space_id}: its chance level could not be measured "
                                                    f"({exc}); its relevance uses the fixed calibration until a run measures it", level="warning"))
            return None
        finally:
            self.report.spaces.setdefault(build.space_id, {}).update(_usage(embedder))
