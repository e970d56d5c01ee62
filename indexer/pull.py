"""Servers fetch the newest generation themselves: `index pack --latest` writes `latest.json`
beside the archive; publish that folder anywhere HTTP(S) reaches (a bucket, a release, an
internal web server), and each server runs `index pull URL` on a timer.

    latest.json = {"generation": "<id>", "archive": "<file name beside latest.json>", "sha256": "<hex>", "bytes": N}

`pull` reads latest.json, and when it names a generation the server does not serve yet,
downloads the archive (streamed to a temporary file, never more than the bytes it announced),
checks its sha256 against latest.json and installs it with `index unpack`'s checks; the running
`index serve` swaps to it. Pulling again when nothing is newer downloads nothing.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urljoin

from indexer.artifacts import GENERATION_ID, PULL_PREFIX, read_current_id
from indexer.errors import ArtifactError
from indexer.shipping import ArchiveRefused, Packed, unpack

LATEST = "latest.json"
MAX_LATEST_BYTES = 64 * 1024
TIMEOUT_SECONDS = 60.0


@dataclass(frozen=True)
class Pulled:
    generation_id: str
    previous: str | None
    downloaded_bytes: int  # 0: already served, nothing fetched


def write_latest(packed: Packed) -> Path:
    """latest.json beside the archive `pack` just wrote, naming it as the newest generation."""
    latest = packed.archive.with_name(LATEST)
    tmp = latest.with_name(f".{LATEST}.partial")
    body = {"generation": packed.generation_id, "archive": packed.archive.name, "sha256": packed.sha256, "bytes": packed.bytes}
    tmp.write_text(json.dumps(body, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, latest)  # a server polling the folder never reads half a pointer
    return latest


def pull(url: str, artifacts: Path, token: str | None = None, keep: int = 3) -> Pulled:
    """Install the generation `url`'s latest.json names, unless it is the one already served."""
    import httpx

    base = url if url.endswith(".json") else url.rstrip("/") + "/" + LATEST
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    artifacts = Path(artifacts)
    with httpx.Client(timeout=TIMEOUT_SECONDS, follow_redirects=True, headers=headers) as client:
        latest = _latest(client, base)
        previous = read_current_id(artifacts)
        if latest["generation"] == previous:
            return Pulled(previous, previous, 0)
        archive_url = urljoin(base, latest["archive"])
        artifacts.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix=PULL_PREFIX, dir=artifacts) as scratch:  # a killed pull's is swept by the next install
            path = Path(scratch) / latest["archive"]
            received = _download(client, archive_url, path, latest["bytes"])
            done = unpack(path, artifacts, sha256=latest["sha256"], keep=keep)  # the sha256 latest.json gives, checked there
    return Pulled(done.generation_id, previous, received)


def _latest(client, url: str) -> dict:
    try:
        with client.stream("GET", url) as response:
            status = response.status_code
            content = _read_at_most(response, MAX_LATEST_BYTES) if status == 200 else b""
    except Exception as exc:  # httpx's transport errors, a bad URL
        raise ArtifactError(f"cannot fetch {url}: {type(exc).__name__}: {exc}") from None
    if status in (401, 403, 404):
        hint = " (is the token set, and may it read that location?)" if status != 404 else " (was `index pack --latest` published there?)"
        raise ArtifactError(f"{url}: HTTP {status}{hint}")
    if status != 200:
        raise ArtifactError(f"{url}: HTTP {status}; try again later")
    if content is None:
        raise ArchiveRefused(f"{url}: more than {MAX_LATEST_BYTES} bytes is not a latest.json")
    try:
        latest = json.loads(content)
        ok = (isinstance(latest, dict) and GENERATION_ID.match(str(latest.get("generation"))) and isinstance(latest.get("bytes"), int)
              and re.fullmatch(r"[0-9a-f]{64}", str(latest.get("sha256"))) and re.fullmatch(r"[\w.-]+", str(latest.get("archive"))))
    except ValueError:
        ok = False
    if not ok:
        raise ArchiveRefused(f"{url}: not a latest.json from `index pack --latest` (generation, archive, sha256, bytes)")
    return latest


def _read_at_most(response, limit: int) -> bytes | None:
    """The body, or None once it passes `limit` bytes (the rest is never read)."""
    body = bytearray()
    for block in response.iter_bytes():
        body += block
        if len(body) > limit:
            return None
    return bytes(body)


def _download(client, url: str, path: Path, size: int) -> int:
    """Stream `url` into `path`: never more than `size` bytes, and exactly `size`. Its sha256 is
    checked once, by `unpack`."""
    received = 0
    try:
        with client.stream("GET", url) as response, open(path, "wb") as out:
            if response.status_code != 200:
                raise ArtifactError(f"{url}: HTTP {response.status_code}")
            for block in response.iter_bytes(1 << 20):
                received += len(block)
                if received > size:
                    raise ArchiveRefused(f"{url}: more than the {size} bytes latest.json announced; nothing installed")
                out.write(block)
    except (ArtifactError, ArchiveRefused):
        raise
    except Exception as exc:
        raise ArtifactError(f"cannot download {url}: {type(exc).__name__}: {exc}") from None
    if received != size:
        raise ArchiveRefused(f"{url}: {received} bytes, latest.json says {size}; nothing installed")
    return received
