"""A config mistake stops the run at load time with a message that names the key and what is allowed."""

from pathlib import Path

import pytest
from click.testing import CliRunner

from indexer.cli import cli
from indexer.config import load_config, parse_config
from indexer.errors import ConfigError
from tests.conftest import EXAMPLES, write_config

FILES = '[[sources]]\nname = "docs"\ntype = "files"\npath = "docs"\n'
LOCAL = '[[spaces]]\nprovider = "local"\n'


def test_examples_config_loads_with_defaults_resolved_against_its_folder():
    config = load_config(EXAMPLES / "index.toml")
    assert config.artifacts.resolve() == (EXAMPLES.parent / "artifacts").resolve()
    assert [s.name for s in config.sources] == ["guide", "articles"]
    assert config.sources[0].path == EXAMPLES / "docs/guide"
    space = config.spaces[0]
    assert (space.space_id, space.dimensions, space.chunk_tokens, space.chunk_overlap) == ("local-all-minilm-l6-v2-384", 384, 200, 40)
    assert config.keep_generations == 3


def test_artifacts_flag_overrides_the_file(tmp_path):
    config = load_config(write_config(tmp_path, 'artifacts = "out"\n' + FILES + LOCAL), artifacts_override=tmp_path / "elsewhere")
    assert config.artifacts == tmp_path / "elsewhere"


