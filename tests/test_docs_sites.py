"""A docs folder's hits link where its site generator publishes each page and heading: MkDocs,
Jekyll, Hugo, Sphinx (and MyST), Docusaurus, AsciiDoc and Antora (`url_rules`, `url_template`),
and `index check-links` finds the hits that would cite a missing page. Links inside web pages,
plain Markdown and Notion are in tests/test_deep_links.py."""

import json
import re
from pathlib import Path

import pytest

from indexer.config import load_config
from indexer.pipeline import run_index
from tests.conftest import api_client, first_hit, write_config


def test_a_mkdocs_site_s_hits_link_to_its_headings_and_files(tmp_path, local_embedder):
    """MkDocs gives headings Python-Markdown's ids, not GitHub's, and copies a file that is not
    Markdown as it is. The ids below are those mkdocs 1.6.1 (Python-Markdown's toc) wrote for
    these headings, built once by hand; GitHub's slugs for them differ."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "guide.md").write_text(
        '# Guide\n\n## "CURRENT names generation ... but it does not exist"\n\nPoint CURRENT at a kept generation with rollback.\n\n'
        "## Setup\n\nInstall the agent first.\n\n## Setup\n\nThen connect the agent to the office VPN with your badge.\n\n"
        "## Über uns & Café\n\nThe café on the ground floor serves espresso until four.\n")
    (docs / "legal.html").write_text("<html><body><h1>Legal</h1><p>Terms of service apply to every parcel we carry.</p></body></html>")
    config = load_config(write_config(tmp_path, '[[sources]]\nname = "docs"\ntype = "files"\npath = "docs"\n'
                                                'url_template = "https://docs.acme.dev/{slug}/"\nurl_rules = "mkdocs"\n[[spaces]]\nprovider = "local"\n'))
    assert not run_index(config).errors
    with api_client(config.artifacts) as client:
        guide = "https://docs.acme.dev/guide/"
        assert first_hit(client, "point CURRENT at a kept generation")["link"] == f"{guide}#current-names-generation-but-it-does-not-exist"
        assert first_hit(client, "connect the agent to the office VPN")["link"] == f"{guide}#setup_1", "GitHub's would be #setup-1"
        assert first_hit(client, "when does the café serve espresso")["link"] == f"{guide}#uber-uns-cafe"
        assert first_hit(client, "terms of service for parcels")["url"] == "https://docs.acme.dev/legal.html", "copied as it is, not legal/"


@pytest.mark.parametrize("rules, ids", [
    ("jekyll", ["use-force-a--b-x--y", "dashes--and--dots", "init-and-emphasis-here"]),  # kramdown: `--` outside code is a dash
    ("sphinx", ["use-force-a-b-x-y", "dashes-and-dots", "init-and-emphasis-here"]),  # docutils' section ids, MyST's too
    ("hugo", ["use---force-a--b-x----y", "dashes-----and--dots", "__init__-and-emphasis-_here_"]),  # goldmark: the source's underscores stay
])
def test_jekyll_hugo_and_sphinx_sites_hits_link_to_their_generators_heading_ids(tmp_path, local_embedder, rules, ids):
    """Each generator slugs a heading its own way; GitHub's slugs differ from each on these. The
    ids are those Jekyll 4.3.1 and Hugo 0.111.3 (Debian's packages) and Sphinx 9.0.4 with
    myst-parser wrote for these headings, built once by hand."""
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "cli.md").write_text("# The CLI\n\n## Use --force `a--b` x -- y\n\nOverwrite the lock file without asking first.\n\n"
                                              "## Dashes --- and ... dots\n\nPunctuation never reaches the slug of a heading.\n\n"
                                              "## __init__ and *emphasis* _here_\n\nThe constructor runs when the object is made.\n")
    config = load_config(write_config(tmp_path, '[[sources]]\nname = "site"\ntype = "files"\npath = "site"\n'
                                                f'url_template = "https://acme.dev/{{slug}}.html"\nurl_rules = "{rules}"\n[[spaces]]\nprovider = "local"\n'))
    assert not run_index(config).errors
    with api_client(config.artifacts) as client:
        for query, fragment in zip(("overwrite the lock file without asking", "punctuation in the slug of a heading",
                                    "the constructor runs when the object is made"), ids):
            assert first_hit(client, query)["link"] == f"https://acme.dev/cli.html#{fragment}", query


def test_a_myst_page_s_repeated_headings_link_to_the_ids_sphinx_numbers(tmp_path, local_embedder):
    """Sphinx numbers a section title the page already used (#id1, #id2, counted across titles);
    the second "Setup" had linked to the first. Ids as Sphinx 9.0.4 with myst-parser 5.2.0 wrote them."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "agent.md").write_text(
        "# The agent\n\n```{note}\nThe agent runs on every laptop.\n```\n\n## Setup\n\nInstall the agent from the software centre.\n\n"
        "## Setup\n\nConnect the agent to the office VPN with your badge.\n\n## Usage `agent_cli`\n\nRun the agent before lunch.\n\n"
        "## Setup\n\nRestart the printer spooler after the agent updates.\n")
    config = load_config(write_config(tmp_path, '[[sources]]\nname = "docs"\ntype = "files"\npath = "docs"\n'
                                                'url_template = "https://acme.dev/{slug}.html"\nurl_rules = "sphinx"\n[[spaces]]\nprovider = "local"\n'))
    assert not run_index(config).errors
    with api_client(config.artifacts) as client:
        for query, fragment in (("install the agent from the software centre", "setup"), ("connect the agent to the office VPN", "id1"),
                                ("run the agent before lunch", "usage-agent-cli"), ("restart the printer spooler", "id2")):
            assert first_hit(client, query)["link"] == f"https://acme.dev/agent.html#{fragment}", query


def test_a_docs_folder_with_a_url_template_links_every_hit_to_its_page(tmp_path, local_embedder):
    """A docs repository's Markdown rarely names its own URL: its hits had none, so the chatbot
    could not link them. `url_template` says where the site publishes each file."""
    docs = tmp_path / "docs"
    (docs / "guide").mkdir(parents=True)
    (docs / "guide" / "install.md").write_text("# Install\n\n## Proxy settings\n\nSet HTTPS_PROXY before the installer runs.\n")
    (docs / "guide" / "index.md").write_text("# Guide\n\nThe guide walks through the whole product, page by page.\n")
    (docs / "faq.md").write_text("---\nurl: https://help.example.com/faq\n---\n# FAQ\n\nRefunds take five business days.\n")
    (docs / "manual.txt").write_text("Manual\n\nThe printer needs A4 paper.\n")
    (docs / "team.md").write_text("---\npermalink: /about/team/\n---\n# Team\n\nTwelve people answer the support queue.\n")  # Jekyll: a path

    def hits_after_run(template: str) -> dict[str, dict]:
        config = load_config(write_config(tmp_path, f'[[sources]]\nname = "docs"\ntype = "files"\npath = "docs"\n'
                                                    f'url_template = "{template}"\n[[spaces]]\nprovider = "local"\n'))
        assert not run_index(config).errors
        with api_client(config.artifacts) as client:
            return {q: first_hit(client, q) for q in ("HTTPS_PROXY installer", "walks through the whole product", "refunds business days", "A4 paper",
                                                      "people answer the support queue")}

    from click.testing import CliRunner

    from indexer.cli import cli

    hits_after_run("")
    status = CliRunner().invoke(cli, ["status", "-c", str(tmp_path / "index.toml")]).output
    assert "docs (files): 5, 3 without a URL (their hits cannot link to a page; set url_template on the source)" in status, status
    hits = hits_after_run("https://docs.example.com/{slug}/")
    assert "without a URL" not in CliRunner().invoke(cli, ["status", "-c", str(tmp_path / "index.toml")]).output
    assert hits["HTTPS_PROXY installer"]["link"] == "https://docs.example.com/guide/install/#proxy-settings"
    assert hits["walks through the whole product"]["url"] == "https://docs.example.com/guide/"  # a folder's index.md is the folder
    assert hits["refunds business days"]["url"] == "https://help.example.com/faq", "front matter's url wins"
    assert hits["A4 paper"]["url"] == "https://docs.example.com/manual/"
    assert hits["people answer the support queue"]["url"] == "https://docs.example.com/about/team/", "a permalink path, on the site"
    hits = hits_after_run("https://example.com/docs/{path}")  # a corrected template: the next run re-reads, the files unchanged
    assert hits["HTTPS_PROXY installer"]["url"] == "https://example.com/docs/guide/install.md"


def test_a_docusaurus_or_hugo_folder_links_where_the_site_publishes_each_page(tmp_path, local_embedder):
    """Docusaurus leaves number prefixes out of its URLs and reads `slug` and `id` from front matter;
    Hugo lower-cases paths and reads `slug`. By the file's path alone ("plain"), those hits linked to
    pages that do not exist: the chatbot cited a 404. A Docusaurus partial is shown inside the pages
    that import it, and is no page of its own."""
    docs = tmp_path / "docs"
    (docs / "02-guides").mkdir(parents=True)
    (docs / "02-guides" / "03-install.md").write_text("# Install\n\n## Proxy settings\n\nSet HTTPS_PROXY before the installer runs.\n")
    (docs / "02-guides" / "02-guides.md").write_text("# Guides\n\nThe guides walk through the whole product, page by page.\n")
    (docs / "01-faq.md").write_text("---\nslug: /questions\n---\n# FAQ\n\nRefunds take five business days.\n")
    (docs / "02-guides" / "billing.md").write_text("---\nid: invoices\n---\n# Billing\n\nInvoices are sent on the first of each month.\n")
    (docs / "_shared").mkdir()
    (docs / "_shared" / "_key-warning.mdx").write_text("---\ntitle: ignored\n---\nNever share your API key with a support agent.\n")  # a partial
    (docs / "03-keys.mdx").write_text("# API keys\n\nimport KeyWarning from './_shared/_key-warning.mdx';\n\nCreate a key under Settings.\n\n<KeyWarning />\n")

    def hits_after_run(rules: str) -> dict[str, dict]:
        config = load_config(write_config(tmp_path, f'[[sources]]\nname = "docs"\ntype = "files"\npath = "docs"\nextensions = [".md", ".mdx"]\n'
                                                    f'url_template = "https://acme.dev/docs/{{slug}}"\n{rules}'
                                                    '[[spaces]]\nprovider = "local"\n'))
        assert not run_index(config).errors
        with api_client(config.artifacts) as client:
            return {q: first_hit(client, q) for q in ("HTTPS_PROXY installer", "walk through the whole product", "refunds business days",
                                                      "invoices first of each month", "share your API key")}

    hits = hits_after_run("")
    assert hits["HTTPS_PROXY installer"]["url"] == "https://acme.dev/docs/02-guides/03-install", "plain: the path as it is"
    hits = hits_after_run('url_rules = "docusaurus"\n')  # the files unchanged: the rules alone make the next run read them again
    assert hits["HTTPS_PROXY installer"]["link"] == "https://acme.dev/docs/guides/install#proxy-settings"
    assert hits["walk through the whole product"]["url"] == "https://acme.dev/docs/guides", "a file named as its folder is the folder"
    assert hits["refunds business days"]["url"] == "https://acme.dev/docs/questions"
    assert hits["invoices first of each month"]["url"] == "https://acme.dev/docs/guides/invoices"
    assert hits["share your API key"]["url"] == "https://acme.dev/docs/keys", "a partial: found on the page that shows it"
    assert "Create a key under Settings.\n\nNever share your API key" in hits["share your API key"]["text"]
    (docs / "_shared" / "_key-warning.mdx").write_text("Never share your API key with a reseller.\n")
    hits = hits_after_run('url_rules = "docusaurus"\n')
    assert "Never share your API key with a reseller." in hits["share your API key"]["text"], "a changed partial: each page showing it is read again"

    (tmp_path / "content" / "Posts" / "Launch Day").mkdir(parents=True)
    (tmp_path / "content" / "Posts" / "Launch Day" / "index.md").write_text("+++\nslug = 'we-launched'\n+++\n# Launch\n\nThe doors opened at nine.\n")
    (tmp_path / "content" / "Posts" / "Road Map.md").write_text("# Road map\n\nDark mode ships in the spring.\n")
    config = load_config(write_config(tmp_path, '[[sources]]\nname = "site"\ntype = "files"\npath = "content"\n'
                                                'url_template = "https://example.org/{slug}/"\nurl_rules = "hugo"\n[[spaces]]\nprovider = "local"\n'))
    assert not run_index(config).errors
    with api_client(config.artifacts) as client:
        assert first_hit(client, "doors opened at nine")["url"] == "https://example.org/posts/we-launched/"
        assert first_hit(client, "dark mode spring")["url"] == "https://example.org/posts/road-map/"


def test_a_multilingual_hugo_site_links_each_translation_to_its_language_s_page(tmp_path, local_embedder, monkeypatch):
    """Hugo publishes `about.fr.md`, and the pages of French's own content folder, under /fr/; the
    default language at the root (or under /en/ with defaultContentLanguageInSubdir). Read by path,
    every translated hit linked to a page that does not exist (/about.fr/). The URLs below are the
    pages Hugo 0.111.3 built from these files with this config (a config directory, as Docsy's)."""
    (tmp_path / "config" / "_default").mkdir(parents=True)
    (tmp_path / "config" / "_default" / "hugo.toml").write_text('baseURL = "https://example.org/"\ndefaultContentLanguage = "en"\n')
    (tmp_path / "config" / "_default" / "languages.toml").write_text('[en]\ncontentDir = "content/en"\n[fr]\ncontentDir = "content/fr"\n')
    for folder in ("content/en/guide", "content/fr/guide"):
        (tmp_path / folder).mkdir(parents=True)
    (tmp_path / "content" / "en" / "about.md").write_text("# About\n\nThe warehouse opens at six in the morning.\n")
    (tmp_path / "content" / "en" / "guide" / "setup.fr.md").write_text("# Installation\n\nBranchez le scanner avant de le démarrer.\n")
    (tmp_path / "content" / "fr" / "guide" / "_index.md").write_text("# Guide\n\nLe guide décrit le quai de chargement.\n")
    (tmp_path / "content" / "fr" / "about.md").write_text("# À propos\n\nL'entrepôt ferme à vingt heures.\n")
    from click.testing import CliRunner

    from indexer.cli import cli

    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["init", "."])  # in the site's repository
    assert result.exit_code == 0, result.output
    assert "the files in content (the pages config/_default builds), published at https://example.org/{slug}/" in result.output
    config = load_config(tmp_path / "index.toml")
    assert (config.sources[0].url_template, config.sources[0].url_rules) == ("https://example.org/{slug}/", "hugo"), "read from config/_default"

    def urls() -> list[str]:
        assert not run_index(load_config(tmp_path / "index.toml")).errors
        with api_client(config.artifacts) as client:
            return [first_hit(client, q)["url"] for q in ("warehouse opens at six", "branchez le scanner", "quai de chargement", "entrepôt ferme")]

    assert urls() == ["https://example.org/about/", "https://example.org/fr/guide/setup/", "https://example.org/fr/guide/",
                      "https://example.org/fr/about/"]
    hugo = tmp_path / "config" / "_default" / "hugo.toml"
    hugo.write_text(hugo.read_text() + "defaultContentLanguageInSubdir = true\n")
    assert urls()[0] == "https://example.org/en/about/", "the files unchanged: the site's languages alone make the next run read them again"


