"""One typed `Config`, loaded from `index.toml` and validated before any work starts.

Every problem is reported with the key's full path (`spaces[0].chunk_tokens`) and what
is allowed, so an admin can fix the file without reading code. Secrets never live here:
they come from environment variables only. The `[server]` table is read in `config_server.py`,
and how one table's keys are checked in `config_checks.py`.
"""

from __future__ import annotations

import codecs
import ipaddress
import os
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from indexer.config_checks import NO_HOST, Key, check_table, in_choices, in_range, tables, url_problem
from indexer.config_server import ServerConfig, parse_server
from indexer.errors import ConfigError
from indexer.fileurls import URL_RULES
from indexer.lexical import LANGUAGES, analyzer_for
from indexer.models import MODELS, PROVIDERS, ModelInfo
from indexer.urlscope import UrlScope, compile_pattern

SOURCE_TYPES = ("files", "urls", "notion", "answers")
# The macro-enabled, template and slide-show forms of the Office formats: the same files under other
# names, read as the form each is of. Not .dot, .pot: Graphviz graphs and gettext catalogues in docs folders.
OFFICE_FORMS = {".docm": ".docx", ".dotx": ".docx", ".dotm": ".docx", ".pptm": ".pptx", ".ppsx": ".pptx", ".ppsm": ".pptx", ".potx": ".pptx",
                ".potm": ".pptx", ".pps": ".ppt", ".xlsm": ".xlsx", ".xltx": ".xlsx", ".xltm": ".xlsx", ".xlt": ".xls"}
DEFAULT_EXTENSIONS = (".md", ".markdown", ".mdx", ".rst", ".adoc", ".asciidoc", ".ipynb", ".txt", ".html", ".htm", ".pdf", ".docx", ".doc", ".rtf", ".pptx", ".ppt", ".xlsx", ".xls",
                      ".odt", ".ods", ".odp", ".epub", *OFFICE_FORMS)
ANSWER_FILES = (".toml", ".csv", ".yaml", ".yml", ".xlsx", ".xls")  # what an answers source's `path` may be: question/answer pairs
# Office formats a folder of documents holds that this version does not read: the kind, and how to make them readable.
# A files source leaves them out with a FILE_TYPE_UNREAD warning, not read as text (a .xls "not UTF-8 text … save it as UTF-8").
_AS_DOCX = "save it as DOCX or PDF to index it"
_AS_XLSX = "save it as .xlsx to index it"
UNREAD_FORMATS = {
    ".pages": ("Pages", _AS_DOCX), ".key": ("Keynote", "export it as .pptx or PDF to index it"),
    ".numbers": ("Numbers", _AS_XLSX),
    # Google Drive for desktop shows a Google document as a shortcut file: a link, with the text left in Google Drive
    ".gdoc": ("Google Docs shortcut", "its text is in Google Drive: download it as .docx (File → Download) to index it"),
    ".gsheet": ("Google Sheets shortcut", "its cells are in Google Drive: download it as .xlsx (File → Download) to index it"),
    ".gslides": ("Google Slides shortcut", "its slides are in Google Drive: download it as .pptx (File → Download) to index it"),
}


# Query parameters that only say where a visitor came from, dropped from URLs; `name*` matches a prefix.
TRACKING_PARAMETERS = ("utm_*", "gclid", "dclid", "gbraid", "wbraid", "fbclid", "msclkid", "mc_cid", "mc_eid", "_ga", "_gl", "yclid", "igshid", "mkt_tok")