@pytest.mark.parametrize(
    "body, message",
    [
        ('artifact = "x"\n' + FILES + LOCAL, "artifact: unknown key (did you mean 'artifacts'?); allowed: artifacts, keep_generations, max_delete_fraction, mass_delete_min, sources, spaces, server, language"),
        ("keep_generations = 0\n" + FILES + LOCAL, "keep_generations: must be between 1 and 100; got 0"),
        ('keep_generations = "3"\n' + FILES + LOCAL, "keep_generations: must be an integer; got str '3'"),
        (FILES + LOCAL + "chunk_tokens = 900\n", "spaces[0].chunk_tokens: must be between 32 and 254; got 900"),
        (FILES + LOCAL + "chunk_tokens = true\n", "spaces[0].chunk_tokens: must be an integer; got bool True"),
        (FILES + LOCAL + "chunk_tokens = 100\nchunk_overlap = 80\n", "spaces[0].chunk_overlap: must be between 0 and 50; got 80"),
        (FILES + LOCAL + 'model = "bert"\n', "spaces[0].model: local models are all-MiniLM-L6-v2; got 'bert'"),
        (FILES + LOCAL + "dimensions = 768\n", "spaces[0].dimensions: must be one of 384; got 768"),
        (FILES + '[[spaces]]\nprovider = "cohere"\n', "spaces[0].provider: must be one of gemini, local, openai; got 'cohere'"),
        (FILES + '[[spaces]]\nprovider = "gemini"\nmodel = "text-embedding-004"\n', "spaces[0].model: text-embedding-004 was shut down on 2026-01-14; use 'gemini-embedding-001' instead"),
        (FILES + '[[spaces]]\nprovider = "gemini"\ndimensions = 1024\n', "spaces[0].dimensions: must be one of 768, 1536, 3072; got 1024"),
        (FILES + '[[spaces]]\nprovider = "gemini"\nbatch_size = 250\n', "spaces[0].batch_size: must be between 1 and 100; got 250"),
        (FILES + '[[spaces]]\nprovider = "openai"\nmodel = "text-embedding-3-large"\ndimensions = 4096\n', "spaces[0].dimensions: must be one of 3072, 1536, 1024, 768, 512, 256; got 4096"),
        (FILES + '[[spaces]]\nprovider = "openai"\nmax_concurrency = 0\n', "spaces[0].max_concurrency: must be between 1 and 16; got 0"),
        (FILES.replace('"files"', '"ftp"') + LOCAL, "sources[0].type: must be one of files, urls, notion, answers; got 'ftp'"),
        (FILES.replace('path = "docs"\n', "") + LOCAL, "sources[0].path: required key is missing"),
        (FILES + 'recursive = true\n' + LOCAL, "sources[0].recursive: unknown key; allowed: name, type, path, extensions, max_bytes, follow_symlinks, respect_gitignore, include_drafts, id_prefix, url_template, url_rules, fallback_encoding"),
        (FILES + FILES + LOCAL, "sources: names must be unique; repeated: docs"),
        (FILES + LOCAL + '[server]\ncors_origins = ["help.example.com"]\n',
         "server.cors_origins[0]: an origin is scheme://host[:port] as a browser sends it, without a path; got 'help.example.com' (e.g. 'https://help.example.com', or \"*\" for any)"),
        (FILES + LOCAL + '[server]\ncors_origins = ["https://help.example.com/"]\n', "server.cors_origins[0]: an origin is scheme://host[:port] as a browser sends it, without a path; got 'https://help.example.com/' (e.g. 'https://help.example.com', or \"*\" for any)"),
        (FILES + LOCAL + '[server]\ncors_origins = ["https://help.example.com:99999"]\n',
         "server.cors_origins[0]: not a valid origin (Port out of range 0-65535); got 'https://help.example.com:99999'"),
        (FILES + LOCAL + '[server]\ncors_origins = ["null"]\n', "server.cors_origins[0]: 'null' is what sandboxed frames and local files send, "
         "and any page can send it; list the site's own origin (e.g. 'https://help.example.com')"),
        ('[[sources]]\nname = "w"\ntype = "urls"\nurls = ["ftp://x"]\n' + LOCAL, "sources[0].urls[0]: must start with http:// or https://; got 'ftp://x'"),
        ('[[sources]]\nname = "w"\ntype = "urls"\nurls = ["https://"]\n' + LOCAL, "sources[0].urls[0]: not a valid URL (no host name); got 'https://'"),
        (FILES.replace('"docs"\n', '"/"\n') + LOCAL, "sources[0].path: '/' is the whole disk (/); name the folder that holds your documents"),
        ('artifacts = " "\n' + FILES + LOCAL, 'artifacts: must not be empty; name the folder generations are written to (e.g. "artifacts")'),
        ('artifacts = "/dev/null"\n' + FILES + LOCAL, "artifacts: /dev/null is a file, not a folder; name the folder generations are written to"),
        ('artifacts = "/dev/null/site/artifacts"\n' + FILES + LOCAL,
         "artifacts: /dev/null/site/artifacts is inside /dev/null, which is a file, not a folder; name the folder generations are written to"),
        (FILES + 'fallback_encoding = "\\u0000"\n' + LOCAL, "sources[0].fallback_encoding: '\\x00' is not a text encoding Python knows "
         '(e.g. "cp1252", Windows\' Western European; "cp1251", "shift_jis")'),
        ('[[sources]]\nname = "w"\ntype = "urls"\n' + LOCAL, "sources[0]: a urls source needs `urls` (pages) or `sitemaps` (sitemap.xml or sitemap index URLs)"),
        ('[[sources]]\nname = "w"\ntype = "urls"\nsitemaps = ["/sitemap.xml"]\n' + LOCAL, "sources[0].sitemaps[0]: must start with http:// or https://; got '/sitemap.xml'"),
        ('[[sources]]\nname = "w"\ntype = "urls"\nurls = ["http://x"]\ntimeout_seconds = 0.5\n' + LOCAL, "sources[0].timeout_seconds: must be between 1 and 300; got 0.5"),
        ('[[sources]]\nname = "w"\ntype = "urls"\nurls = [1]\n' + LOCAL, "sources[0].urls: every item must be a string"),
        ('[[sources]]\nname = "w"\ntype = "urls"\nurls = ["http://x"]\nrespect_robots = "no"\n' + LOCAL, "sources[0].respect_robots: must be true or false; got str 'no'"),
        ('[[sources]]\nname = "w"\ntype = "urls"\nurls = ["http://x"]\nmax_depth = 2\n' + LOCAL,
         "sources[0].max_depth: only a crawl follows links; add `crawl = true` to follow them from the listed pages"),
        ('[[sources]]\nname = "wiki"\ntype = "notion"\nroots = ["not-an-id"]\n' + LOCAL,
         "sources[0].roots[0]: must be a Notion page or database id (32 hex digits) or its URL; got 'not-an-id'"),
        ('[[sources]]\nname = "wiki"\ntype = "notion"\nroots = []\n' + LOCAL, "sources[0].roots: list at least one page or database id to start from"),
        ('[[sources]]\nname = "wiki"\ntype = "notion"\n' + LOCAL, "sources[0].roots: required key is missing"),
        (LOCAL, "sources: required key is missing; add e.g. [[sources]] with name = \"docs\", type = \"files\", path = \"docs\" (or type \"urls\" / \"notion\")"),
        (FILES, "spaces: required key is missing; add e.g. [[spaces]] with provider = \"local\" (the bundled model, offline; or \"openai\" / \"gemini\")"),
        (FILES + LOCAL + LOCAL, "spaces: each space must be distinct; repeated: local-all-minilm-l6-v2-384"),
        ("sources = []\n" + LOCAL, "sources: at least one [[sources]] table is required; add e.g. [[sources]] with name = \"docs\", type = \"files\", path = \"docs\" (or type \"urls\" / \"notion\")"),
        ("spaces = []\n" + FILES, "spaces: at least one [[spaces]] table is required; add e.g. [[spaces]] with provider = \"local\" (the bundled model, offline; or \"openai\" / \"gemini\")"),
        ("sources = [1]\n" + LOCAL, "sources[0]: must be a table ([[sources]]), got int"),
        # NaN compares false with every bound, so without a check it would switch a safety off
        ("max_delete_fraction = nan\n" + FILES + LOCAL, "max_delete_fraction: must be a finite number; got nan"),
        ('[[sources]]\nname = "w"\ntype = "urls"\nurls = ["http://x"]\ntimeout_seconds = nan\n' + LOCAL, "sources[0].timeout_seconds: must be a finite number; got nan"),
        ('[[sources]]\nname = "wiki"\ntype = "notion"\nroots = ["0123456789abcdef0123456789abcdef"]\nrequests_per_second = nan\n' + LOCAL,
         "sources[0].requests_per_second: must be a finite number; got nan"),
        ('[[sources]]\nname = "w"\ntype = "urls"\nurls = ["http://x"]\nper_host_delay_seconds = inf\n' + LOCAL, "sources[0].per_host_delay_seconds: must be a finite number; got inf"),
        (FILES + LOCAL + "min_relevance = -inf\n", "spaces[0].min_relevance: must be a finite number; got -inf"),
        # a web source's scope: a pattern that is no path, and a listed page it would never index
        ('[[sources]]\nname = "w"\ntype = "urls"\nurls = ["https://x.org/help/"]\ninclude = ["help/"]\n' + LOCAL,
         'sources[0].include[0]: a pattern starts with / (a path: "/help/"), * ("*/print") or http(s)://; got \'help/\''),
        ('[[sources]]\nname = "w"\ntype = "urls"\nurls = ["https://x.org/cart"]\nexclude = ["*/cart"]\n' + LOCAL,
         "sources[0].urls[0]: https://x.org/cart is outside include / exclude, so it would never be indexed; remove it, "
         "or add `crawl = true` to start a crawl from it (it is then read for its links only)"),
    ],
)
def test_invalid_config_names_the_key_and_what_is_allowed(tmp_path, body, message):
    path = write_config(tmp_path, body)
    with pytest.raises(ConfigError) as error:
        load_config(path)
    assert str(error.value) == f"{path}: {message}"


