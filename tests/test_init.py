"""`index init`: a first config from where the documents are, that `index run` then reads as it is."""

import json
import subprocess

from click.testing import CliRunner

from indexer.cli import cli
from indexer.config import load_config

NOTION_PAGE = "https://www.notion.so/acme/Handbook-c01166c613ae45cbb96818b4ef2f5a77"


def init(tmp_path, monkeypatch, *args: str):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["init", *args])
    assert "Traceback" not in result.output
    return result


def test_each_place_becomes_the_source_that_reads_it(tmp_path, monkeypatch):
    """A new admin knows where the documents are, not the config's keys."""
    monkeypatch.delenv("NOTION_TOKEN", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    (tmp_path / "handbook").mkdir()
    (tmp_path / "faq.csv").write_text("question,answer\nHow long do refunds take?,Five days.\n")
    result = init(tmp_path, monkeypatch, "handbook", "https://example.com/help/articles/", "https://example.com/sitemap.xml", NOTION_PAGE,
                  "faq.csv", "-p", "local", "-p", "openai")
    assert result.exit_code == 0, result.output
    config = load_config(tmp_path / "index.toml")
    files, crawl, listed, notion, answers = config.sources
    assert (answers.type, answers.path, answers.name) == ("answers", tmp_path / "faq.csv", "faq")
    assert (files.type, files.path) == ("files", tmp_path / "handbook")
    assert (crawl.type, crawl.crawl, crawl.include, crawl.name) == ("urls", True, ("/help/articles/",), "articles"), "a crawl kept below the page's folder"
    assert (listed.type, listed.sitemaps, listed.crawl) == ("urls", ("https://example.com/sitemap.xml",), False)
    assert (notion.type, notion.name) == ("notion", "handbook-2"), "names stay unique"
    assert [s.provider for s in config.spaces] == ["local", "openai"]
    assert "export NOTION_TOKEN=…" in result.output and "export OPENAI_API_KEY=…" in result.output, "what is missing to run it"
    monkeypatch.setenv("GOOGLE_API_KEY", "set")  # Gemini's key may be in either of its variables
    gemini = init(tmp_path, monkeypatch, "handbook", "-p", "gemini", "-c", "gemini.toml")
    assert gemini.exit_code == 0 and "GEMINI_API_KEY" not in gemini.output.split("Next:")[1], gemini.output
    assert "index run --dry-run" in result.output


def test_init_keeps_an_existing_config_and_names_what_it_cannot_read(tmp_path, monkeypatch):
    (tmp_path / "index.toml").write_text("# mine\n")
    kept = init(tmp_path, monkeypatch, "https://example.com/")
    assert kept.exit_code == 2 and "index.toml exists" in kept.output and "--force" in kept.output
    assert (tmp_path / "index.toml").read_text() == "# mine\n"
    (tmp_path / "guide.md").write_text("# Guide\n")
    for place, says in (("nowhere", "is not a folder, a file of curated answers, a web page"), ("https://www.notion.so/acme/Handbook", "32-digit id"),
                        ("guide.md", "is one file: name its folder"), ("http://[::1", "'http://[::1' is not a valid URL (Invalid IPv6 URL)"),
                        ("https://", "'https://' is not a valid URL (no host name)")):
        result = init(tmp_path, monkeypatch, place, "--force")
        assert result.exit_code == 2 and says in result.output, result.output
    assert (tmp_path / "index.toml").read_text() == "# mine\n", "nothing written when a place cannot be read"


def test_a_folder_is_searchable_three_commands_after_init(tmp_path, monkeypatch, local_embedder):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "returns.md").write_text("# Returns\n\nUnworn shoes can be returned within 60 days for a full refund.\n")
    (docs / "shipping.md").write_text("# Shipping\n\nParcels inside the country arrive in two working days.\n")
    started = init(tmp_path, monkeypatch, "docs")
    assert started.exit_code == 0 and "check-links" not in started.output, "no URLs written: nothing to check"
    run = CliRunner().invoke(cli, ["run", "--json"])
    assert run.exit_code == 0 and json.loads(run.output)["total_documents"] == 2, run.output
    search = CliRunner().invoke(cli, ["search", "can I send shoes back?", "--json"])
    assert search.exit_code == 0 and json.loads(search.output)["hits"][0]["title"] == "Returns", search.output