@dataclass(frozen=True)
class SourceConfig:
    name: str
    type: str
    path: Path | None = None
    extensions: tuple[str, ...] = DEFAULT_EXTENSIONS
    urls: tuple[str, ...] = ()
    sitemaps: tuple[str, ...] = ()  # sitemap.xml or sitemap index URLs; their pages join `urls`
    max_pages: int = 250  # pages per web source, listed ones first
    timeout_seconds: float = 20.0
    allow_private_networks: tuple[str, ...] = ()  # CIDRs the SSRF guard lets web fetches reach
    respect_robots: bool = True  # robots.txt rules for the `static-rag` agent are obeyed
    trust_lastmod: bool = False  # urls: a page whose sitemap <lastmod> says it is unchanged since it was read is not requested (but weekly)
    drop_parameters: tuple[str, ...] = TRACKING_PARAMETERS  # query parameters removed from URLs (`utm_*` = a prefix)
    crawl: bool = False  # also follow same-site links from the listed pages
    include: tuple[str, ...] = ()  # urls: URL patterns a page must match to be indexed (indexer/urlscope.py)
    exclude: tuple[str, ...] = ()  # urls: URL patterns of pages never indexed
    max_depth: int = 3  # link hops a crawl follows from a listed page
    concurrency: int = 4  # pages fetched at once per source
    per_host_concurrency: int = 2  # requests open at once to one host
    per_host_delay_seconds: float = 0.25  # between request starts to one host (robots.txt Crawl-delay may raise it)
    roots: tuple[str, ...] = ()  # Notion page or database ids the traversal starts from
    follow_links: bool = True  # Notion: follow link_to_page blocks and page mentions
    requests_per_second: float = 3.0  # Notion: average request rate, for every Notion source of the process
    max_bytes: int = 10 * 1024 * 1024  # files and web pages: larger ones are not read
    follow_symlinks: bool = False  # files: also index symlinks that lead out of the folder
    respect_gitignore: bool = True  # files: leave out what git ignores in the folder's work tree
    include_drafts: bool = False  # files, notion: also index Markdown (database rows) whose front matter (properties) mark it a draft
    id_prefix: str = ""  # files: doc_id = "file:" + id_prefix + path in the folder (two folders may share paths)
    url_template: str = ""  # files: the URL each file is published at, from {slug} or {path} (front matter `url` wins)
    url_rules: str = "plain"  # files: how the site generator makes a file's {slug} (indexer.fileurls)
    fallback_encoding: str = ""  # files: how a .md / .txt file that is not UTF-8 is read ("": it is an error)
    database: str | None = None  # answers: a Notion database of Question / Answer rows (instead of `path`)
    min_answer_relevance: float | None = None  # answers: relevance a match needs to be returned; None: the default


@dataclass(frozen=True)
class SpaceConfig:
    provider: str
    model: str
    dimensions: int
    chunk_tokens: int
    chunk_overlap: int
    batch_size: int
    max_concurrency: int = 4
    timeout_seconds: float = 60.0
    hybrid_weight: float | None = None  # dense share of the hybrid score; None: the product's default
    min_relevance: float | None = None  # relevance the best hit needs for `answerable`; None: the default
    min_lexical_relevance: float | None = None  # the same for a search by keywords alone (lexical mode, degraded)

    def search_settings(self) -> dict:
        """What the server needs from this table, recorded in the generation's manifest."""
        chosen = (("hybrid_weight", self.hybrid_weight), ("min_relevance", self.min_relevance), ("min_lexical_relevance", self.min_lexical_relevance))
        return {k: v for k, v in chosen if v is not None}

    @property
    def info(self) -> ModelInfo:
        return MODELS[(self.provider, self.model)]

    @property
    def space_id(self) -> str:
        """provider + model + dimension: `local-all-minilm-l6-v2-384`, `openai-text-embedding-3-small-1536`,
        `gemini-embedding-001-768` (a model named after its provider is not prefixed twice)."""
        name = self.model if self.model.lower().startswith(f"{self.provider}-") else f"{self.provider}-{self.model}"
        return f"{name}-{self.dimensions}".lower().replace("/", "-").replace("_", "-")


@dataclass(frozen=True)
class Config:
    artifacts: Path
    sources: tuple[SourceConfig, ...]
    spaces: tuple[SpaceConfig, ...]
    keep_generations: int = 3
    max_delete_fraction: float = 0.3
    mass_delete_min: int = 3  # the delete guard stops a run from this many documents lost (or all of a source's)
    path: Path | None = None
    server: ServerConfig = ServerConfig()
    language: str = "english"  # the lexical index's stems and stopwords (indexer/lexical.py LANGUAGES)

    @property
    def analyzer(self) -> str:
        return analyzer_for(self.language)


