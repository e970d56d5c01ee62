"""Moving generations to servers: `index pack`, `pull` and `unpack`."""

from __future__ import annotations

import json
from pathlib import Path

import click

from indexer.cli.base import CONTEXT, ConfigProblem, artifacts_dir, cli, config_options, json_option, library_call


@cli.command(context_settings=CONTEXT)
@click.argument("generation", default="CURRENT")
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False, path_type=Path), help="Archive to write: .tar.gz / .tgz compressed, else plain .tar.")
@click.option("--latest", is_flag=True, help="Also write latest.json beside the archive, naming it as the newest generation (what `index pull` reads).")
@config_options
@json_option
def pack(generation, output, latest, config_path, artifacts, as_json):
    """Pack one generation (default: the current one) into an archive, with its sha256 beside it.

    Writes OUTPUT and OUTPUT.sha256 (the format `sha256sum -c` reads), and with --latest
    latest.json for servers that `index pull`. Every file is checked against the generation's
    manifest first: a damaged generation is never shipped.

    \b
    Examples:
        index pack -o dist/generation.tar.gz --latest --config examples/index.toml
        index pack 20261122T020000.000000Z-3fa2c1 -o gen.tar --artifacts /srv/static-rag
    """
    from indexer import shipping
    from indexer.pull import write_latest

    packed = library_call(shipping.pack, artifacts_dir(config_path, artifacts), generation, output)
    pointer = write_latest(packed) if latest else None
    if as_json:
        click.echo(json.dumps({"generation": packed.generation_id, "archive": str(packed.archive), "sha256": packed.sha256,
                               "checksum_file": str(packed.checksum_file), "bytes": packed.bytes, "latest": str(pointer) if pointer else None}, indent=2))
    else:
        click.echo(f"Packed {packed.generation_id} into {packed.archive} ({packed.bytes / 2**20:.1f} MiB); sha256 {packed.sha256} in {packed.checksum_file}"
                   + (f"; {pointer} names it as the newest" if pointer else ""))


@cli.command(context_settings=CONTEXT)
@click.argument("url")
@config_options
@json_option
@click.option("--token-env", metavar="VAR", help="Send the token in this environment variable as `Authorization: Bearer` (a private bucket or server).")
@click.option("--keep", default=3, show_default=True, type=click.IntRange(1, 100), help="Generations to keep after installing.")
def pull(url, config_path, artifacts, as_json, token_env, keep):
    """Install the newest generation published at URL (a folder holding `index pack --latest`'s
    latest.json and archive), unless it is already the one served.

    Downloads only when latest.json names a generation this server does not serve; checks the
    size and sha256 latest.json gives, then installs as `index unpack` does (a running
    `index serve` swaps to it). Exit 0 when installed or already current, 1 on any problem
    (nothing installed). Run it from cron or a systemd timer on each server.

    \b
    Examples:
        index pull https://search-artifacts.example.com/help-center --artifacts /srv/static-rag
        index pull https://bucket.example.com/search/latest.json --token-env SEARCH_PULL_TOKEN --artifacts /srv/static-rag
    """
    import os

    from indexer.pull import pull as pull_newest

    token = None
    if token_env:
        token = os.environ.get(token_env, "").strip()
        if not token:
            raise ConfigProblem(f"--token-env {token_env}: the environment variable {token_env} is not set")
    folder = artifacts_dir(config_path, artifacts)
    done = library_call(pull_newest, url, folder, token, keep)
    if as_json:
        click.echo(json.dumps({"generation": done.generation_id, "previous": done.previous, "downloaded_bytes": done.downloaded_bytes}, indent=2))
    elif not done.downloaded_bytes:  # a cron job's line: how old "the newest" is says whether the publisher still publishes
        click.echo(f"{done.generation_id} is the newest and already served{_built_ago(done.generation_id)}; nothing downloaded.")
    else:
        click.echo(f"Installed {done.generation_id} in {folder} ({done.downloaded_bytes / 2**20:.1f} MiB downloaded); CURRENT now names it (was {done.previous or 'nothing'}).")


@cli.command(context_settings=CONTEXT)
@click.argument("archive", type=click.Path(dir_okay=False, path_type=Path))
@config_options
@json_option
@click.option("--sha256", metavar="HEX", help="Expected checksum. Default: read ARCHIVE.sha256 beside the archive.")
@click.option("--keep", default=3, show_default=True, type=click.IntRange(1, 100), help="Generations to keep after installing (never the current one is removed).")
@click.option("--allow-older", is_flag=True, help="Install and switch to a generation older than the current one (a deliberate rollback).")
def unpack(archive, config_path, artifacts, as_json, sha256, keep, allow_older):
    """Verify an archive from `index pack`, install its generation and make it current.

    The archive's sha256 must match; every file must match the manifest's size and
    sha256; the generation must open as a server would open it. Only then is it renamed
    into place and CURRENT moved (atomically): a running `index serve` swaps to it
    within seconds. Anything wrong installs nothing and exits 1.

    \b
    Examples:
        index unpack generation.tar.gz --artifacts /srv/static-rag
        index unpack gen.tar --sha256 "$(cut -d' ' -f1 gen.tar.sha256)" --artifacts /srv/static-rag
    """
    from indexer import shipping

    folder = artifacts_dir(config_path, artifacts)
    done = library_call(shipping.unpack, archive, folder, sha256, keep, allow_older)
    if as_json:
        click.echo(json.dumps({"generation": done.generation_id, "previous": done.previous, "already_installed": done.already_installed,
                               "folder": str(done.folder), "pruned": done.pruned}, indent=2))
    elif done.already_installed:
        click.echo(f"{done.generation_id} was already installed; CURRENT names it.")
    else:
        click.echo(f"Installed {done.generation_id} in {folder}; CURRENT now names it (was {done.previous or 'nothing'}).")


def _built_ago(generation_id: str) -> str:
    """" (built 3 days ago)", "" when the id does not say."""
    from datetime import datetime, timezone

    from indexer.artifacts import generation_built

    built = generation_built(generation_id)
    if built is None:
        return ""
    hours = max(0.0, (datetime.now(timezone.utc) - built).total_seconds() / 3600)
    return f" (built {hours:.0f} hour(s) ago)" if hours < 48 else f" (built {hours / 24:.0f} days ago)"
