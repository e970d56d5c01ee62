"""`index init`: a first index.toml from where a team's documents are.

Each place is read for what it is: a folder is a files source, a .csv / .toml / .yaml / .xlsx / .xls file
of question/answer pairs an answers source, a sitemap URL a urls source that lists its pages, any
other web page a crawl kept below that page's folder, a Notion page or database (URL or id) a
notion source. The file holds the keys a first run needs, with the next
ones a user is likely to want written out as comments; `load_config` checks it before it is kept.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from indexer.config import ANSWER_FILES
from indexer.config_checks import url_problem
from indexer.errors import ConfigError
from indexer.sources.notion import ID as NOTION_ID

NOTION_HOSTS = ("notion.so", "notion.site")


@dataclass
class Place:
    """One source to write: its table's lines and what `index init` says about it."""

    name: str
    type: str
    lines: list[str]
    summary: str
    comments: list[str] = field(default_factory=list)
    needs: str | None = None  # an environment variable the source needs


def place_of(spec: str, config_dir: Path) -> Place:
    """The source that reads `spec` (a folder, a page or sitemap URL, a Notion URL or id); a
    ConfigError saying what is accepted when it is none of them."""
    spec = spec.strip()
    if spec.startswith(("http://", "https://")):
        return _web_or_notion(spec)
    if NOTION_ID.fullmatch(spec):
        return _notion(spec, "notion")
    folder = Path(spec).expanduser()
    if folder.is_dir():
        return _folder(folder, config_dir)
    if folder.is_file() and folder.suffix.lower() in ANSWER_FILES:
        relative = os.path.relpath(folder.resolve(), config_dir.resolve()).replace(os.sep, "/")
        return Place(_slug(folder.stem) or "answers", "answers", [f"path = {_quote(relative)}"], f"curated answers from {relative}")
    if folder.is_file():
        raise ConfigError(f"{spec!r} is one file: name its folder to index the documents in it "
                          f"(a {', '.join(ANSWER_FILES)} file of question/answer pairs is read as curated answers)")
    raise ConfigError(f"{spec!r} is not a folder, a file of curated answers, a web page or sitemap URL (http:// or https://), or a Notion page URL or id")


def _folder(folder: Path, config_dir: Path) -> Place:
    from indexer.sitegen import content_folder, published_template, unpublished_hint

    name = _slug(folder.resolve().name) or "docs"
    pages = content_folder(folder)
    if pages:  # a site's repository: its pages, not its theme, scripts and README
        folder = pages[0]
    relative = os.path.relpath(folder.resolve(), config_dir.resolve())
    files = f"the files in {relative}" + (f" (the pages {pages[1]} builds)" if pages else "")
    lines = [f"path = {_quote(relative.replace(os.sep, '/'))}"]
    published = published_template(folder)
    if published:  # the site generator's own config says where each file is published
        template, rules, source = published
        lines += _url_lines(template, rules, f"from {source}: hits link to the published pages")
        return Place(name, "files", lines, f"{files}, published at {template}")
    hint = unpublished_hint(folder)
    if hint:  # the generator is known, its site's URL is not: the lines to complete, as comments
        template, rules, generator = hint
        comments = _url_lines(template, rules, f"{generator}: where the site is, so hits link to it", "# ")
        return Place(name, "files", lines, f"{files} ({generator.split(' (')[0]}: set url_template so hits link)", comments)
    return Place(name, "files", lines, files,
                 [_line('# url_template = "https://docs.example.com/{slug}/"', "where your site publishes each file, so hits link to it")])


def _url_lines(template: str, rules: str, why: str, comment: str = "") -> list[str]:
    """A files source's `url_template` line and, for a generator's own rules, its `url_rules` line."""
    from indexer.fileurls import URL_RULES

    lines = [_line(f"{comment}url_template = {_quote(template)}", why)]
    if rules != "plain":
        lines.append(_line(f"{comment}url_rules = {_quote(rules)}", URL_RULES[rules]))
    return lines