# What a config without sources or spaces is told to add (the smallest tables that work; README "Configuration").
SOURCES_HINT = 'add e.g. [[sources]] with name = "docs", type = "files", path = "docs" (or type "urls" / "notion")'
SPACES_HINT = 'add e.g. [[spaces]] with provider = "local" (the bundled model, offline; or "openai" / "gemini")'

TOP_KEYS = {
    "artifacts": Key(str, default="artifacts"),
    "keep_generations": Key(int, default=3, min=1, max=100),
    "max_delete_fraction": Key((int, float), default=0.3, min=0, max=1),
    "mass_delete_min": Key(int, default=3, min=1, max=1_000_000),
    "sources": Key(list, required=True, hint=f"; {SOURCES_HINT}"),
    "spaces": Key(list, required=True, hint=f"; {SPACES_HINT}"),
    "server": Key(dict, default={}),
    "language": Key(str, default="english", choices=LANGUAGES),
}

SOURCE_KEYS_BY_TYPE = {
    "files": {
        "name": Key(str, required=True),
        "type": Key(str, required=True, choices=SOURCE_TYPES),
        "path": Key(str, required=True),
        "extensions": Key(list, item_type=str, default=list(DEFAULT_EXTENSIONS)),
        "max_bytes": Key(int, default=10 * 1024 * 1024, min=1024, max=100 * 1024 * 1024),
        "follow_symlinks": Key(bool, default=False),
        "respect_gitignore": Key(bool, default=True),
        "include_drafts": Key(bool, default=False),
        "id_prefix": Key(str, default=""),
        "url_template": Key(str, default=""),
        "url_rules": Key(str, default="plain", choices=tuple(URL_RULES)),
        "fallback_encoding": Key(str, default=""),
    },
    "urls": {
        "name": Key(str, required=True),
        "type": Key(str, required=True, choices=SOURCE_TYPES),
        "urls": Key(list, item_type=str, default=[]),
        "sitemaps": Key(list, item_type=str, default=[]),
        "max_pages": Key(int, default=250, min=1, max=100_000),
        "timeout_seconds": Key((int, float), default=20.0, min=1, max=300),
        "allow_private_networks": Key(list, item_type=str, default=[]),
        "drop_parameters": Key(list, item_type=str, default=list(TRACKING_PARAMETERS)),
        "include": Key(list, item_type=str, default=[]),
        "exclude": Key(list, item_type=str, default=[]),
        "respect_robots": Key(bool, default=True),
        "trust_lastmod": Key(bool, default=False),
        "crawl": Key(bool, default=False),
        "max_depth": Key(int, min=0, max=20),
        "concurrency": Key(int, default=4, min=1, max=32),
        "per_host_concurrency": Key(int, default=2, min=1, max=16),
        "per_host_delay_seconds": Key((int, float), default=0.25, min=0, max=60),
        "max_bytes": Key(int, default=10 * 1024 * 1024, min=1024, max=100 * 1024 * 1024),
    },
    "notion": {
        "name": Key(str, required=True),
        "type": Key(str, required=True, choices=SOURCE_TYPES),
        "roots": Key(list, required=True, item_type=str),
        "max_depth": Key(int, default=4, min=0, max=50),
        "max_pages": Key(int, default=250, min=1, max=100_000),
        "follow_links": Key(bool, default=True),
        "requests_per_second": Key((int, float), default=3.0, min=0.1, max=100),
        "timeout_seconds": Key((int, float), default=30.0, min=1, max=300),
        "include_drafts": Key(bool, default=False),
    },
    "answers": {
        "name": Key(str, required=True),
        "type": Key(str, required=True, choices=SOURCE_TYPES),
        "path": Key(str),  # a .toml, .csv, .yaml or .yml file
        "database": Key(str),  # or a Notion database id
        "min_answer_relevance": Key((int, float), min=0, max=1),
        "requests_per_second": Key((int, float), default=3.0, min=0.1, max=100),
        "timeout_seconds": Key((int, float), default=30.0, min=1, max=300),
    },
}

