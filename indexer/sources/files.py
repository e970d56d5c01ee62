"""A folder of .md / .txt / .html files. doc_id = `file:<path relative to the folder>`."""

from __future__ import annotations

import time
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path

from indexer.config import SourceConfig
from indexer.documents import Document
from indexer.errors import ErrorCode, IngestError
from indexer.extract import ExtractionError, Extracted, extract_html, extract_markdown, extract_text
from indexer.sources import SourceResult


def list_files(source: SourceConfig) -> list[Path]:
    """Files under the folder with a configured extension, hidden files and folders left out, sorted."""
    root = source.path
    return sorted(
        p
        for p in root.rglob("*")
        if p.is_file()
        and p.suffix.lower() in source.extensions
        and not any(part.startswith(".") for part in p.relative_to(root).parts)
    )


def crawl_files(source: SourceConfig, progress=None) -> SourceResult:
    result = SourceResult(source=source.name)
    if source.path is None or not source.path.is_dir():
        result.listing_complete = False
        result.errors.append(
            IngestError(ErrorCode.SOURCE_LISTING_FAILED, "list", f"folder not found: {source.path}", source=source.name)
        )
        return result
    root = source.path.resolve()
    for path in list_files(source):
        relative = path.relative_to(source.path).as_posix()
        doc_id = f"file:{relative}"

        def problem(code: ErrorCode, message: str, level: str = "error") -> None:
            (result.warnings if level == "warning" else result.errors).append(
                IngestError(code, "extract", f"{relative}: {message}", doc_id=doc_id, source=source.name, level=level))

        if not source.follow_symlinks and not path.resolve().is_relative_to(root):
            problem(ErrorCode.FILE_OUTSIDE_SOURCE, f"a link to {path.resolve()}, outside the source folder; skipped (set follow_symlinks = true to index it)", "warning")
            continue
        try:
            size = path.stat().st_size
            if size > source.max_bytes:
                problem(ErrorCode.FILE_TOO_LARGE, f"{size:,} bytes, more than max_bytes ({source.max_bytes:,}); skipped")
                continue
            started = time.perf_counter()
            document = read_file(path, relative, doc_id, source.name)
            document = replace(document, fetch_seconds=time.perf_counter() - started)
        except UnicodeDecodeError as exc:
            problem(ErrorCode.FILE_EXTRACTION_FAILED, f"not UTF-8 text (byte {exc.start}: {exc.reason}); save it as UTF-8")
        except (OSError, ExtractionError) as exc:
            problem(ErrorCode.FILE_EXTRACTION_FAILED, str(exc))
        except Exception as exc:  # whatever one file does to a parser, it is that file's error, never the run's
            problem(ErrorCode.FILE_EXTRACTION_FAILED, f"{type(exc).__name__}: {exc}")
        else:
            if document.text.strip():
                result.documents.append(document)
            else:
                result.errors.append(
                    IngestError(ErrorCode.FILE_EXTRACTION_EMPTY, "extract", f"{relative}: no text found", doc_id=doc_id, source=source.name)
                )
        if progress:
            progress(1)
    return result


def read_file(path: Path, relative: str, doc_id: str, source_name: str) -> Document:
    suffix = path.suffix.lower()
    fallback_title = path.stem.replace("-", " ").replace("_", " ").strip().capitalize()
    extracted: Extracted
    if suffix in (".html", ".htm"):
        extracted = extract_html(path.read_bytes(), fallback_title=fallback_title)
    elif suffix in (".md", ".markdown"):
        extracted = extract_markdown(path.read_text(encoding="utf-8"), fallback_title)
    else:
        extracted = extract_text(path.read_text(encoding="utf-8"), fallback_title)
    updated_at = extracted.updated_at or datetime.fromtimestamp(path.stat().st_mtime, tz=timezone.utc)
    return Document(
        doc_id=doc_id,
        source=source_name,
        source_type="files",
        title=extracted.title,
        text=extracted.text,
        url=extracted.url,
        path=relative,
        tags=extracted.tags,
        authors=extracted.authors,
        updated_at=updated_at,
        metadata=extracted.metadata,
    )
