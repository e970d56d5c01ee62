"""Sources list and extract documents. One bad document becomes an `IngestError`, never an exception."""

from __future__ import annotations

from dataclasses import dataclass, field

from indexer.config import SourceConfig
from indexer.documents import Document
from indexer.errors import IngestError


@dataclass
class SourceResult:
    """What one source produced. `listing_complete` is False when the source could not be listed at all."""

    source: str
    documents: list[Document] = field(default_factory=list)
    errors: list[IngestError] = field(default_factory=list)
    listing_complete: bool = True


def crawl(source: SourceConfig, progress=None) -> SourceResult:
    """Read every document of `source`. `progress(n)` is called as documents are done."""
    if source.type == "files":
        from indexer.sources.files import crawl_files

        return crawl_files(source, progress)
    if source.type == "urls":
        from indexer.sources.web import crawl_urls

        return crawl_urls(source, progress)
    raise ValueError(f"unknown source type {source.type!r}")


def count_items(source: SourceConfig) -> int:
    """How many items `crawl` will visit, for a progress bar with a known total."""
    if source.type == "files":
        from indexer.sources.files import list_files

        return len(list_files(source)) if source.path and source.path.is_dir() else 0
    return len(source.urls)