SPACE_KEYS = {
    "provider": Key(str, required=True, choices=PROVIDERS),
    "model": Key(str),
    "dimensions": Key(int),
    "chunk_tokens": Key(int),
    "chunk_overlap": Key(int),
    "batch_size": Key(int),
    "max_concurrency": Key(int, default=4, min=1, max=16),
    "timeout_seconds": Key((int, float), default=60.0, min=1, max=600),
    "hybrid_weight": Key((int, float), min=0, max=1),
    "min_relevance": Key((int, float), min=0, max=1),
    "min_lexical_relevance": Key((int, float), min=0, max=1),
}
LOCAL_BATCH_SIZE = 32


def load_config(path: str | Path, artifacts_override: str | Path | None = None, *, sources_required: bool = True) -> Config:
    """Read and validate a config file. `artifacts_override` (the `--artifacts` flag) wins over the file.
    `sources_required=False` for a command that reads only the spaces (`index eval` indexes a dataset)."""
    path = Path(path)
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8-sig"))  # -sig: a Windows editor's byte order mark is not TOML
    except FileNotFoundError:
        raise ConfigError(f"config file not found: {path}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text (byte {exc.start}: {exc.object[exc.start:exc.start + 1]!r}); save the file as UTF-8") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None
    try:
        return parse_config(raw, base_dir=path.resolve().parent, artifacts_override=artifacts_override, path=path, sources_required=sources_required)
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from None


def parse_config(
    raw: dict,
    base_dir: Path,
    artifacts_override: str | Path | None = None,
    path: Path | None = None,
    sources_required: bool = True,
) -> Config:
    if isinstance(raw.get("language"), str):  # "German" is german
        raw = {**raw, "language": raw["language"].strip().lower()}
    top = check_table(raw if sources_required else {"sources": [], **raw}, TOP_KEYS, "")
    sources = tuple(_parse_source(s, i, base_dir) for i, s in enumerate(tables(top["sources"], "sources")))
    if not sources and sources_required:
        raise ConfigError(f"sources: at least one [[sources]] table is required; {SOURCES_HINT}")
    names = [s.name for s in sources]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ConfigError(f"sources: names must be unique; repeated: {', '.join(duplicates)}")
    spaces = tuple(_parse_space(s, i) for i, s in enumerate(tables(top["spaces"], "spaces")))
    if not spaces:
        raise ConfigError(f"spaces: at least one [[spaces]] table is required; {SPACES_HINT}")
    ids = [s.space_id for s in spaces]
    if len(set(ids)) != len(ids):
        raise ConfigError(f"spaces: each space must be distinct; repeated: {', '.join(sorted(set(i for i in ids if ids.count(i) > 1)))}")
    artifacts = _artifacts(top["artifacts"], base_dir, artifacts_override)
    server = parse_server(top["server"], set(names))
    if server.default_space is not None and server.default_space not in ids:
        raise ConfigError(f"server.default_space: no configured space is {server.default_space!r}; spaces are {', '.join(ids)}")
    return Config(
        artifacts=artifacts,
        sources=sources,
        spaces=spaces,
        keep_generations=top["keep_generations"],
        max_delete_fraction=float(top["max_delete_fraction"]),
        mass_delete_min=top["mass_delete_min"],
        path=path,
        server=server,
        language=top["language"],
    )


def _check_url_template(template: str, where: str) -> None:
    """A files source's `url_template`: an http(s) URL with {slug} or {path} in it, and no other placeholder."""
    if not template:
        return
    example = 'e.g. "https://docs.example.com/{slug}/"'
    if not template.startswith(("http://", "https://")):
        raise ConfigError(f"{where}: must start with http:// or https://; got {template!r} ({example})")
    named = re.findall(r"\{([^{}]*)\}", template)
    unknown = [n for n in named if n not in ("slug", "path")]
    if unknown:
        raise ConfigError(f"{where}: {{{unknown[0]}}} is not a placeholder; use {{slug}} (the file's path without its extension, "
                          f"index.md / README.md being their folder) or {{path}} (its path as it is); got {template!r}")
    if not named:
        raise ConfigError(f"{where}: has neither {{slug}} nor {{path}}, so every file would get the same URL; got {template!r} ({example})")


