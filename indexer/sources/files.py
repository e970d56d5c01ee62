"""A folder of .md / .mdx / .rst / .adoc / .ipynb / .txt / .html / .pdf / .docx / .doc / .rtf / .pptx / .ppt / .xlsx / .xls / .odt / .ods / .odp / .epub files. doc_id = `file:<id_prefix><path relative to the folder>`."""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import time
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from functools import lru_cache, partial
from pathlib import Path
from stat import S_ISLNK
from typing import Callable

from indexer.config import OFFICE_FORMS, UNREAD_FORMATS, SourceConfig
from indexer.documents import Document, FetchState
from indexer.errors import ErrorCode, IngestError
from indexer.extract import (
    EXTRACTION_VERSION, ExtractionError, Extracted, decode_file_text, empty_page_reason, extract_html, extract_markdown, extract_text, not_text, parse_timestamp,
)
from indexer.asciidoc import asciidoc_to_markdown
from indexer.epub import extract_epub
from indexer.fileurls import HEADING_IDS, HugoLanguages, file_url
from indexer.partials import included_fragments, inline_partials, partial_bytes
from indexer.notebook import notebook_to_markdown
from indexer.opendocument import extract_odp, extract_ods, extract_odt
from indexer.pdf import extract_pdf
from indexer.labels import project_labels, referenced_titles
from indexer.rtf import extract_rtf
from indexer.rst import rst_empty_reason, rst_to_markdown
from indexer.ppt import extract_ppt
from indexer.sheets import extract_xls, extract_xlsx
from indexer.slides import empty_deck_reason, extract_pptx
from indexer.word import extract_docx
from indexer.worddoc import extract_doc
from indexer.sources import SourceResult


# Folders of installed packages: thousands of READMEs, licences and changelogs that are never the
# team's documents, and a folder outside git (a downloaded archive, a server's copy) has no
# .gitignore to leave them out.
PACKAGE_FOLDERS = frozenset({"node_modules", "bower_components", "site-packages", "__pycache__"})
# PDF and the office formats, read from their bytes (their own properties give title, author and date).
OFFICE_READERS = {".pdf": extract_pdf, ".docx": extract_docx, ".doc": extract_doc, ".rtf": extract_rtf, ".pptx": extract_pptx, ".ppt": extract_ppt,
                  ".xlsx": extract_xlsx, ".xls": extract_xls, ".odt": extract_odt, ".ods": extract_ods, ".odp": extract_odp,
                  ".epub": extract_epub}
OFFICE_READERS |= {form: OFFICE_READERS[base] for form, base in OFFICE_FORMS.items()}
OFFICE_LOCK = "~$"  # "~$deck.docx": the owner file Word and PowerPoint keep beside a document open on a shared drive
# A Jekyll site's folder holds its templates and build beside its pages: `_layouts/default.html`
# indexed as a page is "{{ content }}" and its Liquid, `_site/` every page a second time; so does a
# Sphinx project's (`_templates`, `_static`, `_build`).
SITE_BUILD_FOLDERS = frozenset({"_layouts", "_includes", "_sass", "_data", "_plugins", "_site", "_templates", "_static", "_build"})
MARKDOWN_SUFFIXES = (".md", ".markdown", ".mdx")  # read as Markdown; .mdx as MDX
_ANTORA_PAGE = re.compile(r"modules/[^/]+/pages/")


@dataclass(frozen=True)
class Listing:
    """A files source's folder, listed: the paths to read, in path order, and the folders that
    could not be read, each with why. While one cannot be read the listing is incomplete, so the
    files under it keep their last versions: a folder whose permissions changed loses no pages."""
    paths: list[str]
    unreadable: list[tuple[str, str]] = field(default_factory=list)