def test_a_jekyll_site_links_its_posts_and_leaves_its_templates_out(tmp_path, local_embedder):
    """A Jekyll site's folder holds its layouts and includes beside its pages: they were indexed as
    pages ("{{ content }}"), drafts too, and a post was linked at _posts/2024-05-01-launch.html,
    where Jekyll publishes nothing."""
    site = tmp_path / "site"
    for folder in ("_posts", "_layouts", "_includes", "_drafts", "guide"):
        (site / folder).mkdir(parents=True)
    (site / "_layouts" / "default.html").write_text("<html><body><nav>Handbook menu</nav>{{ content }}</body></html>\n")
    (site / "_includes" / "footer.html").write_text("<footer>Copyright Acme, all rights reserved</footer>\n")
    (site / "_drafts" / "merger.md").write_text("# Merger\n\nWe are buying our largest competitor.\n")
    (site / "_posts" / "2024-05-01-new-office.md").write_text("---\ncategories: News\n---\nThe new office in Porto opened its doors.\n")
    (site / "guide" / "index.md").write_text("# Guide\n\nThe guide covers the badge reader.\n")
    config = load_config(write_config(tmp_path, '[[sources]]\nname = "site"\ntype = "files"\npath = "site"\n'
                                                 'url_template = "https://acme.github.io/handbook/{slug}.html"\nurl_rules = "jekyll"\n'
                                                 '[[spaces]]\nprovider = "local"\n'))
    report = run_index(config)
    assert report.documents == 2, "the post and the guide: no layout, include or draft"
    assert [w.code for w in report.warnings] == ["FILE_DRAFT"] and "_drafts folder" in report.warnings[0].message
    with api_client(config.artifacts) as client:
        assert first_hit(client, "office in Porto opened")["url"] == "https://acme.github.io/handbook/news/2024/05/01/new-office.html"
        assert first_hit(client, "badge reader guide")["url"] == "https://acme.github.io/handbook/guide/index.html", "not guide.html"


