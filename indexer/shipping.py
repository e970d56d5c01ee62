"""Shipping generations to servers: one archive per generation, a sha256 beside it, and an
install that checks both before `CURRENT` moves.

    index pack CURRENT -o gen.tar.gz      → gen.tar.gz and gen.tar.gz.sha256 (`sha256sum -c` format)
    index unpack gen.tar.gz --artifacts /srv/static-rag

The archive holds one folder, `<generation-id>/`, with the generation's files exactly as
published. Unpacking extracts into a hidden temporary folder, so a server polling `CURRENT`
never sees a partial generation, checks every file against the manifest's sizes and sha256
sums, opens it as a server would, and only then renames it into place and moves `CURRENT`.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import tarfile
import zlib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from indexer.artifacts import (
    GENERATION_ID,
    GENERATIONS,
    MANIFEST,
    TMP_PREFIX,
    _file_sha256,
    _fsync_dir,
    _fsync_tree,
    check_manifest_paths,
    current_generation,
    list_generations,
    prune_generations,
    read_current_id,
    read_manifest,
    set_current,
    verify_generation,
)
from indexer.errors import ArtifactError, StaticRagError

CHECKSUM_SUFFIX = ".sha256"
MAX_MANIFEST_BYTES = 64 * 1024 * 1024  # a manifest lists files: even a million-chunk generation's is a few KB


class ArchiveRefused(StaticRagError):
    """The archive is not one this version will install: damaged, tampered with, or unsafe."""


@dataclass(frozen=True)
class Packed:
    generation_id: str
    archive: Path
    checksum_file: Path
    sha256: str
    bytes: int


@dataclass(frozen=True)
class Unpacked:
    generation_id: str
    folder: Path
    previous: str | None  # what CURRENT named before
    already_installed: bool
    pruned: list[str]


def pack(artifacts: Path, generation: str, output: Path) -> Packed:
    """Archive generation `generation` (an id, or `CURRENT`) of `artifacts` into `output`;
    gzip-compressed when the name ends in .tar.gz or .tgz, plain tar otherwise."""
    artifacts = Path(artifacts)
    folder = current_generation(artifacts) if generation.upper() == "CURRENT" else _kept(artifacts, generation)
    manifest = read_manifest(folder)  # sizes checked: never ship a damaged generation
    _check_sums(folder, manifest, ArtifactError)
    generation_id = manifest["generation_id"]
    output = Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    tmp = output.with_name(f".{output.name}.partial")
    mode = "w:gz" if output.name.endswith((".tar.gz", ".tgz")) else "w"
    try:
        with tarfile.open(tmp, mode, format=tarfile.PAX_FORMAT) as tar:
            # Files in manifest order (sorted), plus the manifest: the archive is the generation, nothing else.
            for name in [*manifest["files"], MANIFEST]:
                tar.add(folder / name, arcname=f"{generation_id}/{name}", recursive=False, filter=_normalized)
        digest = _file_sha256(tmp)
        os.replace(tmp, output)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    checksum_file = output.with_name(output.name + CHECKSUM_SUFFIX)
    checksum_file.write_text(f"{digest}  {output.name}\n", encoding="utf-8")
    return Packed(generation_id, output, checksum_file, digest, output.stat().st_size)


def unpack(archive: Path, artifacts: Path, sha256: str | None = None, keep: int = 3, allow_older: bool = False) -> Unpacked:
    """Verify `archive` against `sha256` (default: the `<archive>.sha256` file beside it), install
    its generation under `artifacts` and point `CURRENT` at it; prune to the newest `keep`."""
    archive, artifacts = Path(archive), Path(artifacts)
    if not archive.is_file():
        raise ArtifactError(f"no archive at {archive}")
    expected = sha256 or _read_checksum_file(archive)
    if not re.fullmatch(r"[0-9a-fA-F]{64}", expected):
        raise ArchiveRefused(f"not a sha256 (64 hex digits): {expected!r}")
    actual = _file_sha256(archive)
    if actual != expected.lower():
        raise ArchiveRefused(f"{archive}: sha256 is {actual}, expected {expected.lower()}: the archive is damaged or was changed; nothing installed")

    generations = artifacts / GENERATIONS
    generations.mkdir(parents=True, exist_ok=True)
    try:
        return _install(archive, artifacts, generations, keep, allow_older)
    except (tarfile.TarError, EOFError, zlib.error, gzip.BadGzipFile) as exc:  # truncated, or not a tar archive at all
        raise ArchiveRefused(f"{archive}: not a complete tar archive ({type(exc).__name__}: {exc}); nothing installed") from None


def _install(archive: Path, artifacts: Path, generations: Path, keep: int, allow_older: bool) -> Unpacked:
    with tarfile.open(archive, "r:*") as tar:
        members = tar.getmembers()
        generation_id = _check_members(members, archive)
        _check_against_manifest(tar, members, generation_id, archive)  # before a single byte is written
        previous = read_current_id(artifacts)
        if previous and generation_id < previous and not allow_older:
            raise ArchiveRefused(f"{archive} holds {generation_id}, older than the current {previous}; pass --allow-older to go back to it")
        final = generations / generation_id
        if final.is_dir():
            verify_generation(final)
            set_current(artifacts, generation_id)
            return Unpacked(generation_id, final, previous, True, [])
        tmp = generations / f"{TMP_PREFIX}{generation_id}-unpack"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        try:
            for member in members:
                if member.isfile():
                    target = tmp / PurePosixPath(member.name).relative_to(generation_id)
                    target.parent.mkdir(parents=True, exist_ok=True)
                    with tar.extractfile(member) as src, open(target, "wb") as dst:
                        shutil.copyfileobj(src, dst, 1 << 20)
            manifest = read_manifest(tmp)
            if manifest["generation_id"] != generation_id:
                raise ArchiveRefused(f"{archive}: folder {generation_id} holds the manifest of {manifest['generation_id']}")
            _check_sums(tmp, manifest, ArchiveRefused)
            extra = {p.relative_to(tmp).as_posix() for p in tmp.rglob("*") if p.is_file()} - {*manifest["files"], MANIFEST}
            if extra:
                raise ArchiveRefused(f"{archive}: files the manifest does not list: {', '.join(sorted(extra)[:5])}")
            verify_generation(tmp)
            _fsync_tree(tmp)
            os.rename(tmp, final)
            _fsync_dir(generations)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    set_current(artifacts, generation_id)
    pruned = prune_generations(artifacts, keep)
    return Unpacked(generation_id, final, previous, False, pruned)


def _kept(artifacts: Path, generation_id: str) -> Path:
    folder = artifacts / GENERATIONS / generation_id
    if not GENERATION_ID.match(generation_id) or not folder.is_dir():
        raise ArtifactError(f"no generation {generation_id!r} in {artifacts}; kept: {', '.join(list_generations(artifacts)) or 'none'} (or pass CURRENT)")
    return folder


def _check_sums(folder: Path, manifest: dict, error: type[StaticRagError]) -> None:
    """Every file's sha256 against the manifest (read_manifest has checked that each exists with its size)."""
    for name, info in manifest["files"].items():
        path = folder / name
        if _file_sha256(path) != info["sha256"]:
            raise error(f"{path}: sha256 differs from the manifest: the file is damaged or was changed")


