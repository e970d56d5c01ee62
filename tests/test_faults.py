"""Runs that cannot quietly go wrong: faults injected into loopback services (real clients) never
turn into lost documents, and every run, failed or not, can be seen afterwards."""

import json

import pytest
from click.testing import CliRunner

from indexer.cli import cli
from tests.conftest import write_config
from tests.fakes.notion_server import FakeNotion, paragraph


@pytest.fixture
def notion(monkeypatch):
    fake = FakeNotion().start()
    monkeypatch.setenv("NOTION_TOKEN", fake.api_key)
    monkeypatch.setenv("NOTION_BASE_URL", fake.url)
    yield fake
    fake.close()


def run(config, *args: str) -> tuple[int, dict]:
    result = CliRunner().invoke(cli, ["run", "-c", str(config), "--json", *args])
    assert "Traceback" not in result.output
    return result.exit_code, json.loads(result.output) if result.output.strip().startswith("{") else {"output": result.output}


@pytest.mark.parametrize("flags", [(), ("--full-refresh",)])
def test_a_notion_page_that_keeps_failing_deletes_nothing_below_it(notion, tmp_path, local_embedder, flags):
    ws = notion.workspace
    root = ws.page("Handbook", paragraph("How the team works."))
    guides = ws.page("Guides", paragraph("Everything we wrote down."), parent=root)
    for i in range(5):
        ws.page(f"Guide {i}", paragraph(f"Guide number {i} explains step {i}."), parent=guides)
    config = write_config(tmp_path, f'[[sources]]\nname = "wiki"\ntype = "notion"\nroots = ["{root}"]\nrequests_per_second = 100\n'
                                    '[[spaces]]\nprovider = "local"\n')
    code, first = run(config)
    assert code == 0 and first["documents"]["added"] == 7

    ws.set_blocks(guides, paragraph("Everything we wrote down, revised."), edited="2026-11-20T10:00:00.000Z")  # so a normal run reads it too
    notion.path_faults[f"/v1/blocks/{guides}/children"] = [{"status": 503}] * 50  # every retry fails
    code, second = run(config, *flags)
    assert code == 4, second
    assert second["documents"]["deleted"] == 0, "a page that could not be read proves nothing about the pages below it"
    status = json.loads(CliRunner().invoke(cli, ["status", "-c", str(config), "--json"]).output)
    assert status["documents"] == 7