def env_url(name: str, default: str | None = None) -> str | None:
    """An API's address from the environment (OPENAI_BASE_URL, GEMINI_BASE_URL, NOTION_BASE_URL:
    a proxy, a compatible server), else `default`. One that is no http(s) URL is a ConfigError
    naming the variable: before, every request failed as "Connection error", six times over."""
    value = os.environ.get(name, "").strip()
    if not value:
        return default
    problem = url_problem(value)
    if problem not in (None, NO_HOST):
        raise ConfigError(f"{name} = {value!r} is not a valid URL ({problem}); fix it, or unset it to use the service's own address")
    if problem or urlsplit(value).scheme not in ("http", "https"):
        raise ConfigError(f"{name} = {value!r} is not an http(s) URL with a host; fix it (e.g. https://proxy.example.com/v1), "
                          "or unset it to use the service's own address")
    return value


def _artifacts(value: str, base_dir: Path, override: str | Path | None) -> Path:
    """The artifacts folder: `--artifacts` (`override`) or the config's `artifacts`, which must name
    a folder, or a path where one can be made (nothing on the way to it a file)."""
    where = "--artifacts" if override is not None else "artifacts"
    if not str(override if override is not None else value).strip():
        raise ConfigError(f'{where}: must not be empty; name the folder generations are written to (e.g. "artifacts")')
    folder = Path(override).expanduser() if override is not None else _resolve(base_dir, value).resolve()
    existing = next((p for p in (folder, *folder.parents) if p.exists()), None)
    if existing is not None and not existing.is_dir():
        what = "is a file" if existing == folder else f"is inside {existing}, which is a file"
        raise ConfigError(f"{where}: {folder} {what}, not a folder; name the folder generations are written to")
    return folder


def _encoding(name: str, where: str) -> str:
    """A text encoding Python can read, by its canonical name ("" stays "")."""
    if not name:
        return ""
    try:
        canonical = codecs.lookup(name).name
        b"text".decode(canonical)  # "hex" and "rot13" are codecs, but not of text
    except (LookupError, ValueError):  # ValueError: a NUL in the name
        raise ConfigError(f"{where}: {name!r} is not a text encoding Python knows (e.g. \"cp1252\", Windows' Western European; "
                          f"\"cp1251\", \"shift_jis\")") from None
    return canonical


def _resolve(base_dir: Path, value: str) -> Path:
    """A path from the config: `~` is the home folder, a relative path is the config file's folder's."""
    return base_dir / Path(value).expanduser()


