"""What the machine does under a run: a disk that fills up, a folder mounted read-only, a folder
the run may not read, a served generation damaged or missing on disk. Each is a real one — a tmpfs
or a read-only bind mount in a user and mount namespace of the test's own (`unshare -rm`, no root
needed), a folder of mode 000 (for root, read without root's capabilities: `setpriv`), bits flipped
in a real file — and each must end in words that say what happened, never "unexpected"."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from indexer.cli import cli
from tests.conftest import flip_bits, write_config
from tests.corpus import write_corpus
from tests.fakes.openai_server import FakeOpenAI
from tests.test_faults import run
from tests.test_index_run import edit, small_corpus


def namespaces_or_skip(what: str) -> None:
    if shutil.which("unshare") is None or subprocess.run(["unshare", "-rm", "true"], capture_output=True).returncode != 0:
        pytest.skip(f"needs `unshare -rm` (user namespaces) to {what} without root")


def test_a_full_disk_stops_the_run_with_what_to_free_and_the_next_run_publishes(tmp_path):
    """The artifacts' disk filled up under a nightly run: it ended with "unexpected RuntimeError:
    Error in void faiss::write_index(...) at /project/faiss/impl/index_write.cpp:499", nothing
    said the disk was full or what was still served — and it had embedded (with a paid provider,
    paid for) every vector it then threw away. A disk that cannot hold even the least the run will
    write now stops it before it embeds anything; one that fills up while it writes says so. The
    disk is a real tmpfs of 8 MB, mounted in a user and mount namespace of its own (`unshare`), so
    no root is needed and nothing outside the test sees it."""
    namespaces_or_skip("mount a small disk")
    disk, out = tmp_path / "disk", tmp_path / "out"
    disk.mkdir()
    out.mkdir()
    paths = write_corpus(tmp_path / "docs", 40, min_words=200, max_words=400)
    config = write_config(tmp_path, f'artifacts = "{disk}/artifacts"\n[[sources]]\nname = "docs"\ntype = "files"\npath = "docs"\n'
                                    '[[spaces]]\nprovider = "openai"\n')
    index = Path(sys.executable).parent / "index"
    edit = " ".join(f"echo 'An edit.' >> {p};" for p in paths[:20])
    script = f"""
        mount -t tmpfs -o size=8m tmpfs {disk} || exit 99
        {index} run -c {config} -q > {out}/first.txt 2>&1; echo $? > {out}/first.rc
        used=$(du -sb {disk}/artifacts | cut -f1)
        free=$(df --output=avail -B1 {disk} | tail -1)
        head -c $((free - used / 3)) /dev/zero > {disk}/filler   # a third of what the last generation took is left
        {edit}
        {index} run -c {config} --dry-run --json > {out}/dry.json 2> /dev/null
        OPENAI_BASE_URL=$SHORT_URL {index} run -c {config} > {out}/short.txt 2>&1; echo $? > {out}/short.rc
        {index} runs -c {config} --json > {out}/short-runs.json
        rm {disk}/filler; head -c $((free - used)) /dev/zero > {disk}/filler   # as much as it took: enough to start, not to finish
        {index} run -c {config} > {out}/full.txt 2>&1; echo $? > {out}/full.rc
        {index} runs -c {config} --json > {out}/runs.json
        cat {disk}/artifacts/CURRENT > {out}/current.txt; ls -a {disk}/artifacts/generations > {out}/generations.txt
        head -c 100000000 /dev/zero > {disk}/filler-rest 2>/dev/null   # now full to the page
        log={disk}/artifacts/runs.jsonl
        pad=$(( (4096 - $(stat -c %s $log) % 4096) % 4096 - 50 ))   # 50 bytes left: the next line is cut short
        [ $pad -gt 0 ] && head -c $pad /dev/zero | tr '\\0' '\\n' >> $log
        {index} run -c {config} -q > {out}/no-byte-left.txt 2>&1; echo $? > {out}/no-byte-left.rc
        rm {disk}/filler {disk}/filler-rest
        {index} run -c {config} -q > {out}/freed.txt 2>&1; echo $? > {out}/freed.rc
        cat {disk}/artifacts/CURRENT > {out}/current-after.txt; cp $log {out}/runs.jsonl
    """
    fake, short = FakeOpenAI().start(), FakeOpenAI().start()  # `short`: the embedder of the run the disk is too small for
    try:
        env = {**os.environ, "OPENAI_API_KEY": fake.api_key, "OPENAI_BASE_URL": f"{fake.url}/v1", "SHORT_URL": f"{short.url}/v1"}
        done = subprocess.run(["unshare", "-rm", "sh", "-c", script], env=env, capture_output=True, text=True, timeout=300)
    finally:
        fake.close()
        short.close()
    assert done.returncode != 99, done.stderr
    read = lambda name: (out / name).read_text()  # noqa: E731
    assert read("first.rc").strip() == "0", read("first.txt")
    first = read("first.txt").split()[2].rstrip(":")  # "Published generation ID: …"
    plan = json.loads(read("dry.json"))  # where an admin looks before a paid run
    assert [w for w in plan["warnings"] if w["code"] == "NO_ROOM" and "a run would need at least" in w["message"]], plan["warnings"]
    said = read("short.txt")
    assert read("short.rc").strip() == "1" and f"the disk holding {disk}/artifacts has " in said and "this run needs at least" in said, said
    assert f"Nothing was embedded or published; {first} is still served" in said and short.ok_calls == [], (said, len(short.ok_calls))
    assert "this run needs at least" in json.loads(read("short-runs.json"))[0]["error"]
    said = read("full.txt")
    assert read("full.rc").strip() == "1" and "Traceback" not in said and "unexpected" not in said, said
    assert f"the disk holding {disk}/artifacts is full (" in said and f"Nothing was published; {first} is still served" in said, said
    assert read("current.txt").strip() == first and [g for g in read("generations.txt").split() if g.startswith(".tmp")] == []
    logged = json.loads(read("runs.json"))[0]
    assert logged["status"] == "failed" and "is full" in logged["error"], logged
    said = read("no-byte-left.txt")  # not even the run's first line fits in the run log
    assert read("no-byte-left.rc").strip() == "1" and f"a disk is full: [Errno 28] No space left on device: '{disk}/artifacts/runs.jsonl'" in said, said
    assert read("freed.rc").strip() == "0", read("freed.txt")
    assert read("current-after.txt").strip() != first
    lines = [json.loads(line) for line in read("runs.jsonl").splitlines() if line.strip()]  # the cut line was taken back: none is glued to it
    assert [line["status"] for line in lines][-2:] == ["in_progress", "success"]


def test_a_read_only_artifacts_folder_is_named_not_reported_as_a_bug(tmp_path):
    """The artifacts volume mounted read-only (`:ro`, as the servers mount it) under the indexer:
    "Error: unexpected OSError: [Errno 30] Read-only file system: '…/runs.jsonl'. … Set
    STATIC_RAG_DEBUG=1 to see the traceback.", which reads as a bug of ours. A real read-only bind
    mount, in a user and mount namespace of the test's own (`unshare`)."""
    namespaces_or_skip("mount a folder read-only")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# Rollback\n\nHow to roll back a bad index run.\n")
    (tmp_path / "artifacts").mkdir()
    config = write_config(tmp_path, '[[sources]]\nname = "docs"\ntype = "files"\npath = "docs"\n[[spaces]]\nprovider = "local"\n')
    index = Path(sys.executable).parent / "index"
    artifacts = tmp_path / "artifacts"
    script = f"mount --bind -o ro {artifacts} {artifacts} || exit 99; exec {index} run -c {config} -q"
    done = subprocess.run(["unshare", "-rm", "sh", "-c", script], capture_output=True, text=True, timeout=300, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stderr.strip() == f"Error: {artifacts}/runs.jsonl: Read-only file system. Nothing was published by this command.", done.stderr


def run_unable_to_read(config: Path, folder: Path) -> subprocess.CompletedProcess:
    """`index run` with `folder` unreadable to it: mode 000, and for root `setpriv` takes away the
    capabilities that let root read anything."""
    prefix = ["setpriv", "--bounding-set=-dac_override,-dac_read_search"] if os.geteuid() == 0 else []
    folder.chmod(0)
    try:
        if (prefix and (shutil.which("setpriv") is None or subprocess.run([*prefix, "true"], capture_output=True).returncode != 0)
                or subprocess.run([*prefix, "ls", str(folder)], capture_output=True).returncode == 0):
            pytest.skip("cannot make a folder unreadable here (root without setpriv, or setpriv not allowed to drop capabilities)")
        return subprocess.run([*prefix, str(Path(sys.executable).parent / "index"), "run", "-c", str(config), "-q"], capture_output=True,
                              text=True, timeout=300, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    finally:
        folder.chmod(0o755)


def refunds_and_private_kettles(docs: Path) -> Path:
    """A files source of two pages, one of them in `private/`; its config, beside `docs`."""
    (docs / "private").mkdir(parents=True)
    (docs / "refunds.md").write_text("# Refunds\n\nRefunds take five business days.\n")
    (docs / "private" / "kettles.md").write_text("# Kettles\n\nOur kettles boil water in ninety seconds.\n")
    return write_config(docs.parent, '[[sources]]\nname = "docs"\ntype = "files"\npath = "docs"\n[[spaces]]\nprovider = "local"\n')


@pytest.mark.parametrize("unreadable", ["docs/private", "docs"], ids=["a-subfolder", "the-folder"])
def test_a_folder_that_cannot_be_read_keeps_its_pages_and_says_so(tmp_path, local_embedder, unreadable):
    """A subfolder of a files source that lost its read permission (another user's, a network disk)
    was left out in silence: its pages were deleted from the index and the run exited 0. The source
    folder itself then listed as empty. Now the folder is named, its pages keep their last versions
    and nothing of the source is deleted in that run (exit 4), as for a sitemap that cannot be read."""
    config = refunds_and_private_kettles(tmp_path / "docs")
    assert run(config)[0] == 0
    done = run_unable_to_read(config, tmp_path / unreadable)
    assert done.returncode == 4 and "Traceback" not in done.stderr, done.stdout + done.stderr
    named = "folder private/" if unreadable == "docs/private" else f"the folder {tmp_path / 'docs'}"
    assert f"{named} could not be read (Permission denied): the files under it keep their last versions" in done.stderr, done.stderr
    for question, page in (("how fast do kettles boil water?", "private/kettles.md"), ("how long do refunds take?", "refunds.md")):
        found = json.loads(CliRunner().invoke(cli, ["search", question, "-c", str(config), "--json"]).output)
        assert found["hits"][0]["path"] == page, found["hits"]


def test_a_folder_git_ignores_is_left_out_even_when_it_cannot_be_read(tmp_path, local_embedder):
    docs = tmp_path / "docs"
    config = refunds_and_private_kettles(docs)
    (docs / ".gitignore").write_text("private/\n")
    subprocess.run(["git", "init", "-q", str(docs)], check=True)
    assert run(config)[0] == 0
    done = run_unable_to_read(config, docs / "private")
    assert done.returncode == 0 and done.stderr == "", done.stdout + done.stderr


def test_a_damaged_served_generation_is_built_again_and_the_run_says_why(tmp_path, local_embedder):
    """Bit rot or a bad copy in the served generation's meta.duckdb: the run ended "unexpected
    Error: Corrupt database file: computed checksum … does not match …" and published nothing, and
    servers cannot open that generation either. With no older generation kept to build on, it is
    now built again from the sources, with a warning that says why everything was embedded."""
    config = small_corpus(tmp_path)
    artifacts = tmp_path / "artifacts"
    assert run(config)[0] == 0
    served = (artifacts / "CURRENT").read_text().strip()
    damaged = artifacts / "generations" / served / "meta.duckdb"
    flip_bits(damaged)
    code, report = run(config)
    assert code == 0 and report["documents"]["added"] == 2, report
    said = [w["message"] for w in report["warnings"] if w["code"] == "GENERATION_UNREADABLE"]
    assert len(said) == 1 and f"{damaged} cannot be read (" in said[0] and "Corrupt database file" in said[0] and "started afresh" in said[0], said
    assert (artifacts / "CURRENT").read_text().strip() != served
    assert CliRunner().invoke(cli, ["search", "refund", "-c", str(config)]).exit_code == 0, "the new generation serves"


def two_generations(tmp_path: Path) -> tuple[Path, str, str]:
    """A small corpus indexed, one file edited, indexed again: (its config, the older generation, the served one)."""
    config = small_corpus(tmp_path)
    assert run(config)[0] == 0
    older = (tmp_path / "artifacts" / "CURRENT").read_text().strip()
    edit(tmp_path, 1)
    assert run(config)[0] == 0
    return config, older, (tmp_path / "artifacts" / "CURRENT").read_text().strip()


def test_a_damaged_served_generation_is_rebuilt_on_the_newest_kept_one_embedding_only_what_changed(tmp_path, local_embedder):
    """A damaged served generation made the run start afresh — every chunk embedded again (131 of
    131 on `examples/`, paid for again with a paid provider) — although the generation before it
    sat intact beside it. The run now builds on that one, as `index rollback` then `index run`
    would: only what changed since it is embedded."""
    config, older, served = two_generations(tmp_path)
    artifacts = tmp_path / "artifacts"
    flip_bits(artifacts / "generations" / served / "meta.duckdb")
    for command in (["status"], ["search", "refund"], ["runs", "--json"]):  # what an admin tries first: said, not "unexpected Error"
        said = CliRunner().invoke(cli, [*command, "-c", str(config)])
        if command[0] != "runs":  # the run log is not in the generation: it still lists every run
            assert said.exit_code == 1 and "the generation is damaged; `index rollback` serves the one before it" in said.output, said.output
        assert "unexpected" not in said.output, said.output
    (tmp_path / "docs" / "refunds.md").write_text("---\ntitle: Refunds\n---\n# Refunds\n\nCustomers can ask for a refund within 60 days.\n")
    code, report = run(config)
    assert code == 0, report
    said = [w["message"] for w in report["warnings"] if w["code"] == "GENERATION_UNREADABLE"]
    assert len(said) == 1 and "Corrupt database file" in said[0] and f"built on generation {older} instead" in said[0], said
    # Against the older generation both files changed (shipping.txt in the damaged one, refunds.md now); nothing else is embedded.
    assert report["documents"]["updated"] == 2 and report["documents"]["added"] == 0, report["documents"]
    assert report["spaces"]["local-all-minilm-l6-v2-384"]["embedded"] == 2, report["spaces"]
    assert (artifacts / "CURRENT").read_text().strip() not in (older, served)
    found = json.loads(CliRunner().invoke(cli, ["search", "refund within 60 days", "-c", str(config), "--json"]).output)
    assert "60 days" in found["hits"][0]["text"], found
    now = (artifacts / "CURRENT").read_text()
    back = CliRunner().invoke(cli, ["rollback", served, "-c", str(config)])  # pointing servers at the damaged one again: refused
    assert back.exit_code == 1 and "the generation is damaged; CURRENT is unchanged" in back.output, back.output
    assert (artifacts / "CURRENT").read_text() == now


def test_rollback_refuses_a_kept_generation_with_a_file_missing(tmp_path, local_embedder):
    """Its database opens, but a file its manifest lists is gone (removed by hand, a partial copy):
    pointed at, every server would refuse it. `index rollback` says so and leaves CURRENT alone."""
    config, older, served = two_generations(tmp_path)
    artifacts = tmp_path / "artifacts"
    (lost,) = (artifacts / "generations" / older / "spaces").glob("*/segments.json")
    lost.unlink()
    back = CliRunner().invoke(cli, ["rollback", "-c", str(config)])
    assert back.exit_code == 1 and f"{lost} is missing or has the wrong size" in back.output and "CURRENT is unchanged" in back.output, back.output
    assert (artifacts / "CURRENT").read_text().strip() == served


@pytest.mark.parametrize("named", ["20990101T000000.000000Z-abcdef", "20000101T000000.000000Z-abcdef"], ids=["newer", "older-than-kept"])
def test_a_run_that_cannot_read_what_current_names_builds_on_the_kept_generation_and_publishes(tmp_path, local_embedder, named):
    """CURRENT naming a generation that is not there (a folder removed by hand, a partial copy):
    the run started afresh — every chunk embedded again — and its report read like a first run's.
    It now builds on the kept generation and says so, in the dry run too (what an admin checks
    before a paid run); it publishes although no document changed, or servers would go on
    failing to open what CURRENT names. A first run says nothing of the kind. A name older than
    every kept generation (a CURRENT copied from another machine) still finds the newest kept one."""
    config = small_corpus(tmp_path)
    code, first = run(config)
    assert code == 0 and not [w for w in first["warnings"] if w["code"] == "GENERATION_UNREADABLE"], first["warnings"]
    kept = (tmp_path / "artifacts" / "CURRENT").read_text().strip()
    (tmp_path / "artifacts" / "CURRENT").write_text(named + "\n")
    code, plan = run(config, "--dry-run")
    assert code == 0 and [w["message"] for w in plan["warnings"] if f"a run would build on generation {kept}" in w["message"]], plan["warnings"]
    code, rebuilt = run(config)
    assert code == 0 and rebuilt["documents"]["skipped"] == 2 and rebuilt["spaces"]["local-all-minilm-l6-v2-384"]["embedded"] == 0, rebuilt
    said = [w["message"] for w in rebuilt["warnings"] if w["code"] == "GENERATION_UNREADABLE"]
    assert len(said) == 1 and named in said[0] and f"built on generation {kept}" in said[0], rebuilt["warnings"]
    published = (tmp_path / "artifacts" / "CURRENT").read_text().strip()
    assert published not in (kept, named) and published == rebuilt["generation"] and not rebuilt["unchanged"]
    assert CliRunner().invoke(cli, ["search", "refund", "-c", str(config)]).exit_code == 0, "what CURRENT names serves again"