def _web_or_notion(url: str) -> Place:
    if (problem := url_problem(url)) is not None:  # "http://[::1", a port out of range, "https://"
        raise ConfigError(f"{url!r} is not a valid URL ({problem})")
    parts = urlsplit(url)
    host = parts.hostname.lower()
    if any(host == h or host.endswith("." + h) for h in NOTION_HOSTS):
        words = parts.path.rsplit("/", 1)[-1].rsplit("-", 1)[0]  # "Handbook-<id>": the page's title
        return _notion(url, "notion" if NOTION_ID.fullmatch(words) or not _slug(words) else _slug(words))
    last = parts.path.rsplit("/", 1)[-1].lower()
    local = _private_networks(host)
    site = "site" if _ip(host) else _slug(host.removeprefix("www.").split(".")[0]) or "site"
    where = "this machine" if _loopback(host) else "a private address"
    allow = [_line(f"allow_private_networks = [{', '.join(map(_quote, local))}]", f"{host} is {where}: a crawl may reach it")] if local else []
    said = f" ({where}: allowed in allow_private_networks)" if local else ""
    if last.endswith((".xml", ".xml.gz")) or "sitemap" in last:
        return Place(site, "urls", [f"sitemaps = [{_quote(url)}]", *allow], f"the pages listed in {url}{said}",
                     [_line('# include = ["/help/"]', "only the pages below /help/"),
                      _line("# trust_lastmod = true", "ask only for pages whose <lastmod> moved (a site that keeps it up to date)")])
    folder = parts.path if parts.path.endswith("/") else parts.path.rsplit("/", 1)[0] + "/"
    lines = [f"urls = [{_quote(url)}]", _line("crawl = true", "follow its links to pages on the same site"), *allow]
    if folder != "/":
        lines.append(_line(f"include = [{_quote(folder)}]", f"only the pages below {folder}"))
    name = _slug(folder.strip("/").rsplit("/", 1)[-1]) or site
    below = f" below {folder}" if folder != "/" else ""
    return Place(name, "urls", lines, f"a crawl of {parts.scheme}://{parts.netloc}{below}{said}",
                 [_line("# max_pages = 250", "raise it for a larger site"), _line('# exclude = ["*/print"]', "pages never fetched")])


def _private_networks(host: str) -> list[str]:
    """The networks a crawl of `host` must be allowed to reach, when the URL itself says it is not
    on the internet — a site served on this machine while it is built (`localhost:3000`), an
    intranet address — which the address guard refuses unless listed. Only what the URL names:
    no name is looked up (a wiki.corp name is refused at the run, with the key to set)."""
    from indexer.sources.netguard import refused_reason

    ip = _ip(host)
    if ip is None:  # a name: only localhost's are known without a lookup
        return ["127.0.0.0/8", "::1/128"] if _loopback(host) else []
    if ip.is_loopback:
        return ["127.0.0.0/8"] if ip.version == 4 else ["::1/128"]
    return [f"{ip}/{ip.max_prefixlen}"] if refused_reason(str(ip)) else []


def _ip(host: str):
    import ipaddress

    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None


def _loopback(host: str) -> bool:
    return host == "localhost" or host.endswith(".localhost") or bool((ip := _ip(host)) and ip.is_loopback)


def _notion(spec: str, name: str) -> Place:
    from indexer.sources.notion import notion_id

    if notion_id(spec) is None:
        raise ConfigError(f"{spec!r}: a Notion URL names its page with a 32-digit id at the end; copy the page's link (… menu → Copy link)")
    return Place(name, "notion", [f"roots = [{_quote(spec)}]"], "a Notion page and the pages below it",
                 [_line("# max_pages = 250", "raise it for a larger workspace")], needs="NOTION_TOKEN")


def config_text(places: list[Place], providers: list[str]) -> str:
    """The index.toml text: the sources, then one space per provider."""
    names: set[str] = set()
    out = ["# static-rag: what to index and how (every key: the Configuration section of static-rag's README).", "",
           _line('artifacts = "artifacts"', "where generations are written; build output, not for version control"), ""]
    for place in places:
        name, n = place.name, 2
        while name in names:
            name, n = f"{place.name}-{n}", n + 1
        names.add(name)
        out += ["[[sources]]", _line(f"name = {_quote(name)}", "the `source` search filter"), f'type = "{place.type}"',
                *place.lines, *place.comments, ""]
    for provider in providers:
        keys = key_variables(provider)
        out += ["[[spaces]]", _line(f'provider = "{provider}"', f"{keys[0]} from the environment" if keys else "the bundled model: offline, no key"), ""]
    return "\n".join(out)


# The nightly job (README "Deploy"): the package ships this repository's own .github files.
NIGHTLY_FILES = (("static_rag_deploy.workflows", "nightly-ingest.yml", ".github/workflows/nightly-ingest.yml"),
                 ("static_rag_deploy.scripts", "nightly-ingest.sh", ".github/scripts/nightly-ingest.sh"))


def nightly_job() -> list[tuple[str, bytes]]:
    """The nightly job's workflow and script as this version ships them: (path in a repository, bytes)."""
    files = []
    for package, name, target in NIGHTLY_FILES:
        spec = importlib.util.find_spec(package)
        # a wheel installs the folder; an editable install maps the name to .github (and adds a path hook)
        folder = next(Path(p) for p in (spec.submodule_search_locations or ()) if Path(p).is_dir())
        files.append((target, (folder / name).read_bytes()))
    return files


def key_variables(provider: str) -> tuple[str, ...]:
    """The environment variables a provider's key may be in, the usual one first; () for the local model."""
    if provider == "openai":
        from indexer.embedders.openai import KEY_VARIABLES
    elif provider == "gemini":
        from indexer.embedders.gemini import KEY_VARIABLES
    else:
        return ()
    return KEY_VARIABLES


def _line(code: str, comment: str) -> str:
    return f"{code:<32} # {comment}"


def _quote(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)  # a TOML basic string is a JSON string


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