def test_init_writes_the_nightly_job_of_this_version(tmp_path, monkeypatch):
    """README "Deploy" had the admin copy the workflow and its script from static-rag by hand,
    from whatever version the repository's page showed, not the one the job installs."""
    import os

    from tests.conftest import REPO

    (tmp_path / "docs").mkdir()
    result = init(tmp_path, monkeypatch, "docs", "-p", "gemini", "--github")
    assert result.exit_code == 0, result.output
    for name in (".github/workflows/nightly-ingest.yml", ".github/scripts/nightly-ingest.sh"):
        assert (tmp_path / name).read_bytes() == (REPO / name).read_bytes(), name
    assert os.access(tmp_path / ".github/scripts/nightly-ingest.sh", os.X_OK), "the workflow runs the script as a program"
    assert "variable STATIC_RAG_PACKAGE = static-rag @ git+https://github.com/YOUR-ORG/static-rag@v" in result.output
    assert "secrets  GEMINI_API_KEY" in result.output and "add -p gemini" not in result.output
    (tmp_path / ".github/scripts/nightly-ingest.sh").write_text("#!/bin/sh\necho mine\n")
    (tmp_path / "index.toml").unlink()
    kept = init(tmp_path, monkeypatch, "docs", "--github")
    assert kept.exit_code == 2 and "nightly-ingest.sh exists" in kept.output, kept.output
    assert not (tmp_path / "index.toml").exists() and (tmp_path / ".github/scripts/nightly-ingest.sh").read_text().endswith("mine\n")
    local_only = init(tmp_path, monkeypatch, "docs", "--github", "--force")
    assert local_only.exit_code == 0 and "add -p gemini" in local_only.output, "the job rebuilds the gemini space by default"


def test_a_docs_sites_own_config_gives_its_files_their_urls(tmp_path, monkeypatch):
    """A MkDocs, Hugo or Docusaurus repository says in its own config where each file is published;
    init wrote no url_template, so every hit of the first run had no link."""
    (tmp_path / "mk" / "docs").mkdir(parents=True)
    (tmp_path / "mk" / "mkdocs.yml").write_text("site_name: Acme\nsite_url: https://docs.acme.dev/\nmarkdown_extensions:\n  - pymdownx.emoji:\n"
                                                "      emoji_index: !!python/name:material.extensions.emoji.twemoji\n")
    (tmp_path / "hugo" / "content").mkdir(parents=True)
    (tmp_path / "hugo" / "hugo.toml").write_text('baseURL = "https://example.org/"\nuglyURLs = true\n')
    (tmp_path / "docu" / "docs").mkdir(parents=True)
    (tmp_path / "docu" / "docusaurus.config.js").write_text("module.exports = {\n  url: 'https://acme.dev',\n  baseUrl: '/help/',\n};\n")
    (tmp_path / "plain").mkdir()
    (tmp_path / "blog" / "content").mkdir(parents=True)  # its posts are published by date, not by path
    (tmp_path / "blog" / "hugo.toml").write_text('baseURL = "https://blog.example.org/"\n[permalinks]\nposts = "/:year/:month/:slug/"\n')
    (tmp_path / "pages" / "handbook").mkdir(parents=True)  # GitHub Pages: Jekyll, the site's URL left to GitHub
    (tmp_path / "pages" / "handbook" / "_config.yml").write_text("title: Handbook\npermalink: pretty\n")
    subprocess.run(["git", "init", "-q", str(tmp_path / "pages")], check=True)
    subprocess.run(["git", "-C", str(tmp_path / "pages"), "remote", "add", "origin", "git@github.com:AcmeCorp/handbook.git"], check=True)
    (tmp_path / "domain").mkdir()
    (tmp_path / "domain" / "_config.yml").write_text("baseurl: /help\n")
    (tmp_path / "domain" / "CNAME").write_text("docs.acme.dev\n")
    (tmp_path / "antora" / "docs").mkdir(parents=True)
    (tmp_path / "antora" / "docs" / "antora.yml").write_text("name: agent\nversion: ~\n")
    (tmp_path / "antora" / "antora-playbook.yml").write_text("site:\n  url: https://docs.acme.dev\nurls:\n  html_extension_style: indexify\n")
    (tmp_path / "sphinx").mkdir()
    (tmp_path / "sphinx" / "conf.py").write_text("project = 'Acme'\nhtml_baseurl = 'https://acme.readthedocs.io/en/latest/'\n")
    result = init(tmp_path, monkeypatch, "mk/docs", "hugo/content", "docu/docs", "plain", "blog/content", "pages/handbook", "domain", "sphinx", "antora/docs")
    assert result.exit_code == 0, result.output
    sources = load_config(tmp_path / "index.toml").sources
    assert [s.url_template for s in sources] == ["https://docs.acme.dev/{slug}/", "https://example.org/{slug}.html", "https://acme.dev/help/docs/{slug}",
                                                 "", "", "https://acmecorp.github.io/handbook/{slug}/", "https://docs.acme.dev/help/{slug}.html",
                                                 "https://acme.readthedocs.io/en/latest/{slug}.html", "https://docs.acme.dev/agent/{slug}/"]
    assert [s.url_rules for s in sources] == ["mkdocs", "hugo", "docusaurus", "plain", "plain", "jekyll", "jekyll", "sphinx", "antora"], \
        "each generator's own way"
    assert "published at https://docs.acme.dev/{slug}/" in result.output
    assert "index check-links" in result.output, "links were written: the next steps say how to check them"
    roots = init(tmp_path, monkeypatch, "mk", "hugo", "docu", "antora", "--force")  # `index init .` in a site's repository
    assert roots.exit_code == 0, roots.output
    sources = load_config(tmp_path / "index.toml").sources
    assert [(s.name, s.path.relative_to(tmp_path).as_posix(), s.url_template) for s in sources] == [
        ("mk", "mk/docs", "https://docs.acme.dev/{slug}/"), ("hugo", "hugo/content", "https://example.org/{slug}.html"),
        ("docu", "docu/docs", "https://acme.dev/help/docs/{slug}"), ("antora", "antora/docs", "https://docs.acme.dev/agent/{slug}/")], \
        "the pages the site builds, not the repository around them"
    assert "the files in mk/docs (the pages mkdocs.yml builds), published at https://docs.acme.dev/{slug}/" in roots.output
    (tmp_path / "rtd").mkdir()  # Sphinx on Read the Docs: conf.py names no URL
    (tmp_path / "rtd" / "conf.py").write_text("project = 'Acme'\nhtml_theme = 'furo'\n")
    unnamed = init(tmp_path, monkeypatch, "rtd", "--force")
    assert unnamed.exit_code == 0 and "the files in rtd (Sphinx: set url_template so hits link)" in unnamed.output, unnamed.output
    assert '# url_template = "https://YOUR-PROJECT.readthedocs.io/en/latest/{slug}.html"' in (tmp_path / "index.toml").read_text()
    (tmp_path / "nourl" / "docs").mkdir(parents=True)  # MkDocs' site_url is optional
    (tmp_path / "nourl" / "mkdocs.yml").write_text("site_name: Acme\nuse_directory_urls: false\n")
    unnamed = init(tmp_path, monkeypatch, "nourl", "--force")
    assert unnamed.exit_code == 0 and "the files in nourl/docs (the pages mkdocs.yml builds) (MkDocs: set url_template so hits link)" in unnamed.output, \
        unnamed.output
    written = (tmp_path / "index.toml").read_text()
    assert '# url_template = "https://YOUR-SITE/{slug}.html"' in written and '# url_rules = "mkdocs"' in written, written


