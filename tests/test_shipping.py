"""`index pack` / `index unpack`: a generation travels as one archive with its sha256, and a
server's artifacts folder takes it only when everything checks out."""

import hashlib
import io
import json
import tarfile
from pathlib import Path

import pytest

from tests.conftest import write_config
from tests.test_index_run import run_cli

DOCS = '[[sources]]\nname = "docs"\ntype = "files"\npath = "docs"\n[[spaces]]\nprovider = "local"\n'


@pytest.fixture
def built(tmp_path, local_embedder) -> tuple[Path, Path]:
    """A config over two small documents, indexed once: (config, artifacts)."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "refunds.md").write_text("# Refunds\n\nCustomers can ask for a refund within 30 days of purchase.\n")
    (docs / "hours.md").write_text("# Hours\n\nThe shop opens at nine and closes at six on weekdays.\n")
    config = write_config(tmp_path, DOCS)
    assert run_cli("run", "--config", str(config), "-q").exit_code == 0
    return config, tmp_path / "artifacts"


def pack(config: Path, out: Path, *extra: str) -> dict:
    result = run_cli("pack", *extra, "-o", str(out), "--config", str(config), "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def search(artifacts: Path, query: str) -> list[dict]:
    result = run_cli("search", query, "--artifacts", str(artifacts), "--json", "--top-k", "1")
    assert result.exit_code == 0, result.output
    return json.loads(result.output)["hits"]


def test_a_packed_generation_unpacks_on_a_server_and_becomes_current(built, tmp_path):
    config, artifacts = built
    packed = pack(config, tmp_path / "out" / "gen.tar.gz")
    current = (artifacts / "CURRENT").read_text().strip()
    assert packed["generation"] == current
    checksum = Path(packed["checksum_file"]).read_text()
    assert checksum == f"{packed['sha256']}  gen.tar.gz\n", "the sha256sum -c format"

    server = tmp_path / "server-artifacts"
    result = run_cli("unpack", packed["archive"], "--artifacts", str(server))
    assert result.exit_code == 0, result.output
    assert "CURRENT now names it" in result.output
    assert (server / "CURRENT").read_text() == current + "\n"
    original = json.loads((artifacts / "generations" / current / "manifest.json").read_text())
    installed = json.loads((server / "generations" / current / "manifest.json").read_text())
    assert installed == original
    assert [p.name for p in (server / "generations").iterdir()] == [current], "no temporary folder left behind"
    assert search(server, "when can I get a refund")[0]["title"] == "Refunds"

    again = run_cli("unpack", packed["archive"], "--artifacts", str(server))
    assert again.exit_code == 0 and "already installed" in again.output, "a re-synced archive is harmless"


def test_a_newer_generation_replaces_the_current_one_and_old_ones_are_pruned(built, tmp_path):
    config, artifacts = built
    server = tmp_path / "server-artifacts"
    first = pack(config, tmp_path / "1.tar")
    (tmp_path / "docs" / "refunds.md").write_text("# Refunds\n\nRefunds are paid within 90 days of purchase.\n")
    assert run_cli("run", "--config", str(config), "-q").exit_code == 0
    second = pack(config, tmp_path / "2.tar")
    assert run_cli("unpack", first["archive"], "--artifacts", str(server)).exit_code == 0
    assert run_cli("unpack", second["archive"], "--artifacts", str(server), "--keep", "1").exit_code == 0
    assert (server / "CURRENT").read_text().strip() == second["generation"]
    assert "90 days" in search(server, "refund")[0]["text"]
    assert sorted(p.name for p in (server / "generations").iterdir()) == [second["generation"]]

    older = run_cli("unpack", first["archive"], "--artifacts", str(server))
    assert older.exit_code == 1 and "older than the current" in older.output and "--allow-older" in older.output
    assert (server / "CURRENT").read_text().strip() == second["generation"]
    back = run_cli("unpack", first["archive"], "--artifacts", str(server), "--allow-older")
    assert back.exit_code == 0 and (server / "CURRENT").read_text().strip() == first["generation"]


def test_a_damaged_archive_is_refused_and_nothing_is_installed(built, tmp_path):
    config, _ = built
    packed = pack(config, tmp_path / "gen.tar")
    archive = Path(packed["archive"])
    data = bytearray(archive.read_bytes())
    data[len(data) // 2] ^= 0xFF
    archive.write_bytes(bytes(data))
    server = tmp_path / "server-artifacts"
    result = run_cli("unpack", str(archive), "--artifacts", str(server))
    assert result.exit_code == 1
    assert "sha256 is" in result.output and "nothing installed" in result.output
    assert not (server / "CURRENT").exists()
    assert not (server / "generations").exists() or not any((server / "generations").iterdir())

    missing = tmp_path / "other.tar"
    missing.write_bytes(bytes(data))
    result = run_cli("unpack", str(missing), "--artifacts", str(server))
    assert result.exit_code == 1 and "other.tar.sha256 is missing" in result.output
    (tmp_path / "other.tar.sha256").write_bytes(b"\x1f\x8b\x08\x00" + bytes(range(128, 256)))  # a gzip where the checksum should be: was "unexpected"
    result = run_cli("unpack", str(missing), "--artifacts", str(server))
    assert result.exit_code == 1 and "other.tar.sha256 is not a checksum file (not text)" in result.output, result.output


def rewrite(archive: Path, change) -> str:
    """Repack `archive` with `change(name, bytes) -> bytes | None` applied to each file, and return
    a fresh sha256 of the result: what someone who altered the archive would publish with it."""
    out = io.BytesIO()
    with tarfile.open(archive) as src, tarfile.open(fileobj=out, mode="w") as dst:
        for member in src.getmembers():
            if not member.isfile():
                dst.addfile(member)
                continue
            body = change(member.name, src.extractfile(member).read())
            if body is None:
                continue
            member.size = len(body)
            dst.addfile(member, io.BytesIO(body))
    archive.write_bytes(out.getvalue())
    return hashlib.sha256(out.getvalue()).hexdigest()


def test_an_altered_file_with_a_matching_archive_checksum_is_still_refused(built, tmp_path):
    config, _ = built
    archive = Path(pack(config, tmp_path / "gen.tar")["archive"])

    def alter_report(name, body):
        return body.replace(b"docs", b"DOCS") if name.endswith("report.json") else body

    digest = rewrite(archive, alter_report)
    server = tmp_path / "server-artifacts"
    result = run_cli("unpack", str(archive), "--artifacts", str(server), "--sha256", digest)
    assert result.exit_code == 1 and "sha256 differs from the manifest" in result.output
    assert not (server / "CURRENT").exists()
    assert not any((server / "generations").iterdir()), "the temporary folder was removed"


def test_an_archive_with_unsafe_entries_is_refused(built, tmp_path):
    config, _ = built
    archive = Path(pack(config, tmp_path / "gen.tar")["archive"])
    with tarfile.open(archive, "a") as tar:
        evil = tarfile.TarInfo("../../outside.txt")
        evil.size = 4
        tar.addfile(evil, io.BytesIO(b"boom"))
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    result = run_cli("unpack", str(archive), "--artifacts", str(tmp_path / "server"), "--sha256", digest)
    assert result.exit_code == 1 and "unsafe entry '../../outside.txt'" in result.output
    assert not (tmp_path.parent / "outside.txt").exists()


def test_pack_names_the_generations_it_knows(built, tmp_path):
    config, _ = built
    result = run_cli("pack", "20990101T000000.000000Z-abcdef", "-o", str(tmp_path / "x.tar"), "--config", str(config))
    assert result.exit_code == 1 and "kept:" in result.output and not (tmp_path / "x.tar").exists()


def test_pack_to_a_path_through_a_file_says_so_not_unexpected(built, tmp_path):
    import subprocess
    import sys

    config, _ = built
    (tmp_path / "dist").write_text("a file, not a folder\n")
    done = subprocess.run([str(Path(sys.executable).parent / "index"), "pack", "-o", str(tmp_path / "dist" / "gen.tar"), "-c", str(config)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and done.stderr == (f"Error: {tmp_path / 'dist'}: File exists: a file is where a folder is needed. "
                                                    "Nothing was published by this command.\n"), done.stderr


def test_a_manifest_naming_a_path_outside_the_generation_is_refused_before_anything_is_written(built, tmp_path):
    config, _ = built
    archive = Path(pack(config, tmp_path / "gen.tar")["archive"])
    outside = tmp_path / "secret.txt"
    outside.write_text("host\n")

    def point_outside(name, body):
        if not name.endswith("/manifest.json"):
            return body
        manifest = json.loads(body)
        manifest["files"]["../../secret.txt"] = {"bytes": 5, "sha256": hashlib.sha256(b"host\n").hexdigest()}
        return json.dumps(manifest).encode()

    digest = rewrite(archive, point_outside)
    server = tmp_path / "server" / "artifacts"
    result = run_cli("unpack", str(archive), "--artifacts", str(server), "--sha256", digest)
    assert result.exit_code == 1 and "'../../secret.txt' is not a path inside the generation" in result.output
    assert not (server / "CURRENT").exists() and not any((server / "generations").iterdir())


def test_a_member_larger_than_its_manifest_entry_or_unlisted_is_never_extracted(built, tmp_path):
    config, _ = built
    archive = Path(pack(config, tmp_path / "gen.tar")["archive"])
    digest = rewrite(archive, lambda name, body: body + b"\0" * 5_000_000 if name.endswith("report.json") else body)
    server = tmp_path / "server"
    result = run_cli("unpack", str(archive), "--artifacts", str(server), "--sha256", digest)
    assert result.exit_code == 1 and "report.json is 5,0" in result.output and "the manifest says" in result.output
    assert not any((server / "generations").iterdir()), "refused before extracting"

    archive = Path(pack(config, tmp_path / "gen2.tar")["archive"])
    with tarfile.open(archive, "a") as tar:
        generation_id = tar.getnames()[0].split("/")[0]
        extra = tarfile.TarInfo(f"{generation_id}/spaces/extra.bin")
        extra.size = 3
        tar.addfile(extra, io.BytesIO(b"abc"))
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    result = run_cli("unpack", str(archive), "--artifacts", str(server), "--sha256", digest)
    assert result.exit_code == 1 and "files the manifest does not list: spaces/extra.bin" in result.output


def test_a_truncated_or_foreign_archive_is_a_clear_error(built, tmp_path):
    config, _ = built
    archive = Path(pack(config, tmp_path / "gen.tar.gz")["archive"])
    cut = archive.read_bytes()[: archive.stat().st_size // 2]
    archive.write_bytes(cut)
    result = run_cli("unpack", str(archive), "--artifacts", str(tmp_path / "server"), "--sha256", hashlib.sha256(cut).hexdigest())
    assert result.exit_code == 1 and "not a complete tar archive" in result.output and "nothing installed" in result.output
    assert "Aborted" not in result.output
    text = tmp_path / "notes.tar.gz"
    text.write_bytes(b"these are not the bytes you are looking for")
    result = run_cli("unpack", str(text), "--artifacts", str(tmp_path / "server"), "--sha256", hashlib.sha256(text.read_bytes()).hexdigest())
    assert result.exit_code == 1 and "not a complete tar archive" in result.output


def test_an_install_sweeps_the_download_a_killed_pull_left_behind(built, tmp_path):
    """A pull killed mid-download (SIGKILL, a reboot) left its partial archive in the artifacts
    folder for good; the next install removes it once it has not changed for an hour, and leaves
    a download still in progress alone."""
    import os
    import time

    config, _ = built
    packed = pack(config, tmp_path / "gen.tar.gz")
    server = tmp_path / "server-artifacts"
    stale, live = server / ".pull-stale", server / ".pull-live"
    for folder in (stale, live):
        folder.mkdir(parents=True)
        (folder / "gen.tar.gz").write_bytes(b"\0" * 4096)
    hours_ago = time.time() - 2 * 3600
    os.utime(stale / "gen.tar.gz", (hours_ago, hours_ago))
    os.utime(stale, (hours_ago, hours_ago))
    os.utime(live, (hours_ago, hours_ago))  # started long ago, its archive still being written
    assert run_cli("unpack", packed["archive"], "--artifacts", str(server)).exit_code == 0
    assert not stale.exists()
    assert (live / "gen.tar.gz").exists()
