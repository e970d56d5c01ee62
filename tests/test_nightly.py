"""The nightly ingest: its workflows pass GitHub's schema and zizmor, and the script they call
runs end to end against the loopback Notion and Gemini fakes, as the job would."""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, write_config
from tests.fakes.gemini_server import FakeGemini
from tests.fakes.notion_server import FakeNotion, heading, paragraph
from tests.test_index_run import run_cli

WORKFLOWS = sorted((REPO / ".github" / "workflows").glob("*.yml"))
SCRIPT = REPO / ".github" / "scripts" / "nightly-ingest.sh"
BIN = Path(sys.executable).parent


def test_both_workflows_exist_and_match_githubs_workflow_schema():
    assert [w.name for w in WORKFLOWS] == ["ci.yml", "nightly-ingest.yml"]
    result = subprocess.run([BIN / "check-jsonschema", "--builtin-schema", "vendor.github-workflows", *WORKFLOWS], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_zizmor_finds_nothing_above_low_in_the_workflows():
    result = subprocess.run([BIN / "zizmor", "--offline", "--min-severity", "medium", "--format", "json", *WORKFLOWS], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert json.loads(result.stdout) == []


def test_the_ci_workflow_runs_the_readme_test_command():
    readme = (REPO / "README.md").read_text()
    assert "make test" in readme and "run: make test" in (REPO / ".github" / "workflows" / "ci.yml").read_text()


def test_the_nightly_job_sets_up_in_a_repository_holding_only_the_config_and_the_job():
    """README "Deploy": your repository holds your config and the two files copied from static-rag.
    setup-python hashes `cache-dependency-path` for its pip cache and fails the job when no file
    matches ("No file in … matched to [pyproject.toml]"): the first night stopped before installing."""
    import fnmatch

    import yaml

    deploy = (REPO / "README.md").read_text().split("**1. Your repository**", 1)[1].split("```", 2)[1]
    layout = [line.split()[0] for line in deploy.splitlines() if line.strip()]
    assert layout == ["index.toml", ".github/workflows/nightly-ingest.yml", ".github/scripts/nightly-ingest.sh"]
    workflow = yaml.safe_load((REPO / ".github" / "workflows" / "nightly-ingest.yml").read_text())
    setup = next(step for step in workflow["jobs"]["ingest"]["steps"] if "setup-python" in step.get("uses", ""))
    patterns = setup["with"]["cache-dependency-path"].split()
    assert any(fnmatch.fnmatch(path, pattern) for path in layout for pattern in patterns), patterns


@pytest.fixture
def services():
    notion, gemini = FakeNotion().start(), FakeGemini().start()
    yield notion, gemini
    notion.close()
    gemini.close()


@pytest.fixture
def job(tmp_path, services):
    """A repository checkout as the job sees it: a config over a Notion workspace, Gemini for vectors."""
    notion, gemini = services
    ws = notion.workspace
    root = ws.page("Handbook", heading(1, "Handbook"), paragraph("Everything about working here."))
    ws.page("Refunds", paragraph("Customers get a refund within 30 days of purchase."), parent=root)
    ws.page("Holidays", paragraph("Everyone has twenty-five days of paid holiday a year."), parent=root)
    config = write_config(tmp_path, f'[[sources]]\nname = "wiki"\ntype = "notion"\nroots = ["{root}"]\nrequests_per_second = 100\n'
                                    '[[spaces]]\nprovider = "gemini"\n')
    env = {
        "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}",
        "HOME": str(tmp_path),
        "STATIC_RAG_CONFIG": str(config),
        "NOTION_TOKEN": notion.api_key, "NOTION_BASE_URL": notion.url,
        "GEMINI_API_KEY": gemini.api_key, "GEMINI_BASE_URL": gemini.url,
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
        "GITHUB_OUTPUT": str(tmp_path / "outputs"),
        "OUT": str(tmp_path / "dist"),
        "CHECK_LINKS": "0",  # the pages link to notion.so: tests reach loopback servers only
    }
    return tmp_path, env, ws


def nightly(tmp_path: Path, env: dict, **extra: str) -> subprocess.CompletedProcess:
    for name in ("summary.md", "outputs"):  # the runner gives each step empty files
        (tmp_path / name).write_text("")
    return subprocess.run([SCRIPT, "run"], cwd=tmp_path, env={**env, **extra}, capture_output=True, text=True, timeout=300)


def test_the_nightly_script_publishes_summarizes_and_packs_a_generation(job):
    tmp_path, env, ws = job
    result = nightly(tmp_path, env)
    assert result.returncode == 0, result.stderr
    summary = (tmp_path / "summary.md").read_text()
    assert "### static-rag ingest" in summary
    assert "| added | updated | metadata-only | skipped | deleted | failed |" in summary
    assert "| 3 | 0 | 0 | 0 | 0 | 0 |" in summary, "three pages added"
    assert "gemini-embedding-001-768" in summary and "Slowest documents to fetch" in summary
    assert re.search(r"(no cost|\$[0-9.]+); peak memory [0-9]+ MB\.", summary), "the headline whole: cost, then the run's memory"
    generation = (tmp_path / "outputs").read_text().strip().removeprefix("generation=")
    assert generation == (tmp_path / "artifacts" / "CURRENT").read_text().strip()
    dist = tmp_path / "dist"
    sha = (dist / "generation.tar.gz.sha256").read_text().split()[0]
    assert f"sha256 `{sha}`" in summary
    assert "#### Started from nothing" in summary and "artifacts folder not found" in summary, "the first night says why all was embedded"

    # A server installs what the job uploaded, and answers from it.
    server = tmp_path / "server"
    assert run_cli("unpack", str(dist / "generation.tar.gz"), "--artifacts", str(server)).exit_code == 0
    assert (server / "CURRENT").read_text().strip() == generation

    # The next night: one page cannot be read. The job still succeeds (exit 4 → 0), warns, and
    # the summary names the error; the page keeps its last good version.
    refunds = next(p for p, page in ws.pages.items() if page["title"] == "Refunds")
    ws.pages[refunds]["forbidden"] = True
    ws.set_blocks(next(p for p, page in ws.pages.items() if page["title"] == "Holidays"),
                  paragraph("Everyone has thirty days of paid holiday a year."), edited="2026-11-23T02:00:00.000Z")
    second = nightly(tmp_path, env)
    assert second.returncode == 0, second.stderr
    assert "::warning::some documents failed" in second.stdout
    summary = (tmp_path / "summary.md").read_text()
    assert "#### Errors by code" in summary and "NOTION\\_FORBIDDEN | 1 |" in summary
    assert "| 0 | 1 | 0 | 1 | 0 | 1 |" in summary, "one updated, one skipped, one failed"
    assert "Started from nothing" not in summary and "::notice::no generation" not in second.stdout

    # The night after, the page still cannot be read: a stale page, not a blip, and the job says so.
    third = nightly(tmp_path, env)
    assert third.returncode == 0 and "one has failed 2 runs in a row, since 20" in third.stdout, third.stdout
    assert "| longest failing |" in (tmp_path / "summary.md").read_text()
    assert (tmp_path / "outputs").read_text().strip() != f"generation={generation}"


def test_a_dry_run_reports_the_plan_and_publishes_nothing(job):
    tmp_path, env, _ = job
    result = nightly(tmp_path, env, DRY_RUN="true")
    assert result.returncode == 0, result.stderr
    assert "Dry run: 3 documents would be published" in (tmp_path / "summary.md").read_text()
    assert (tmp_path / "outputs").read_text() == "", "no generation for the upload steps"
    assert not (tmp_path / "artifacts" / "CURRENT").exists() and not (tmp_path / "dist" / "generation.tar.gz").exists()


def test_a_run_that_publishes_nothing_fails_the_job_with_index_runs_exit_code(job):
    tmp_path, env, _ = job
    result = nightly(tmp_path, env, GEMINI_API_KEY="")
    assert result.returncode == 2, "a configuration error: the missing key"
    summary = (tmp_path / "summary.md").read_text()
    assert "exited 2; nothing was published" in summary and "GEMINI_API_KEY" in summary
    assert "::error::" in result.stdout
    assert (tmp_path / "outputs").read_text() == ""


def test_a_night_that_lost_its_artifacts_says_so_and_max_cost_bounds_it(job):
    """The Actions cache that carries artifacts/ between nights is evicted after 7 days unused: the
    next night read and embedded everything, paid for with Gemini, and its summary read like any
    night's. It now says it started from nothing and why that happens; `STATIC_RAG_MAX_COST`
    (MAX_COST) stops such a night before it spends more."""
    tmp_path, env, ws = job
    assert nightly(tmp_path, env).returncode == 0
    shutil.rmtree(tmp_path / "artifacts")  # the cache restore found nothing
    result = nightly(tmp_path, env, MAX_COST="0.0000001")
    assert result.returncode == 5, result.stderr
    summary = (tmp_path / "summary.md").read_text()
    assert "exited 5; nothing was published" in summary and "--max-cost" in summary, summary
    assert "#### Started from nothing" in summary and "GitHub removes a cache unused for 7 days" in summary, summary
    assert nightly(tmp_path, env, MAX_COST="1").returncode == 0, "a budget the night fits in"

    # A night whose served generation is damaged builds on the kept one before it: not "from nothing".
    older = (tmp_path / "artifacts" / "CURRENT").read_text().strip()
    ws.set_blocks(next(p for p, page in ws.pages.items() if page["title"] == "Holidays"),
                  paragraph("Everyone has thirty days of paid holiday a year."), edited="2026-11-23T02:00:00.000Z")
    assert nightly(tmp_path, env).returncode == 0
    served = tmp_path / "artifacts" / "generations" / (tmp_path / "artifacts" / "CURRENT").read_text().strip() / "meta.duckdb"
    served.write_bytes(served.read_bytes()[:4096])  # cut short, as a bad copy would leave it
    result = nightly(tmp_path, env)
    summary = (tmp_path / "summary.md").read_text()
    assert result.returncode == 0 and "GENERATION\\_UNREADABLE" in summary and "Started from nothing" not in summary, summary
    assert json.loads((tmp_path / "dist" / "run.json").read_text())["built_on"] == older


def test_after_the_delete_guard_stops_a_night_a_run_by_hand_can_allow_the_deletions(job):
    """The delete guard stops a night (exit 3) until someone passes --allow-mass-delete, which the
    workflow had no input for: a site that really removed pages stayed stuck, night after night."""
    tmp_path, env, ws = job
    config = Path(env["STATIC_RAG_CONFIG"])
    config.write_text("mass_delete_min = 1\n" + config.read_text())  # a small workspace's guard, as strict as a large one's
    assert nightly(tmp_path, env).returncode == 0
    refunds = next(p for p, page in ws.pages.items() if page["title"] == "Refunds")
    ws.pages[refunds]["in_trash"] = True  # one page of three: over max_delete_fraction (30%)
    stopped = nightly(tmp_path, env)
    summary = (tmp_path / "summary.md").read_text()
    assert stopped.returncode == 3 and "`allow_mass_delete` ticked" in summary, summary
    allowed = nightly(tmp_path, env, ALLOW_MASS_DELETE="true")  # the workflow's input, run by hand
    assert allowed.returncode == 0 and "| 0 | 0 | 0 | 2 | 1 | 0 |" in (tmp_path / "summary.md").read_text()
    workflow = (REPO / ".github" / "workflows" / "nightly-ingest.yml").read_text()
    assert "allow_mass_delete:" in workflow and "ALLOW_MASS_DELETE: ${{ inputs.allow_mass_delete || false }}" in workflow


def test_a_night_stopped_by_a_changed_model_says_how_to_embed_anew(job, services):
    """The provider's model changed under its name: the night stops (exit 1) before paying for
    chunks; the summary says to run the workflow with `reembed`, which publishes."""
    import numpy as np

    from tests.fakes.service import word_vector

    tmp_path, env, ws = job
    _, gemini = services
    assert nightly(tmp_path, env).returncode == 0
    ws.set_blocks(next(p for p, page in ws.pages.items() if page["title"] == "Refunds"),
                  paragraph("Customers get a refund within 60 days of purchase."), edited="2026-11-23T03:00:00.000Z")
    gemini.vector = lambda text, dimensions: np.roll(word_vector(text, dimensions), 7)
    try:
        stopped = nightly(tmp_path, env)
        summary = (tmp_path / "summary.md").read_text()
        assert stopped.returncode == 1 and "with `reembed` ticked" in summary, summary
        assert nightly(tmp_path, env, REEMBED="true").returncode == 0
        assert nightly(tmp_path, env).returncode == 0, "the nights after check against the new model"
    finally:
        del gemini.vector  # the fixture's server serves the other tests of this module
    workflow = (REPO / ".github" / "workflows" / "nightly-ingest.yml").read_text()
    assert "reembed:" in workflow and "REEMBED: ${{ inputs.reembed || false }}" in workflow


def labeled_set(tmp_path: Path, question: str, title: str) -> Path:
    """A labeled set over the job's own pages (corpus ids are doc ids): `question` answered by the page `title`."""
    dataset = tmp_path / "labeled"
    (dataset / "qrels").mkdir(parents=True, exist_ok=True)
    hits = json.loads(run_cli("search", title, "--artifacts", str(tmp_path / "artifacts"), "--json", "--mode", "lexical").output)["hits"]
    doc_id = next(h["doc_id"] for h in hits if h["title"] == title)
    (dataset / "corpus.jsonl").write_text(json.dumps({"_id": doc_id, "title": title, "text": title}) + "\n")
    (dataset / "queries.jsonl").write_text(json.dumps({"_id": "q1", "text": question}) + "\n")
    (dataset / "qrels" / "test.tsv").write_text(f"query-id\tcorpus-id\tscore\nq1\t{doc_id}\t1\n")
    return dataset


def test_a_failed_eval_gate_rolls_the_generation_back_and_fails_the_job(job):
    tmp_path, env, _ = job
    assert nightly(tmp_path, env).returncode == 0
    first = (tmp_path / "artifacts" / "CURRENT").read_text().strip()
    # A question labeled with the wrong page, and a floor no ranking can meet.
    dataset = labeled_set(tmp_path, "paid holiday days", "Refunds")
    gate = tmp_path / "floors.toml"
    gate.write_text('[hybrid]\n"ndcg@10" = 0.99\n')
    result = nightly(tmp_path, env, FULL_REFRESH="true", EVAL_DATASET=str(dataset), EVAL_GATE=str(gate))
    assert result.returncode == 6, result.stdout + result.stderr
    assert "Evaluation gate: failed" in (tmp_path / "summary.md").read_text()
    assert (tmp_path / "artifacts" / "CURRENT").read_text().strip() == first, "rolled back"
    assert (tmp_path / "outputs").read_text() == ""


def test_the_eval_gate_can_refuse_a_generation_that_answers_what_it_should_not(job):
    """The gate's [answerable] limit is checked on the off-topic question folders EVAL_OFF_TOPIC lists,
    with no labeled questions needed."""
    tmp_path, env, _ = job
    assert nightly(tmp_path, env).returncode == 0
    first = (tmp_path / "artifacts" / "CURRENT").read_text().strip()
    folders = {"astronomy": "which moons of Jupiter have oceans under their ice", "holidays": "Everyone has twenty-five days of paid holiday a year."}
    for name, question in folders.items():
        (tmp_path / name).mkdir()
        (tmp_path / name / "queries.jsonl").write_text(json.dumps({"_id": name, "text": question}) + "\n")
    gate = tmp_path / "limits.toml"
    gate.write_text("[answerable]\nmax_off_topic_answered = 0\n")
    result = nightly(tmp_path, env, FULL_REFRESH="true", EVAL_GATE=str(gate), EVAL_OFF_TOPIC=f"{tmp_path / 'astronomy'}:{tmp_path / 'holidays'}")
    assert result.returncode == 6, result.stdout + result.stderr
    assert "vs astronomy (1 off-topic questions)" in result.stdout, "every folder of the list is asked"
    assert "Gate not met: gemini-embedding-001-768 answerable vs holidays: off_topic_answered = 1.0000 > 0" in result.stdout
    assert (tmp_path / "artifacts" / "CURRENT").read_text().strip() == first, "rolled back"


def test_the_job_warns_when_hits_link_to_missing_pages(job, site):
    """A url_template that does not match the site (or a site that moved its pages) sent every
    visitor a chatbot cited to an error page, and each night's job was green without a word."""
    tmp_path, env, _ = job
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "refunds.md").write_text("# Refunds\n\nA refund takes five days.\n")
    (docs / "holidays.md").write_text("# Holidays\n\nEveryone has thirty days of paid holiday.\n")
    site.routes["/help/refunds/"] = (200, "text/html", b"<h1>Refunds</h1>")  # holidays is not on the site
    config = write_config(tmp_path, f'[[sources]]\nname = "docs"\ntype = "files"\npath = "docs"\nurl_template = "{site.url("/help/{slug}/")}"\n'
                                    '[[spaces]]\nprovider = "gemini"\n')
    result = nightly(tmp_path, {**env, "STATIC_RAG_CONFIG": str(config)}, CHECK_LINKS="5")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "::warning::some document URLs answer 404" in result.stdout
    summary = (tmp_path / "summary.md").read_text()
    assert "#### Links: some hits link to a missing page" in summary
    assert f"broken: HTTP 404 {site.url('/help/holidays/')} (file:holidays.md, source docs)" in summary
    assert (tmp_path / "dist" / "generation.tar.gz").exists(), "the generation is still packed: a warning, not a failure"