def _parse_source(raw: dict, index: int, base_dir: Path) -> SourceConfig:
    where = f"sources[{index}]"
    kind = raw.get("type")
    if kind not in SOURCE_KEYS_BY_TYPE:
        raise ConfigError(f"{where}.type: must be one of {', '.join(SOURCE_TYPES)}; got {kind!r}")
    values = check_table(raw, SOURCE_KEYS_BY_TYPE[kind], where)
    if kind == "notion":
        return _notion_source(values, where)
    if kind == "answers":
        return _answers_source(values, where, base_dir)
    if kind == "files":
        folder = _resolve(base_dir, values["path"])
        if os.path.normpath(folder) == folder.anchor:  # every file of the machine: /proc and /sys too, listed for minutes before a word
            raise ConfigError(f"{where}.path: {values['path']!r} is the whole disk ({folder.anchor}); name the folder that holds your documents")
        extensions = tuple(e.lower() if e.startswith(".") else f".{e.lower()}" for e in values["extensions"])
        for suffix in extensions:
            if suffix in UNREAD_FORMATS:
                kind, advice = UNREAD_FORMATS[suffix]
                raise ConfigError(f"{where}.extensions: {suffix} files ({kind}) are not text, and this version cannot read their format; "
                                  f"leave {suffix} out: each such file is then listed with a FILE_TYPE_UNREAD warning that says how ({advice})")
        prefix = values["id_prefix"]
        if prefix != prefix.strip() or any(c in prefix for c in "\\\n\t#?"):
            raise ConfigError(f"{where}.id_prefix: no spaces at either end, backslashes, tabs, newlines, # or ?; got {prefix!r} (e.g. \"{values['name']}/\")")
        _check_url_template(values["url_template"], f"{where}.url_template")
        if values["url_rules"] != "plain" and not values["url_template"]:
            raise ConfigError(f"{where}.url_rules: says how {values['url_rules']} makes each file's {{slug}}, but the source has no "
                              f'url_template to fill (e.g. url_template = "https://docs.example.com/docs/{{slug}}")')
        return SourceConfig(name=values["name"], type=kind, path=folder, extensions=extensions, max_bytes=values["max_bytes"],
                            follow_symlinks=values["follow_symlinks"], respect_gitignore=values["respect_gitignore"],
                            include_drafts=values["include_drafts"], id_prefix=prefix, url_template=values["url_template"],
                            url_rules=values["url_rules"], fallback_encoding=_encoding(values["fallback_encoding"], f"{where}.fallback_encoding"))
    urls, sitemaps = tuple(values["urls"]), tuple(values["sitemaps"])
    for key, listed in (("urls", urls), ("sitemaps", sitemaps)):
        for j, url in enumerate(listed):
            if not url.startswith(("http://", "https://")):
                raise ConfigError(f"{where}.{key}[{j}]: must start with http:// or https://; got {url!r}")
            if (problem := url_problem(url)) is not None:
                raise ConfigError(f"{where}.{key}[{j}]: not a valid URL ({problem}); got {url!r}")
    if not urls and not sitemaps:
        raise ConfigError(f"{where}: a urls source needs `urls` (pages) or `sitemaps` (sitemap.xml or sitemap index URLs)")
    if values["max_depth"] is not None and not values["crawl"]:
        raise ConfigError(f"{where}.max_depth: only a crawl follows links; add `crawl = true` to follow them from the listed pages")
    scope = _url_scope(values, where)
    outside = next((j for j, url in enumerate(urls) if not scope(url)), None)
    if outside is not None and not values["crawl"]:
        raise ConfigError(f"{where}.urls[{outside}]: {urls[outside]} is outside include / exclude, so it would never be indexed; "
                          "remove it, or add `crawl = true` to start a crawl from it (it is then read for its links only)")
    return SourceConfig(
        name=values["name"],
        type=kind,
        urls=urls,
        sitemaps=sitemaps,
        max_pages=values["max_pages"],
        timeout_seconds=float(values["timeout_seconds"]),
        allow_private_networks=check_networks(values["allow_private_networks"], f"{where}.allow_private_networks"),
        drop_parameters=tuple(p.lower() for p in values["drop_parameters"]),
        respect_robots=values["respect_robots"],
        trust_lastmod=values["trust_lastmod"],
        crawl=values["crawl"],
        include=tuple(values["include"]),
        exclude=tuple(values["exclude"]),
        max_depth=values["max_depth"] if values["max_depth"] is not None else SourceConfig.max_depth,
        concurrency=values["concurrency"],
        per_host_concurrency=values["per_host_concurrency"],
        per_host_delay_seconds=float(values["per_host_delay_seconds"]),
        max_bytes=values["max_bytes"],
    )


def _url_scope(values: dict, where: str) -> UrlScope:
    for key in ("include", "exclude"):
        for j, pattern in enumerate(values[key]):
            try:
                compile_pattern(pattern)
            except ValueError as exc:
                raise ConfigError(f"{where}.{key}[{j}]: {exc}") from None
    return UrlScope(tuple(values["include"]), tuple(values["exclude"]))


