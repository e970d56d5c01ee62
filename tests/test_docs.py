"""The docs stay true: every command teaches with an example and is documented in the README."""

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
