"""Curated answers: question/answer pairs a support team approves, from a TOML, CSV, YAML or Excel
(.xlsx, .xls) file or a Notion database. Each answer is a document (`answer:<source>/<id>`) whose text is its
questions, then the answer; the server returns it in the response's `answers` list, before the
hits, when a query matches it well enough (server/answers.py).

File formats (keys: `question` or `questions`, `answer`, optional `id`, `url`, `tags`, `updated_at`):

    # TOML                                   # YAML                       # CSV (header row)
    [[answers]]                              - questions:                 question,answer,url,tags
    questions = ["How do I reset my          #     - How do I reset my …    "How do I reset…
      password?", "I forgot my password"]    #   answer: Open …            I forgot my password",Open …,,"account, login"
    answer = "Open Settings → Security…"

In CSV a cell's phrasings are separate lines; tags are comma-separated. An Excel workbook is read
as its CSV would be: the first visible sheet, its first row the header. A Notion database gives
one answer per row: the property named Question (else the title), Answer, and optional URL and Tags.
"""

from __future__ import annotations

import csv
import io
import os
import re
import tomllib
from dataclasses import dataclass
from datetime import datetime, timezone

from indexer.anchors import slugify
from indexer.config import ANSWER_FILES, SourceConfig, env_url
from indexer.documents import Document, FetchState
from indexer.errors import ErrorCode, IngestError
from indexer.extract import ExtractionError, decode_file_text, not_text, parse_timestamp
from indexer.frontmatter import load_front_matter
from indexer.sheets import read_workbook, read_xls
from indexer.sources import SourceResult


@dataclass(frozen=True)
class Entry:
    questions: tuple[str, ...]
    answer: str
    id: str
    url: str | None = None
    tags: tuple[str, ...] = ()
    updated_at: datetime | None = None


class AnswersFileError(ValueError):
    """The file as a whole cannot be read."""


DRAFT = "_draft"  # a Notion row's entry: the property that marks it a draft (Status: Draft, Published unchecked), or None


def crawl_answers(source: SourceConfig, progress=None, fetch_state: dict[str, FetchState] | None = None, *, keep=None) -> SourceResult:
    result = SourceResult(source=source.name, keep=keep)
    try:
        if source.database:
            raw_entries, fallback_date = _notion_entries(source), None
        else:
            raw_entries, fallback_date = _file_entries(source)
    except (AnswersFileError, OSError) as exc:
        result.listing_complete = False  # nothing is known this run: delete none of the stored answers
        result.errors.append(IngestError(ErrorCode.SOURCE_LISTING_FAILED, "list", f"{source.name}: {exc}", source=source.name))
        return result
    seen: set[str] = set()
    for number, raw in enumerate(raw_entries, start=1):
        if isinstance(raw, dict) and raw.get(DRAFT):  # a Notion row not yet approved: not an answer to give
            result.warnings.append(IngestError(ErrorCode.NOTION_DRAFT, "list", f"{source.name}: answer {number} ({raw['question']!r}): its {raw[DRAFT]}, "
                                               "so it is a draft; not returned", doc_id=f"answer:{source.name}/{raw['id']}", source=source.name, level="warning"))
            continue
        try:
            entry = _entry(raw, fallback_date)
        except ValueError as exc:
            result.errors.append(IngestError(ErrorCode.ANSWER_INVALID, "extract", f"{source.name}: answer {number}: {exc}", source=source.name))
            continue
        if entry.id in seen:
            result.errors.append(IngestError(ErrorCode.ANSWER_INVALID, "extract",
                                             f"{source.name}: answer {number}: id {entry.id!r} is used twice; give one of them another `id`",
                                             doc_id=f"answer:{source.name}/{entry.id}", source=source.name))
            continue
        seen.add(entry.id)
        result.add(answer_document(source, entry))
        if progress:
            progress(1)
    return result


