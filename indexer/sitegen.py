"""Where a docs site generator publishes a folder's files, read from the generator's own config, so
that `index init` can write a files source's `url_template` (its hits then link to the pages).

- MkDocs: `mkdocs.yml` beside the folder (`docs_dir`, default docs): `site_url`, then `{slug}/`
  (or `{slug}.html` with `use_directory_urls: false`), by MkDocs' url_rules (other files than
  Markdown at their own path, headings' ids Python-Markdown's).
- Hugo: `hugo.toml` / `config.toml` (or .yaml), or the config directory `config/_default/`, beside
  the content folder (`contentDir`, default content, or a language's own `contentDir`): `baseURL`,
  then `{slug}/` (or `{slug}.html` with `uglyURLs`), by Hugo's url_rules; a multilingual site's
  `languages`, default language and `defaultContentLanguageInSubdir` place each page (`hugo_languages`,
  read on every run). A config with `permalinks` (sections published by a pattern of dates and
  titles) or `disablePathToLower` publishes pages elsewhere: it names nothing.
- Docusaurus: `docusaurus.config.js` / `.ts` / `.mjs` beside the docs folder: `url` and `baseUrl`,
  then `docs/{slug}` (or the docs plugin's `routeBasePath`), by Docusaurus's url_rules. The config
  is JavaScript: only literal strings are read, and nothing is guessed when they are not found.
- Jekyll: `_config.yml` in the folder: `url` and `baseurl`, then `{slug}.html` (or `{slug}/` with
  `permalink: pretty`), by Jekyll's url_rules. A GitHub Pages site often leaves `url` out, as
  GitHub fills it in: then the folder's `CNAME` names the site, or else the repository's GitHub
  remote does (https://OWNER.github.io/REPO). Another `permalink` style names nothing.
- Antora: `antora.yml` in the folder (`name`, `version`) and the playbook beside it or one folder
  up (`antora-playbook.yml`: `site.url`, `urls.html_extension_style`): `{url}/{name}/{version}/{slug}.html`,
  by Antora's url_rules.
- Sphinx: `conf.py` in the folder: a literal `html_baseurl`, then `{slug}.html` (Read the Docs sets
  it when it builds, so a conf.py without one names nothing).

A config that cannot be read names nothing: the source is written without a template, as before.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import yaml

from indexer.fileurls import HugoLanguages
from indexer.sources.files import git_output


def published_template(folder: Path) -> tuple[str, str, str] | None:
    """(url_template, url_rules, the config file they come from) for the files in `folder`, or None."""
    folder = folder.resolve()
    for reader in (_mkdocs, _hugo, _docusaurus, _jekyll, _antora, _sphinx):
        found = reader(folder)
        if found:
            return found
    return None


class _Lenient(yaml.SafeLoader):
    """mkdocs.yml names Python objects (`!!python/name:material.extensions.emoji.twemoji`): read as nothing."""


_Lenient.add_multi_constructor("", lambda loader, suffix, node: None)
_Lenient.add_multi_constructor("tag:yaml.org,2002:python/", lambda loader, suffix, node: None)


MKDOCS_CONFIGS = ("mkdocs.yml", "mkdocs.yaml")
HUGO_CONFIGS = ("hugo.toml", "hugo.yaml", "hugo.yml", "config.toml", "config.yaml", "config.yml")
DOCUSAURUS_CONFIGS = ("docusaurus.config.js", "docusaurus.config.ts", "docusaurus.config.mjs")


def _mkdocs_settings(config: Path):
    return _load(config, lambda text: yaml.load(text, Loader=_Lenient))


def _hugo_settings(site: Path):
    """(config name, its top-level keys in lower case) of each Hugo config in `site` that reads as
    a table: a config file, or the config directory's `config/_default/` — its hugo.toml (or
    config.toml) and a file per top-level key (languages.toml holds `languages`)."""
    for name in HUGO_CONFIGS:
        settings = _load(site / name, _hugo_parser(name))
        if isinstance(settings, dict):
            yield name, _lower_keys(settings)
    default = site / "config" / "_default"
    if default.is_dir():
        merged: dict = {}
        for path in sorted(default.iterdir(), key=lambda p: p.stem.lower() not in ("hugo", "config")):  # the root config first
            settings = _load(path, _hugo_parser(path.name)) if path.suffix.lower() in (".toml", ".yaml", ".yml") else None
            if isinstance(settings, dict):
                merged.update(_lower_keys(settings) if path.stem.lower() in ("hugo", "config") else {path.stem.lower(): settings})
        if merged:
            yield "config/_default", merged


def _hugo_parser(name: str):
    return tomllib.loads if name.lower().endswith(".toml") else yaml.safe_load


def _lower_keys(table: dict) -> dict:
    return {str(k).lower(): v for k, v in table.items()}


def _mkdocs(folder: Path) -> tuple[str, str, str] | None:
    found = _mkdocs_config(folder)
    if not found or not isinstance(found[1].get("site_url"), str):
        return None
    config, settings = found
    return _join(settings["site_url"], _mkdocs_page(settings)), "mkdocs", config.name


def _mkdocs_config(folder: Path) -> tuple[Path, dict] | None:
    """The MkDocs config whose pages (`docs_dir`) are `folder`, and its settings."""
    for config in (*(folder.parent / name for name in MKDOCS_CONFIGS), folder / "mkdocs.yml"):
        settings = _mkdocs_settings(config)
        if isinstance(settings, dict) and (config.parent / str(settings.get("docs_dir") or "docs")).resolve() == folder:
            return config, settings
    return None


def _mkdocs_page(settings: dict) -> str:
    return "{slug}/" if settings.get("use_directory_urls", True) is not False else "{slug}.html"


def _hugo(folder: Path) -> tuple[str, str, str] | None:
    for site, name, keys in _hugo_sites(folder):
        base = keys.get("baseurl")
        if not isinstance(base, str) or not base.startswith(("http://", "https://")):
            continue
        if keys.get("permalinks") or keys.get("disablepathtolower") is True:
            return None
        return _join(base, "{slug}.html" if keys.get("uglyurls") is True else "{slug}/"), "hugo", name
    return None


def _hugo_sites(folder: Path):
    """(site, config name, keys) of each Hugo config whose content is `folder`: its contentDir, or
    one of its languages' (a folder above `folder`'s parent is not looked in)."""
    for site in (folder.parent, folder.parent.parent):
        for name, keys in _hugo_settings(site):
            if folder == _content_dir(site, keys) or folder in _language_dirs(site, keys).values():
                yield site, name, keys


def _content_dir(site: Path, keys: dict) -> Path:
    return (site / str(keys.get("contentdir") or "content")).resolve()


def _languages(keys: dict) -> dict:
    """A Hugo config's `languages` table (code → settings), or {}."""
    return keys["languages"] if isinstance(keys.get("languages"), dict) else {}