def _answers_source(values: dict, where: str, base_dir: Path) -> SourceConfig:
    from indexer.sources.notion import notion_id

    if (values["path"] is None) == (values["database"] is None):
        raise ConfigError(f"{where}: an answers source reads `path` (a .toml, .csv, .yaml, .xlsx or .xls file of question/answer pairs) or `database` (a Notion database id); set one")
    database = notion_id(values["database"]) if values["database"] is not None else None
    if values["database"] is not None and database is None:
        raise ConfigError(f"{where}.database: must be a Notion database id (32 hex digits) or its URL; got {values['database']!r}")
    minimum = values["min_answer_relevance"]
    return SourceConfig(name=values["name"], type="answers", path=_resolve(base_dir, values["path"]) if values["path"] else None, database=database,
                        min_answer_relevance=float(minimum) if minimum is not None else None,
                        requests_per_second=float(values["requests_per_second"]), timeout_seconds=float(values["timeout_seconds"]))


def _notion_source(values: dict, where: str) -> SourceConfig:
    from indexer.sources.notion import notion_id

    roots = []
    for j, root in enumerate(values["roots"]):
        found = notion_id(root)
        if found is None:
            raise ConfigError(f"{where}.roots[{j}]: must be a Notion page or database id (32 hex digits) or its URL; got {root!r}")
        roots.append(found)
    if not roots:
        raise ConfigError(f"{where}.roots: list at least one page or database id to start from")
    return SourceConfig(
        name=values["name"],
        type="notion",
        roots=tuple(dict.fromkeys(roots)),
        max_depth=values["max_depth"],
        max_pages=values["max_pages"],
        follow_links=values["follow_links"],
        requests_per_second=float(values["requests_per_second"]),
        timeout_seconds=float(values["timeout_seconds"]),
        include_drafts=values["include_drafts"],
    )


def check_networks(cidrs, where: str) -> tuple[str, ...]:
    """CIDRs as given, or a ConfigError naming the first that is not one."""
    for j, cidr in enumerate(cidrs):
        try:
            ipaddress.ip_network(cidr, strict=False)
        except ValueError:
            raise ConfigError(f"{where}[{j}]: must be a network in CIDR form such as 127.0.0.0/8 or 10.0.0.0/8; got {cidr!r}") from None
    return tuple(cidrs)


def _parse_space(raw: dict, index: int) -> SpaceConfig:
    where = f"spaces[{index}]"
    values = check_table(raw, SPACE_KEYS, where)
    provider = values["provider"]
    known = {m: info for (p, m), info in MODELS.items() if p == provider}
    model = values["model"] or next(m for m, info in known.items() if info.default)
    if model not in known:
        raise ConfigError(f"{where}.model: {provider} models are {', '.join(sorted(known))}; got {model!r}")
    info = known[model]
    if info.retired:
        raise ConfigError(f"{where}.model: {model} was shut down on {info.retired:%Y-%m-%d}; use {info.successor!r} instead")
    dimensions = in_choices(values["dimensions"], info.dimensions, info.dimensions[0], f"{where}.dimensions")
    chunk_tokens = in_range(values["chunk_tokens"], info.chunk_tokens, 32, info.max_chunk_tokens, f"{where}.chunk_tokens")
    overlap_default = min(info.chunk_overlap, chunk_tokens // 4)
    chunk_overlap = in_range(values["chunk_overlap"], overlap_default, 0, chunk_tokens // 2, f"{where}.chunk_overlap")
    batch_default = LOCAL_BATCH_SIZE if provider == "local" else info.max_batch_inputs
    batch_size = in_range(values["batch_size"], batch_default, 1, info.max_batch_inputs, f"{where}.batch_size")
    return SpaceConfig(
        provider=provider,
        model=model,
        dimensions=dimensions,
        chunk_tokens=chunk_tokens,
        chunk_overlap=chunk_overlap,
        batch_size=batch_size,
        max_concurrency=values["max_concurrency"],
        timeout_seconds=float(values["timeout_seconds"]),
        hybrid_weight=float(values["hybrid_weight"]) if values["hybrid_weight"] is not None else None,
        min_relevance=float(values["min_relevance"]) if values["min_relevance"] is not None else None,
        min_lexical_relevance=float(values["min_lexical_relevance"]) if values["min_lexical_relevance"] is not None else None,
    )
