"""A run killed at any moment (SIGKILL) leaves the served generation intact, and the next run
produces what an uninterrupted run would have.

The killed runs embed through the fake OpenAI server (no model to load), over a generated
corpus big enough that crawling, chunking, embedding, writing and publishing each take a
measurable share of the run, so the kills land in every phase. A run or an evaluation stopped
by SIGTERM, Ctrl-C or its terminal closing ends at once, says so, logs it and leaves nothing behind.
"""

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import numpy as np
import pytest

from indexer.artifacts import read_manifest
from tests.conftest import stored_vectors, write_config
from tests.corpus import write_corpus
from tests.fakes.openai_server import FakeOpenAI

INDEX = Path(sys.executable).parent / "index"
SPACE = "openai-text-embedding-3-small-1536"
# When to kill, as shares of the same run's uninterrupted wall time (measured in the test: the
# run got faster than any fixed list of seconds, and the machine's load changes it).
KILL_AT = (0.15, 0.3, 0.4, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 1.0, 1.1, 1.2)


def snapshot(artifacts: Path) -> tuple[list, list, np.ndarray]:
    folder = artifacts / "generations" / (artifacts / "CURRENT").read_text().strip()
    db = duckdb.connect(str(folder / "meta.duckdb"), read_only=True)
    documents = db.execute("SELECT doc_id, content_hash, metadata_hash, title, text FROM documents ORDER BY doc_id").fetchall()
    rows = db.execute("SELECT space_id, vector_id, chunk_id, doc_id, ordinal, start_offset, end_offset, chunk_hash FROM chunks ORDER BY space_id, chunk_id").fetchall()
    db.close()
    vectors = stored_vectors(folder / "spaces" / SPACE)
    # Vector ids depend on how the space's segments were written; each chunk's vector must not.
    return documents, [row[:1] + row[2:] for row in rows], np.stack([vectors[row[1]] for row in rows])


def segments(artifacts: Path) -> dict:
    folder = artifacts / "generations" / (artifacts / "CURRENT").read_text().strip()
    return json.loads((folder / "spaces" / SPACE / "segments.json").read_text())


