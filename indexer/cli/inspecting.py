"""Looking at what was built: `index status`, `runs`, `report`, `diff`, `rollback`, and `check-links`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from indexer.cli.base import CONTEXT, EXIT_DOCUMENT_ERRORS, FiniteRange, artifacts_dir, cli, config_options, json_option, library_call, optional_config

# What `index runs` says of a run without an end line (indexer/runlog.py tells them apart)
UNPUBLISHED = {"running": "running now", "unfinished": "ended without finishing (killed or crashed)",
               "in_progress": "no end logged (running elsewhere, or killed)"}


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

    info = library_call(generations.status, artifacts_dir(config_path, artifacts))
    if as_json:
        click.echo(json.dumps(info, indent=2, default=str))
        return
    run = info["last_run"]
    click.echo(f"Current generation: {info['generation']} (built {info['built_at']})")
    click.echo(f"Documents: {info['documents']}")
    for name, source in info["sources"].items():
        click.echo(f"  {name} ({source['type']}): {source['documents']}{_without_url(source)}")
    click.echo("Spaces:")
    for space_id, space in info["spaces"].items():
        waiting = f"{space['stale_documents']} stale (changed since this space was last embedded; run its provider)" if space["stale_documents"] else "up to date"
        calibrated = "" if space["chance_level"] else "; no chance level: relevance uses the fixed calibration until a run measures it"
        click.echo(f"  {space_id}: {space['vectors']} vectors, embedded {space['rebuilt_at']}; {waiting}{calibrated}")
    click.echo(f"Last run: {run['run_id']} {run['status']}: added {run['added']}, updated {run['updated']}, metadata-only {run['metadata_only']}, "
               f"skipped {run['skipped']}, deleted {run['deleted']}, failed {run['failed']}; {run['chunks_embedded']} chunks embedded, ${run['cost_usd']:.4f}")
    if failing := info.get("failing"):
        since = f", since {failing['longest_since'][:10]}" if failing["longest_runs"] > 1 and failing["longest_since"] else ""
        click.echo(f"Failing: {failing['errors']} error(s) in that run, each document keeping its last good version; {failing['longest']} "
                   f"has failed {failing['longest_runs']} run(s) in a row{since} (`index report` lists them)")
    if info["unpublished_since"]:
        later = info["unpublished_since"]
        click.echo(f"Since then, {len(later)} run(s) published nothing (`index runs`, `index report RUN_ID`):")
        for row in later[:5]:
            click.echo(f"  {row['run_id']} {row['status']}: {(row['error'] or UNPUBLISHED.get(row['status'], ''))[:160]}")
    click.echo(f"Kept generations: {', '.join(info['generations'])}")


def _without_url(source: dict) -> str:
    """What an admin should know when a source's hits cannot link to a page a visitor can open."""
    said = ""
    if source["without_url"]:
        fix = "; set url_template on the source" if source["type"] == "files" else ""
        said += f", {source['without_url']} without a URL (their hits cannot link to a page{fix})"
    if source["members_only"]:
        said += (f", {source['members_only']} linking to notion.so pages only your workspace's members can open "
                 "(Share → Publish a page to give visitors a link)")
    return said