def _language_dirs(site: Path, keys: dict) -> dict[str, Path]:
    """Each language (code in lower case) that has its own contentDir: that folder."""
    return {str(code).lower(): (site / str(own["contentdir"])).resolve() for code, settings in _languages(keys).items()
            if isinstance(settings, dict) and (own := _lower_keys(settings)).get("contentdir")}


def hugo_languages(folder: Path) -> HugoLanguages | None:
    """The languages of the multilingual Hugo site whose content (or one language's content) is
    `folder`, as they place its pages (fileurls.HugoLanguages); None for a site of one language
    published at the root, or no Hugo site."""
    folder = folder.resolve()
    for site, _, keys in _hugo_sites(folder):
        default = str(keys.get("defaultcontentlanguage") or "en").lower()
        codes = frozenset(str(code).lower() for code in _languages(keys)) | {default}
        in_subdir = keys.get("defaultcontentlanguageinsubdir") is True
        if len(codes) == 1 and not in_subdir:
            return None
        dirs = _language_dirs(site, keys)
        own = next((code for code, path in dirs.items() if path == folder), None)
        inside = tuple((path.relative_to(folder).as_posix(), code) for code, path in dirs.items() if path != folder and path.is_relative_to(folder))
        return HugoLanguages(codes, default, in_subdir, own, inside)
    return None


