"""What one indexing run did, for people (`index run`) and machines (`index run --json`, the
`ingest_runs` table, each generation's report.json)."""

from __future__ import annotations

import secrets
import sys
from dataclasses import dataclass, field
from datetime import datetime, timezone

from indexer.errors import IngestError
from indexer.plan import Decision

SLOWEST_REPORTED = 10


@dataclass
class RunReport:
    """What a run did, for people (`index run`) and machines (`index run --json`)."""

    run_id: str
    generation_id: str | None = None
    built_on: str | None = None  # the generation the run started from (the served one, or a kept one when it cannot be read); None: from nothing
    documents: int = 0
    counts: dict[str, int] = field(default_factory=dict)  # added, updated, metadata_only, skipped, deleted, failed
    decisions: list[Decision] = field(default_factory=list)
    spaces: dict[str, dict] = field(default_factory=dict)  # per space: chunks, embedded, reused, usage, ...
    dry_run: bool = False
    delete_guard: str | None = None  # a dry run that the delete guard would stop says why
    errors: list[IngestError] = field(default_factory=list)
    warnings: list[IngestError] = field(default_factory=list)  # left out on purpose (a PDF link, max_pages); not failures
    seconds: dict[str, float] = field(default_factory=dict)
    slowest: list[dict] = field(default_factory=list)  # the documents that took longest to fetch this run
    retries: dict[str, int] = field(default_factory=dict)  # source → fetches tried again after a retryable failure
    unchanged: bool = False  # nothing changed: no generation written, `generation_id` is the served one
    peak_rss_mb: float | None = None  # the process's peak resident memory when the run ended (peak_rss_mb())
    moved: dict[str, str] = field(default_factory=dict)  # doc_id a source asked for → the doc_id it found there (a redirect)
    why_gone: dict[str, tuple[str, str]] = field(default_factory=dict)  # doc_id a source did not reach → (code, why): robots.txt
    by_lastmod: dict[str, str] = field(default_factory=dict)  # doc_id not requested: its sitemap lastmod says it is unchanged
    lastmod_checked: dict[str, str] = field(default_factory=dict)  # doc_id read again although its lastmod vouched for it → what it said
    confirmed: dict[str, datetime] = field(default_factory=dict)  # doc_id that answered 304 though its lastmod moved → its new fetched_at
    could_spare: dict[str, int] = field(default_factory=dict)  # source → pages asked for that its sitemap's lastmod vouched for (trust_lastmod off)

    @property
    def moved_documents(self) -> int:
        """Of the deleted documents, those found at another doc_id (a redirect, a renamed file)."""
        return sum(1 for d in self.decisions if d.moved_to)

    def as_dict(self) -> dict:
        """The summary `index run --json` prints and `ingest_runs.report` stores."""
        if self.dry_run:
            return {
                "dry_run": True,
                "built_on": self.built_on,
                "documents": self.counts,
                "moved": self.moved_documents,
                "total_documents": self.documents,
                "spaces": self.spaces,
                "estimated_cost_usd": round(sum(s["estimated_cost_usd"] for s in self.spaces.values()), 8),
                "delete_guard": self.delete_guard,
                "decisions": [d.as_dict() for d in self.decisions],
                "errors": [e.as_dict() for e in self.errors],
                "warnings": [e.as_dict() for e in self.warnings],
            }
        built = [s for s in self.spaces.values() if "embedded" in s]
        return {
            "run_id": self.run_id,
            "generation": self.generation_id,
            "unchanged": self.unchanged,
            "built_on": self.built_on,
            "documents": self.counts,
            "moved": self.moved_documents,
            "total_documents": self.documents,
            "chunks": {
                "embedded": sum(s["embedded"] for s in built),
                "reused": sum(s["reused"] + s["carried"] for s in built),
            },
            "tokens_embedded": sum(s.get("usage", {}).get("tokens", 0) for s in built),
            "cost_usd": round(sum(s.get("usage", {}).get("cost_usd", 0.0) for s in built), 8),
            "spaces": self.spaces,
            "errors": [e.as_dict() for e in self.errors],
            "warnings": [e.as_dict() for e in self.warnings],
            "seconds": {k: round(v, 3) for k, v in self.seconds.items()},
            "slowest_documents": self.slowest,
            "retries": self.retries,
            "peak_rss_mb": self.peak_rss_mb,
        }


def peak_rss_mb() -> float | None:
    """The most resident memory this process has used so far, in MiB, as the OS counts it
    (`ru_maxrss`): what a CI runner must have for the run. None where there is no `resource`
    module (Windows). A process starts from its parent's resident size when it is forked, so the
    figure is at least that (a shell's few MB for `index run`)."""
    try:
        import resource
    except ImportError:
        return None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return round(peak / (1 << 20 if sys.platform == "darwin" else 1 << 10), 1)  # bytes on macOS, KiB on Linux


def new_run_id(now: datetime | None = None) -> str:
    now = now or datetime.now(timezone.utc)
    return f"run-{now:%Y%m%dT%H%M%S}Z-{secrets.token_hex(3)}"


def slowest(documents, count: int = SLOWEST_REPORTED) -> list[dict]:
    """The documents that took longest to fetch, slowest first."""
    timed = sorted((d for d in documents if d.fetch_seconds is not None), key=lambda d: -d.fetch_seconds)[:count]
    return [{"doc_id": d.doc_id, "title": d.title, "source": d.source, "seconds": round(d.fetch_seconds, 3)} for d in timed]
