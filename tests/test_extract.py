"""What the extractor keeps: front matter as metadata, main content with its structure, titles."""

import gzip
import json
from datetime import datetime, timezone

import pytest

from indexer.extract import ExtractionError, extract_html, extract_markdown, extract_text
from tests.conftest import EXAMPLES, SHARED_DATA


def test_front_matter_is_metadata_not_text():
    raw = "---\ntitle: Refunds\nurl: https://example.com/refunds\nupdated_at: 2026-03-01\ntags: [billing, policy]\nowner: ana\n---\n# Refund policy\n\nAsk within 30 days."
    doc = extract_markdown(raw, "fallback")
    assert doc.title == "Refunds"
    assert doc.url == "https://example.com/refunds"
    assert doc.tags == ("billing", "policy")
    assert doc.updated_at == datetime(2026, 3, 1, tzinfo=timezone.utc)
    assert doc.metadata == {"owner": "ana"}
    assert doc.text == "# Refund policy\n\nAsk within 30 days."


def test_markdown_title_falls_back_to_first_heading_then_file_name():
    assert extract_markdown("Intro\n\n## Setup\n\ntext", "My file").title == "Setup"
    assert extract_markdown("just text", "My file").title == "My file"


def test_a_front_matter_title_that_is_not_a_string_reads_as_text():
    """YAML reads `title: [Setup, Linux]` as a list: the title showed "['Setup', 'Linux']"."""
    assert extract_markdown("---\ntitle: [Setup, Linux]\n---\n# Installing\n\ntext", "f").title == "Setup, Linux"
    assert extract_markdown("---\ntitle: {en: Setup}\n---\n# Installing\n\ntext", "f").title == "Installing", "a mapping names nothing"
    assert extract_markdown("---\ntitle: 2024\n---\ntext", "f").title == "2024"


def test_broken_front_matter_is_an_extraction_error():
    with pytest.raises(ExtractionError) as raised:
        extract_markdown("---\nowner: ana\ntitle: [unclosed\n---\nbody", "x")
    # one line (a run's report prints one per problem), saying what and where in the file
    assert str(raised.value) == "front matter is not valid YAML: did not find expected ',' or ']' at line 4, column 1"


@pytest.mark.parametrize(
    "head, body_heading, title",
    [
        ('<title>Size guide | Shop Help</title><meta property="og:site_name" content="Shop Help">', "Sizes", "Size guide"),
        ('<title>Size guide - Help Center | Shop</title><meta name="application-name" content="Shop">', "Sizes", "Size guide - Help Center"),
        ("<title>Returns | Shop</title>", "Returns", "Returns"),
        ("<title>Rock - Paper - Scissors</title>", "Games", "Rock - Paper - Scissors"),
        ('<title>Returns | Shop</title><meta property="og:title" content="Returning shoes">', "Returns", "Returning shoes"),
        # a WordPress SEO plugin's og:title carries the site's name as <title> does
        ('<meta property="og:title" content="Returning shoes - Shop Help"><meta property="og:site_name" content="Shop Help">', "Returns", "Returning shoes"),
    ],
)
def test_a_page_title_loses_the_site_name_only_when_the_page_shows_it_is_one(head, body_heading, title):
    html = f"<html><head>{head}</head><body><article><h1>{body_heading}</h1><p>{'Shoes can be returned within sixty days. ' * 5}</p></article></body></html>"
    assert extract_html(html).title == title


def test_html_keeps_headings_lists_and_table_rows_and_drops_page_chrome():
    doc = extract_html((EXAMPLES / "docs/articles/vector-indexes.html").read_bytes())
    assert doc.title == "Flat, IVF and HNSW vector indexes", "og:title wins over the <title> with the site name"
    assert "## IVF" in doc.text.splitlines()
    assert "Flat | yes | none | up to a few hundred thousand vectors" in doc.text.splitlines(), "one table row per line"
    assert "Related posts" not in doc.text and "Ten tips" not in doc.text
    assert doc.metadata["published_at"].startswith("2026-06-03")


