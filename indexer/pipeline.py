"""One indexing run: crawl every source, chunk and embed per space, write and publish a generation."""

from __future__ import annotations

import os
import time
from contextlib import ExitStack, contextmanager
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Collection, ContextManager, Iterator, Protocol

import numpy as np

from indexer import artifacts, runlog
from indexer.collector import fewer_collections
from indexer.config import Config, SourceConfig
from indexer.diskspace import check_room
from indexer.documents import Chunk, Document, FetchState
from indexer.embedders import Embedder, check_usable, import_client_soon, load_embedder, space_manifest
from indexer.embedders.remote import Budget
from indexer.errors import ConfigError, ErrorCode, IngestError, PublishRefused, StaticRagError
from indexer.metadb import EarlyCopy, MetaUpdate
from indexer.deciding import decide
from indexer.plan import Action, Decision, DeleteGuard, counts
from indexer.previous import PreviousGeneration
from indexer.probe import read_probe
from indexer.runreport import RunReport, new_run_id, peak_rss_mb, slowest
from indexer.sources import SourceResult, check_credentials, count_items, crawl, found_nothing, listed_files
from indexer.steps import ChanceLevels, chunk_spaces, drop_chunks_of, embed_spaces, estimate, language_hint
from indexer.streaks import count_streaks
from indexer.textspill import TextSpill

class Progress(Protocol):
    def __call__(self, description: str, total: int | None) -> ContextManager[Callable[[int], None]]: ...


@contextmanager
def no_progress(description: str, total: int | None) -> Iterator[Callable[[int], None]]:
    yield lambda n: None


@fewer_collections()
def run_index(
    config: Config,
    progress: Progress = no_progress,
    providers: Collection[str] | None = None,
    max_cost_usd: float | None = None,
    allow_mass_delete: bool = False,
    dry_run: bool = False,
    full_refresh: bool = False,
    run_id: str | None = None,
    reembed: bool = False,
) -> RunReport:
    """Build and publish the next generation, starting from the current one.

    Each document gets a decision (see `indexer.plan`): skipped and metadata-only documents
    keep their chunks and vectors; a document this run could not read keeps its last good
    version; changed documents are re-chunked and only chunk texts the current generation has
    not embedded are embedded. `providers` limits which spaces are rebuilt (`--provider`); the
    others keep their chunks of documents that did not change. Raises PublishRefused, DeleteGuard,
    BudgetExceeded, EmbeddingsFailed, MissingCredentials, NoRoom (checked before embedding) or
    EmbeddingDrift (indexer/probe.py); in every case nothing is published.

    `dry_run` stops after the plan and chunking: the report says what would be embedded and what
    it would cost; nothing is written and no provider is called (no key needed). `full_refresh`
    forgets what the last fetches knew: every web page is downloaded without validators and every
    Notion page's blocks are read again (unchanged text still reuses its vectors). `reembed`
    embeds every chunk of the rebuilt spaces anew, reusing no vector (after EmbeddingDrift).
    """
    started = datetime.now(timezone.utc)
    report = RunReport(run_id=run_id or new_run_id(started), dry_run=dry_run)
    timer = _Timer(report.seconds)
    rebuilt = _spaces_to_rebuild(config, providers, dry_run)
    embedder_for = _Embedders(Budget(max_cost_usd), timer)
    previous = _forgetting(PreviousGeneration.open(config.artifacts, report.warnings, dry_run), rebuilt if reembed else ())
    updatable = not dry_run and _updates_meta(previous)
    with ExitStack() as cleanup:  # on every way out: the early copy removed (unless the write took it), the previous generation closed
        if previous is not None:
            cleanup.callback(previous.close)
        crawled, complete, not_modified, stored_fetch, texts = _crawl(config, previous, full_refresh, dry_run, progress, report, timer)
        before = previous.documents_state() if previous else {}
        decisions = decide(previous, before, crawled, complete, not_modified, report, config, allow_mass_delete, dry_run)
        if not dry_run and any(d.action is Action.FULL for d in decisions.values()):
            for space in rebuilt:
                import_client_soon(space)  # something will be embedded: its client loads while the rest is prepared
        meta_copied = _meta_to_copy(previous, decisions)  # meta.duckdb is written to soon: copied meanwhile
        early = cleanup.enter_context(EarlyCopy(meta_copied, config.artifacts / artifacts.GENERATIONS)) if meta_copied and not dry_run else None

        versions = _Versions(previous, crawled, before, texts, report.confirmed)
        documents, kept = versions.assemble(decisions)

        carries, stale_before = _carried(previous, rebuilt)
        new_chunks = chunk_spaces(rebuilt, documents, decisions, kept, carries, stale_before, dry_run, embedder_for, progress, timer, report.errors)
        documents, kept = versions.assemble(decisions)  # a document that failed to chunk falls back to its last good version
        _drop_chunks_of_fallbacks(new_chunks, documents, decisions)
        report.warnings.extend(language_hint(config.language, new_chunks))
        if not documents:
            raise _nothing_found(config, report)

        needs = _least_written(rebuilt, new_chunks, meta_copied)
        if dry_run:
            report.spaces = {s.space_id: estimate(new_chunks[s.space_id], s, previous) for s in rebuilt}
            check_room(config.artifacts, needs, warnings=report.warnings)
            return _summarized(report, decisions, documents, before, previous, started)

        # Embed every rebuilt space first: a document whose chunks cannot be embedded falls
        # back to its last good version in every space, so spaces agree on each document.
        check_room(config.artifacts, needs, early.copied() if early else 0)
        fresh, unembedded, probes = embed_spaces(rebuilt, new_chunks, documents, embedder_for, previous, progress, timer, config.artifacts)
        if unembedded:
            documents, kept = _fall_back(unembedded, decisions, versions, new_chunks, fresh, report, config)

        builds = _space_builds(config, previous, fresh, new_chunks, carries, stale_before, kept, decisions, documents, report, probes)
        fresh = {}  # the builds hold the vectors now; writing them lets them go (artifacts.write_generation)
        rewritten = _rewritten(decisions, documents, crawled, stored_fetch, before, report.confirmed)
        chance = ChanceLevels(previous, rebuilt, embedder_for, report, timer)
        unchanged_generation = _already_served(previous, chance, decisions, documents, builds, rewritten, report)
        update = MetaUpdate(previous.folder / "meta.duckdb", rewritten, early) if updatable else None
        if previous is not None:
            previous.close()  # everything is read from it: the write opens what it needs itself
        _summarized(report, decisions, documents, before, previous, started)
        if unchanged_generation:  # the served generation is already what this run would write
            report.generation_id, report.unchanged = previous.folder.name, True
        else:
            _write_and_publish(config, report, started, documents, builds, sorted({s.provider for s in rebuilt}), update, chance, progress, timer)
        report.peak_rss_mb = peak_rss_mb()
        return report