@cli.command(context_settings=CONTEXT)
@config_options
@json_option
@click.option("-l", "--limit", default=10, show_default=True, type=click.IntRange(1, 1000), help="How many runs, newest first.")
def runs(config_path, artifacts, as_json, limit):
    """List every run newest first, failed ones too, with what each published.

    \b
    Examples:
        index runs --config examples/index.toml
        index runs --limit 3 --json
    """
    from indexer import generations

    rows = library_call(generations.runs, artifacts_dir(config_path, artifacts), limit)
    if as_json:
        click.echo(json.dumps(rows, indent=2, default=str))
        return
    if not rows:
        click.echo("No runs yet.")
        return
    click.echo("  started (UTC)         status       added updated metadata deleted failed  peak MB  generation / what stopped it")
    for row in rows:
        mark = "*" if row["current"] else " "
        counts = row.get("documents") or {}
        numbers = " ".join(f"{counts.get(k, '-'):>{w}}" for k, w in (("added", 5), ("updated", 7), ("metadata_only", 8), ("deleted", 7), ("failed", 6)))
        started = (row.get("started_at") or "")[:19].replace("T", " ")
        tail = row.get("generation") or (row.get("error") or UNPUBLISHED.get(row["status"], ""))[:100]
        if row.get("unchanged"):
            tail += " (nothing changed: kept, not written again)"
        peak = f"{row['peak_rss_mb']:.0f}" if row.get("peak_rss_mb") else "-"  # the run's most memory: what the machine needs
        click.echo(f"{mark} {started:<20}  {row['status']:<11} {numbers}  {peak:>7}  {tail}")
    click.echo("* = the generation being served. Runs that failed, did not finish or are running published nothing; `index report RUN_ID` for details.")


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

    folder = artifacts_dir(config_path, artifacts) if run is None or not run.endswith(".json") else Path(".")
    summary = library_call(reporting.load_summary, folder, run)
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

    result = library_call(generations.diff, artifacts_dir(config_path, artifacts), generation_a, generation_b)
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

    before, after = library_call(generations.rollback, artifacts_dir(config_path, artifacts), generation)
    if as_json:
        click.echo(json.dumps({"from": before, "to": after}))
    else:
        click.echo(f"CURRENT now names {after} (was {before}).")


@cli.command(name="check-links", context_settings=CONTEXT)
@config_options
@json_option
@click.option("-n", "--sample", default=20, show_default=True, type=click.IntRange(0, 100_000),
              help="How many document URLs to request, spread over every source (0: all of them).")
@click.option("-s", "--source", default=None, help="Only this source's documents.")
@click.option("--timeout", default=5.0, show_default=True, type=FiniteRange(0.5, 60), help="Seconds to wait for each URL.")
def check_links(config_path, artifacts, as_json, sample, source, timeout):
    """Request a sample of the hits' document URLs and name each that does not open, or lacks
    headings its hits link to.

    A files source's URLs come from its url_template and url_rules, and its headings' fragments
    from the generator's rules; nothing else checks them against the site. Exit 4 when a URL
    answers 404 or 410 (a hit would cite a missing page) or a page lacks a fragment its hits link
    to (the visitor lands at its top), 1 when none could be reached.

    \b
    Examples:
        index check-links
        index check-links --source docs --sample 0 --json
    """
    from indexer.linkcheck import check_links as check
    from indexer.linkcheck import rules_hints

    report = library_call(check, artifacts_dir(config_path, artifacts), sample, source, timeout)
    config = optional_config(config_path) if artifacts is None or config_path is not None else None  # not ./index.toml beside other artifacts
    report["hints"] = rules_hints(config.sources, report["links"]) if config else []
    counts = report["counts"]
    if as_json:
        click.echo(json.dumps(report, indent=2))
    elif not report["checked"]:
        click.echo(f"No document has a URL{f' in source {source!r}' if source else ''}: there is nothing to check.")
    else:
        anchors = f" ({counts['anchors']} without some headings their hits link to)" if counts["anchors"] else ""
        click.echo(f"Checked {report['checked']} of {report['with_url']} document URLs: {counts['open'] + counts['anchors']} open{anchors}, "
                   f"{counts['broken']} not found, {counts['restricted']} behind a login, {counts['error']} server errors, {counts['unreachable']} unreachable.")
        for link in report["links"]:
            click.echo(f"  {link['verdict']}: {_link_problem(link)} {link['url']} ({link['doc_id']}, source {link['source']})"
                       + (f": {link['fix']}" if link["verdict"] in ("broken", "anchors") and link["fix"] else ""))
        for hint in report["hints"]:
            click.echo(f"Hint: {hint}.")
    if counts["broken"] or counts["anchors"]:
        sys.exit(EXIT_DOCUMENT_ERRORS)
    if report["checked"] and counts["unreachable"] == report["checked"]:
        sys.exit(1)


def _link_problem(link: dict) -> str:
    if link["verdict"] == "anchors":
        shown = ", ".join(f"#{name}" for name in link["missing"][:5]) + (", …" if len(link["missing"]) > 5 else "")
        return f"{len(link['missing'])} of {len(link['anchors'])} heading fragments ({shown}) missing on"
    return f"HTTP {link['status']}" if link["status"] is not None else link["problem"]
