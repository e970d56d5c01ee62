"""Where a docs site publishes each file of a files source: its `url_template` with the file's slug,
by the rules of the generator that builds the site (the source's `url_rules`). A link that 404s is
worse than none: the chatbot cites it, the visitor lands on an error page.

- "plain" (the default): the path without its extension; a folder's index.md, README.md or
  _index.md is the folder (guide/install.md → guide/install, guide/index.md → guide).
- "docusaurus", as its docs plugin does: number prefixes are left out of files and folders
  ("01-guides/02-install.md" → guides/install; "2024-05-01-notes" and "1.2-notes" are no
  prefixes), front matter `slug` names the page (from the docs root when it starts with "/") or
  else `id` its last segment, and index.md, README.md or a file named as its folder is the folder.
  A file or folder whose name starts with "_" is a partial, shown inside the pages that import it,
  never a page of its own: it has no URL. Checked against a Docusaurus 3 build (create-docusaurus'
  classic template and pages with prefixes, `slug`, `id` and a partial): every page opened, every
  fragment was on its page (GitHub's slugs, and `{/* #id */}` ids read as explicit ones).
- "hugo": paths in lower case with spaces as hyphens; front matter `slug` replaces the last segment
  (not a section's); index.md (a page bundle) and _index.md (a section) are their folder, README.md
  a page like any other. On a multilingual site (its config's `languages`) a page in another
  language than the default is under /<language>/ (HugoLanguages). Headings' ids are goldmark's (indexer/anchors.py). Checked against a Hugo
  0.111.3 build (Debian's package): every page opened (a folder with a space, a `slug`), every
  fragment was on its page.
- "jekyll": pages as "plain"; a post (`_posts/2024-05-01-launch.md`) at its categories (folders
  above `_posts` and front matter `categories` / `category`, in lower case), then the date (front
  matter `date`, else the file name's) and its title (front matter `slug`, else the file name's):
  news/2024/05/01/launch — Jekyll's "date" and "pretty" styles; the template adds ".html" or "/".
  Headings' ids are kramdown's (indexer/anchors.py). Checked against a Jekyll 4.3.1 build
  (Debian's package): every page and post URL opened, every fragment was on its page.
- "mkdocs": Markdown pages as "plain", their headings' ids Python-Markdown's (indexer/anchors.py);
  any other file (`.html`, `.txt`, a PDF) is copied as it is, so at its own path under the site.
- "sphinx": pages as "plain"; a Markdown page's headings get docutils' ids, as Sphinx gives the
  sections MyST makes of them (reStructuredText's always do: indexer/rst.py). Checked against a
  Sphinx 9.0.4 + myst-parser build: every page opened, every fragment was on its page.
- "antora": only `modules/<module>/pages/` holds pages: `modules/ROOT/pages/install/linux.adoc`
  is install/linux, `modules/admin/pages/users.adoc` admin/users (the template holds the site,
  the component's name and version); partials, examples, images and nav.adoc are no pages.
A folder's own page under a template that ends `{slug}.html` is the folder's index.html (MkDocs
without directory URLs, Jekyll), not "folder.html".
A file's own `url` or `permalink` (front matter) is read by the extractor and wins over all of these.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from urllib.parse import quote

URL_RULES = {  # each one as `index init` explains it in the config it writes
    "plain": "the file's path",
    "mkdocs": "as MkDocs makes URLs: Markdown pages by their path, other files as they are, headings' ids Python-Markdown's",
    "sphinx": "as Sphinx makes URLs: the file's path; headings' ids docutils', Markdown's (MyST) too",
    "docusaurus": "as Docusaurus makes URLs: 01- prefixes left out, front matter slug and id",
    "hugo": "as Hugo makes URLs: lower case, front matter slug; headings' ids goldmark's",
    "jekyll": "as Jekyll makes URLs: posts by category, date and title; headings' ids kramdown's",
    "antora": "as Antora makes URLs: modules/ROOT/pages/x.adoc is x, other modules a folder each",
}
HEADING_IDS = {"mkdocs": "python-markdown", "jekyll": "kramdown", "hugo": "goldmark", "sphinx": "docutils"}  # whose slugs a generator gives Markdown headings (default GitHub's)
MARKDOWN_PAGES = (".md", ".markdown", ".mdown", ".mkd", ".mkdn")  # what MkDocs renders as pages
FOLDER_PAGES = ("index", "readme", "_index")  # "plain": a folder's own page (README.md on GitHub, _index.md in Hugo)

# Docusaurus's default number prefix parser: "01-intro", "3 - Setup", "02_guides"; not a date or a version.
_NUMBER_PREFIX = re.compile(r"(\d+)\s*[-_.]+\s*(.*)", re.DOTALL)
_DATE_OR_VERSION = re.compile(r"(?:\d{2}|\d{4})[-_.]\d{2}(?:[-_.](?:\d{2}|\d{4}))?|\d+[-_.]\d+")


@dataclass(frozen=True)
class HugoLanguages:
    """A multilingual Hugo site's languages (indexer/sitegen.py reads them from its config), as
    they place a content file's page: a file is in the language its name ends in (`about.fr.md`),
    else in that of the language's own content folder it lies in, else in the default language;
    its page is under /<language>/ unless that is the default language published at the root."""

    codes: frozenset[str]
    default: str = "en"
    in_subdir: bool = False  # defaultContentLanguageInSubdir: the default language under /en/ too
    own: str | None = None  # the source folder is this language's contentDir
    folders: tuple[tuple[str, str], ...] = ()  # (folder inside the source folder, its language): languages' contentDirs

    def signature(self) -> str:
        """The same text for the same languages, run after run (a file's validator holds it)."""
        inside = ",".join(f"{folder}={code}" for folder, code in sorted(self.folders))
        return f"{','.join(sorted(self.codes))};{self.default};{self.in_subdir};{self.own or ''};{inside}"

    def place(self, folder: str, stem: str) -> tuple[str, str, str]:
        """(the page's language prefix, "" at the root; the folder within its language's content; the stem without its language)."""
        language = self.own or self.default
        for inside, code in self.folders:
            if folder == inside or folder.startswith(inside + "/"):
                language, folder = code, folder[len(inside):].lstrip("/")
                break
        named, _, code = stem.rpartition(".")
        if named and code.lower() in self.codes:
            language, stem = code.lower(), named
        return ("" if language == self.default and not self.in_subdir else language), folder, stem


def file_url(template: str, relative: str, rules: str = "plain", meta: dict | None = None, languages: HugoLanguages | None = None) -> str | None:
    """The URL `relative` (a path in the source folder, "/"-separated) is published at, or None when
    the site publishes no page for it. `meta`: the file's front matter, where the rules read it;
    `languages`: a multilingual Hugo site's (with "hugo")."""
    folder, _, name = relative.rpartition("/")
    stem = name.rsplit(".", 1)[0] if "." in name[1:] else name
    meta = meta or {}
    html_files = template.partition("{slug}")[2].startswith(".")  # "{slug}.html": a folder's page is folder/index.html
    if rules == "docusaurus":
        slug = _docusaurus_slug(folder, stem, meta)
    elif rules == "hugo":
        slug = _hugo_slug(folder, stem, meta, languages)
    elif rules == "jekyll" and "_posts" in folder.split("/"):
        slug = _jekyll_post_slug(folder, stem, meta)
    elif rules == "mkdocs" and not name.lower().endswith(MARKDOWN_PAGES):  # copied as it is: at its path, extension and all
        return template[: template.index("{slug}")] + _quoted(relative) if "{slug}" in template else None
    elif rules == "antora":
        slug = _antora_slug(folder, stem)
        if slug is not None and stem == "index" and not html_files:
            slug = slug[: -len("index")].rstrip("/")  # indexify and drop styles: a folder's index.adoc is the folder
    else:
        slug = folder if stem.lower() in FOLDER_PAGES else f"{folder}/{stem}".lstrip("/")
        if stem.lower() in FOLDER_PAGES and html_files:
            slug = f"{slug}/index".lstrip("/")
    if slug is None:
        return None
    if not slug and "{slug}" in template:  # the top folder's own page: the template up to {slug}
        template = template[: template.index("{slug}")]
    return template.replace("{slug}", _quoted(slug)).replace("{path}", _quoted(relative))


def _quoted(part: str) -> str:
    """A path percent-encoded for a URL. A file name that is not UTF-8 (a Latin-1 "caf\xe9.md" from an
    old archive) reaches Python with its bytes as lone surrogates, which quote() refused, failing the
    file: its own bytes are encoded, as a web server serving the file names it."""
    return quote(part.encode("utf-8", "surrogateescape"))


def _text(meta: dict, key: str) -> str:
    value = meta.get(key)
    return value.strip() if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value).strip() else ""