def _crawl(config: Config, previous: PreviousGeneration | None, full_refresh: bool, dry_run: bool, progress: Progress, report: RunReport,
           timer: "_Timer") -> tuple[dict[str, Document], set[str], set[str], dict[str, FetchState], TextSpill | None]:
    """Every source's documents by id (the first of a duplicated id; the others are errors), the
    sources whose listing was complete, the documents that answered "not modified", what the last
    fetches knew, and the spill the texts wait in (indexer/textspill.py; none in a dry run)."""
    with timer("crawl"):
        stored_fetch = previous.fetch_state() if previous else {}
        texts = None if dry_run else TextSpill(config.artifacts)
        last_run = runlog.last_completed_start(config.artifacts) if previous else None
        crawled_list, complete, not_modified = _crawl_sources(config, stored_fetch, full_refresh, texts, progress, report, last_run)
    crawled = {d.doc_id: d for d in _unique(crawled_list, report.errors)}
    report.slowest = slowest(crawled.values())
    return crawled, complete, not_modified, stored_fetch, texts


def _carried(previous: PreviousGeneration | None, rebuilt: list) -> tuple[dict[str, bool], dict[str, set[str]]]:
    """Per rebuilt space: whether it keeps the chunks of kept documents as they are (it is built
    exactly as configured now), and the documents that changed while it was not rebuilt
    (`--provider`), which still hold an older version's chunks there."""
    carries = {s.space_id: previous is not None and previous.carries_chunks(s.space_id, space_manifest(s)) for s in rebuilt}
    stale_before = {s.space_id: previous.stale_documents(s.space_id) if carries[s.space_id] else set() for s in rebuilt}
    return carries, stale_before