FERRY = [
    "The city council voted on Tuesday to extend the river ferry service through the winter months, after a season in which ridership doubled and the operator reported its first profit since the route opened.",
    "Council members said the extension would cost about two million dollars, most of it covered by fares and a regional transport grant approved earlier this year by the state legislature.",
    "Residents who spoke at the meeting described the ferry as the fastest way to reach the hospital district from the east bank, where bridges are often closed for repairs during the colder season.",
]


def test_a_photo_caption_inside_the_article_is_left_out_and_the_structure_kept():
    page = (
        "<html><head><title>Ferry</title></head><body><article><h1>Ferry service extended through winter</h1>"
        "<figure><img src='f.jpg'><figcaption>A ferry crosses the river at dusk on Monday. Photo: Jane Doe, City Press</figcaption></figure>"
        f"<p>{FERRY[0]}</p><p>{FERRY[1]}</p><h2>What riders said</h2><p>{FERRY[2]}</p>"
        "<ul><li>Heated boats on every route</li><li>A late departure at 22:30</li></ul><pre>timetable --route east --winter</pre></article></body></html>"
    )
    text = extract_html(page.encode()).text
    assert "Photo: Jane Doe" not in text, "readability keeps the caption; the second opinion drops it"
    assert text.splitlines() == [
        "# Ferry service extended through winter", "", FERRY[0], "", FERRY[1], "", "## What riders said", "", FERRY[2], "",
        "- Heated boats on every route", "- A late departure at 22:30", "", "```", "timetable --route east --winter", "```",
    ]


def test_html_title_and_modified_time_from_head():
    doc = extract_html((EXAMPLES / "docs/articles/rate-limiting.html").read_bytes())
    assert doc.title == "Rate limiting with token buckets"
    assert doc.updated_at == datetime(2026, 7, 19, 9, 30, tzinfo=timezone.utc)
    assert "- One bucket per process: every thread must share it, or the limits add up." in doc.text.splitlines()
    assert "Subscribe to our newsletter" not in doc.text


def test_declared_charset_is_honoured():
    page = "<html><head><meta charset='windows-1252'><title>Caf\u00e9 menu</title></head><body><article><h1>Caf\u00e9</h1><p>" + "Cr\u00e8me br\u00fbl\u00e9e is served daily with fresh fruit. " * 5 + "</p></article></body></html>"
    doc = extract_html(page.encode("cp1252"))
    assert doc.title == "Caf\u00e9 menu"
    assert "Cr\u00e8me br\u00fbl\u00e9e" in doc.text


def test_real_article_pages_yield_their_main_text():
    """Real pages from the shared extraction benchmark: the article's opening survives, chrome does not dominate."""
    folder = SHARED_DATA / "extraction" / "article-extraction-benchmark"
    if not folder.is_dir():
        pytest.skip(f"shared data absent: {folder} (present in CI beside the repository)")
    truth = json.loads((folder / "ground-truth.json").read_text())
    checked = 0
    for page_id, expected in sorted(truth.items())[:10]:
        html = gzip.decompress((folder / "html" / f"{page_id}.html.gz").read_bytes())
        text = extract_html(html).text
        opening = " ".join(expected["articleBody"].split()[:8])
        if opening:
            checked += 1
            assert opening in " ".join(text.split()), f"{page_id}: article opening missing"
    assert checked >= 8