def test_a_config_that_is_not_utf8_is_a_config_error_that_says_so(tmp_path):
    path = tmp_path / "index.toml"
    path.write_bytes(("# Konfiguration f\u00fcr die Hilfe\n" + FILES + LOCAL).encode("latin-1"))
    with pytest.raises(ConfigError, match=r"not UTF-8 text \(byte 17: b'\\xfc'\); save the file as UTF-8"):
        load_config(path)
    result = CliRunner().invoke(cli, ["run", "-c", str(path)])
    assert result.exit_code == 2 and "not UTF-8" in result.output and "Traceback" not in result.output


def test_not_toml_and_missing_file_are_config_errors(tmp_path):
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(write_config(tmp_path, "sources = [\n"))
    with pytest.raises(ConfigError, match="config file not found: .*nope.toml"):
        load_config(tmp_path / "nope.toml")


def test_remote_spaces_get_provider_defaults_and_distinct_ids(tmp_path):
    config = load_config(write_config(tmp_path, FILES + '[[spaces]]\nprovider = "openai"\n[[spaces]]\nprovider = "gemini"\n[[spaces]]\nprovider = "gemini"\ndimensions = 3072\n'))
    openai, gemini, gemini_big = config.spaces
    assert (openai.space_id, openai.model, openai.dimensions, openai.chunk_tokens, openai.chunk_overlap, openai.batch_size) == (
        "openai-text-embedding-3-small-1536", "text-embedding-3-small", 1536, 450, 75, 2048)
    assert (gemini.space_id, gemini.dimensions, gemini.batch_size) == ("gemini-embedding-001-768", 768, 100)
    assert gemini_big.space_id == "gemini-embedding-001-3072"