_JS_STRING = r"""\s*:\s*['"`]([^'"`]*)['"`]"""


def _docusaurus(folder: Path) -> tuple[str, str, str] | None:
    if folder.name != "docs":  # the docs plugin's default folder; a blog's pages are dated, not its files' paths
        return None
    for name in DOCUSAURUS_CONFIGS:
        text = _load(folder.parent / name, lambda t: t)
        if not text:
            continue
        url = re.search(r"\burl" + _JS_STRING, text)
        base = re.search(r"\bbaseUrl" + _JS_STRING, text)
        route = re.findall(r"\brouteBasePath" + _JS_STRING, text)
        if not url or not url.group(1).startswith(("http://", "https://")) or len(route) > 1:  # several plugins: which is the docs'?
            continue
        prefix = _join(url.group(1), (base.group(1) if base else "/").strip("/"))
        docs = (route[0] if route else "docs").strip("/")
        return _join(prefix, f"{docs}/{{slug}}" if docs else "{slug}"), "docusaurus", name
    return None


_GITHUB_REMOTE = re.compile(r"(?:git@github\.com:|https://github\.com/)([\w.-]+)/([\w.-]+?)(?:\.git)?/?")


def _jekyll(folder: Path) -> tuple[str, str, str] | None:
    settings = _load(folder / "_config.yml", yaml.safe_load)
    if not isinstance(settings, dict) or settings.get("permalink") not in (None, "date", "pretty"):
        return None
    base = str(settings.get("baseurl") or "").strip()
    url, said = settings.get("url"), "_config.yml"
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        url = None
        cname = _load(folder / "CNAME", lambda text: text.strip().lower())
        if cname and re.fullmatch(r"[a-z0-9.-]+\.[a-z]{2,}", cname):
            url, said = f"https://{cname}", "_config.yml and CNAME"
        elif found := _GITHUB_REMOTE.fullmatch((git_output(folder, "remote", "get-url", "origin") or "").strip()):
            owner, repository = found.group(1).lower(), found.group(2)
            url, said = f"https://{owner}.github.io", "_config.yml and the GitHub remote"
            if repository.lower() != f"{owner}.github.io" and not base:
                base = f"/{repository}"  # a project site: GitHub Pages sets baseurl to it
    if not url:
        return None
    page = "{slug}/" if settings.get("permalink") == "pretty" else "{slug}.html"
    return _join(_join(url, base.strip("/")) if base.strip("/") else url, page), "jekyll", said


def _antora_component(folder: Path) -> str | None:
    """`name/version` (or `name` when unversioned) of the Antora component in `folder`, or None."""
    component = _load(folder / "antora.yml", yaml.safe_load)
    if not isinstance(component, dict) or not isinstance(component.get("name"), str):
        return None
    version = component.get("version")
    if version is not None and not isinstance(version, (str, int, float)) or version is True:
        return None  # `version: true` takes the branch's name, which the files do not say
    return "/".join(str(part).strip("/") for part in (component["name"], version) if part not in (None, "~", ""))


def _antora(folder: Path) -> tuple[str, str, str] | None:
    component = _antora_component(folder)
    if component is None:
        return None
    for playbook in (folder / "antora-playbook.yml", folder.parent / "antora-playbook.yml"):
        settings = _load(playbook, yaml.safe_load)
        site = settings.get("site") if isinstance(settings, dict) else None
        url = site.get("url") if isinstance(site, dict) else None
        if isinstance(url, str) and url.startswith(("http://", "https://")):
            urls = settings.get("urls")
            style = urls.get("html_extension_style") if isinstance(urls, dict) else None
            page = {"indexify": "{slug}/", "drop": "{slug}"}.get(style, "{slug}.html")
            return _join(_join(url, component), page), "antora", f"{playbook.name} and antora.yml"
    return None