def test_index_extract_prints_what_the_indexer_keeps(site, tmp_path):
    from click.testing import CliRunner

    from indexer.cli import cli

    site.routes["/returns"] = (200, "text/html; charset=utf-8", b"<html><head><title>Returns | Shop</title></head><body><nav>Home Shop Cart</nav><article><h1>Returns</h1><p>Shoes can be returned within sixty days of delivery for a full refund to the original card.</p><p>Two conditions apply to every return we accept from customers:</p><ul><li>The shoes must be unworn, with no marks on the soles.</li><li>They must come back in the original box with all tags.</li></ul></article></body></html>")
    runner = CliRunner()
    page = runner.invoke(cli, ["extract", site.url("/returns?utm_source=mail"), "--allow-private-network", "127.0.0.0/8"])
    assert page.exit_code == 0, page.output
    assert page.output.startswith("Returns\n\n# Returns\n") and "- The shoes must be unworn, with no marks on the soles.\n- They must come back" in page.output and "Cart" not in page.output
    refused = runner.invoke(cli, ["extract", site.url("/returns")])
    assert refused.exit_code == 1 and "WEB_ADDRESS_REFUSED" in refused.output and "Traceback" not in refused.output
    note = tmp_path / "note.md"
    note.write_text("---\ntitle: Note\n---\nBody text.\n")
    as_json = runner.invoke(cli, ["extract", str(note), "--json"])
    assert as_json.exit_code == 0 and '"title": "Note"' in as_json.output and '"text": "Body text."' in as_json.output
    assert site.requests == ["/robots.txt", "/returns"], "utm_source was dropped before fetching; the refused fetch sent nothing"