def _meta_to_copy(previous: PreviousGeneration | None, decisions: dict[str, Decision]) -> Path | None:
    """The meta.duckdb a run copies and updates (a dry run would), when a document changes and
    the previous one has this version's schema; None when the run writes none or a new one."""
    if _updates_meta(previous) and any(d.action is not Action.SKIP for d in decisions.values()):
        return previous.folder / "meta.duckdb"
    return None


def _least_written(rebuilt, new_chunks: dict[str, list[Chunk]], meta_copied: Path | None) -> dict[str, int]:
    """Bytes the run will surely write to the artifacts' disk from here on, for `check_room`: each
    new chunk's vector (float32, in its segment's index.faiss) and text (chunks.jsonl; a character
    is at least a byte), and the copy of meta.duckdb it updates (`EarlyCopy`)."""
    needs = {"its new vectors": sum(len(new_chunks[s.space_id]) * s.dimensions * 4 for s in rebuilt),
             "their texts": sum(c.end - c.start for s in rebuilt for c in new_chunks[s.space_id])}  # without reading spilled texts
    if meta_copied is not None:
        needs["a copy of meta.duckdb"] = meta_copied.stat().st_size
    return needs


def _updates_meta(previous: PreviousGeneration | None) -> bool:
    """meta.duckdb is updated, not written anew, when the previous one has this version's schema."""
    return previous is not None and previous.manifest["schema_version"] == artifacts.SCHEMA_VERSION


def _already_served(previous: PreviousGeneration | None, chance: ChanceLevels, decisions: dict[str, Decision], documents: list[Document],
                    builds: list, rewritten: frozenset[str], report: RunReport) -> bool:
    """Whether the served generation is already what this run would write (then nothing is
    published). A space still to measure its chance level (a generation from before them) is a
    change, and so is building on a kept generation because the served one cannot be read."""
    return (previous is not None and previous.served and not any(chance.to_measure(b) for b in builds)
            and _nothing_changed(previous, decisions, documents, builds, rewritten, report))


def _drop_chunks_of_fallbacks(new_chunks: dict[str, list[Chunk]], documents: list[Document], decisions: dict[str, Decision]) -> None:
    """Chunks of a document that failed, or fell back to its last good version, are not written."""
    live = {d.doc_id for d in documents}
    for space_id in new_chunks:
        new_chunks[space_id] = [c for c in new_chunks[space_id] if c.doc_id in live and decisions[c.doc_id].action is not Action.FAILED]


def _fall_back(unembedded: dict[str, IngestError], decisions: dict[str, Decision], versions: _Versions, new_chunks: dict[str, list[Chunk]],
               fresh: dict, report: RunReport, config: Config) -> tuple[list[Document], set[str]]:
    """Documents whose chunks could not be embedded fail: each keeps its last good version, in every
    space. Raises PublishRefused when no document is left to publish."""
    for doc_id, error in unembedded.items():
        report.errors.append(replace(error, source=decisions[doc_id].source))
        decisions[doc_id] = Decision(doc_id, decisions[doc_id].source, Action.FAILED, str(error.code))
    drop_chunks_of(unembedded, new_chunks, fresh)
    documents, kept = versions.assemble(decisions)
    if not documents:
        raise _nothing_found(config, report)
    return documents, kept


def _forgetting(previous: PreviousGeneration | None, spaces) -> PreviousGeneration | None:
    """`previous`, its vectors in `spaces` not to be reused (`--reembed`: they are embedded anew)."""
    if previous is not None:
        previous.forgotten = frozenset(s.space_id for s in spaces)
    return previous


def _spaces_to_rebuild(config: Config, providers: Collection[str] | None, dry_run: bool) -> list:
    """The spaces this run rebuilds (`--provider`), once every credential they and the sources need
    is there: a missing key should cost nothing. Clients and models load only when something needs
    them: a run where nothing changed never imports them."""
    rebuilt = [s for s in config.spaces if providers is None or s.provider in providers]
    if not rebuilt:
        configured = ", ".join(sorted({s.provider for s in config.spaces}))
        raise ConfigError(f"no configured space uses provider {', '.join(sorted(providers or []))}; configured providers: {configured}")
    check_credentials(config.sources)
    if not dry_run:
        for space in rebuilt:
            check_usable(space)
    return rebuilt


