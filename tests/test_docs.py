"""The docs stay true: every command teaches with an example and is documented in the README, and
the README's sample search response names the fields the API returns."""

import re

import pytest
from click.testing import CliRunner

from indexer.cli import cli
from tests.conftest import REPO

COMMANDS = sorted(cli.commands)


@pytest.mark.parametrize("command", [None, *COMMANDS])
def test_every_command_has_help_with_a_worked_example(command):
    args = [command, "--help"] if command else ["--help"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0
    assert re.search(r"Example|Quick start", result.output), f"`index {command or ''} --help` shows no example"
    assert "index " in result.output


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_is_in_the_readme(command):
    assert f"index {command}" in (REPO / "README.md").read_text()


def test_readme_documents_every_exit_code():
    readme = (REPO / "README.md").read_text()
    for code in ("0", "1", "2", "3", "4", "5", "6"):
        assert re.search(rf"^\| {code} \|", readme, re.MULTILINE), f"exit code {code} is not in the README table"


def test_unknown_command_is_a_usage_error():
    result = CliRunner().invoke(cli, ["frobnicate"])
    assert result.exit_code == 2 and "No such command" in result.output


def test_the_readme_sample_response_has_the_fields_the_api_returns(examples_client):
    """A chatbot developer codes against the README's sample: it must name every field a search
    response carries, and no field it does not, for the request it shows."""
    import json

    readme = (REPO / "README.md").read_text()
    request = re.search(r"curl -s -XPOST 127\.0\.0\.1:8000/v1/search .*?-d '(\{.*?\})'\n(\{.*?\n\})\n```", readme, re.DOTALL)
    assert request, "the README's curl sample and its response are where this test looks for them"
    body, sample = json.loads(request.group(1)), json.loads(request.group(2))
    real = examples_client.post("/v1/search", json=body).json()
    assert set(sample) == set(real)
    assert [set(hit) for hit in sample["hits"]] == [set(hit) for hit in real["hits"]]
    assert (sample["hits"][0]["doc_id"], sample["answerable"]) == (real["hits"][0]["doc_id"], real["answerable"])


def _heading_anchors(markdown: str) -> set[str]:
    """The anchors GitHub gives a file's headings: lower case, punctuation dropped, spaces as hyphens."""
    headings = re.findall(r"^#+\s+(.+?)\s*$", markdown, re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-") for heading in headings}


def test_every_link_between_the_docs_leads_somewhere():
    """A reader who follows a link in a README or a demo page lands on the file, and on the
    section, it names (relative links; web addresses are not fetched)."""
    def ours(path):  # not the virtualenv's, a tool cache's (.pytest_cache) or node_modules' pages
        return not any(part.startswith(".") or part == "node_modules" for part in path.relative_to(REPO).parts)

    pages = [path for path in REPO.rglob("*.md") if ours(path)]
    broken = []
    for page in pages:
        for target, anchor in re.findall(r"\]\(([^)#\s:]*)(?:#([^)\s]+))?\)", page.read_text()):
            linked = (page.parent / target) if target else page
            if not linked.exists():
                broken.append(f"{page.relative_to(REPO)}: {target}")
            elif anchor and linked.is_file() and anchor not in _heading_anchors(linked.read_text()):
                broken.append(f"{page.relative_to(REPO)}: {target}#{anchor}")
    assert pages and not broken, broken