def extract_json(target: str) -> dict:
    """`index extract --json` of a file or an address on a loopback site."""
    from click.testing import CliRunner

    from indexer.cli import cli

    result = CliRunner().invoke(cli, ["extract", target, "--json", "--allow-private-network", "127.0.0.0/8"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_markdown_sent_as_plain_text_is_read_as_markdown_by_its_name(site):
    """GitHub's raw files and most static servers send a README.md as text/plain: it was indexed
    as plain text, titled "# Returns", its front matter text and its headings unread."""
    site.routes["/raw/main/README.md"] = (200, "text/plain; charset=utf-8", b"---\ntitle: Return rules\n---\n# Returns\n\nBoots come back within 30 days.\n")
    readme = extract_json(site.url("/raw/main/README.md"))
    assert (readme["title"], readme["text"]) == ("Return rules", "# Returns\n\nBoots come back within 30 days."), readme
    site.routes["/notes.txt"] = (200, "text/plain", b"# not a heading\n\nPlain notes.\n")
    assert extract_json(site.url("/notes.txt"))["title"] == "# not a heading", "plain text whose name says so stays plain text"


def test_files_saved_by_windows_editors_are_read_through_their_byte_order_mark(site, tmp_path):
    """A UTF-8 byte order mark hid a Markdown file's front matter and first heading (its title became the
    file name, its front matter text); "Unicode" text (UTF-16) failed as "not UTF-8"."""
    from click.testing import CliRunner

    from indexer.cli import cli

    extract = extract_json

    (tmp_path / "refunds.md").write_bytes(b"\xef\xbb\xbf---\ntitle: Refund rules\ntags: [billing]\n---\n# Refunds\n\nRefunds take five days.\n")
    (tmp_path / "shipping.md").write_bytes("# Shipping\n\nParcels ship daily.\n".encode("utf-8-sig"))
    (tmp_path / "returns.txt").write_bytes("Returns\n\nUnworn shoes come back within thirty days.\n".encode("utf-16"))
    (tmp_path / "care.html").write_bytes("<html><head><title>Shoe care</title></head><body><article><h1>Care</h1><p>Wax the leather every month.</p></article></body></html>".encode("utf-16"))
    refunds = extract(str(tmp_path / "refunds.md"))
    assert (refunds["title"], refunds["tags"], refunds["text"]) == ("Refund rules", ["billing"], "# Refunds\n\nRefunds take five days.")
    assert extract(str(tmp_path / "shipping.md"))["title"] == "Shipping"
    assert extract(str(tmp_path / "returns.txt"))["text"] == "Returns\n\nUnworn shoes come back within thirty days."
    care = extract(str(tmp_path / "care.html"))
    assert care["title"] == "Shoe care" and "Wax the leather every month." in care["text"]
    site.routes["/faq.md"] = (200, "text/markdown; charset=utf-8", "# Sizes\n\nOur shoes run small.\n".encode("utf-8-sig"))
    page = extract(site.url("/faq.md"))
    assert page["title"] == "Sizes" and page["text"].startswith("# Sizes")
    damaged = tmp_path / "damaged.txt"
    damaged.write_bytes(b"\xff\xfe" + "odd".encode("utf-16-le")[:-1])
    result = CliRunner().invoke(cli, ["extract", str(damaged)])
    assert result.exit_code == 1 and "not UTF-16-LE text" in result.output and "save it as UTF-8" in result.output, result.output


def test_images_inlined_as_base64_are_not_text():
    """Editors export pasted screenshots as data URIs: 40 KB of base64 became chunks to embed (and pay
    for), lexical terms and snippets."""
    blob = "iVBORw0KGgoAAAANSUhEUgAA" + "QUJDRA" * 5000 + "=="
    raw = (f"# Logo\n\nHere is our logo:\n\n![the blue logo](data:image/png;base64,{blob})\n\n"
           f'It is blue.\n\n<img alt="icon" src="data:image/svg+xml;charset=utf-8;base64,{blob}">\n')
    text = extract_markdown(raw, "logo").text
    assert text == "# Logo\n\nHere is our logo:\n\n![the blue logo]()\n\nIt is blue.\n\nicon"
    assert "QUJDRA" not in extract_text(f"Logo: data:image/png;base64,{blob} (blue)", "logo").text


def test_a_file_without_a_title_is_named_by_its_file_name_as_written(tmp_path):
    """Note vaults title a note by its file name."""
    from indexer.sources.files import read_file

    for name, title in [("API keys and OAuth.md", "API keys and OAuth"), ("refund-policy.txt", "Refund policy"), ("iOS_setup.md", "IOS setup")]:
        (tmp_path / name).write_text("no heading, just words " * 20)
        assert read_file(tmp_path / name, name, f"file:{name}", "notes").title == title


@pytest.mark.parametrize("head", ["<title>Untitled Document</title>", ""])
def test_an_html_page_without_a_real_title_is_named_by_its_first_heading(head):
    """Dreamweaver's "Untitled Document" (or no <title> at all) titled the hits; the page says what it is."""
    page = f"<html><head>{head}</head><body><article><h1>Opening hours</h1><p>{'We open at nine every weekday. ' * 5}</p></article></body></html>"
    assert extract_html(page.encode(), fallback_title="hours").title == "Opening hours"


def test_a_markdown_comment_is_not_text_a_visitor_can_be_told():
    """A comment is not shown on the published page; writers keep notes there. Indexed, the chatbot
    cited it to visitors."""
    raw = ("# Pricing\n\n<!-- internal: the enterprise price goes up to $900 in March,\ndo not announce -->\n"
           "Plans start at ten euros.<!-- check with Ana -->\n\n```html\n<!-- a comment in an example stays -->\n```\n")
    text = extract_markdown(raw, "pricing").text
    assert text == "# Pricing\n\nPlans start at ten euros.\n\n```html\n<!-- a comment in an example stays -->\n```"


def test_html_in_markdown_reads_as_its_words():
    """A README's centred logo and badges, <br>, <details> and <kbd> were indexed and shown as tags."""
    raw = ('<h1 align="center"><img src="logo.png" alt="Acme &amp; Co"></h1>\n<p align="center">Fast search.<br>For chatbots.</p>\n\n'
           "<details>\n<summary>Why admin rights?</summary>\nIt writes to /usr/local.\n</details>\n\n"
           "Copy with <kbd>Ctrl</kbd>+<kbd>C</kbd>. Send `Authorization: Bearer <token>` or Bearer <your key>; "
           "see <https://acme.dev/docs> and `<div id=\"x\">`, as x <y and y> z. AT&amp;T&nbsp;&mdash; &bogus;\n\n"
           "<table>\n  <tr>\n    <th>Plan</th>\n    <th>Price</th>\n  </tr>\n  <tr>\n    <td><b>Pro</b></td>\n    <td>Ten euros\n    a month</td>\n  </tr>\n</table>\n")
    doc = extract_markdown(raw, "readme")
    assert doc.title == "Acme & Co"
    assert doc.text == (
        "# Acme & Co\n\nFast search.\nFor chatbots.\n\nWhy admin rights?\n\nIt writes to /usr/local.\n\n"
        "Copy with Ctrl+C. Send `Authorization: Bearer <token>` or Bearer <your key>; "
        "see <https://acme.dev/docs> and `<div id=\"x\">`, as x <y and y> z. AT&T — &bogus;\n\n"
        "Plan | Price\nPro | Ten euros a month"  # a table's rows as the HTML extractor writes them
    )


def test_docusaurus_heading_ids_in_mdx_comments_are_link_targets():
    """Docusaurus 3 names a heading's id in an MDX comment (`## Headings {/* #my-heading-id */}`,
    its own template's page); the comment is no words, and the id is where hits link."""
    page = "# Features\n\n## Headings {/* #my-heading-id */}\n\nHeadings use #.\n\n### Heading Ids {/* #my-custom-id */}\n\nName them.\n"
    for mdx in (True, False):  # Docusaurus 3 reads .md as MDX too
        got = extract_markdown(page, "x", mdx=mdx, url="https://acme.dev/docs/features")
        assert [name for _, name in got.anchors] == ["features", "my-heading-id", "my-custom-id"], mdx
        assert "## Headings\n" in got.text and "/*" not in got.text and "{#" not in got.text


def test_mdx_files_are_read_as_the_page_shows_them(tmp_path):
    """Docusaurus, Nextra and Astro docs are .mdx: they were skipped unless listed in `extensions`,
    and then read as plain text — front matter, imports and components included."""
    from indexer.config import DEFAULT_EXTENSIONS
    from indexer.sources.files import read_file

    raw = ("---\ntitle: Install\ntags: [setup]\n---\nimport Tabs from '@theme/Tabs';\nimport {\n  TabItem,\n} from '@theme/TabItem';\n\n"
           "export const toc = [\n  {value: 'x'},\n];\n\n# Install\n\n{/* TODO: add Windows */}\n"
           '<Tabs>\n  <TabItem value="mac" label="macOS">\n\n  Run `brew install acme`.\n\n  </TabItem>\n</Tabs>\n\n'
           'It takes a <Highlight color="green">minute</Highlight>, if a < b and c > d.\n\n```jsx\nimport Tabs from "@theme/Tabs";\n<Tabs />\n```\n')
    assert ".mdx" in DEFAULT_EXTENSIONS
    for name in ("install.mdx", "install.md"):  # Docusaurus 3 reads .md as MDX too: its imports say so
        (tmp_path / name).write_text(raw)
        doc = read_file(tmp_path / name, name, f"file:{name}", "docs")
        assert (doc.title, doc.tags) == ("Install", ("setup",))
        assert doc.text == ("# Install\n\n  Run `brew install acme`.\n\nIt takes a minute, if a < b and c > d.\n\n"
                            '```jsx\nimport Tabs from "@theme/Tabs";\n<Tabs />\n```'), name
    plain = extract_markdown("Ask the team:\n\nimport the CSV from the Settings page.\n\n<Note>kept</Note>", "x").text
    assert plain == "Ask the team:\n\nimport the CSV from the Settings page.\n\n<Note>kept</Note>"  # not MDX: nothing to strip


def test_hugo_and_jekyll_pages_read_as_their_site_shows_them():
    """Hugo writes front matter in TOML between +++ lines (it was indexed as text, its title and
    draft flag unread), and both generators call templates from the text: {{< alert >}},
    {% include %}, a {% comment %} hidden like an HTML one."""
    raw = ('+++\ntitle = "Install"\nlastmod = 2026-10-01T10:00:00Z\ntags = ["setup"]\n[params]\nat = 12:30:00\n+++\n'
           '{{< alert title="Note" >}}Run it as root.{{< /alert >}}\n\n{{% notice tip %}}\nUse the CLI.\n{{% /notice %}}\n\n'
           "{% comment %} internal: this page is wrong {% endcomment %}\n{% include image.html file=\"a.png\" %}\n"
           "Email {{ site.email }} or read the [FAQ]({{< ref \"faq.md\" >}}).\n\n```go\n{{< kept in code >}}\n```\n")
    doc = extract_markdown(raw, "install")
    assert (doc.title, doc.tags, doc.updated_at) == ("Install", ("setup",), datetime(2026, 10, 1, 10, tzinfo=timezone.utc))
    assert doc.metadata == {"params": {"at": "12:30:00"}, "lastmod": "2026-10-01T10:00:00+00:00"}
    assert doc.text == ("Run it as root.\n\nUse the CLI.\n\nEmail {{ site.email }} or read the [FAQ]().\n\n"
                        "```go\n{{< kept in code >}}\n```")
    jekyll = extract_markdown("---\ntitle: Returns\nlast_modified_at: 2026-09-02\n---\nThirty days.", "returns")
    assert jekyll.updated_at == datetime(2026, 9, 2, tzinfo=timezone.utc)
    with pytest.raises(ExtractionError, match=r"between \+\+\+ lines is not valid TOML"):
        extract_markdown('+++\ntitle = "unclosed\n+++\nbody', "x")


def test_a_generated_docs_site_reads_without_its_heading_links_and_invisible_characters():
    """Sphinx and MkDocs put a ¶ link after every heading, Docusaurus a zero-width space, Hugo
    themes a # before it: headings read "Installation¶", the site's name stayed in the title (the
    heading no longer matched it), and a soft hyphen split "documentation" for search."""
    sphinx = ('<html><head><title>Installation &#8212; Requests 2.31.0 documentation</title></head><body><div role="main">'
              '<section id="installation"><h1>Installation<a class="headerlink" href="#installation" title="Link to this heading">¶</a></h1>'
              "<p>Run the installer from a terminal; the docu&shy;mentation covers every option it takes and what each one does.</p>"
              '<h2 id="proxy"><a class="anchor" href="#proxy">#</a> Behind a proxy<a href="#proxy" class="hash-link">\u200b</a></h2>'
              "<p>Set HTTPS_PROXY first. C# and F# users read the .NET page, which has the same steps for the SDK.</p>"
              "<h2>Getting started with C#</h2><p>The C# client is a NuGet package with the same options as the command line.</p>"
              "</section></div></body></html>")
    page = extract_html(sphinx, url="https://docs.example.com/install.html")
    assert page.title == "Installation"
    assert page.text.splitlines()[0] == "# Installation" and "\n## Behind a proxy\n" in page.text and "\n## Getting started with C#\n" in page.text
    assert "documentation covers" in page.text and "\u200b" not in page.text and "\u00ad" not in page.text
    assert [name for _, name in page.anchors] == ["installation", "proxy"], "headings still find their ids"


def test_partials_are_shown_where_the_page_uses_them_and_nowhere_else(tmp_path):
    """An MDX page shows an imported .md / .mdx file where it writes its component; an import in a
    code block is an example, a file outside the site is not read, and a cycle ends."""
    from indexer.partials import inline_partials

    site, docs = tmp_path / "site", tmp_path / "site" / "docs"
    docs.mkdir(parents=True)
    (tmp_path / "secret.md").write_text("outside the site\n")
    (docs / "_a.mdx").write_text("import B from './_b.md';\n\nA says hello.\n\n<B />\n")
    (docs / "_b.md").write_text("import A from './_a.mdx';\n\nB says hello.\n\n<A />\n")  # a cycle
    page = ("import A from './_a.mdx';\nimport S from '../../secret.md';\n\n# Page\n\n<A />\n\n<S />\n\n"
            "```mdx\nimport A from './_a.mdx';\n\n<A />\n```\n")
    text = extract_markdown(inline_partials(page, docs / "page.mdx", site), "Page", mdx=True).text
    assert text.count("A says hello.") == 1 and text.count("B says hello.") == 1, text
    assert "outside the site" not in text
    assert "```mdx\nimport A from './_a.mdx';\n\n<A />\n```" in text, "code is shown as written"


def test_restructuredtext_reads_as_the_built_page_reads():
    """What Sphinx shows of a page: titles as headings with docutils' ids, code as code, a note's
    words, a role's title; not comments, link targets, substitution definitions or table borders."""
    from pathlib import Path

    from indexer.rst import rst_to_markdown

    text = rst_to_markdown((Path(__file__).parent / "fakes" / "sphinx-page.rst").read_text())
    lines = text.splitlines()
    assert [line for line in lines if line.startswith("#")] == [
        "# Installing the Agent {#installing-the-agent}", "## Requirements {#requirements}", "## Configuration {#configuration}",
        "### Proxy settings {#proxy-settings}"]
    assert "Acme Agent runs on Linux and macOS. See the FAQ and\nupgrading or the download page." in text
    assert "```\ncurl -sSL https://acme.dev/install.sh | sh\n```" in text and "Run the installer:" in text
    assert '```python\nimport acme\nacme.connect(host="localhost")\n```' in text, "options such as :linenos: are not code"
    for line in ("Note: The agent needs outbound HTTPS to `api.acme.dev`.", "Warning: Never run the agent as root.",
                 "Set `HTTPS_PROXY` before calling `connect`.", "`connect(host, port=443)`", "Opens a connection to the Acme API.",
                 "Version added 2.1: The `port` argument.", "Setting | Default", "timeout | 30 s", "Windows is not supported.",
                 "The web page shows this paragraph."):
        assert line in lines, line
    for hidden in ("price goes up", "orphan", "install-guide", "replace::", "maxdepth", "upgrading\n", "+---", "On this page", "[#]"):
        assert hidden not in text, hidden


def test_restructuredtext_repeated_titles_get_docutils_own_numbers():
    """A repeated title's id is docutils' next made-up one (id1, id2, …), counted apart from the
    named ids: Sphinx 9.0.4 built this page with sections setup, id1, labelled-section, id2."""
    from indexer.rst import rst_to_markdown

    text = rst_to_markdown("Install\n=======\n\nProxy\n-----\n\nA.\n\nSetup\n-----\n\nB.\n\nSetup\n-----\n\nC.\n\n"
                           "Labelled section\n----------------\n\nD.\n\nSetup\n-----\n\nE.\n")
    assert [line.rsplit("{#", 1)[1].rstrip("}") for line in text.splitlines() if line.startswith("#")] == [
        "install", "proxy", "setup", "id1", "labelled-section", "id2"]


def test_myst_markdown_reads_as_the_built_page_reads():
    """MyST (Sphinx with Markdown, Jupyter Book): a ```{note} was kept as code, a role read
    "{ref}`…`", a `(label)=` target and a `%` comment were words."""
    from pathlib import Path

    page = extract_markdown((Path(__file__).parent / "fakes" / "myst-page.md").read_text(), "Page", url="https://docs.acme.dev/install/")
    lines = page.text.splitlines()
    assert page.title == "Installing" and [anchor for _, anchor in page.anchors] == ["installing-the-agent", "use-acme-cli-2-0"], \
        "the ids Sphinx gives the sections (GitHub's slug would be use-acme_cli-20)"
    unpublished = extract_markdown((Path(__file__).parent / "fakes" / "myst-page.md").read_text(), "Page")
    assert "## Use `acme_cli` 2.0\n" in unpublished.text and "{#" not in unpublished.text, "no URL: no link targets, and no ids in the text"
    for line in ("The agent runs on Linux. See the FAQ and `connect`.", "Note: The agent needs outbound HTTPS.",
                 "Warning: Never run it as root.", "```python", "Linux", "Use the deb package.", "Use Homebrew.",
                 "Note: Written in reStructuredText.", "50% of users read this line."):
        assert line in lines, line
    assert "```{r}\nsummary(cars)\n```" in page.text, "a fence MyST does not define is code, as written"
    assert 'x = "{ref}`not a role in code`"' in page.text
    for hidden in ("install-guide", "price goes up", "{note}", "toctree", "upgrading", ":linenos:", "maxdepth", "{ref}`the"):
        assert hidden not in page.text, hidden


def test_markdown_that_is_not_myst_keeps_its_braces_percent_lines_and_code():
    text = "% Release notes\n\nCapture `{ident}` in format strings; `Iterator::eq{_by}` and `&{number}` too.\n\n(draft)= stays.\n"
    assert extract_markdown(text, "Notes").text == text.strip()


def test_a_jupyter_notebook_reads_as_its_rendered_page(tmp_path):
    """Jupyter Book pages and worked examples are notebooks: JSON, which was no default extension
    and, listed, would be indexed as JSON text. Markdown cells, code, and text outputs (cut short)."""
    from pathlib import Path

    from indexer.sources.files import read_file

    notebook = Path(__file__).parent / "fakes" / "forecast.ipynb"
    document = read_file(notebook, "forecast.ipynb", "file:forecast.ipynb", "docs", url="https://docs.acme.dev/forecast.html")
    assert document.title == "Forecasting parcel volume" and [a for _, a in document.anchors] == ["forecasting-parcel-volume", "results"]
    text = document.text
    assert "This notebook predicts next week's parcel volume per warehouse." in text
    assert '```python\nimport pandas as pd\nvolume = pd.read_csv("volume.csv")\n```' in text
    assert "Porto: 1200 parcels\nLisbon: 3400 parcels\nrow 0" in text and "row 19\n… (10 more lines)" in text and "row 20" not in text
    assert "KeyError: 'Faro'" in text and "Note: Faro has no warehouse yet." in text
    for hidden in ("iVBORw0", "Figure size", "raw cell", "kernelspec", "execution_count", '"cell_type"'):
        assert hidden not in text, hidden


def test_asciidoc_reads_as_the_rendered_page_reads():
    """AsciiDoc (Asciidoctor, Antora) was no default extension, and listed it read as markup:
    `== Requirements`, `----` fences, `[NOTE]`, `xref:faq.adoc[the FAQ]`, `:toc: left`."""
    from pathlib import Path

    from indexer.asciidoc import asciidoc_to_markdown

    page = extract_markdown(asciidoc_to_markdown((Path(__file__).parent / "fakes" / "asciidoc-page.adoc").read_text()), "Page",
                            url="https://docs.acme.dev/install.html")
    lines = page.text.splitlines()
    assert page.title == "Installing the Agent"
    assert [a for _, a in page.anchors] == ["_installing_the_agent", "_requirements", "proxy", "_version_2_0_notes", "_rollback"], \
        "Asciidoctor's ids, four levels deep"
    for line in ("Acme Agent runs on Linux and macOS.", "See the FAQ, the proxy section or the download page.", "- Python 3.11 or newer",
                 "Note: The agent needs outbound HTTPS to `api.acme.dev`.", "Warning: Never run the agent as root.", "Run the installer",
                 "```bash", "curl -sSL https://acme.dev/install.sh | sh", "Press Ctrl+C to stop, then set `HTTPS_PROXY`.",
                 "Setting | Default", "timeout | 30 s", "Upgrade in place.", "#### Rollback", "Keep the `*.war` files of the last release."):
        assert line in lines, line
    assert "You are reading this on GitHub." in lines, "a conditional's text stays; its ifdef / endif lines go"
    for hidden in ("Jane Doe", "v2.1", ":toc:", "{product}", "price goes up", "internal only", "footnote", "diagram.png", "|===", "[source",
                   "ifdef::", "endif::"):
        assert hidden not in page.text, hidden