def answer_document(source: SourceConfig, entry: Entry) -> Document:
    """The answer as a document: `# first question`, the other phrasings, then the answer."""
    head = "# " + entry.questions[0] + "".join(f"\n\n{q}" for q in entry.questions[1:]) + "\n\n"
    metadata = {"questions": list(entry.questions), "answer_offset": len(head)}
    if source.min_answer_relevance is not None:
        metadata["min_answer_relevance"] = source.min_answer_relevance
    return Document(
        doc_id=f"answer:{source.name}/{entry.id}", source=source.name, source_type="answers", title=entry.questions[0],
        text=head + entry.answer, url=entry.url, tags=entry.tags, updated_at=entry.updated_at, metadata=metadata,
    )


def _entry(raw: dict, fallback_date: datetime | None) -> Entry:
    if not isinstance(raw, dict):
        raise ValueError(f"must be a table of question/answer keys, got {type(raw).__name__}")
    questions = raw.get("questions", raw.get("question"))
    if isinstance(questions, str):
        questions = questions.splitlines()
    if not isinstance(questions, list):
        raise ValueError("needs `question` (text) or `questions` (a list of phrasings)")
    if not all(isinstance(q, (str, int, float)) for q in questions):
        raise ValueError("`questions` must be a list of texts")
    questions = tuple(dict.fromkeys(" ".join(str(q).split()) for q in questions if str(q).strip()))
    if not isinstance(raw.get("answer") or "", (str, int, float)):
        raise ValueError(f"`answer` must be text, got {type(raw['answer']).__name__}")
    answer = str(raw.get("answer") or "").strip()
    if not questions or not answer:
        raise ValueError(f"needs a question and an answer; got {'no question' if not questions else 'no answer'}")
    given = str(raw.get("id") or "").strip()
    if given and not re.fullmatch(r"[\w\-.]+", given):
        raise ValueError(f"id {given!r}: letters, digits, '-', '_' and '.' only")
    tags = raw.get("tags") or ()
    if isinstance(tags, str):
        tags = tags.split(",")
    if not isinstance(tags, (list, tuple)) or not all(isinstance(t, (str, int, float)) for t in tags):
        raise ValueError("`tags` must be text (comma-separated) or a list of texts")
    if not isinstance(raw.get("url") or "", str):
        raise ValueError(f"`url` must be text, got {type(raw['url']).__name__}")
    url = str(raw.get("url") or "").strip() or None
    return Entry(questions, answer, given or slugify(questions[0])[:80] or "answer", url,
                 tuple(str(t).strip() for t in tags if str(t).strip()), parse_timestamp(raw.get("updated_at")) or fallback_date)


def _delimiter(text: str) -> str:
    """The header line's separator: a comma, or the semicolon (or tab) a spreadsheet in a locale
    whose decimal mark is a comma writes."""
    header = text.split("\n", 1)[0]
    return max((",", ";", "\t"), key=header.count) if header.count(",") == 0 else ","


def _file_entries(source: SourceConfig) -> tuple[list, datetime]:
    path = source.path
    if path is None or not path.is_file():
        raise AnswersFileError(f"answers file not found: {path}")
    suffix = path.suffix.lower()
    if suffix not in ANSWER_FILES:
        raise AnswersFileError(f"{path.name}: answers are read from {', '.join(ANSWER_FILES)} files")
    modified = datetime.fromtimestamp(path.stat().st_mtime, tz=timezone.utc)
    if suffix in (".xlsx", ".xls"):
        return _sheet_entries(path), modified
    try:
        text = decode_file_text(path.read_bytes())
    except UnicodeDecodeError as exc:  # Excel's plain "CSV" is the machine's code page, not UTF-8
        raise AnswersFileError(f"{path.name}: {not_text(exc)} (in Excel: \"CSV UTF-8\")") from None
    try:
        if suffix == ".toml":
            entries = tomllib.loads(text).get("answers")
        elif suffix == ".csv":
            rows = [row for row in csv.reader(io.StringIO(text), delimiter=_delimiter(text)) if row]
            entries = _table_entries(path.name, rows, "`question,answer`")
        else:
            loaded = load_front_matter(text, what=path.name, first_line=1)  # safe YAML: sizes and aliases bounded
            entries = loaded.get("answers") if isinstance(loaded, dict) else loaded
            if isinstance(loaded, dict) and "answers" not in loaded and loaded and all(isinstance(v, str) for v in loaded.values()):
                entries = [{"question": str(q), "answer": a} for q, a in loaded.items()]  # "How long…?: Five days." lines
    except AnswersFileError:
        raise
    except ExtractionError as exc:  # the YAML's own complaint, with its line
        raise AnswersFileError(str(exc)) from None
    except (tomllib.TOMLDecodeError, csv.Error, ValueError) as exc:
        raise AnswersFileError(f"{path.name}: not valid {suffix[1:].upper()}: {exc}") from None
    if not isinstance(entries, list):
        raise AnswersFileError(f"{path.name}: expected a list of answers ({'[[answers]] tables' if suffix == '.toml' else 'a list, or `answers:` holding one'})")
    return entries, modified