def test_extensions_are_normalized(tmp_path):
    config = parse_config(
        {"sources": [{"name": "d", "type": "files", "path": "d", "extensions": ["MD", ".txt"]}], "spaces": [{"provider": "local"}]},
        base_dir=Path(tmp_path),
    )
    assert config.sources[0].extensions == (".md", ".txt")


def test_web_source_keys_are_read_from_the_file(tmp_path):
    web = (
        '[[sources]]\nname = "help"\ntype = "urls"\nurls = ["https://help.example.com/"]\ncrawl = true\nmax_depth = 1\n'
        "respect_robots = false\nper_host_delay_seconds = 1\nconcurrency = 8\n"
    )
    source = load_config(write_config(tmp_path, web + LOCAL)).sources[0]
    assert (source.crawl, source.max_depth, source.respect_robots, source.per_host_delay_seconds, source.concurrency) == (True, 1, False, 1.0, 8)
    assert (source.max_pages, source.per_host_concurrency) == (250, 2), "defaults"


def test_notion_roots_take_ids_and_urls_and_keys_have_seed_defaults(tmp_path):
    notion = (
        '[[sources]]\nname = "wiki"\ntype = "notion"\n'
        'roots = ["https://www.notion.so/acme/Handbook-c01166c613ae45cbb96818b4ef2f5a77?pvs=4", "C37A2C66E3AA4A0DA44773DE3B80C253",\n'
        '         "https://www.notion.so/acme/FAQ-a1b2c3d4e5f60718293a4b5c6d7e8f90#0f1e2d3c4b5a69788796a5b4c3d2e1f0"]\n'  # a link to a block of the page
    )
    source = load_config(write_config(tmp_path, notion + LOCAL)).sources[0]
    assert source.roots == ("c01166c6-13ae-45cb-b968-18b4ef2f5a77", "c37a2c66-e3aa-4a0d-a447-73de3b80c253", "a1b2c3d4-e5f6-0718-293a-4b5c6d7e8f90")
    assert (source.max_depth, source.max_pages, source.follow_links, source.requests_per_second) == (4, 250, True, 3.0)


def test_a_config_saved_with_a_byte_order_mark_loads(tmp_path):
    path = tmp_path / "index.toml"
    path.write_bytes(("# Windows Notepad's UTF-8\n" + FILES + LOCAL).encode("utf-8-sig"))
    assert [s.name for s in load_config(path).sources] == ["docs"]


def test_a_path_may_start_at_the_home_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    path = tmp_path / "etc" / "index.toml"
    path.parent.mkdir()
    path.write_text('artifacts = "~/static-rag"\n[[sources]]\nname = "notes"\ntype = "files"\npath = "~/notes"\n'
                    '[[sources]]\nname = "faq"\ntype = "answers"\npath = "~/faq.toml"\n' + LOCAL)
    config = load_config(path)  # before: /…/etc/~/notes, a folder not found
    assert config.artifacts == tmp_path / "home" / "static-rag"
    assert [s.path for s in config.sources] == [tmp_path / "home" / "notes", tmp_path / "home" / "faq.toml"]