def test_a_sphinx_folder_is_read_as_its_built_pages_read(tmp_path, local_embedder):
    """A Sphinx (Read the Docs) folder is reStructuredText: .rst was not a default extension, so a
    docs folder indexed only its requirements.txt; listed by hand, its pages read as markup
    ("=====", ".. note::", ":func:`~acme.connect`") with no headings to link to."""
    docs = tmp_path / "docs"
    (docs / "_templates").mkdir(parents=True)
    (docs / "_templates" / "layout.html").write_text("<html><body>{% block body %}{% endblock %} Acme theme</body></html>\n")
    (docs / "_build" / "html").mkdir(parents=True)  # a local build, outside git: every page a second time
    (docs / "_build" / "html" / "index.html").write_text("<html><body><h1>Acme</h1><p>Acme moves parcels between warehouses.</p></body></html>\n")
    (docs / "install.rst").write_text((Path(__file__).parent / "fakes" / "sphinx-page.rst").read_text())
    (tmp_path / "README.rst").write_text("Acme\n====\n\n.. badges\n\nAcme moves parcels between warehouses.\n")  # the project's README
    (docs / "index.rst").write_text("Acme\n====\n\n.. include:: ../README.rst\n   :start-after: .. badges\n\n.. include:: disclaimer.txt\n\n"
                                    ".. toctree::\n\n   install\n")
    (docs / "disclaimer.txt").write_text("Acme is **not** a courier: parcels travel by licensed carriers.\n")  # a fragment, no page
    config = load_config(write_config(tmp_path, '[[sources]]\nname = "docs"\ntype = "files"\npath = "docs"\n'
                                                'url_template = "https://docs.acme.dev/{slug}.html"\n[[spaces]]\nprovider = "local"\n'))
    report = run_index(config)
    assert report.documents == 2 and not report.errors, "the pages, not the theme's template or the build"
    with api_client(config.artifacts) as client:
        proxy = first_hit(client, "HTTPS_PROXY environment variable before connecting")
        assert proxy["title"] == "Installing the Agent" and proxy["heading_path"][-1] == "Proxy settings"
        assert proxy["link"] == "https://docs.acme.dev/install.html#proxy-settings", "the id Sphinx gives the section"
        assert "Set `HTTPS_PROXY` before calling `connect`." in proxy["text"]
        note = first_hit(client, "outbound HTTPS to the API")
        assert "Note: The agent needs outbound HTTPS to `api.acme.dev`." in note["text"]
        assert "price goes up in March" not in note["text"] and ".. " not in note["text"] and "===" not in note["text"]
        home = first_hit(client, "parcels between warehouses")
        assert home["url"] == "https://docs.acme.dev/index.html" and "Acme moves parcels between warehouses." in home["text"], "the README it includes"
        assert "Acme is **not** a courier" in home["text"], "an included .txt is part of the page, and no page of its own (2 documents)"
    (tmp_path / "README.rst").write_text("Acme\n====\n\n.. badges\n\nAcme moves parcels between warehouses and ports.\n")
    assert run_index(config).counts["updated"] == 1, "a changed include: the page that shows it is read again"
    with api_client(config.artifacts) as client:
        assert "between warehouses and ports." in first_hit(client, "parcels between warehouses")["text"]


