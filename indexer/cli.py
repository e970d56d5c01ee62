"""The `index` command. It parses, calls the library and translates errors; the work lives elsewhere.

Exit codes: 0 success · 1 fatal error · 2 usage or configuration error (a missing API
key included) · 3 stopped by the delete guard · 4 published, but some documents failed ·
5 stopped by --max-cost · 6 index eval: a metric below its --gate floor.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from contextlib import contextmanager
from functools import wraps
from pathlib import Path

import click

from indexer import __version__
from indexer.errors import ConfigError, StaticRagError

EXIT_DELETE_GUARD = 3
EXIT_DOCUMENT_ERRORS = 4
EXIT_BUDGET = 5
EXIT_GATE = 6
CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}
DEFAULT_CONFIG = "index.toml"


class ConfigProblem(click.ClickException):
    exit_code = 2


def config_options(func):
    """--config and --artifacts, shared by every command that reads a config or a generation."""

    @click.option(
        "-c", "--config", "config_path", type=click.Path(dir_okay=False, path_type=Path), envvar="STATIC_RAG_CONFIG",
        help=f"Config file (TOML). Default: ./{DEFAULT_CONFIG}. Env: STATIC_RAG_CONFIG.",
    )
    @click.option(
        "-a", "--artifacts", type=click.Path(file_okay=False, path_type=Path), envvar="STATIC_RAG_ARTIFACTS",
        help="Artifacts folder; overrides the config's `artifacts`. Env: STATIC_RAG_ARTIFACTS.",
    )
    @wraps(func)
    def wrapper(*args, **kwargs):
        return func(*args, **kwargs)

    return wrapper


def json_option(func):
    return click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of text.")(func)


@click.group(context_settings=CONTEXT)
@click.version_option(__version__, "-V", "--version", prog_name="static-rag")
def cli():
    """Index Notion pages, web pages and files into versioned search artifacts, and serve them.

    \b
    Quick start (offline, bundled model):
        index run --config examples/index.toml
        index search "how do I roll back a bad index?" --config examples/index.toml
        index serve --config examples/index.toml

    Every command takes --help with a worked example.
    """


@cli.command(context_settings=CONTEXT)
@config_options
@json_option
@click.option("-q", "--quiet", "-s", "--silent", "silent", is_flag=True, help="No progress bars.")
@click.option(
    "-p", "--provider", "providers", multiple=True, type=click.Choice(["local", "openai", "gemini"]),
    help="Rebuild only the spaces of this provider (repeatable). Default: every configured space.",
)
@click.option("--max-cost", type=click.FloatRange(min=0), metavar="USD", help="Stop, publishing nothing, before embedding would cost more than this.")
@click.option("--allow-mass-delete", is_flag=True, help="Publish even if a source loses more than max_delete_fraction of its documents.")
@click.option("-n", "--dry-run", is_flag=True, help="Show the plan (decisions, chunks and tokens to embed, cost); write nothing, call no provider.")
@click.option("--full-refresh", is_flag=True, help="Fetch everything again (no conditional requests, every Notion page's blocks); unchanged text still reuses its vectors.")
def run(config_path, artifacts, as_json, silent, providers, max_cost, allow_mass_delete, dry_run, full_refresh):
    """Crawl every source, embed each chunk per space, and publish a new generation.

    The generation is written beside the current one and published by an atomic
    rename of CURRENT, so servers never see a half-written index. The last
    `keep_generations` (default 3) are kept. Chunks whose text is unchanged reuse
    their vectors from the current generation; spaces not rebuilt (--provider) keep
    their chunks of unchanged documents.

    Secrets come from the environment: OPENAI_API_KEY; GEMINI_API_KEY or
    GOOGLE_API_KEY; NOTION_TOKEN. OPENAI_BASE_URL, GEMINI_BASE_URL and NOTION_BASE_URL
    point a client elsewhere.

    \b
    Examples:
        index run --config examples/index.toml
        index run --config index.toml --artifacts /srv/static-rag --json
        index run --config index.toml --provider gemini --max-cost 2.50
        index run --config index.toml --dry-run        # what would change, and its cost
        index run --config index.toml --full-refresh   # fetch every page again

    \b
    Exit codes:
        0  published, no errors
        1  fatal error: nothing was published
        2  usage or configuration error
        3  stopped by the delete guard: a source would lose more than
           max_delete_fraction (default 30%) of its documents; nothing published
        4  published, but some documents failed (listed in the report); each
           keeps its last good version
        5  stopped by --max-cost: nothing was published
    """
    from indexer import runlog
    from indexer.embedders.remote import BudgetExceeded, EmbeddingsFailed, MissingCredentials
    from indexer.pipeline import new_run_id, run_index
    from indexer.plan import DeleteGuard

    config = _load_config(config_path, artifacts)
    run_id, report = new_run_id(), None
    if not dry_run:  # every real run is logged outside the generations, whatever its end (index runs)
        runlog.started(config.artifacts, run_id, sorted(providers) or None, full_refresh)
    code, error = 1, "stopped before it finished (interrupted?)"
    try:
        with _reporting(silent or as_json) as progress:
            try:
                report = run_index(
                    config, progress=progress, providers=providers or None, max_cost_usd=max_cost, allow_mass_delete=allow_mass_delete, dry_run=dry_run,
                    full_refresh=full_refresh, run_id=run_id,
                )
            except (MissingCredentials, ConfigError) as exc:
                code, error = 2, str(exc)
                raise ConfigProblem(str(exc)) from None
            except BudgetExceeded as exc:
                code, error = EXIT_BUDGET, str(exc)
                click.echo(f"Error: {exc}", err=True)
                sys.exit(EXIT_BUDGET)
            except DeleteGuard as exc:
                code, error = EXIT_DELETE_GUARD, str(exc)
                click.echo(f"Error: {exc}", err=True)
                sys.exit(EXIT_DELETE_GUARD)
            except EmbeddingsFailed as exc:
                error = f"{exc.code}: {exc}"
                raise click.ClickException(f"{exc.code}: {exc}. Nothing was published.") from None
            except StaticRagError as exc:
                error = str(exc)
                raise click.ClickException(str(exc)) from None
            except Exception as exc:
                error = f"unexpected {type(exc).__name__}: {exc}"
                raise
    finally:
        if not dry_run:
            if report is not None:
                runlog.finished(config.artifacts, run_id, "partial" if report.errors else "success", EXIT_DOCUMENT_ERRORS if report.errors else 0, report.as_dict())
            else:
                runlog.finished(config.artifacts, run_id, "failed", code, error=error)
    if as_json:
        click.echo(json.dumps(report.as_dict(), indent=2))
    elif dry_run:
        _print_plan(report)
    else:
        _print_summary(report, config.artifacts)
    if dry_run:
        if report.delete_guard:  # the real run would stop: say so the way a scheduled job can act on
            sys.exit(EXIT_DELETE_GUARD)
        return
    if report.errors:
        if not as_json:
            click.echo(f"{len(report.errors)} document(s) failed; their errors are in source_events.", err=True)
        sys.exit(EXIT_DOCUMENT_ERRORS)


@cli.command("eval", context_settings=CONTEXT)
@click.option("--dataset", "dataset_dir", required=True, type=click.Path(file_okay=False, exists=True, path_type=Path), help="A BEIR folder: corpus.jsonl, queries.jsonl, qrels/<split>.tsv.")
@config_options
@json_option
@click.option("--split", default="test", show_default=True, help="The qrels file to use.")
@click.option("--limit-queries", type=click.IntRange(1), help="Evaluate only the first N judged queries (quick runs).")
@click.option("--off-topic", "off_topic_dirs", multiple=True, type=click.Path(file_okay=False, exists=True, path_type=Path),
              help="A BEIR folder from another domain: its queries should not be answerable here (repeatable). Reports the abstain quality.")
@click.option("--tune", is_flag=True, help="Find the hybrid weight that ranks this labeled set best, and print the config line to set it.")
@click.option("--gate", "gate_path", type=click.Path(dir_okay=False, exists=True, path_type=Path), help="TOML of minimums; exit 6 when any metric falls below.")
@click.option("-q", "--quiet", "silent", is_flag=True, help="No progress bars.")
def evaluate(dataset_dir, config_path, artifacts, as_json, split, limit_queries, off_topic_dirs, tune, gate_path, silent):
    """Measure retrieval quality on a labeled dataset through the product's own pipeline.

    The corpus is indexed with the configured spaces into a temporary artifacts folder
    (or, with --artifacts, an existing index of this corpus is evaluated), and every
    query runs through the server's search code in dense, lexical and hybrid modes.
    Prints nDCG@10, Recall@10, Recall@100 and MRR@10 per space and mode.

    With --off-topic, also how well `answerable` tells this dataset's questions from
    another domain's: AUROC of the best hit's relevance, and at the space's threshold
    the share of off-topic questions answered and of answerable ones abstained.

    \b
    Examples:
        index eval --dataset ../shared/data/scifact --config examples/index.toml
        index eval --dataset ../shared/data/scifact --off-topic ../shared/data/arguana
        index eval --dataset my-questions --tune         # prints hybrid_weight = …
        index eval --dataset data/scifact --gate floors.toml    # exit 6 below a floor
    """
    import tempfile

    from indexer import evaluation, quality

    gate = None
    if gate_path is not None:
        try:
            gate = evaluation.load_gate(gate_path)
        except ConfigError as exc:
            raise ConfigProblem(str(exc)) from None
    dataset = _library_call(evaluation.load_dataset, dataset_dir, split, limit_queries)
    off_topic = {d.name: _library_call(evaluation.load_queries, d, split) for d in off_topic_dirs}
    config = _optional_config(config_path)
    spaces = config.spaces if config else None
    with tempfile.TemporaryDirectory(prefix="static-rag-eval-") as tmp:
        folder = artifacts
        if folder is None:
            with _reporting(silent or as_json) as progress:
                folder = _library_call(evaluation.index_dataset, dataset, Path(tmp), spaces, progress)
        with _reporting(silent or as_json) as progress:
            results = _library_call(quality.rank_all, folder, dataset, progress)
            abstain = _library_call(quality.abstain, folder, dataset, off_topic, progress) if off_topic else None
            tuned = _library_call(quality.tune, folder, dataset, progress) if tune else None
    report = {"dataset": dataset.name, "split": split, "queries": len(dataset.queries), "spaces": results}
    report |= ({"abstain": abstain} if abstain else {}) | ({"tune": tuned} if tuned else {})
    failures = evaluation.gate_failures(results, gate) if gate else []
    if as_json:
        click.echo(json.dumps({**report, "gate_failures": failures} if gate else report, indent=2))
    else:
        _print_eval(report)
        for line in failures:
            click.echo(f"Below the gate: {line}", err=True)
    if failures:
        sys.exit(EXIT_GATE)


def _print_eval(report: dict) -> None:
    click.echo(f"{report['dataset']} ({report['split']}): {report['queries']} queries")
    for space_id, modes in report["spaces"].items():
        click.echo(f"  {space_id}")
        for mode, metrics in modes.items():
            click.echo(f"    {mode:<8} " + "  ".join(f"{name} {value:.4f}" for name, value in metrics.items()))
    for space_id, info in (report.get("abstain") or {}).items():
        click.echo(f"  abstain, {space_id} (min_relevance {info['min_relevance']}):")
        for name, row in info["off_topic"].items():
            click.echo(f"    vs {name} ({row['off_topic_queries']} off-topic questions): AUROC {row['auroc']:.4f}; "
                       f"off-topic answered {row['off_topic_answered']:.1%}, answerable abstained {row['answerable_abstained']:.1%}")
    for space_id, info in (report.get("tune") or {}).items():
        curve = "  ".join(f"{w}: {v:.4f}" for w, v in info["ndcg@10_by_weight"].items())
        click.echo(f"  hybrid nDCG@10 by dense weight, {space_id}: {curve}")
        click.echo(f"  To use the best weight, add to this space's [[spaces]] table:\n    hybrid_weight = {info['best']}")


@cli.command(context_settings=CONTEXT)
@config_options
@json_option
def status(config_path, artifacts, as_json):
    """Show the live generation, what it holds, and the run that built it.

    \b
    Examples:
        index status --config examples/index.toml
        index status --artifacts /srv/static-rag --json
    """
    from indexer import generations

    info = _library_call(generations.status, _artifacts_dir(config_path, artifacts))
    if as_json:
        click.echo(json.dumps(info, indent=2, default=str))
        return
    run = info["last_run"]
    click.echo(f"Current generation: {info['generation']} (built {info['built_at']})")
    click.echo(f"Documents: {info['documents']}")
    for space_id, space in info["spaces"].items():
        waiting = f"{space['stale_documents']} stale (changed since this space was last embedded; run its provider)" if space["stale_documents"] else "up to date"
        click.echo(f"  {space_id}: {space['vectors']} vectors, embedded {space['rebuilt_at']}; {waiting}")
    click.echo(f"Last run: {run['run_id']} {run['status']}: added {run['added']}, updated {run['updated']}, metadata-only {run['metadata_only']}, "
               f"skipped {run['skipped']}, deleted {run['deleted']}, failed {run['failed']}; {run['chunks_embedded']} chunks embedded, ${run['cost_usd']:.4f}")
    click.echo(f"Kept generations: {', '.join(info['generations'])}")


@cli.command(context_settings=CONTEXT)
@config_options
@json_option
@click.option("-l", "--limit", default=10, show_default=True, type=click.IntRange(1, 1000), help="How many runs, newest first.")
def runs(config_path, artifacts, as_json, limit):
    """List the runs that built the kept generations, newest first.

    \b
    Examples:
        index runs --config examples/index.toml
        index runs --limit 3 --json
    """
    from indexer import generations

    rows = _library_call(generations.runs, _artifacts_dir(config_path, artifacts), limit)
    if as_json:
        click.echo(json.dumps(rows, indent=2, default=str))
        return
    if not rows:
        click.echo("No runs yet.")
        return
    click.echo("  started (UTC)         status       added updated metadata deleted failed  generation / what stopped it")
    for row in rows:
        mark = "*" if row["current"] else " "
        counts = row.get("documents") or {}
        numbers = " ".join(f"{counts.get(k, '-'):>{w}}" for k, w in (("added", 5), ("updated", 7), ("metadata_only", 8), ("deleted", 7), ("failed", 6)))
        started = (row.get("started_at") or "")[:19].replace("T", " ")
        tail = row.get("generation") or (row.get("error") or "")[:100]
        if row.get("unchanged"):
            tail += " (nothing changed: kept, not written again)"
        click.echo(f"{mark} {started:<20}  {row['status']:<11} {numbers}  {tail}")
    click.echo("* = the generation being served. failed and in_progress runs published nothing; `index report RUN_ID` for details.")


@cli.command(context_settings=CONTEXT)
@click.argument("run", required=False)
@config_options
@json_option
@click.option("--markdown", "as_markdown", is_flag=True, help="GitHub-flavoured Markdown (for $GITHUB_STEP_SUMMARY).")
def report(run, config_path, artifacts, as_json, as_markdown):
    """Summarize a run: documents by decision, spaces, errors by code, slowest documents, cost.

    RUN is a generation id, a run id (`index runs` lists them), or a JSON file written by
    `index run --json` (which also covers dry runs); default: the run behind the current
    generation.

    \b
    Examples:
        index report --config examples/index.toml
        index run --json > run.json; index report run.json --markdown >> "$GITHUB_STEP_SUMMARY"
    """
    from indexer import reporting

    folder = _artifacts_dir(config_path, artifacts) if run is None or not run.endswith(".json") else Path(".")
    summary = _library_call(reporting.load_summary, folder, run)
    if as_json:
        click.echo(json.dumps(summary, indent=2))
    elif as_markdown:
        click.echo(reporting.markdown(summary))
    else:
        from rich.console import Console
        from rich.table import Table

        console = Console(highlight=False, width=120)
        click.echo(reporting.headline(summary))  # one line, however long: a terminal wraps it, a log keeps it whole
        for part in reporting.tables(summary):
            table = Table(*part.header, title=part.title, title_justify="left", box=None, pad_edge=False)
            for row in part.rows:
                table.add_row(*row)
            console.print()
            console.print(table)


@cli.command(context_settings=CONTEXT)
@click.argument("generation_a", default="previous")
@click.argument("generation_b", default="current")
@config_options
@json_option
def diff(generation_a, generation_b, config_path, artifacts, as_json):
    """List documents added, changed or removed from GENERATION_A to GENERATION_B.

    Each is a generation id, a unique prefix of one, `current` or `previous` (the defaults:
    what the last published run changed).

    \b
    Examples:
        index diff                                   # previous -> current
        index diff 20261121T02 current
        index runs --json | jq -r '.[].generation'   # ids to compare
    """
    from indexer import generations

    result = _library_call(generations.diff, _artifacts_dir(config_path, artifacts), generation_a, generation_b)
    if as_json:
        click.echo(json.dumps(result.as_dict(), indent=2, ensure_ascii=False))
        return
    click.echo(f"From {result.generations[0]} to {result.generations[1]}:")
    for label, ids in (("added", result.added), ("changed", result.changed), ("metadata changed", result.metadata_changed), ("removed", result.removed)):
        click.echo(f"{label}: {len(ids)}")
        for doc_id in ids:
            click.echo(f"  {doc_id}  {result.titles.get(doc_id, '')}".rstrip())


@cli.command(context_settings=CONTEXT)
@click.argument("generation", required=False)
@config_options
@json_option
def rollback(generation, config_path, artifacts, as_json):
    """Point CURRENT at an older kept generation (default: the one before the current).

    Servers pick the change up from CURRENT; nothing is deleted, so rolling forward
    again is `index rollback <newer id>`.

    \b
    Examples:
        index rollback --config examples/index.toml
        index rollback 20261121T020000.000000Z-9c1d2e --artifacts /srv/static-rag
    """
    from indexer import generations

    before, after = _library_call(generations.rollback, _artifacts_dir(config_path, artifacts), generation)
    if as_json:
        click.echo(json.dumps({"from": before, "to": after}))
    else:
        click.echo(f"CURRENT now names {after} (was {before}).")


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

    packed = _library_call(shipping.pack, _artifacts_dir(config_path, artifacts), generation, output)
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
    folder = _artifacts_dir(config_path, artifacts)
    done = _library_call(pull_newest, url, folder, token, keep)
    if as_json:
        click.echo(json.dumps({"generation": done.generation_id, "previous": done.previous, "downloaded_bytes": done.downloaded_bytes}, indent=2))
    elif not done.downloaded_bytes:
        click.echo(f"{done.generation_id} is the newest and already served; nothing downloaded.")
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

    folder = _artifacts_dir(config_path, artifacts)
    done = _library_call(shipping.unpack, archive, folder, sha256, keep, allow_older)
    if as_json:
        click.echo(json.dumps({"generation": done.generation_id, "previous": done.previous, "already_installed": done.already_installed,
                               "folder": str(done.folder), "pruned": done.pruned}, indent=2))
    elif done.already_installed:
        click.echo(f"{done.generation_id} was already installed; CURRENT names it.")
    else:
        click.echo(f"Installed {done.generation_id} in {folder}; CURRENT now names it (was {done.previous or 'nothing'}).")


@cli.command(context_settings=CONTEXT)
@click.argument("query")
@config_options
@json_option
@click.option("-k", "--top-k", default=5, show_default=True, type=click.IntRange(1, 50), help="How many hits.")
@click.option("--mode", type=click.Choice(["hybrid", "dense", "lexical"]), default="hybrid", show_default=True)
@click.option("--space", help="Embedding space id (default: the first in the generation).")
@click.option("--source", help="Only documents from this source.")
def search(query, config_path, artifacts, as_json, top_k, mode, space, source):
    """Search the current generation from the shell, with the same code the server runs.

    \b
    Examples:
        index search "how do I roll back a bad index?" --config examples/index.toml
        index search "rate limits" --artifacts artifacts --mode lexical --json
    """
    from indexer.config import ServerConfig
    from server.search import SearchFilters
    from server.service import SearchService, ServiceError, Settings

    config = _optional_config(config_path)  # its [server] default_space applies
    folder = artifacts or (config.artifacts if config else Path("artifacts"))
    service = SearchService(Settings(artifacts=folder, server=config.server if config else ServerConfig()))
    try:
        service.load()
        result = service.search(query, space_id=space, top_k=top_k, mode=mode, filters=SearchFilters(source=source))
    except ServiceError as exc:
        raise click.ClickException(exc.message) from None
    except StaticRagError as exc:
        raise click.ClickException(str(exc)) from None
    finally:
        service.close()
    if as_json:  # the API's own response body, field for field
        import msgspec

        from server.app import search_response

        click.echo(json.dumps(msgspec.to_builtins(search_response(result, offset=0)), indent=2, ensure_ascii=False))
        return
    if result.degraded_reason:
        click.echo(f"Answered by keywords only: {result.degraded_reason}", err=True)
    if not result.hits:
        click.echo("No hits.")
    elif not result.answerable:
        click.echo(click.style("Nothing in these documents seems to answer that; the closest hits:", bold=True))
    for rank, hit in enumerate(result.hits, start=1):
        where = " › ".join(hit.heading_path)
        click.echo(click.style(f"{rank}. {hit.title}", bold=True) + f"  ({hit.url or hit.path or hit.doc_id})")
        if where:
            click.echo(f"   {where}")
        click.echo(f"   {_terminal(hit.snippet)}")
        click.echo(f"   score {hit.score:.4f}, relevance {hit.relevance:.2f}" + (" (stale: this space has an older version of the page)" if hit.stale else ""))


def _terminal(snippet_html: str) -> str:
    """A search snippet for a terminal: `<mark>` terms in bold, entities decoded."""
    import html
    import re

    parts = re.split(r"<mark>(.*?)</mark>", snippet_html)
    return "".join(click.style(html.unescape(p), bold=True) if i % 2 else html.unescape(p) for i, p in enumerate(parts))


@cli.command(context_settings=CONTEXT)
@click.argument("target")
@json_option
@click.option("--allow-private-network", "allow", multiple=True, metavar="CIDR", help="Let a URL reach this private network (repeatable), as a source's allow_private_networks does.")
def extract(target, as_json, allow):
    """Print what the indexer keeps of a file or web page: the title, then the text.

    A debugging aid: the same extraction, URL normalization and fetch rules (SSRF guard,
    byte cap, content types) as `index run`.

    \b
    Examples:
        index extract https://example.com/help/returns
        index extract docs/guide/faq.md --json
        index extract http://127.0.0.1:8080/page --allow-private-network 127.0.0.0/8
    """
    from indexer.config import SourceConfig, check_networks
    from indexer.extract import ExtractionError
    from indexer.sources.files import read_file
    from indexer.sources.netguard import ALLOW_HINT
    from indexer.sources.web import crawl_urls

    if target.startswith(("http://", "https://")):
        try:
            networks = check_networks(allow, "--allow-private-network")
        except ConfigError as exc:
            raise click.BadParameter(str(exc)) from None
        result = crawl_urls(SourceConfig(name="extract", type="urls", urls=(target,), allow_private_networks=networks, per_host_delay_seconds=0))
        if not result.documents:
            problem = (result.errors + result.warnings)[0]
            message = problem.message.replace(ALLOW_HINT, "pass --allow-private-network with its network")
            raise click.ClickException(f"{problem.code}: {message}")
        document = result.documents[0]
    else:
        path = Path(target)
        if not path.is_file():
            raise click.BadParameter(f"not a file or an http(s) URL: {target}", param_hint="TARGET")
        try:
            document = read_file(path, path.name, f"file:{path.name}", "extract")
        except (OSError, UnicodeDecodeError, ExtractionError) as exc:
            raise click.ClickException(f"FILE_EXTRACTION_FAILED: {path}: {exc}") from None
        if not document.text.strip():
            raise click.ClickException(f"FILE_EXTRACTION_EMPTY: {path}: no text found")
    if as_json:
        fields = ("doc_id", "title", "url", "path", "updated_at", "tags", "authors", "metadata", "text")
        click.echo(json.dumps({f: getattr(document, f) for f in fields}, indent=2, default=str, ensure_ascii=False))
    else:
        click.echo(f"{document.title}\n\n{document.text}")


@cli.command(context_settings=CONTEXT)
@config_options
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to listen on.")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(1, 65535))
@click.option("--log-level", default="info", show_default=True, type=click.Choice(["critical", "error", "warning", "info", "debug"]))
@click.option("-w", "--workers", default=1, show_default=True, type=click.IntRange(1, 64), help="Server processes; they share the memory-mapped index files.")
@click.option("--access-log/--no-access-log", default=True, show_default=True, help="One JSON line per request on stderr.")
def serve(config_path, artifacts, host, port, log_level, workers, access_log):
    """Serve the current generation over HTTP (POST /v1/search; OpenAPI at /schema).

    A newly published generation is picked up without a restart. The config's [server]
    table sets CORS origins, API keys and limits. Each worker uses one FAISS and one DuckDB
    thread; SIGTERM lets requests in flight finish (up to 10 s). Logs are JSON lines on
    stderr; Prometheus metrics of all workers are at /metrics; a demo search page is at /.

    \b
    Examples:
        index serve --config examples/index.toml
        index serve --artifacts /srv/static-rag --host 0.0.0.0 --port 8080 --workers 2

    \b
    Then:
        curl -s -XPOST 127.0.0.1:8000/v1/search -H 'content-type: application/json' \\
             -d '{"query": "how do I roll back a bad index?", "top_k": 3}'
    """
    # Before anything imports prometheus_client: its metrics choose per-process files at creation.
    metrics_dir = tempfile.TemporaryDirectory(prefix="static-rag-metrics-")  # every worker's counters, summed by /metrics
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = metrics_dir.name
    from server import launch
    from server.guard import Guard

    folder = _artifacts_dir(config_path, artifacts)
    if config_path is not None or Path(DEFAULT_CONFIG).exists():
        path = config_path or Path(DEFAULT_CONFIG)
        _library_call(Guard, _load_config(path, artifacts).server)  # a key whose variable is unset stops us here (exit 2), not in each worker
        os.environ["STATIC_RAG_CONFIG"] = str(path.resolve())
    os.environ["STATIC_RAG_ARTIFACTS"] = str(folder.resolve())  # how each worker process finds its settings
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    os.environ["STATIC_RAG_JSON_LOGS"] = "1"
    os.environ["STATIC_RAG_ACCESS_LOG"] = "1" if access_log else "0"
    click.echo(f"Serving {folder.resolve()} on http://{host}:{port} with {workers} worker(s)  (OpenAPI: http://{host}:{port}/schema)")
    click.echo(
        f"Try: curl -s -XPOST {host}:{port}/v1/search -H 'content-type: application/json' "
        "-d '{\"query\": \"your question here\", \"top_k\": 3}'"
    )
    json_lines = {"()": "server.observe.JsonFormatter"}
    log_config = {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"json": json_lines},
        "handlers": {"stderr": {"class": "logging.StreamHandler", "formatter": "json", "stream": "ext://sys.stderr"}},
        "loggers": {"uvicorn": {"handlers": ["stderr"], "level": log_level.upper(), "propagate": False}},
    }
    with metrics_dir:
        launch.run(host=host, port=port, log_level=log_level, workers=workers, timeout_graceful_shutdown=10, access_log=False, log_config=log_config)


PLAN_LINES = 50  # documents a dry run lists by name before summarizing the rest


def _print_plan(report) -> None:
    plan = report.as_dict()
    changes = ", ".join(f"{n} {name.replace('_', '-')}" for name, n in plan["documents"].items() if n) or "no changes"
    click.echo(f"Dry run: nothing written, no provider called. {plan['total_documents']} documents would be published ({changes}).")
    for space_id, estimate in plan["spaces"].items():
        cost = f"~${estimate['estimated_cost_usd']:.4f}" if estimate["estimated_cost_usd"] else "no cost"
        click.echo(f"  {space_id}: {estimate['chunks_to_embed']} chunks to embed ({estimate['tokens_to_embed']} tokens, "
                   f"{cost}), {estimate['chunks_reused']} from the vector cache")
    changed = [d for d in plan["decisions"] if d["decision"] != "skip"]
    if changed:
        click.echo("Per document (unchanged ones left out):")
        for d in changed[:PLAN_LINES]:
            click.echo(f"  {d['decision']:<8} {d['doc_id']}  ({d['reason']})")
        if len(changed) > PLAN_LINES:
            click.echo(f"  … and {len(changed) - PLAN_LINES} more (--json lists every document)")
    if plan["delete_guard"]:
        click.echo(f"The delete guard would stop this run (exit 3): {plan['delete_guard']}", err=True)
    _print_problems(report)


def _print_summary(report, artifacts: Path) -> None:
    """What a person reads after a run: documents by decision, then one row per space."""
    from rich.console import Console
    from rich.table import Table

    changes = ", ".join(f"{n} {name.replace('_', '-')}" for name, n in report.counts.items() if n) or "no changes"
    if report.unchanged:
        click.echo(f"Nothing changed: generation {report.generation_id} stays current ({report.documents} documents); nothing was written.")
        return
    click.echo(f"Published generation {report.generation_id}: {report.documents} documents ({changes}).")
    table = Table("space", "chunks", "embedded", "reused", "kept", "tokens", "cost (USD)", box=None, pad_edge=False)
    for space_id, stats in report.spaces.items():
        if "skipped" in stats or stats.get("carried_over"):
            stale = stats.get("stale_documents", 0)
            note = stats.get("skipped") or f"carried over; {stale} changed {'document is' if stale == 1 else 'documents are'} stale here until its provider runs"
            table.add_row(space_id, str(stats.get("chunks", "-")), "-", "-", "-", "-", note)
            continue
        usage = stats.get("usage", {})
        table.add_row(
            space_id, str(stats["chunks"]), str(stats["embedded"]), str(stats["reused"]), str(stats["carried"]),
            str(usage.get("tokens", "-")), f"{usage['cost_usd']:.4f}" if usage else "-",
        )
    Console(highlight=False, width=120).print(table)
    click.echo(f"Artifacts: {artifacts.resolve()}  ({sum(report.seconds.values()):.1f}s)")
    _print_problems(report)


def _print_problems(report) -> None:
    """Errors (failed documents), then warnings (things left out on purpose), one line each, on stderr."""
    for error in report.errors:
        click.echo(f"  {error.code} [{error.step}] {error.message}", err=True)
    for warning in report.warnings:
        click.echo(f"  warning: {warning.code} {warning.message}", err=True)


def _library_call(func, *args):
    """Call into the library, turning its errors into one-line messages with exit 1 (config errors: 2)."""
    try:
        return func(*args)
    except ConfigError as exc:
        raise ConfigProblem(str(exc)) from None
    except StaticRagError as exc:
        raise click.ClickException(str(exc)) from None


def _load_config(config_path: Path | None, artifacts: Path | None):
    from indexer.config import load_config

    path = config_path or Path(DEFAULT_CONFIG)
    if config_path is None and not path.exists():
        raise ConfigProblem(f"no config file: pass --config FILE or create ./{DEFAULT_CONFIG} (see examples/index.toml)")
    try:
        return load_config(path, artifacts_override=artifacts)
    except ConfigError as exc:
        raise ConfigProblem(str(exc)) from None


def _optional_config(config_path: Path | None):
    """The config when one is given or ./index.toml exists (commands that also work from --artifacts alone)."""
    return _load_config(config_path, None) if (config_path or Path(DEFAULT_CONFIG).exists()) else None


def _artifacts_dir(config_path: Path | None, artifacts: Path | None) -> Path:
    """--artifacts wins; else the config's `artifacts`; else ./artifacts."""
    if artifacts is not None:
        return artifacts
    config = _optional_config(config_path)
    return config.artifacts if config else Path("artifacts")


@contextmanager
def _reporting(silent: bool):
    """Progress bars on stderr with known totals; nothing at all when silent."""
    if silent:
        from indexer.pipeline import no_progress

        yield no_progress
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn("{task.description:<40}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        console=Console(stderr=True), transient=False,
    ) as bars:

        @contextmanager
        def task(description: str, total: int | None):
            task_id = bars.add_task(description, total=total)
            yield lambda n: bars.advance(task_id, n)

        yield task


def main():
    """Entry point: a bug surfaces as one line and exit 1, not a traceback (STATIC_RAG_DEBUG=1 shows it)."""
    try:
        cli(standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("Aborted.", err=True)
        sys.exit(1)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except SystemExit:
        raise
    except Exception as exc:
        if os.environ.get("STATIC_RAG_DEBUG"):
            raise
        click.echo(f"Error: unexpected {type(exc).__name__}: {exc}. Nothing was published by this command. Set STATIC_RAG_DEBUG=1 to see the traceback.", err=True)
        sys.exit(1)