class _Embedders:
    """Each space's embedder, loaded when first asked for (timed as `load_model:<space>`)."""

    def __init__(self, budget: Budget, timer: "_Timer"):
        self.budget, self.timer, self.loaded = budget, timer, {}

    def __call__(self, space) -> Embedder:
        if space.space_id not in self.loaded:
            with self.timer(f"load_model:{space.space_id}"):
                self.loaded[space.space_id] = load_embedder(space, self.budget)
        return self.loaded[space.space_id]


def _summarized(report: RunReport, decisions: dict[str, Decision], documents: list[Document], before: dict,
                previous: PreviousGeneration | None, started: datetime) -> RunReport:
    """The report's counts, what the run built on, and how long each error has been failing (indexer/streaks.py)."""
    count_streaks(report.errors, previous, started)
    report.built_on = previous.folder.name if previous is not None else None
    report.documents = len(documents)
    report.decisions = list(decisions.values())
    report.counts = counts(report.decisions, before)
    return report


def _crawl_sources(config: Config, stored_fetch: dict[str, FetchState], full_refresh: bool, texts: TextSpill | None, progress: Progress,
                   report: RunReport, last_run: datetime | None = None) -> tuple[list[Document], set[str], set[str]]:
    """Crawl every source: the documents read, the sources whose listing was complete (only those
    can delete documents) and the documents that answered "not modified". Errors, warnings and
    retries go into `report`; texts wait in `texts` (None in a dry run: kept in memory)."""
    fetch_state = stored_fetch
    if full_refresh:  # forget the validators, never where pages led: a page failing now must not orphan what it linked to
        fetch_state = {doc_id: FetchState(links=state.links) for doc_id, state in fetch_state.items()}
    documents: list[Document] = []
    complete: set[str] = set()
    not_modified: set[str] = set()
    for source in config.sources:
        listing = listed_files(source)
        with progress(f"reading {source.name}", count_items(source, listing)) as advance:
            result = _crawl_one(source, advance, fetch_state, listing, texts, last_run)
        if (empty := found_nothing(source, result)) is not None:
            report.warnings.append(empty)
        documents.extend(result.documents)
        report.errors.extend(result.errors)
        report.warnings.extend(result.warnings)
        not_modified.update(result.not_modified)
        report.moved.update(result.moved)
        report.why_gone.update(result.why_gone)
        report.by_lastmod.update(result.by_lastmod)
        report.lastmod_checked.update(result.lastmod_checked)
        report.confirmed.update(result.confirmed)
        if result.could_spare:
            report.could_spare[source.name] = result.could_spare
        if result.retries:
            report.retries[source.name] = result.retries
        if result.listing_complete:
            complete.add(source.name)
    return documents, complete, not_modified


def _crawl_one(source: SourceConfig, advance, fetch_state: dict[str, FetchState], listing, texts: TextSpill | None,
               last_run: datetime | None = None) -> SourceResult:
    """One source's crawl. A bug that escapes it fails that source, not the run: its listing counts
    as failed, so it deletes nothing and its documents keep their last versions, and the other
    sources still publish (exit 4). STATIC_RAG_DEBUG=1 lets it through, with its traceback."""
    try:
        return crawl(source, advance, fetch_state, listing, keep=texts.keep if texts else None, last_run=last_run)
    except StaticRagError:
        raise  # a missing key or a bad config: the run's own error
    except Exception as exc:
        if os.environ.get("STATIC_RAG_DEBUG"):
            raise
        message = f"{source.name}: unexpected {type(exc).__name__}: {exc} (a bug; STATIC_RAG_DEBUG=1 shows where)"
        return SourceResult(source=source.name, listing_complete=False,
                            errors=[IngestError(ErrorCode.SOURCE_LISTING_FAILED, "list", message, source=source.name)])


def _write_and_publish(config: Config, report: RunReport, started: datetime, documents: list[Document], builds: list, providers: list[str],
                       update: MetaUpdate | None, chance: ChanceLevels, progress: Progress, timer: "_Timer") -> None:
    """Write the generation into a temporary folder, verify it as a server would read it, and
    publish it; a generation that fails verification is removed and the error raised."""
    generation_id = artifacts.new_generation_id(started)
    report.generation_id = generation_id
    with timer("write"), progress("writing and verifying the generation", len(builds) + 1) as advance:
        run = artifacts.RunRecord(report.run_id, started, report.errors + report.warnings, report.as_dict(), report.decisions, providers)
        folder, written = artifacts.write_generation(config.artifacts, generation_id, documents, builds, run, advance, update, chance)
        for space_id, how in written.items():
            report.spaces[space_id] = {**report.spaces[space_id], **how}
        try:
            artifacts.verify_generation(folder)
        except Exception:
            artifacts.discard(folder)
            raise
    with timer("publish"):
        artifacts.publish(config.artifacts, folder, generation_id, config.keep_generations)