def test_a_sphinx_ref_reads_as_the_title_of_the_section_it_names(tmp_path, local_embedder):
    """Sphinx shows :ref:`proxy-setup` as the title of the section that label stands above, on
    whichever page; it read "see proxy-setup", words no reader saw. Retitling the section changes
    the pages that link to it, though their own bytes did not change."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "install.rst").write_text("Install\n=======\n\n.. _proxy-setup:\n\nBehind a corporate proxy\n------------------------\n\n"
                                      "Set HTTPS_PROXY for the agent.\n")
    (docs / "faq.rst").write_text("FAQ\n===\n\nThe agent cannot reach the API\n------------------------------\n\n"
                                  "A firewall blocks it: see :ref:`proxy-setup`, or :ref:`our notes <proxy-setup>`, or :ref:`gone-label`.\n")
    config = load_config(write_config(tmp_path, '[[sources]]\nname = "docs"\ntype = "files"\npath = "docs"\n[[spaces]]\nprovider = "local"\n'))
    assert not run_index(config).errors
    with api_client(config.artifacts) as client:
        assert "see Behind a corporate proxy, or our notes, or gone-label." in first_hit(client, "agent cannot reach the API firewall")["text"]
    (docs / "install.rst").write_text((docs / "install.rst").read_text().replace("Behind a corporate proxy\n------------------------",
                                                                                 "Proxy settings\n--------------"))
    assert run_index(config).counts["updated"] == 2, "the retitled page, and the page whose :ref: shows the title"
    with api_client(config.artifacts) as client:
        assert "see Proxy settings, or our notes" in first_hit(client, "agent cannot reach the API firewall")["text"]

    (docs / "cache.md").write_text("# Cache\n\n```{note}\nSlow pages? See {ref}`proxy-setup`.\n```\n\n(cache-tuning)=\n## Tuning the `cache`\n\n"
                                   "Raise the cache size to 2 GB for large warehouses.\n\n"
                                   "```{eval-rst}\nBarcode readers time out? See :ref:`proxy-setup`.\n```\n")  # MyST, in a Sphinx source: one namespace of labels
    (docs / "faq.rst").write_text((docs / "faq.rst").read_text() + "\nThe scanner is slow\n-------------------\n\nSee :ref:`cache-tuning`.\n")
    config = load_config(write_config(tmp_path, '[[sources]]\nname = "docs"\ntype = "files"\npath = "docs"\n'
                                                'url_template = "https://docs.acme.dev/{slug}.html"\nurl_rules = "sphinx"\n[[spaces]]\nprovider = "local"\n'))
    assert not run_index(config).errors
    with api_client(config.artifacts) as client:
        assert "See Tuning the cache." in first_hit(client, "the scanner is slow")["text"], "an .rst page's :ref: to a MyST section"
        assert "Slow pages? See Proxy settings." in first_hit(client, "slow pages cache")["text"], "MyST's {ref}, inside a directive"
        assert "Barcode readers time out? See Proxy settings." in first_hit(client, "barcode readers time out")["text"], "reStructuredText inside MyST"


def test_check_links_finds_the_hits_that_would_cite_a_missing_page(tmp_path, site, local_embedder):
    """A url_template that does not match the site links every hit to a 404, and nothing said so:
    `index check-links` requests the hits' URLs and names those that do not open, and the pages
    that lack a heading fragment their hits link to."""
    from click.testing import CliRunner

    from indexer.cli import cli

    docs = tmp_path / "docs"
    (docs / "01-guides").mkdir(parents=True)
    for name, words in (("01-install", "Install the agent with one command."), ("02-proxy", "Set HTTPS_PROXY for the agent.\n\n## Behind a firewall\n\nOpen 443."),
                        ("03-upgrade", "Upgrade the agent in place.")):
        (docs / "01-guides" / f"{name}.md").write_text(f"# {name[3:].title()}\n\n{words}\n")
        site.routes[f"/docs/guides/{name[3:]}"] = (200, "text/html", f"<h1>{name[3:]}</h1>".encode())  # as Docusaurus publishes it (no id on the title)
    site.routes["/docs/guides/proxy"] = (200, "text/html", b"<h1>Proxy</h1><p>Set it.</p><h2 id='firewall'>Behind a firewall</h2>")  # a theme's own ids
    template = site.url("/docs/{slug}")

    def check(rules: str, *args: str):
        write_config(tmp_path, f'[[sources]]\nname = "docs"\ntype = "files"\npath = "docs"\nurl_template = "{template}"\n{rules}'
                               '[[spaces]]\nprovider = "local"\n')
        assert not run_index(load_config(tmp_path / "index.toml")).errors
        return CliRunner().invoke(cli, ["check-links", "-c", str(tmp_path / "index.toml"), *args])

    wrong = check("")
    assert wrong.exit_code == 4, wrong.output
    assert "Hint:" not in wrong.output, "no generator's config beside the folder: nothing to name"
    (tmp_path / "docusaurus.config.js").write_text(f"export default {{ url: '{site.url('')}', baseUrl: '/' }};\n")
    wrong = check("")
    assert "Hint: source docs: docusaurus.config.js builds this folder; set url_rules = \"docusaurus\" (it has \"plain\")" in wrong.output, \
        "a config written by hand for a Docusaurus site: check-links names the rules its links need"
    assert "Checked 3 of 3 document URLs: 0 open, 3 not found" in wrong.output
    assert f"broken: HTTP 404 {site.url('/docs/01-guides/01-install')} (file:01-guides/01-install.md, source docs): check the source's url_template and url_rules" in wrong.output
    fixed = check('url_rules = "docusaurus"\n', "--sample", "2")
    assert fixed.exit_code == 4 and "Checked 2 of 3 document URLs: 2 open (1 without some headings their hits link to), 0 not found" in fixed.output, fixed.output
    assert "Hint:" not in fixed.output, "the rules are the generator's: the theme's own ids are another matter"
    assert (f"anchors: 1 of 1 heading fragments (#behind-a-firewall) missing on {site.url('/docs/guides/proxy')} (file:01-guides/02-proxy.md, source docs): "
            "the site gives these headings other ids") in fixed.output, "the hit on the firewall passage would land at the page's top"
    assert sum(1 for path in site.requests if path.startswith("/docs/guides/")) == 2, "HEAD refused (501) or anchors to find: one GET each, no more"
    site.routes["/docs/guides/proxy"] = (200, "text/html", b'<head><meta name="behind-a-firewall" content="x"></head><h1>Proxy</h1><p>Write '
                                         b'<code>&lt;h2 id="behind-a-firewall"&gt;</code></p><form><input name="behind-a-firewall"></form>')
    still = check('url_rules = "docusaurus"\n', "--sample", "2")
    assert still.exit_code == 4 and "(#behind-a-firewall) missing" in still.output, "a meta's or a field's name, or a code sample, is no heading to land on"
    site.routes["/docs/guides/proxy"] = (200, "text/html", b'<h1>Proxy</h1><h2 id="behind-a-firewall">Behind a firewall</h2>')
    fixed = check('url_rules = "docusaurus"\n', "--sample", "2")
    assert fixed.exit_code == 0 and "Checked 2 of 3 document URLs: 2 open, 0 not found" in fixed.output, fixed.output
    site.close()
    gone = check('url_rules = "docusaurus"\n', "--json", "--timeout", "1")
    assert gone.exit_code == 1 and json.loads(gone.output)["counts"]["unreachable"] == 3, "the site down: nothing could be checked"


def test_an_asciidoc_folder_links_its_sections_and_shows_its_includes(tmp_path, local_embedder):
    docs = tmp_path / "docs"
    (docs / "partials").mkdir(parents=True)
    (docs / "partials" / "support.adoc").write_text("Support answers within one business day.\n")
    (docs / "install.adoc").write_text((Path(__file__).parent / "fakes" / "asciidoc-page.adoc").read_text()
                                       + "\n== Support\n\ninclude::partials/support.adoc[]\n")
    config = load_config(write_config(tmp_path, '[[sources]]\nname = "docs"\ntype = "files"\npath = "docs"\n'
                                                'url_template = "https://docs.acme.dev/{slug}.html"\n[[spaces]]\nprovider = "local"\n'))
    assert not run_index(config).errors
    with api_client(config.artifacts) as client:
        proxy = first_hit(client, "press Ctrl+C then set HTTPS_PROXY")
        assert proxy["link"] == "https://docs.acme.dev/install.html#proxy" and proxy["title"] == "Installing the Agent"
        support = first_hit(client, "how fast does support answer")
        assert support["link"] == "https://docs.acme.dev/install.html#_support" and "within one business day" in support["text"]
    (docs / "partials" / "support.adoc").write_text("Support answers within one hour.\n")
    assert run_index(config).counts["updated"] == 1, "the page that includes it (the partial is no document of its own)"
    with api_client(config.artifacts) as client:
        assert "within one hour" in first_hit(client, "how fast does support answer")["text"]


def test_an_antora_component_links_its_pages_and_reads_its_partials(tmp_path, local_embedder):
    """Antora publishes only modules/*/pages/, at name/version/[module/]path.html, and resolves
    `include::partial$x.adoc[]` in the module's partials/: by the path alone every link was a 404,
    the partial a document of its own, nav.adoc a page."""
    docs = tmp_path / "docs"
    for folder in ("modules/ROOT/pages/install", "modules/ROOT/partials", "modules/admin/pages"):
        (docs / folder).mkdir(parents=True)
    (docs / "antora.yml").write_text("name: agent\nversion: '2.0'\nnav:\n- modules/ROOT/nav.adoc\n")
    (docs / "modules/ROOT/nav.adoc").write_text("* xref:install/linux.adoc[Install on Linux]\n* xref:admin:users.adoc[Users]\n")
    (docs / "modules/ROOT/pages/install/linux.adoc").write_text("= Linux\n\nInstall the agent with apt.\n\ninclude::partial$support.adoc[]\n")
    (docs / "modules/ROOT/partials/support.adoc").write_text("Support answers within one business day.\n")
    (docs / "modules/admin/pages/users.adoc").write_text("= Users\n\nAdmins add users under Settings.\n")
    config = load_config(write_config(tmp_path, '[[sources]]\nname = "docs"\ntype = "files"\npath = "docs"\n'
                                                'url_template = "https://docs.acme.dev/agent/2.0/{slug}.html"\nurl_rules = "antora"\n'
                                                '[[spaces]]\nprovider = "local"\n'))
    report = run_index(config)
    assert report.documents == 2 and not report.errors, "the two pages: not nav.adoc, not the partial"
    with api_client(config.artifacts) as client:
        support = first_hit(client, "how fast does support answer")
        assert support["url"] == "https://docs.acme.dev/agent/2.0/install/linux.html" and "within one business day" in support["text"]
        assert first_hit(client, "admins add users")["url"] == "https://docs.acme.dev/agent/2.0/admin/users.html"
    (docs / "modules/ROOT/partials/support.adoc").write_text("Support answers within one hour.\n")
    assert run_index(config).counts["updated"] == 1, "a changed partial: the page that includes it is read again"
    from indexer.fileurls import file_url

    assert file_url("https://docs.acme.dev/agent/{slug}/", "modules/ROOT/pages/index.adoc", "antora") == "https://docs.acme.dev/agent/", "indexify"
    assert file_url("https://docs.acme.dev/agent/{slug}.html", "modules/ROOT/pages/index.adoc", "antora") == "https://docs.acme.dev/agent/index.html"


@pytest.mark.parametrize("rules, says", [
    ('url_rules = "gatsby"\nurl_template = "https://a.dev/{slug}"', "url_rules: must be one of plain, mkdocs, sphinx, docusaurus, hugo, jekyll, antora; got 'gatsby'"),
    ('url_rules = "hugo"', 'url_rules: says how hugo makes each file\'s {slug}, but the source has no url_template'),
])
def test_url_rules_that_cannot_apply_are_a_config_error(tmp_path, rules, says):
    from indexer.errors import ConfigError

    with pytest.raises(ConfigError, match=re.escape(says)):
        load_config(write_config(tmp_path, f'[[sources]]\nname = "docs"\ntype = "files"\npath = "."\n{rules}\n[[spaces]]\nprovider = "local"\n'))


@pytest.mark.parametrize("template, says", [
    ("docs.example.com/{slug}", "must start with http:// or https://"),
    ("https://docs.example.com/", "neither {slug} nor {path}"),
    ("https://docs.example.com/{name}.html", "{name} is not a placeholder"),
])
def test_a_url_template_that_cannot_work_is_a_config_error(tmp_path, template, says):
    from indexer.errors import ConfigError

    with pytest.raises(ConfigError, match=re.escape(says)):
        load_config(write_config(tmp_path, f'[[sources]]\nname = "docs"\ntype = "files"\npath = "."\nurl_template = "{template}"\n'
                                           '[[spaces]]\nprovider = "local"\n'))