def list_files(source: SourceConfig) -> Listing:
    """The files (under `source.path`, as strings) with a configured extension, hidden
    files and folders and PACKAGE_FOLDERS left out, and those git ignores. Strings, not Path objects: at 10,000 files making
    and sorting Paths cost 0.3 s of a run that changed nothing. The folder's own entries say what
    is a file or a folder, so only links cost a stat (os.walk and isfile: 34 → 9 ms at 10,000)."""
    found: list[str] = []
    unreadable: list[tuple[str, str]] = []
    partials_hidden = source.url_rules == "docusaurus"  # _partial.mdx, _shared/: shown inside pages, no pages (indexer.partials)
    folders = [os.fspath(source.path)]
    while folders:
        folder = folders.pop()
        try:
            with os.scandir(folder) as entries:
                for entry in entries:  # reading the entries can fail as well (EACCES, EIO on a network disk)
                    if entry.name.startswith(".") or (partials_hidden and entry.name.startswith("_")):
                        continue
                    if entry.is_dir(follow_symlinks=False):  # linked folders are not entered
                        if entry.name not in PACKAGE_FOLDERS and entry.name not in SITE_BUILD_FOLDERS:
                            folders.append(entry.path)
                    elif entry.name.startswith(OFFICE_LOCK):
                        continue
                    elif (suffix := os.path.splitext(entry.name)[1].lower()) in source.extensions and (_is_file(entry) or _dangling(entry)):
                        found.append(entry.path)  # a dangling link is listed to be warned about (FILE_LINK_BROKEN)
                    elif suffix in UNREAD_FORMATS and _is_file(entry):
                        found.append(entry.path)  # listed to be warned about (FILE_TYPE_UNREAD): a deck left out in silence is a mystery
        except OSError as exc:
            unreadable.append((folder, exc.strerror or str(exc)))
    if source.respect_gitignore:
        found = _not_ignored(source.path, found)
        if unreadable:  # a folder git ignores is left out whatever it holds
            not_ignored = set(_not_ignored(source.path, [os.path.join(folder, "") for folder, _ in unreadable]))
            unreadable = [(folder, why) for folder, why in unreadable if os.path.join(folder, "") in not_ignored]
    if source.url_rules == "antora":  # only modules/<module>/pages/ holds pages; partials are read where included
        prefix = os.path.join(os.fspath(source.path), "")
        found = [path for path in found if _ANTORA_PAGE.match(path.removeprefix(prefix).replace(os.sep, "/"))]
    return Listing(sorted(found, key=lambda path: path.split(os.sep)), sorted(unreadable))  # as Paths sort: part by part


def _not_ignored(folder: Path, found: list[str]) -> list[str]:
    """`found` without the files git ignores (.gitignore, .git/info/exclude, the global excludes):
    build output such as `_build/html` or `site/` would index every page a second time, and a
    scheduled run on a fresh checkout never sees them. Unchanged outside a git work tree or without git."""
    listed = git_output(folder, "ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory", "--", ".")
    if not listed:
        return found
    ignored = [os.path.join(os.fspath(folder), name) for name in listed.split("\0") if name]
    files = {name for name in ignored if not name.endswith("/")}
    folders = tuple(name for name in ignored if name.endswith("/"))
    return [path for path in found if path not in files and not path.startswith(folders)]