def _sphinx(folder: Path) -> tuple[str, str, str] | None:
    found = re.search(r"""^html_baseurl\s*=\s*['"](https?://[^'"]+)['"]""", _load(folder / "conf.py", lambda t: t) or "", re.MULTILINE)
    return (_join(found.group(1), "{slug}.html"), "sphinx", "conf.py") if found else None


def content_folder(folder: Path) -> tuple[Path, str] | None:
    """When `folder` is a site's project root, not the folder of its pages: (that folder, the
    config that names it), for `index init .` in a repository to index the pages, not the repository."""
    folder = folder.resolve()
    for name in MKDOCS_CONFIGS:
        settings = _mkdocs_settings(folder / name)
        if isinstance(settings, dict):
            return _inside(folder, str(settings.get("docs_dir") or "docs"), name)
    for name, keys in _hugo_settings(folder):
        if "baseurl" in keys:
            return _inside(folder, str(keys.get("contentdir") or "content"), name)
    for name in DOCUSAURUS_CONFIGS:
        if (folder / name).is_file():
            return _inside(folder, "docs", name)
    for pages in ("docs", "docs/source", "doc", "doc/source"):
        if (folder / pages / "conf.py").is_file() or (folder / pages / "antora.yml").is_file():
            return _inside(folder, pages, f"{pages}/{'conf.py' if (folder / pages / 'conf.py').is_file() else 'antora.yml'}")
    return None


def _inside(folder: Path, relative: str, config: str) -> tuple[Path, str] | None:
    pages = (folder / relative).resolve()
    return (pages, config) if pages != folder and pages.is_dir() and pages.is_relative_to(folder) else None


def unpublished_hint(folder: Path) -> tuple[str, str, str] | None:
    """For a folder a generator builds but whose config names no site URL: (a url_template to
    complete, its url_rules, what the generator is), for `index init` to write as a comment."""
    folder = folder.resolve()
    if mkdocs := _mkdocs_config(folder):  # site_url is optional in MkDocs
        return f"https://YOUR-SITE/{_mkdocs_page(mkdocs[1])}", "mkdocs", f"MkDocs ({mkdocs[0].name} has no site_url)"
    if (folder / "conf.py").is_file():  # Sphinx; on Read the Docs the URL is the project's
        return "https://YOUR-PROJECT.readthedocs.io/en/latest/{slug}.html", "sphinx", "Sphinx (conf.py has no html_baseurl)"
    if (folder / "_config.yml").is_file():
        return "https://YOUR-SITE/{slug}.html", "jekyll", "Jekyll (_config.yml has no url)"
    if component := _antora_component(folder):
        return f"https://YOUR-SITE/{component}/{{slug}}.html", "antora", "Antora (no antora-playbook.yml with site.url beside it)"
    return None


def site_rules(folder: Path) -> tuple[str, str] | None:
    """(url_rules, what says so) for a folder a generator builds — its config file, or the
    generator — or None; for `index check-links` to name the rules a source's links need."""
    if published := published_template(folder):
        return published[1], published[2]
    if hint := unpublished_hint(folder):
        return hint[1], hint[2].split(" (")[0]
    return None


def _load(path: Path, parse):
    try:
        return parse(path.read_text(encoding="utf-8-sig")) if path.is_file() else None
    except (OSError, UnicodeDecodeError, ValueError, yaml.YAMLError, tomllib.TOMLDecodeError):
        return None


def _join(base: str, tail: str) -> str:
    return base.rstrip("/") + "/" + tail.lstrip("/") if tail else base.rstrip("/") + "/"