def _space_builds(config: Config, previous: PreviousGeneration | None, fresh: dict, new_chunks: dict[str, list[Chunk]], carries: dict[str, bool],
                  stale_before: dict[str, set], kept: set[str], decisions: dict[str, Decision], documents: list[Document],
                  report: RunReport, probes: dict[str, dict]) -> list[artifacts.SpaceBuild]:
    """What each configured space keeps from the previous generation (by vector id) and adds: a
    rebuilt space (`fresh`: its new vectors) keeps the chunks of kept documents; a space this run
    does not rebuild keeps every document's chunks, the changed ones marked stale. Each keeps its
    probe (`probes`: of the spaces that embedded something; the others carry theirs)."""
    builds = []
    for space in config.spaces:
        space_id = space.space_id
        manifest = space_manifest(space)
        search_settings = space.search_settings()
        if space_id in fresh:
            carried, whole = previous.carried_ids(space_id, kept - stale_before[space_id]) if carries[space_id] else (np.zeros(0, np.int64), False)
            vectors, stats = fresh[space_id]
            added = new_chunks[space_id]
            stats = {"chunks": len(carried) + len(added), "carried": len(carried), **stats}
            stale, rebuilt_at = frozenset(), None
        elif previous is not None and previous.compatible(space_id, manifest):
            # Not rebuilt: every document keeps the chunks it had here, a changed one its older
            # version's (marked stale), so the space still covers every document until its provider runs.
            changed = {i for i, d in decisions.items() if d.action is Action.FULL}
            carried, whole = previous.carried_ids(space_id, kept | changed)
            added, vectors = [], np.zeros((0, space.dimensions), np.float32)
            live = {d.doc_id for d in documents}
            stale, rebuilt_at = frozenset((previous.stale_documents(space_id) & live) | changed), previous.rebuilt_at(space_id)
            stats = {"chunks": len(carried), "carried_over": True, "stale_documents": len(stale)}
        else:
            report.spaces[space_id] = {"skipped": "not rebuilt (--provider) and not in the current generation"}
            continue
        # The previous space's segments are shared where its chunks are kept (indexer/segments.py).
        probe = probes.get(space_id)  # else the one it had: read once more only where nothing was embedded
        if probe is None and previous is not None and previous.compatible(space_id, manifest):
            probe = read_probe(previous.space_folder(space_id))
        builds.append(artifacts.SpaceBuild(
            space_id, manifest, carried, added, vectors, previous=previous.space_folder(space_id) if len(carried) else None,
            unchanged=whole and not added, stale=stale, rebuilt_at=rebuilt_at, search=search_settings, probe=probe, analyzer=config.analyzer,
        ))
        report.spaces[space_id] = stats
    return builds


def _nothing_changed(previous: PreviousGeneration, decisions: dict[str, Decision], documents: list[Document], builds: list, rewritten: frozenset[str],
                     report: RunReport) -> bool:
    """True when publishing would write the current generation again: no document row to write
    (`_rewritten`), nothing failed, every space reused as it is with the same search
    settings and stale documents, and its postings written by this version's analyzer (after an
    upgrade, the first run rewrites them). Such a run publishes nothing (10,000 documents: the rewrite of
    meta.duckdb and the chunk store was most of a no-op run's time)."""
    if report.errors or any(d.action is not Action.SKIP for d in decisions.values()):
        return False
    if {b.space_id for b in builds} != set(previous.manifest["spaces"]):
        return False
    for build in builds:
        stored = previous.manifest["spaces"][build.space_id]
        if not build.unchanged or not previous.compatible(build.space_id, build.manifest):
            return False
        if (build.search or None) != stored.get("search") or set(build.stale) != set(previous.stale_documents(build.space_id)):
            return False
        if previous.postings_outdated(build.space_id, build.analyzer):
            return False
    return not rewritten