def _sheet_entries(path) -> list[dict]:
    """The answers in a workbook's first sheet (.xlsx, or Excel 97–2003's .xls), a row each under a header row, as in a CSV file."""
    try:
        sheets = (read_xls if path.suffix.lower() == ".xls" else read_workbook)(path.read_bytes()).sheets
    except ExtractionError as exc:
        raise AnswersFileError(f"{path.name}: {exc}") from None
    return _table_entries(path.name, sheets[0][1] if sheets else [], "with the cells `question` and `answer`")


def _table_entries(name: str, rows: list[list[str]], first_row: str) -> list[dict]:
    """The rows of a table under its header row, as dicts keyed by the lowercased column names."""
    header = [column.strip().lower() for column in rows[0]] if rows else []
    if header and not {"question", "questions"} & set(header):  # a file without a header row: its first answer was taken for one
        shown = ", ".join(f'"{column.strip()}"' for column in rows[0][:3])
        raise AnswersFileError(f"{name}: the first row is the header, and it names no `question` column (it reads {shown}); "
                               f"add a first row {first_row} (and `url`, `tags` if you use them)")
    return [dict(zip(header, row)) for row in rows[1:]]


def _notion_entries(source: SourceConfig) -> list[dict]:
    """A Notion database's rows as answers."""
    from indexer.sources import check_credentials
    from indexer.sources.notion import DEFAULT_BASE_URL, LIMITER, NotionAPI, NotionFailure, draft_property
    from indexer.sources.notion_render import property_text

    check_credentials([source])
    LIMITER.rate = source.requests_per_second
    api = NotionAPI(os.environ["NOTION_TOKEN"].strip(), env_url("NOTION_BASE_URL", DEFAULT_BASE_URL), source.timeout_seconds)
    try:
        database = api.database(source.database)
        sources = database.get("data_sources") if isinstance(database, dict) else None
        if not sources or not isinstance(sources, list):  # every Notion database has one: not an answer to trust with deletions
            raise AnswersFileError(f"Notion database {source.database}: the API's answer lists no data sources (its shape changed?); nothing read")
        rows = [row for ds in sources for row in api.rows(ds["id"])]
    except NotionFailure as exc:
        raise AnswersFileError(f"Notion database {source.database}: {exc}") from None
    finally:
        api.close()
    entries = []
    for row in rows:
        if row.get("in_trash") or row.get("archived"):
            continue
        by_name = {name.lower(): prop for name, prop in row.get("properties", {}).items()}
        title = next((p for p in row.get("properties", {}).values() if p.get("type") == "title"), {})
        entries.append({
            "id": row["id"].replace("-", ""),
            "question": property_text(by_name.get("question") or title),
            "answer": property_text(by_name.get("answer", {})),
            "url": property_text(by_name.get("url", {})),
            "tags": property_text(by_name.get("tags", {})),
            "updated_at": row.get("last_edited_time"),
            DRAFT: draft_property(row.get("properties", {})),
        })
    return entries