def _check_members(members: list[tarfile.TarInfo], archive: Path) -> str:
    """The generation id the archive holds, after refusing anything but plain files and folders
    inside one `<generation-id>/` folder (no links, devices, absolute paths or `..`)."""
    tops = set()
    for member in members:
        path = PurePosixPath(member.name)
        if path.is_absolute() or ".." in path.parts or not (member.isfile() or member.isdir()):
            raise ArchiveRefused(f"{archive}: unsafe entry {member.name!r} (only plain files inside one generation folder are installed)")
        tops.add(path.parts[0])
    if len(tops) != 1:
        raise ArchiveRefused(f"{archive}: expected one generation folder, found {len(tops)}: {', '.join(sorted(tops)[:5])}")
    generation_id = tops.pop()
    if not GENERATION_ID.match(generation_id):
        raise ArchiveRefused(f"{archive}: {generation_id!r} is not a generation id")
    if not any(m.name == f"{generation_id}/{MANIFEST}" for m in members):
        raise ArchiveRefused(f"{archive}: no {generation_id}/{MANIFEST}: not a generation archive")
    return generation_id


def _check_against_manifest(tar: tarfile.TarFile, members: list[tarfile.TarInfo], generation_id: str, archive: Path) -> None:
    """The archive's manifest, read from the archive: every path it lists inside the generation,
    and the archive's files exactly those, each of the size the manifest says — so nothing
    unlisted or oversized is ever extracted."""
    entry = next(m for m in members if m.name == f"{generation_id}/{MANIFEST}")
    if entry.size > MAX_MANIFEST_BYTES:
        raise ArchiveRefused(f"{archive}: {entry.name} is {entry.size:,} bytes; not a manifest")
    try:
        manifest = json.loads(tar.extractfile(entry).read().decode("utf-8"))
        check_manifest_paths(manifest, f"{archive}: {entry.name}")
    except (ValueError, ArtifactError, AttributeError) as exc:
        raise ArchiveRefused(f"{archive}: {entry.name} is not a valid manifest: {exc}") from None
    listed = manifest["files"]
    files = {PurePosixPath(m.name).relative_to(generation_id).as_posix(): m for m in members if m.isfile()}
    files.pop(MANIFEST)
    unlisted = sorted(set(files) - set(listed))
    missing = sorted(set(listed) - set(files))
    if unlisted or missing:
        detail = (f"files the manifest does not list: {', '.join(unlisted[:5])}" if unlisted else f"files the manifest lists but the archive lacks: {', '.join(missing[:5])}")
        raise ArchiveRefused(f"{archive}: {detail}; nothing installed")
    for name, member in files.items():
        if member.size != listed[name]["bytes"]:
            raise ArchiveRefused(f"{archive}: {name} is {member.size:,} bytes, the manifest says {listed[name]['bytes']:,}; nothing installed")


def _read_checksum_file(archive: Path) -> str:
    path = archive.with_name(archive.name + CHECKSUM_SUFFIX)
    try:
        text = path.read_text(encoding="utf-8").split()
    except FileNotFoundError:
        raise ArchiveRefused(f"no checksum: {path} is missing; download it with the archive, or pass --sha256") from None
    except UnicodeDecodeError:  # another file saved under its name (the archive itself, a download gone wrong)
        raise ArchiveRefused(f"{path} is not a checksum file (not text); download it with the archive again, or pass --sha256") from None
    if not text:
        raise ArchiveRefused(f"{path} is empty")
    return text[0]


def _normalized(info: tarfile.TarInfo) -> tarfile.TarInfo:
    """Nothing of the packing machine in the archive: no owners, plain modes."""
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    info.mode = 0o644 if info.isfile() else 0o755
    return info