def git_output(folder: Path, *args: str) -> str | None:
    """git's output in `folder`; None when it is not a work tree, git is missing or fails."""
    try:
        done = subprocess.run(["git", "-C", str(folder), *args], capture_output=True, text=True, timeout=120, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def _is_file(entry: os.DirEntry) -> bool:
    try:
        return entry.is_file()  # a link to a file counts, a dangling link does not
    except OSError:
        return False


def _dangling(entry: os.DirEntry) -> bool:
    """A link whose target does not exist (moved, renamed, or on a disk not mounted here)."""
    try:
        return entry.is_symlink() and not os.path.exists(entry.path)
    except OSError:
        return False


def git_dates(folder: Path) -> dict[str, datetime]:
    """Path (relative to `folder`) → the commit date of the last commit that touched it, for the
    files git tracks and has no uncommitted change to; {} outside a git work tree or without git.
    One `git log` for the whole folder."""
    log = git_output(folder, "log", "--format=%x00%cI", "--name-only", "--relative", "--no-renames", "--", ".")
    if log is None:
        return {}
    changed = git_output(folder, "status", "--porcelain", "--untracked-files=no", "--no-renames", "--", ".") or ""
    prefix = (git_output(folder, "rev-parse", "--show-prefix") or "").strip()
    dirty = {line[3:].removeprefix(prefix) for line in changed.splitlines() if len(line) > 3}
    dates: dict[str, datetime] = {}
    when = None
    for line in log.splitlines():
        if line.startswith("\0"):
            when = datetime.fromisoformat(line[1:]).astimezone(timezone.utc)
        elif line and when is not None and line not in dates and line not in dirty:
            dates[line] = when  # newest commit first: the first date seen is the last change
    return dates


def not_a_folder(path: Path | None) -> str | None:
    """Why a files source's `path` cannot be listed as a folder, or None when it can be."""
    try:
        if path is not None and path.is_dir():
            return None
        if path is not None and path.exists():
            return f"{path} is a file, not a folder: a files source reads a folder (set path to the folder that holds it)"
    except OSError as exc:  # a name too long, a loop of links
        return f"folder not found: {path} ({exc.strerror or exc})"
    return f"folder not found: {path}"


def crawl_files(source: SourceConfig, progress=None, fetch_state: dict[str, FetchState] | None = None, listing: Listing | None = None, *,
                keep=None) -> SourceResult:
    """Every file of the folder as a document. `updated_at` comes from the front matter, else the
    file's last git commit, else its mtime — and a file whose bytes are those of the last run keeps
    the date it had, so touching a file (a fresh checkout) changes nothing."""
    result = SourceResult(source=source.name, keep=keep)
    fetch_state = fetch_state or {}
    if (missing := not_a_folder(source.path)) is not None:
        result.listing_complete = False
        result.errors.append(IngestError(ErrorCode.SOURCE_LISTING_FAILED, "list", missing, source=source.name))
        return result
    root = source.path.resolve()
    site = root.parent  # where partials may be imported from: a docs folder's site (Docusaurus's @site)
    committed = git_dates(source.path)
    prefix = os.path.join(str(source.path), "")
    languages = _hugo_languages(root) if source.url_rules == "hugo" and source.url_template else None
    listing = listing if listing is not None else list_files(source)
    if listing.unreadable:  # what those folders hold is unknown: their files keep their last versions
        result.listing_complete = False
        result.errors.extend(_unreadable(source, folder, why) for folder, why in listing.unreadable)
    listed = listing.paths
    fragments = included_fragments(listed, site)  # shown inside the pages that include them
    labels = project_labels(listed, markdown=source.url_rules == "sphinx")  # what a :ref: without a title shows
    done = progress or (lambda n: None)  # each listed path once, however it ends: the bar's total counts them all
    for path in listed:
        if path in fragments:
            done(1)
            continue
        relative = path.removeprefix(prefix).replace(os.sep, "/")  # list_files walks source.path: a string cut, not relative_to's parsing
        doc_id = f"file:{source.id_prefix}{relative}"

        def problem(code: ErrorCode, message: str, level: str = "error") -> None:
            (result.warnings if level == "warning" else result.errors).append(
                IngestError(code, "extract", f"{relative}: {message}", doc_id=doc_id, source=source.name, level=level))

        try:
            stat = _stat_to_read(path, source, root)
            if not isinstance(stat, os.stat_result):  # why it is not read
                problem(*stat)
                done(1)
                continue
            started = time.perf_counter()
            raw = read_bytes(path, stat.st_size)
            shown = partial_bytes(raw, path, site) if relative.lower().endswith((*MARKDOWN_SUFFIXES, ".rst", ".adoc", ".asciidoc")) else b""
            if labels and relative.lower().endswith((".rst", ".md")):
                shown += referenced_titles(raw, labels)
            digest = file_validator(raw + shown, source.name, committed.get(relative), source.url_template, source.url_rules, source.fallback_encoding,
                                    languages)
            state = fetch_state.get(doc_id)
            if state is not None and state.etag == digest:
                # The bytes the last run read, read the same way: its version stands (10,000 files: ~3 s a run).
                result.not_modified.append(doc_id)
                done(1)
                continue
            same_bytes = state is not None and (state.etag or "").split("/")[0] == digest.split("/")[0]
            kept = parse_timestamp(state.last_modified) if same_bytes else None
            fallback = committed.get(relative) or kept or datetime.fromtimestamp(stat.st_mtime, tz=timezone.utc)
            published = partial(file_url, source.url_template, relative, source.url_rules, languages=languages) if source.url_template else None
            document = read_file(Path(path), relative, doc_id, source.name, raw, fallback, published, source.fallback_encoding, site,
                                 HEADING_IDS.get(source.url_rules, "github"), labels)
            document = replace(document, fetch_seconds=time.perf_counter() - started, etag=digest,
                               last_modified=document.updated_at.isoformat() if document.updated_at else None)
        except UnicodeDecodeError as exc:
            problem(ErrorCode.FILE_EXTRACTION_FAILED, not_text(exc) + ("" if source.fallback_encoding else FALLBACK_HINT))
        except ExtractionError as exc:
            problem(exc.code or ErrorCode.FILE_EXTRACTION_FAILED, str(exc), exc.level)
        except OSError as exc:
            problem(ErrorCode.FILE_EXTRACTION_FAILED, str(exc))
        except Exception as exc:  # whatever one file does to a parser, it is that file's error, never the run's
            problem(ErrorCode.FILE_EXTRACTION_FAILED, f"{type(exc).__name__}: {exc}")
        else:
            if left_out := _not_a_page(source, relative, document, raw):
                problem(*left_out)
            else:
                result.add(document)
        done(1)
    return result


def _unreadable(source: SourceConfig, folder: str, why: str) -> IngestError:
    """The error that names a folder the listing could not read, and what the run did about it."""
    shown = os.path.relpath(folder, source.path).replace(os.sep, "/")
    where = f"the folder {source.path}" if shown == "." else f"folder {shown}/"
    return IngestError(ErrorCode.SOURCE_LISTING_FAILED, "list", f"{where} could not be read ({why}): the files under it keep their last versions "
                       f"and no document of this source is deleted in this run; make it readable to the user that runs `index run`"
                       f"{' (or, in a git work tree, list it in .gitignore)' if source.respect_gitignore else ''}", source=source.name)


# A file kept in Git LFS, checked out without LFS (actions/checkout's default): three lines that name
# the content. A PDF failed as "Data format error"; a Markdown page was indexed as "version https://…".
LFS_POINTER = b"version https://git-lfs.github.com/spec/v1\n"


def _lfs_pointer(raw: bytes) -> str:
    size = re.search(rb"^size (\d+)$", raw, re.M)
    what = f"a {int(size.group(1)):,}-byte file" if size else "a file"
    return (f"a Git LFS pointer to {what}, not the file itself: the checkout did not fetch LFS content. Run `git lfs pull` "
            "(in the nightly workflow, give the checkout step `lfs: true`)")


def _stat_to_read(path: str, source: SourceConfig, root: Path) -> os.stat_result | tuple[ErrorCode, str, str]:
    """The stat of a listed file to read (of its target, for a link), or why it is not read: (code, message, level)."""
    if (unread := UNREAD_FORMATS.get(os.path.splitext(path)[1].lower())) is not None:
        article = "an" if unread[0][0] in "AEIOU" else "a"
        return ErrorCode.FILE_TYPE_UNREAD, f"{article} {unread[0]} file, a format this version does not read; not indexed ({unread[1]})", "warning"
    stat = os.stat(path, follow_symlinks=False)
    if S_ISLNK(stat.st_mode):
        if not os.path.exists(path):
            return ErrorCode.FILE_LINK_BROKEN, f"a link to {os.readlink(path)}, which does not exist; not indexed", "warning"
        # Linked folders are never entered, so only a linked file can lead outside.
        if not source.follow_symlinks and not Path(path).resolve().is_relative_to(root):
            return (ErrorCode.FILE_OUTSIDE_SOURCE, f"a link to {Path(path).resolve()}, outside the source folder; skipped "
                    "(set follow_symlinks = true to index it)", "warning")
        stat = os.stat(path)
    if stat.st_size > source.max_bytes:
        return ErrorCode.FILE_TOO_LARGE, f"{stat.st_size:,} bytes, more than max_bytes ({source.max_bytes:,}); skipped", "error"
    return stat


FALLBACK_HINT = ('; or, if the folder\'s files were saved in one other encoding, set fallback_encoding on the source (Windows "ANSI" '
                 'in Western Europe and the Americas: fallback_encoding = "cp1252")')


def _not_a_page(source: SourceConfig, relative: str, document: Document, raw: bytes) -> tuple[ErrorCode, str, str] | None:
    """Why a file that was read is still not indexed — (code, message, level) — or None for a page."""
    if not source.include_drafts and (drafted := draft_reason(relative, document.metadata)):
        return ErrorCode.FILE_DRAFT, f"{drafted}; not indexed (set include_drafts = true to index drafts)", "warning"
    if navigation := navigation_file(relative, document.text):
        return ErrorCode.FILE_NAVIGATION, f"{navigation}, not a page: not indexed", "warning"
    if document.text.strip():
        return None
    lower = relative.lower()
    reason = (empty_page_reason(raw) if lower.endswith((".html", ".htm")) else rst_empty_reason(raw) if lower.endswith(".rst")
              else empty_deck_reason(raw) if lower.endswith(".pptx") else "no text found")
    return ErrorCode.FILE_EXTRACTION_EMPTY, reason, "error"


# Navigation kept as Markdown: a GitHub wiki's _Sidebar.md / _Footer.md / _Header.md frame every
# page; an mdBook or GitBook SUMMARY.md (or a sidebar / TOC file) lists every page's title. Indexed,
# they matched the words of every question and were cited instead of the pages they link to.
WIKI_FRAMES = frozenset({"_sidebar", "_footer", "_header"})
CONTENTS_NAMES = frozenset({"summary", "sidebar", "toc", "_toc", "contents"})
LINK_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])?\s*\[[^\]]*\]\([^)]*\)\s*$")
CONTENTS_LINK_SHARE = 0.7  # of its non-blank lines, other than headings, that are links on their own