# "append": the run adds a segment and deletes rows of the old one; "compact": it changes a third
# of the documents, past the deleted share that merges every segment into one new one.
@pytest.mark.parametrize("edited", [5, 80], ids=["append", "compact"])
def test_sigkill_at_any_moment_leaves_current_intact_and_a_rerun_matches_an_uninterrupted_run(tmp_path, edited):
    fake = FakeOpenAI().start()
    env = {**os.environ, "OPENAI_API_KEY": fake.api_key, "OPENAI_BASE_URL": f"{fake.url}/v1"}
    docs = tmp_path / "docs"
    paths = write_corpus(docs, 250, min_words=300, max_words=1200)
    config = write_config(tmp_path, '[[sources]]\nname = "docs"\ntype = "files"\npath = "docs"\n[[spaces]]\nprovider = "openai"\n')

    def index_run(artifacts: Path) -> subprocess.Popen:
        return subprocess.Popen([str(INDEX), "run", "-c", str(config), "-a", str(artifacts), "-q"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)

    try:
        reference, killed = tmp_path / "reference", tmp_path / "killed"
        assert index_run(reference).wait(timeout=300) == 0
        shutil.copytree(reference, killed)
        # The next run has work in every step: edits, an addition, a removal, a metadata change.
        for path in paths[:edited]:
            path.write_text(path.read_text() + "\n## Update\n\nA new paragraph about refund policy changes.\n")
        paths[edited].write_text(paths[edited].read_text().replace(f"title: Document {edited}", "title: Renamed document"))
        paths[edited + 1].unlink()
        (docs / "added.md").write_text("# Added\n\nA page about webhooks and publishing.\n")
        started = time.monotonic()
        assert index_run(reference).wait(timeout=300) == 0
        uninterrupted = time.monotonic() - started
        expected = snapshot(reference)
        layout = segments(reference)
        if edited == 5:
            assert len(layout["segments"]) == 2 and layout["deleted"] > 0, layout
        else:
            assert len(layout["segments"]) == 1 and layout["deleted"] == 0, layout

        served = (killed / "CURRENT").read_text()
        baseline = snapshot(killed)
        interrupted = 0
        for share in KILL_AT:
            process = index_run(killed)
            time.sleep(share * uninterrupted)
            if process.poll() is not None:
                break  # the run outran the kill: no later moment left to interrupt
            process.send_signal(signal.SIGKILL)
            process.wait(timeout=30)
            interrupted += 1
            for name in (p.name for p in (killed / "generations").iterdir() if not p.name.startswith(".")):
                read_manifest(killed / "generations" / name)  # every visible generation is complete
            if (killed / "CURRENT").read_text() == served:
                documents, chunks, vectors = snapshot(killed)
                assert (documents, chunks) == baseline[:2] and np.array_equal(vectors, baseline[2]), "the served generation is untouched"
            else:  # killed after publishing: CURRENT names the finished run's generation
                documents, chunks, vectors = snapshot(killed)
                assert (documents, chunks) == expected[:2] and np.array_equal(vectors, expected[2])
                break
        assert interrupted >= 5

        assert index_run(killed).wait(timeout=300) == 0
        documents, chunks, vectors = snapshot(killed)
        assert documents == expected[0]
        assert chunks == expected[1]
        assert np.array_equal(vectors, expected[2])
        shape = lambda found: ([s["rows"] for s in found["segments"]], found["deleted"])  # noqa: E731 — names differ: generation ids
        assert shape(segments(killed)) == shape(layout)
    finally:
        fake.close()


def test_a_native_crash_prints_where_each_thread_was(tmp_path):
    """A library that aborts (glibc's "free(): invalid pointer", a segfault) ended a run with that
    one line and nothing else in the nightly job's log; now every thread's Python stack follows."""
    fake = FakeOpenAI(faults=[{"delay": 3}]).start()  # the first embedding request hangs: the run is parked in its work
    env = {**os.environ, "OPENAI_API_KEY": fake.api_key, "OPENAI_BASE_URL": f"{fake.url}/v1"}
    write_corpus(tmp_path / "docs", 120, min_words=300, max_words=1200)
    config = write_config(tmp_path, '[[sources]]\nname = "docs"\ntype = "files"\npath = "docs"\n[[spaces]]\nprovider = "openai"\n')
    try:
        process = subprocess.Popen([str(INDEX), "run", "-c", str(config), "-q"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
        deadline = time.monotonic() + 60
        # Not a fixed sleep after the start: aborted in the middle of an import, the main thread's stack was
        # more than the 100 frames faulthandler prints, and the frames that say where the run was were cut.
        while not fake.received and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        process.send_signal(signal.SIGABRT)  # what abort() in a library raises
        err = process.communicate(timeout=60)[1].decode(errors="replace")
    finally:
        fake.close()
    assert process.returncode == -signal.SIGABRT
    assert "Fatal Python error: Aborted" in err and "most recent call first" in err, err[-2000:]
    assert "indexer/cli/base.py" in err, "the stack names where the run was"


def test_a_run_without_an_end_is_running_while_its_process_lives_and_unfinished_once_killed(tmp_path):
    """`index runs` said `in_progress` for a run killed last night as for one running now, and
    `index status` named only the run behind what is served."""
    from click.testing import CliRunner

    from indexer.cli import cli

    fake = FakeOpenAI().start()
    env = {**os.environ, "OPENAI_API_KEY": fake.api_key, "OPENAI_BASE_URL": f"{fake.url}/v1"}
    paths = write_corpus(tmp_path / "docs", 10, min_words=50, max_words=100)
    config = write_config(tmp_path, '[[sources]]\nname = "docs"\ntype = "files"\npath = "docs"\n[[spaces]]\nprovider = "openai"\n')
    runs = lambda *options: CliRunner().invoke(cli, ["runs", "-c", str(config), *options])  # noqa: E731
    try:
        assert subprocess.run([str(INDEX), "run", "-c", str(config), "-q"], capture_output=True, env=env, timeout=120).returncode == 0
        paths[0].write_text(paths[0].read_text() + "\n\nAn edit, so the next run embeds.\n")
        fake.faults = [{"delay": 8}]  # the next embedding request hangs: the run is alive meanwhile
        process = subprocess.Popen([str(INDEX), "run", "-c", str(config), "-q"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        deadline = time.monotonic() + 60
        while json.loads(runs("--json").output)[0]["status"] == "success" and time.monotonic() < deadline:
            time.sleep(0.05)
        live = json.loads(runs("--json").output)[0]
        assert live["status"] == "running", live
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
    finally:
        fake.close()
    killed = json.loads(runs("--json").output)[0]
    assert killed["status"] == "unfinished" and killed["run_id"] == live["run_id"]
    assert "unfinished" in runs().output and "ended without finishing (killed or crashed)" in runs().output
    report = CliRunner().invoke(cli, ["report", killed["run_id"], "-c", str(config)]).output
    assert "ended without finishing: its process is gone" in report and "Nothing was published" in report
    status = CliRunner().invoke(cli, ["status", "-c", str(config)]).output
    assert "Last run: " in status and "success" in status, "the run behind what is served"
    assert "Since then, 1 run(s) published nothing" in status and f"{killed['run_id']} unfinished: ended without finishing" in status, status


# SIGTERM: what `timeout`, systemd and `docker stop` send; it ended a run where it stood, with no
# end line in the run log. SIGINT: Ctrl-C, which waited for the embedding request in flight (and
# its retries) before the run ended: 40 s against a provider that hung for 40.
@pytest.mark.parametrize("signum, said, logged, status", [
    (signal.SIGTERM, "Stopped by SIGTERM.", "stopped by SIGTERM", -signal.SIGTERM),  # still ended by the signal, as supervisors expect
    (signal.SIGINT, "Aborted.", "stopped by Ctrl-C", 1),
], ids=["sigterm", "ctrl-c"])
def test_a_stopped_run_ends_at_once_says_so_and_leaves_what_is_served(tmp_path, signum, said, logged, status):
    def start(command, env):
        return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env,
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # (a background job ignores SIGINT)

    process, err, stopped, served = stop_a_run_mid_request(tmp_path, start, lambda process: process.send_signal(signum))
    assert process.returncode == status
    assert said in err and "Traceback" not in err, err[-2000:]
    assert stopped["status"] == "failed" and logged in stopped["error"], stopped
    assert served, "CURRENT is unchanged"


def test_a_run_whose_terminal_closes_ends_at_once_and_logs_why(tmp_path):
    """The terminal window or ssh session closed under `index run`: the kernel sends SIGHUP, and
    the progress bars' next write to the vanished terminal fails. It ended the run where it
    stood, with no end line in the run log (`unfinished`, as for a crash); with SIGHUP handled
    but not that write, by exit 1 instead of the signal (the write's OSError replaced the stop)."""
    import fcntl
    import pty
    import select
    import termios
    import threading

    terminal, side = pty.openpty()
    closing = threading.Event()

    def start(command, env):
        def own_terminal():  # a login shell's child: the pseudo-terminal is its controlling terminal,
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)
            signal.signal(signal.SIGHUP, signal.SIG_DFL)  # and a hang-up stops it (under `nohup make test` the run kept it ignored, rightly)

        process = subprocess.Popen(command, stdin=side, stdout=side, stderr=side, env=env, start_new_session=True, preexec_fn=own_terminal)
        os.close(side)
        drainer.start()
        return process

    def drain():
        # The terminal is closed here, between reads: closed by another thread while this one
        # waited in read(), it stayed open (and the kernel sent no hang-up) until the run wrote
        # again, and a run that waits on a request may not write for 30 s.
        while not closing.is_set():
            if select.select([terminal], [], [], 0.05)[0]:
                try:
                    if not os.read(terminal, 65536):
                        break
                except OSError:  # the run's side closed
                    break
        os.close(terminal)

    drainer = threading.Thread(target=drain, daemon=True)  # the progress bars must not fill the terminal's buffer

    def close_the_terminal(process):
        closing.set()
        drainer.join(timeout=10)

    process, _, stopped, served = stop_a_run_mid_request(tmp_path, start, close_the_terminal)
    assert process.returncode == -signal.SIGHUP, "ended by the hang-up, as a shell expects"
    assert stopped["status"] == "failed" and "stopped by SIGHUP (its terminal closed)" in stopped["error"], stopped
    assert served, "CURRENT is unchanged"


def test_a_run_whose_output_pipe_closes_still_publishes_and_logs_it(tmp_path):
    """`index run 2>&1 | head -2`: once the reader has gone, the progress bars' next write hit a
    broken pipe, and rich ended the process there (SystemExit): the run had published, yet the
    run log called it "failed"."""
    from click.testing import CliRunner

    from indexer.cli import cli

    fake = FakeOpenAI().start()
    env = {**os.environ, "OPENAI_API_KEY": fake.api_key, "OPENAI_BASE_URL": f"{fake.url}/v1"}
    write_corpus(tmp_path / "docs", 10, min_words=50, max_words=100)
    config = write_config(tmp_path, '[[sources]]\nname = "docs"\ntype = "files"\npath = "docs"\n[[spaces]]\nprovider = "openai"\n')
    try:
        process = subprocess.Popen([str(INDEX), "run", "-c", str(config)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
        process.stdout.close()  # the reader is gone before the first line
        process.wait(timeout=120)
    finally:
        fake.close()
    logged = json.loads(CliRunner().invoke(cli, ["runs", "-c", str(config), "--json"]).output)[0]
    assert (tmp_path / "artifacts" / "CURRENT").exists(), "the run published"
    assert logged["status"] == "success", logged


def test_the_next_evaluation_removes_the_index_a_killed_one_left_behind(tmp_path, monkeypatch):
    """SIGKILL (the OOM killer, a CI runner's hard timeout) cannot be cleaned up after: a killed
    `index eval` left its index of the dataset in /tmp (23 MB for SciFact), and nothing removed it."""
    from click.testing import CliRunner

    from indexer.cli import cli
    from indexer.processes import started

    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr("tempfile.tempdir", str(scratch))
    fake = FakeOpenAI().start()
    env = {**os.environ, "OPENAI_API_KEY": fake.api_key, "OPENAI_BASE_URL": f"{fake.url}/v1", "TMPDIR": str(scratch)}
    dataset = tiny_dataset(tmp_path / "dataset")
    config = write_config(tmp_path, '[[spaces]]\nprovider = "openai"\n')
    try:
        fake.faults = [{"delay": 30}]
        killed = subprocess.Popen([str(INDEX), "eval", "--dataset", str(dataset), "-c", str(config)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        deadline = time.monotonic() + 60
        while fake.faults and time.monotonic() < deadline:  # mid-evaluation: its index is being built
            time.sleep(0.05)
        killed.kill()
        killed.wait()
        left = list(scratch.glob("static-rag-eval-*"))
        assert len(left) == 1
        running = scratch / f"static-rag-eval-{socket.gethostname()}-{os.getpid()}-x7k2"
        running.mkdir()  # a running evaluation's (its name holds this process's id): kept
        reused = scratch / f"static-rag-eval-{socket.gethostname()}-{os.getpid()}-b9q1"
        reused.mkdir()  # last written an hour before this process began: a gone process's, whose id this one reuses
        os.utime(reused, (started(os.getpid()) - 3600,) * 2)
        monkeypatch.setenv("OPENAI_API_KEY", fake.api_key)
        monkeypatch.setenv("OPENAI_BASE_URL", f"{fake.url}/v1")
        result = CliRunner().invoke(cli, ["eval", "--dataset", str(dataset), "-c", str(config), "-q"])
    finally:
        fake.close()
    assert result.exit_code == 0, result.output
    assert list(scratch.glob("static-rag-eval-*")) == [running]


@pytest.mark.parametrize("signum, raised", [(signal.SIGTERM, "Terminated"), (signal.SIGINT, "KeyboardInterrupt")], ids=["sigterm", "ctrl-c"])
def test_a_stop_that_lands_in_a_duckdb_query_stays_a_stop(signum, raised):
    """DuckDB checks for signals during a query and drops what the handler raised: mostly it
    raises RuntimeError("Query interrupted") instead (the soak's SIGTERM 0.4 s into a run, while
    it read the last generation, ended it as "unexpected RuntimeError: Query interrupted", exit 1),
    at times it carries on with the query as if nothing had come. Either way the command must
    stop: at the end of the query's block, or at its next step of progress.

    The child starts with Ctrl-C's default action, as from a terminal. A pytest started as
    `nohup … &` from a script ignores SIGHUP, SIGINT and SIGQUIT (its /proc/self/status: SigIgn
    0x1001007), its workers and their children inherit that, and ignored signals stay ignored
    (`stop_on_signals`: a background job's, nohup's): the test saw "went on"."""
    script = """
import signal, sys, duckdb
from indexer.cli.stopping import raise_if_stopped, stop_on_signals, stops_kept
signal.signal(signal.SIGINT, signal.default_int_handler)
signal.signal(signal.SIGTERM, signal.SIG_DFL)
stop_on_signals()
duckdb.execute("SET enable_progress_bar = false")
print("querying", flush=True)
try:
    with stops_kept():
        duckdb.execute("SELECT sum(hash(i)) FROM range(1000000000) t(i)").fetchall()  # ~3 s, longer when loaded
        raise_if_stopped()  # the next step of progress
    print("went on")
except BaseException as exc:
    print(type(exc).__name__)
"""
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "querying", child.stderr.read()
        time.sleep(0.3)
        child.send_signal(signum)
        out, err = child.communicate(timeout=120)
    finally:
        child.kill()
    assert out.strip() == raised, out + err[-2000:]


def stop_a_run_mid_request(tmp_path, start, stop):
    """Publish a first run; start a second with `start(command, env)` whose embedding request
    hangs; once it hangs, `stop(process)`. The run must end within 30 s. Returns the process, its
    stderr if piped, its line in the run log, and whether CURRENT still names the first run."""
    from click.testing import CliRunner

    from indexer.cli import cli

    fake = FakeOpenAI().start()
    env = {**os.environ, "OPENAI_API_KEY": fake.api_key, "OPENAI_BASE_URL": f"{fake.url}/v1"}
    paths = write_corpus(tmp_path / "docs", 10, min_words=50, max_words=100)
    config = write_config(tmp_path, '[[sources]]\nname = "docs"\ntype = "files"\npath = "docs"\n[[spaces]]\nprovider = "openai"\n')
    try:
        assert subprocess.run([str(INDEX), "run", "-c", str(config), "-q"], capture_output=True, env=env, timeout=120).returncode == 0
        served = (tmp_path / "artifacts" / "CURRENT").read_text()
        paths[0].write_text(paths[0].read_text() + "\n\nAn edit, so the next run embeds.\n")
        fake.faults = [{"delay": 90}]  # the next embedding request hangs: the stop lands mid-run
        process = start([str(INDEX), "run", "-c", str(config)], env)
        deadline = time.monotonic() + 60
        while fake.faults and time.monotonic() < deadline:  # until the hanging request has arrived
            time.sleep(0.05)
        time.sleep(0.2)
        stop(process)
        try:
            err = process.communicate(timeout=30)[1]
        except subprocess.TimeoutExpired:
            process.kill()
            pytest.fail("the run waited for the hanging request instead of stopping")
    finally:
        fake.close()
    runs = json.loads(CliRunner().invoke(cli, ["runs", "-c", str(config), "--json"]).output)
    return process, (err or b"").decode(errors="replace"), runs[0], (tmp_path / "artifacts" / "CURRENT").read_text() == served


def test_sigterm_stops_an_evaluation_without_leaving_its_index_behind(tmp_path):
    """`index eval` builds the dataset's index in a temporary folder (tens of MB for a BEIR set);
    a SIGTERM (a CI job's `timeout`) left it in /tmp."""
    fake = FakeOpenAI().start()
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = {**os.environ, "OPENAI_API_KEY": fake.api_key, "OPENAI_BASE_URL": f"{fake.url}/v1", "TMPDIR": str(scratch)}
    dataset = tiny_dataset(tmp_path / "dataset")
    config = write_config(tmp_path, '[[spaces]]\nprovider = "openai"\n')  # eval reads its spaces
    try:
        fake.faults = [{"delay": 4}]
        process = subprocess.Popen([str(INDEX), "eval", "--dataset", str(dataset), "-c", str(config)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
        deadline = time.monotonic() + 60
        while fake.faults and time.monotonic() < deadline:  # until the first request, which hangs, has arrived
            time.sleep(0.05)
        assert len(list(scratch.glob("static-rag-eval-*"))) == 1  # (tiktoken keeps its cache there too)
        process.send_signal(signal.SIGTERM)
        err = process.communicate(timeout=60)[1].decode(errors="replace")
    finally:
        fake.close()
    assert process.returncode == -signal.SIGTERM and "Stopped by SIGTERM." in err, err[-2000:]
    assert list(scratch.glob("static-rag-eval-*")) == [], "the dataset's index is removed"


def tiny_dataset(folder: Path) -> Path:
    """A BEIR folder of 20 one-line pages and one judged question: enough for `index eval` to start."""
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text("\n".join(json.dumps({"_id": f"d{i}", "title": f"Page {i}", "text": f"Text of page {i}."}) for i in range(20)))
    (folder / "queries.jsonl").write_text(json.dumps({"_id": "q1", "text": "page one"}))
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    return folder