def test_a_site_served_on_this_machine_is_crawled_three_commands_after_init(tmp_path, monkeypatch, local_embedder, site):
    """A website owner tries it first on the site they are building (`localhost:3000`): init wrote a
    crawl the address guard then refused — "the generation would be empty … a loopback address"."""
    page = "<html><head><title>{0}</title></head><body><main><h1>{0}</h1><p>{1}</p>{2}</main></body></html>"
    site.routes["/"] = (200, "text/html", page.format("Acme", "Running shoes made in Porto.", "<a href='/returns'>Returns</a>").encode())
    site.routes["/returns"] = (200, "text/html", page.format("Returns", "Return unworn shoes within 60 days for a refund.", "").encode())
    started = init(tmp_path, monkeypatch, f"http://localhost:{site.base.rsplit(':', 1)[1]}/")
    assert started.exit_code == 0 and "(this machine: allowed in allow_private_networks)" in started.output, started.output
    assert [str(n) for n in load_config(tmp_path / "index.toml").sources[0].allow_private_networks] == ["127.0.0.0/8", "::1/128"]
    run = CliRunner().invoke(cli, ["run", "--json"])
    assert run.exit_code == 0 and json.loads(run.output)["total_documents"] == 2, run.output
    search = CliRunner().invoke(cli, ["search", "can I send shoes back?", "--json"])
    assert search.exit_code == 0 and json.loads(search.output)["hits"][0]["title"] == "Returns", search.output
    public = init(tmp_path, monkeypatch, "https://example.com/help/", "-c", "public.toml")
    assert public.exit_code == 0 and "allow_private_networks" not in (tmp_path / "public.toml").read_text(), "a public site's crawl stays guarded"