# A docs folder's requirements.txt (Read the Docs installs the theme from it) is no page: indexed,
# "sphinx\nfuro>=2024.1" was a document, and its url_template link a 404.
REQUIREMENT_LINE = re.compile(r"\s*(?:#.*|-[rcef]\s+\S.*|--[\w-]+(?:[ =]\S+)?|(?:git\+|https?://)\S+"
                              r"|[A-Za-z0-9][\w.-]*(?:\[[\w,\s-]*\])?\s*(?:[<>=!~]=?=?\s*[\w.*+!-]+\s*,?\s*)*(?:;.*)?)?\s*")


def navigation_file(relative: str, text: str) -> str | None:
    """What a file is when it is navigation or a build's list rather than a page ("a wiki sidebar"), or None."""
    name, dot, suffix = relative.rpartition("/")[2].lower().rpartition(".")
    if suffix == "txt" and ("requirements" in name or "constraints" in name) and text.strip() \
            and all(REQUIREMENT_LINE.fullmatch(line) for line in text.splitlines()):
        return "a pip requirements file"
    if dot + suffix not in MARKDOWN_SUFFIXES:
        return None
    if name in WIKI_FRAMES:
        return f"a wiki {name.lstrip('_')}"
    if name in CONTENTS_NAMES:
        lines = [line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
        links = sum(1 for line in lines if LINK_ITEM.match(line))
        if lines and links >= CONTENTS_LINK_SHARE * len(lines):
            return f"a table of contents ({links} links)"
    return None


def draft_reason(relative: str, metadata: dict) -> str | None:
    """Why a file is kept off the published site, or None: its front matter (Hugo and Docusaurus
    `draft: true`, Jekyll `published: false`, `noindex: true`) or Jekyll's `_drafts` folder. Not
    for a chatbot to cite either."""
    def said(key: str, value: bool) -> bool:
        given = metadata.get(key)
        return given is value or (isinstance(given, str) and given.strip().lower() == str(value).lower())

    if said("draft", True) or said("published", False) or said("noindex", True):
        return "its front matter marks it a draft (draft: true, published: false or noindex: true)"
    if "_drafts" in relative.split("/")[:-1]:
        return "it is in a _drafts folder, which Jekyll does not publish"
    return None


def file_validator(raw: bytes, source_name: str, committed: datetime | None, url_template: str = "", url_rules: str = "plain",
                   fallback_encoding: str = "", languages: HugoLanguages | None = None) -> str:
    """A file's stored `etag`: "<sha256 of its bytes>/<what else its document depends on>" — the
    source it is read into, its last commit date, the source's `url_template`, `url_rules` and
    `fallback_encoding`, a multilingual Hugo site's languages, and how readers read it (EXTRACTION_VERSION)."""
    context = _read_context(source_name, committed, url_template, url_rules, fallback_encoding, languages.signature() if languages else "")
    return f"{hashlib.sha256(raw).hexdigest()}/{context}"


def _hugo_languages(root: Path) -> HugoLanguages | None:
    from indexer.sitegen import hugo_languages  # it reads configs with this module's git helpers

    return hugo_languages(root)


@lru_cache(maxsize=4096)  # files of a folder outside git, or of one commit, share it
def _read_context(source_name: str, committed: datetime | None, url_template: str, url_rules: str, fallback_encoding: str, languages: str) -> str:
    context = f"{EXTRACTION_VERSION}\0{source_name}\0{committed.isoformat() if committed else ''}"
    if url_template:  # without one, the context of the runs before url_template existed: their files stay skipped
        context += f"\0{url_template}"
    if url_template and url_rules != "plain":  # likewise the runs before url_rules
        context += f"\0{url_rules}"
    if fallback_encoding:  # and before fallback_encoding
        context += f"\0encoding={fallback_encoding}"
    if languages:  # and of sites of one language
        context += f"\0languages={languages}"
    return hashlib.sha256(context.encode()).hexdigest()[:16]


def read_bytes(path: str, size: int) -> bytes:
    """A file's bytes; `size` is what its stat said (a file that grew since is read to its end).
    Without open()'s buffered reader: 10,000 small files 170 → 122 ms with the stat and hash."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        want = size + 1
        parts = [os.read(fd, want)]
        while len(parts[-1]) == want:  # a short read of a regular file is its end
            want = 1 << 20
            parts.append(os.read(fd, want))
    finally:
        os.close(fd)
    return parts[0] if len(parts) == 1 else b"".join(parts)


def read_file(path: Path, relative: str, doc_id: str, source_name: str, raw: bytes | None = None, updated_at: datetime | None = None,
              url: str | Callable[[dict], str | None] | None = None, fallback_encoding: str = "", site: Path | None = None,
              heading_ids: str = "github", labels: dict[str, str] | None = None) -> Document:
    """One file as a document; `updated_at` is used when the file does not say (front matter), else its
    mtime; `url` (its source's url_template, or a function of the file's front matter giving it) when
    it does not name its own (front matter, a canonical link); `fallback_encoding` reads Markdown and
    text that is not UTF-8; the partials a Markdown page imports from inside `site` are shown in it;
    `heading_ids`: whose slugs the site gives Markdown headings (indexer/anchors.py); `labels`: the
    project's section labels, for reStructuredText's `:ref:`s (indexer/rst.py)."""
    suffix = path.suffix.lower()
    words = path.stem.replace("-", " ").replace("_", " ").strip()
    fallback_title = words[:1].upper() + words[1:]  # "API keys.md" stays "API keys" (capitalize() made it "Api keys")
    raw = path.read_bytes() if raw is None else raw
    if raw.startswith(LFS_POINTER) and len(raw) < 1024:
        raise ExtractionError(_lfs_pointer(raw), code=ErrorCode.FILE_LFS_POINTER)
    published = url({}) if callable(url) else url  # where a file without front matter is published
    extracted: Extracted
    if suffix in (".html", ".htm"):
        extracted = extract_html(raw, url=published, fallback_title=fallback_title)
    elif suffix in OFFICE_READERS:
        extracted = OFFICE_READERS[suffix](raw, fallback_title)
    elif suffix in (".adoc", ".asciidoc"):
        text = asciidoc_to_markdown(decode_file_text(raw, fallback_encoding), bool(published), path.resolve(), site)
        extracted = extract_markdown(text, fallback_title, url=published)
    elif suffix == ".ipynb":
        extracted = extract_markdown(notebook_to_markdown(raw), fallback_title, url=published, heading_ids=heading_ids)
    elif suffix == ".rst":  # its headings' ids are docutils', where the page is published
        text = rst_to_markdown(decode_file_text(raw, fallback_encoding), ids=bool(published), file=path.resolve(), site=site, labels=labels)
        extracted = extract_markdown(text, fallback_title, url=published)
    elif suffix in MARKDOWN_SUFFIXES:  # its front matter may move it (`slug`) or say it is no page: its url is the extractor's
        text = decode_file_text(raw, fallback_encoding)
        extracted = extract_markdown(inline_partials(text, path, site) if site else text, fallback_title, mdx=suffix == ".mdx", url=url,
                                     heading_ids=heading_ids, labels=labels)
        published = None
    else:
        extracted = extract_text(decode_file_text(raw, fallback_encoding), fallback_title)
    updated_at = extracted.updated_at or updated_at or datetime.fromtimestamp(path.stat().st_mtime, tz=timezone.utc)
    return Document(
        doc_id=doc_id,
        source=source_name,
        source_type="files",
        title=extracted.title,
        text=extracted.text,
        url=extracted.url or published,
        path=relative,
        tags=extracted.tags,
        authors=extracted.authors,
        updated_at=updated_at,
        metadata=extracted.metadata,
        pages=extracted.pages,
        anchors=extracted.anchors,
    )