def _rewritten(decisions: dict[str, Decision], documents: list[Document], crawled: dict[str, Document], stored_fetch: dict, before: dict,
               confirmed: dict[str, datetime]) -> frozenset[str]:
    """Documents whose stored row this run changes: every one but those skipped, fetched as they
    were and still in the same source (a renamed source changes no hash). A skipped document this
    crawl did not read (an unchanged file, a page answering 304) is its stored row itself — but for
    a page found unchanged though its sitemap's lastmod moved (`confirmed`: a new fetched_at)."""
    return frozenset(
        d.doc_id for d in documents
        if decisions[d.doc_id].action is not Action.SKIP or d.doc_id not in before or d.doc_id in confirmed
        or (d.doc_id in crawled and (before[d.doc_id].source != d.source or FetchState(d.etag, d.last_modified, d.fetched_at, d.links) != stored_fetch.get(d.doc_id)))
    )


class _Versions:
    """Which version of each document the generation holds: this crawl's, or the last good one
    from the previous generation for documents that keep it without this crawl's copy (failed
    ones, those of unlisted sources, pages known unchanged without a fetch). Those rows are read
    once, and again only for documents that failed later in the run (chunking, embedding).
    Their texts, when read (a new space chunks them), wait in `texts` as the crawled ones do.
    A page found unchanged though its sitemap's lastmod moved (`confirmed`) keeps its last version
    with the time it was found so."""

    def __init__(self, previous: PreviousGeneration | None, crawled: dict[str, Document], before: dict, texts: TextSpill | None,
                 confirmed: dict[str, datetime] | None = None):
        self.previous, self.crawled, self.before, self.texts = previous, crawled, before, texts
        self.confirmed = confirmed or {}
        self.last_good: dict[str, Document] = {}
        self.asked: set[str] = set()

    def assemble(self, decisions: dict[str, Decision]) -> tuple[list[Document], set[str]]:
        """The new generation's documents, and the ids among them that keep their chunks as they were."""
        wanted = {i for i, d in decisions.items()
                  if i in self.before and (d.action is Action.FAILED or (d.action is Action.SKIP and i not in self.crawled))}
        if self.previous is not None and wanted - self.asked:
            self.last_good.update((d.doc_id, replace(d, fetched_at=self.confirmed[d.doc_id]) if d.doc_id in self.confirmed else d)
                                  for d in self.previous.documents(wanted - self.asked, self.texts))
            self.asked |= wanted
        documents: list[Document] = []
        kept: set[str] = set()
        for doc_id in sorted(decisions):
            action = decisions[doc_id].action
            if action is Action.FULL:
                documents.append(self.crawled[doc_id])
            elif action is not Action.DELETE:
                doc = self.last_good.get(doc_id) if action is Action.FAILED else self.crawled.get(doc_id) or self.last_good.get(doc_id)
                if doc is not None:
                    documents.append(doc)
                    kept.add(doc_id)
        return documents, kept


def _nothing_found(config: Config, report: RunReport) -> PublishRefused | DeleteGuard:
    """What stops a run that would publish no document."""
    if report.delete_guard:  # a dry run: the real run stops at the guard first, and says why
        return DeleteGuard(report.delete_guard)
    errors = report.errors + report.warnings

    def where(source) -> str:  # what a person checks first: the folder, the addresses, the Notion pages
        named = [str(source.path)] if source.path else [*source.urls, *source.sitemaps, *(f"notion:{r}" for r in source.roots)]
        return f"{source.name} ({', '.join(named)})" if named else source.name

    sources = ", ".join(where(s) for s in config.sources)
    first = f"; first problem: {errors[0].code} {errors[0].message.rstrip('.')}" if errors else ""  # ". Sources" follows
    return PublishRefused(f"the generation would be empty: no document could be indexed{first}. Sources: {sources}. Nothing was published.")


def _unique(documents: list[Document], errors: list[IngestError]) -> list[Document]:
    """The first document with a given doc_id wins; later ones are reported, not silently merged."""
    seen: dict[str, Document] = {}
    for doc in documents:
        if doc.doc_id in seen:
            first = seen[doc.doc_id]
            fix = (f"; give one of the two an id prefix, e.g. id_prefix = \"{doc.source}/\" in the [[sources]] table of {doc.source!r}"
                   if first.source_type == doc.source_type == "files" and first.source != doc.source else "")
            errors.append(IngestError(ErrorCode.DUPLICATE_DOCUMENT, "plan",
                                      f"{doc.doc_id} is in source {first.source!r} and in source {doc.source!r}; only {first.source!r}'s is indexed{fix}",
                                      doc_id=doc.doc_id, source=doc.source))
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