def _unprefixed(name: str) -> str:
    if _DATE_OR_VERSION.match(name):
        return name
    found = _NUMBER_PREFIX.fullmatch(name)
    return found.group(2) if found else name


def _docusaurus_slug(folder: str, stem: str, meta: dict) -> str | None:
    folders = folder.split("/") if folder else []
    if stem.startswith("_") or any(part.startswith("_") for part in folders):
        return None
    if meta.get("parse_number_prefixes") is not False:
        folders = [_unprefixed(part) for part in folders]
        named = _unprefixed(stem)
    else:
        named = stem
    base = "/".join(folders)
    slug = _text(meta, "slug")
    if slug.startswith("/"):
        return slug.strip("/")
    index_of = (folder.rpartition("/")[2] if folder else "").lower()
    if not slug and stem.lower() in ("index", "readme", index_of):
        return base
    resolved = posixpath.normpath(posixpath.join("/", base, slug or _text(meta, "id") or named))
    return resolved.strip("/")


_POST_NAME = re.compile(r"(\d{4})-(\d{2})-(\d{2})-(.+)")
_WRITTEN_DATE = re.compile(r"\s*(\d{4})-(\d{2})-(\d{2})")


def _jekyll_post_slug(folder: str, stem: str, meta: dict) -> str | None:
    named = _POST_NAME.fullmatch(stem)
    if not named:  # Jekyll publishes no post without a date in its file name
        return None
    year, month, day, title = named.groups()
    written = meta.get("date")
    if hasattr(written, "year"):  # YAML read it as a date
        year, month, day = f"{written.year:04d}", f"{written.month:02d}", f"{written.day:02d}"
    elif isinstance(written, str) and (found := _WRITTEN_DATE.match(written)):
        year, month, day = found.groups()
    folders = folder.split("/")
    listed = meta.get("categories", meta.get("category")) or []
    listed = listed.split() if isinstance(listed, str) else listed if isinstance(listed, list) else [listed]
    categories: list[str] = []
    for category in [*folders[: folders.index("_posts")], *listed]:
        name = str(category).strip().lower()
        if name and name not in categories:
            categories.append(name)
    title = _jekyll_slugify(_text(meta, "slug") or title)
    return "/".join([*categories, year, month, day, title])


def _jekyll_slugify(text: str) -> str:
    """Jekyll's slugify, "pretty" mode with case kept: what a URL cannot hold becomes a hyphen."""
    return re.sub(r"[^\w.~!$&'()+,;=@]+", "-", text).strip("-")


def _antora_slug(folder: str, stem: str) -> str | None:
    parts = folder.split("/")
    if len(parts) < 3 or parts[0] != "modules" or parts[2] != "pages":
        return None  # a partial, an example, an image, nav.adoc: no page
    module = [] if parts[1] == "ROOT" else [parts[1]]
    return "/".join([*module, *parts[3:], stem])


def _hugo_slug(folder: str, stem: str, meta: dict, languages: HugoLanguages | None = None) -> str:
    language, folder, stem = languages.place(folder, stem) if languages else ("", folder, stem)
    if stem.lower() == "_index":  # a section: `slug` does not apply
        path = folder
    else:
        path = folder if stem.lower() == "index" else f"{folder}/{stem}".lstrip("/")
        if slug := _text(meta, "slug"):
            path = f"{path.rpartition('/')[0]}/{slug.strip('/')}".lstrip("/")
    return "/".join(part for part in (language, path.replace(" ", "-").lower()) if part)
