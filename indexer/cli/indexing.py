"""`index run` and `index eval`: build generations, and measure them."""

from __future__ import annotations

import json
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import click

from indexer.cli.base import (
    EXIT_DELETE_GUARD, EXIT_DOCUMENT_ERRORS, EXIT_BUDGET, EXIT_GATE, CONTEXT, ConfigProblem, FiniteRange, artifacts_dir, cli, config_options, end_without_teardown, json_option, library_call,
    load_config_file, optional_config, os_problem,
)
from indexer.cli.stopping import Terminated, raise_if_stopped, stops_kept
from indexer.errors import ConfigError, StaticRagError


@cli.command(context_settings=CONTEXT)
@config_options
@json_option
@click.option("-q", "--quiet", "-s", "--silent", "silent", is_flag=True, help="No progress bars.")
@click.option(
    "-p", "--provider", "providers", multiple=True, type=click.Choice(["local", "openai", "gemini"]),
    help="Rebuild only the spaces of this provider (repeatable). Default: every configured space.",
)
@click.option("--max-cost", type=FiniteRange(min=0), metavar="USD", help="Stop, publishing nothing, before embedding would cost more than this.")
@click.option("--allow-mass-delete", is_flag=True, help="Publish even if a source loses more than max_delete_fraction of its documents (deleted, or left with under a quarter of their text).")
@click.option("-n", "--dry-run", is_flag=True, help="Show the plan (decisions, chunks and tokens to embed, cost); write nothing, call no provider.")
@click.option("--full-refresh", is_flag=True, help="Fetch everything again (no conditional requests, every Notion page's blocks); unchanged text still reuses its vectors.")
@click.option("--reembed", is_flag=True, help="Embed every chunk of the rebuilt spaces anew, reusing no vector: after the provider's model changed (the run stops and says so).")
def run(config_path, artifacts, as_json, silent, providers, max_cost, allow_mass_delete, dry_run, full_refresh, reembed):
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
        index run --config index.toml --reembed --dry-run   # the cost of embedding everything anew

    \b
    Exit codes:
        0  published, no errors
        1  fatal error: nothing was published
        2  usage or configuration error
        3  stopped by the delete guard: a source would lose more than
           max_delete_fraction (default 30%) of its documents (deleted, or
           left with under a quarter of their text); nothing published
        4  published, but some documents failed (listed in the report); each
           keeps its last good version
        5  stopped by --max-cost: nothing was published
    """
    from indexer import runlog
    from indexer.runreport import new_run_id

    config = load_config_file(config_path, artifacts)
    end_without_teardown()  # every file the run writes is closed when it ends, whatever its end
    run_id, outcome = new_run_id(), _Outcome()
    if not dry_run:  # every real run is logged outside the generations, whatever its end (index runs)
        runlog.started(config.artifacts, run_id, sorted(providers) or None, full_refresh)
    try:
        outcome.report = _index(
            config, outcome, silent or as_json, providers=providers or None, max_cost_usd=max_cost, allow_mass_delete=allow_mass_delete,
            dry_run=dry_run, full_refresh=full_refresh, run_id=run_id, reembed=reembed,
        )
    finally:
        if not dry_run:
            _log_end(config.artifacts, run_id, outcome)
    _tell(outcome.report, as_json, config.artifacts)


def _log_end(artifacts: Path, run_id: str, outcome: _Outcome) -> None:
    """The run's end line in runs.jsonl. When it cannot be written (the disk is full), say so and
    let the run's own outcome stand: the write's error replaced it, and a run that had published
    said "Nothing was published"."""
    from indexer import runlog

    report = outcome.report
    try:
        if report is not None:
            runlog.finished(artifacts, run_id, "partial" if report.errors else "success", EXIT_DOCUMENT_ERRORS if report.errors else 0, report.as_dict())
        else:
            runlog.finished(artifacts, run_id, "failed", outcome.code, error=outcome.error)
    except OSError as exc:
        click.echo(f"Warning: the run's end could not be written to {artifacts / runlog.RUNLOG} ({exc.strerror or exc}); `index runs` will call it unfinished.", err=True)


@dataclass
class _Outcome:
    """How a run ended, for its line in the run log: its report once published, else what stopped it."""

    report: object = None
    code: int = 1
    error: str = "stopped before it finished (interrupted?)"


def _without(missing, config, providers) -> str:
    """For a provider's missing key: how to rebuild the other spaces meanwhile."""
    if getattr(missing, "provider", None) is None:
        return ""
    others = sorted({s.provider for s in config.spaces if s.provider != missing.provider and (not providers or s.provider in providers)})
    return f"; or rebuild the other spaces alone: index run {' '.join(f'--provider {p}' for p in others)}" if others else ""


def _index(config, outcome: _Outcome, quiet: bool, **options):
    """Run the pipeline with progress bars; a failure becomes its exit code and one-line message,
    noted in `outcome` for the run log."""
    # Only now the pipeline's imports (numpy and the rest, ~0.2 s): a run killed while they load is in the log already.
    from indexer.allocator import fewer_arenas
    from indexer.diskspace import full_disk_message, out_of_space
    from indexer.embedders.remote import BudgetExceeded, EmbeddingsFailed, MissingCredentials
    from indexer.pipeline import run_index
    from indexer.plan import DeleteGuard

    fewer_arenas()  # this process is the run's: its threads share the C allocator's memory (indexer/allocator.py)
    with _reporting(quiet) as progress:
        try:
            with stops_kept():
                return run_index(config, progress=progress, **options)
        except (MissingCredentials, ConfigError) as exc:
            outcome.code, outcome.error = 2, str(exc) + _without(exc, config, options.get("providers"))
            raise ConfigProblem(outcome.error) from None
        except (BudgetExceeded, DeleteGuard) as exc:
            outcome.code, outcome.error = EXIT_BUDGET if isinstance(exc, BudgetExceeded) else EXIT_DELETE_GUARD, str(exc)
            click.echo(f"Error: {exc}", err=True)
            sys.exit(outcome.code)
        except EmbeddingsFailed as exc:
            outcome.error = f"{exc.code}: {exc}"
            raise click.ClickException(f"{exc.code}: {exc}. Nothing was published.") from None
        except StaticRagError as exc:
            outcome.error = str(exc)
            raise click.ClickException(str(exc)) from None
        except Exception as exc:
            if out_of_space(exc):
                outcome.error = full_disk_message(config.artifacts)
                raise click.ClickException(outcome.error) from None
            outcome.error = os_problem(exc) or f"unexpected {type(exc).__name__}: {exc}"
            raise
        except KeyboardInterrupt:
            outcome.error = "stopped by Ctrl-C (SIGINT) before it finished"
            raise
        except Terminated as stopped:
            outcome.code, outcome.error = 128 + stopped.signum, f"stopped by {stopped.reason} before it finished"  # what a shell sees
            raise


def _tell(report, as_json: bool, artifacts: Path) -> None:
    """Print what a finished run did (or a dry run would do) and exit with its code: 4 when
    documents failed; for a dry run, 3 when the delete guard would stop the real one."""
    if as_json:
        click.echo(json.dumps(report.as_dict(), indent=2))
    elif report.dry_run:
        _print_plan(report)
    else:
        _print_summary(report, artifacts)
    if report.dry_run:
        if report.delete_guard:  # the real run would stop: say so the way a scheduled job can act on
            sys.exit(EXIT_DELETE_GUARD)
        return
    if report.errors:
        if not as_json:
            click.echo(f"{len(report.errors)} document(s) failed; their errors are in source_events.", err=True)
        sys.exit(EXIT_DOCUMENT_ERRORS)


@cli.command("eval", context_settings=CONTEXT)
@click.option("--dataset", "dataset_dir", type=click.Path(file_okay=False, exists=True, path_type=Path),
              help="A BEIR folder: corpus.jsonl, queries.jsonl, qrels/<split>.tsv (with --artifacts, corpus.jsonl may be left out). "
                   "Without it, --off-topic alone: which of those questions your index answers.")
@config_options
@json_option
@click.option("--split", default="test", show_default=True, help="The qrels file to use.")
@click.option("--limit-queries", type=click.IntRange(1), help="Evaluate only the first N judged queries (quick runs).")
@click.option("--off-topic", "off_topic_dirs", multiple=True, type=click.Path(file_okay=False, exists=True, path_type=Path),
              help="A BEIR folder from another domain: its queries should not be answerable here (repeatable). Reports the abstain quality.")
@click.option("--tune", is_flag=True, help="Find the hybrid weight that ranks this labeled set best, and print the config line to set it.")
@click.option("--gate", "gate_path", type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="TOML of minimums (and, with --off-topic, abstain limits); exit 6 when any is not met.")
@click.option("-q", "--quiet", "silent", is_flag=True, help="No progress bars.")
def evaluate(dataset_dir, config_path, artifacts, as_json, split, limit_queries, off_topic_dirs, tune, gate_path, silent):
    """Measure retrieval quality on a labeled dataset through the product's own pipeline.

    The corpus is indexed with the configured spaces into a temporary artifacts folder
    (or, with --artifacts, an existing index of this corpus is evaluated: then questions
    about your own index need only queries.jsonl and qrels naming its doc ids), and every
    query runs through the server's search code in dense, lexical and hybrid modes.
    Prints nDCG@10, Recall@10, Recall@100 and MRR@10 per space and mode.

    With --off-topic, also how well `answerable` tells this dataset's questions from
    another domain's: AUROC of the best hit's relevance, and at the space's threshold
    the share of off-topic questions answered and of answerable ones abstained; then
    the `min_relevance` to set for at most 5% answered and 10% abstained. Without
    labeled questions, --off-topic alone says which of those questions the index
    (--artifacts, or the config's) answers, and by which passage.

    \b
    Examples:
        index eval --dataset ../shared/data/scifact --config examples/index.toml
        index eval --dataset ../shared/data/scifact --off-topic ../shared/data/arguana
        index eval --dataset my-questions --artifacts artifacts --tune   # prints hybrid_weight = …
        index eval --dataset data/scifact --gate floors.toml    # exit 6 below a floor
        index eval --dataset my-questions --artifacts artifacts --off-topic bench/everyday --gate floors.toml
        index eval --off-topic bench/everyday --config index.toml    # no labeled questions yet
    """
    from indexer import evaluation, quality
    from indexer.scratch import scratch_folder

    gate = None
    if gate_path is not None:
        try:
            gate = evaluation.load_gate(gate_path)
        except ConfigError as exc:
            raise ConfigProblem(str(exc)) from None
        if "answerable" in gate and not off_topic_dirs:
            raise ConfigProblem(f"{gate_path}: its [answerable] table needs --off-topic: questions this corpus should not answer (e.g. bench/everyday)")
    if dataset_dir is None:
        _only_off_topic_allowed(off_topic_dirs, tune, gate_path, gate)
        artifacts = artifacts_dir(config_path, artifacts)
        dataset = evaluation.Dataset(name="", corpus={}, queries={}, qrels={})  # no questions of its own
    else:
        dataset = library_call(evaluation.load_dataset, dataset_dir, split, limit_queries, artifacts is None)
    off_topic = {d.name: library_call(evaluation.load_queries, d, split) for d in off_topic_dirs}
    config = optional_config(config_path, sources_required=False)  # a config written only to choose the spaces needs no sources
    spaces = config.spaces if config else None
    with scratch_folder("eval") as tmp:
        folder = artifacts
        if folder is None:
            with _reporting(silent or as_json) as progress:
                folder = library_call(evaluation.index_dataset, dataset, Path(tmp), spaces, progress)
        with _reporting(silent or as_json) as progress:
            results = library_call(quality.rank_all, folder, dataset, progress) if dataset.queries else {}
            abstain = library_call(quality.abstain, folder, dataset, off_topic, progress) if off_topic else None
            tuned = library_call(quality.tune, folder, dataset, progress) if tune else None
    report = {"dataset": dataset.name or None, "split": split, "queries": len(dataset.queries), "spaces": results}
    report |= ({"abstain": abstain} if abstain else {}) | ({"tune": tuned} if tuned else {})
    failures = evaluation.gate_failures(results, gate, abstain) if gate else []
    if as_json:
        click.echo(json.dumps({**report, "gate_failures": failures} if gate else report, indent=2))
    else:
        _print_eval(report)
        for line in failures:
            click.echo(f"Gate not met: {line}", err=True)
    if failures:
        sys.exit(EXIT_GATE)


def _only_off_topic_allowed(off_topic_dirs, tune: bool, gate_path, gate: dict | None) -> None:
    """Without --dataset, eval can only ask the index the off-topic questions, and a gate can only
    limit how many of them it answers."""
    if not off_topic_dirs:
        raise click.UsageError("pass --dataset (labeled questions), or --off-topic alone to see which of those questions the index answers")
    if tune:
        raise click.UsageError("--tune needs --dataset: labeled questions to measure against")
    needs_questions = [f"[{table}] {name}" for table, limits in (gate or {}).items() for name in limits
                       if (table, name) != ("answerable", "max_off_topic_answered")]
    if needs_questions:
        raise click.UsageError(f"{gate_path}: {', '.join(needs_questions)} need --dataset: labeled questions to measure against "
                               "(without it, a gate can hold [answerable] max_off_topic_answered only)")


def _print_eval(report: dict) -> None:
    if report["dataset"] is None:
        click.echo("No labeled questions (--dataset): only which off-topic questions the index answers.")
    else:
        click.echo(f"{report['dataset']} ({report['split']}): {report['queries']} queries")
    for space_id, modes in report["spaces"].items():
        click.echo(f"  {space_id}")
        for mode, metrics in modes.items():
            click.echo(f"    {mode:<8} " + "  ".join(f"{name} {value:.4f}" for name, value in metrics.items()))
    for space_id, info in (report.get("abstain") or {}).items():
        click.echo(f"  abstain, {space_id} (min_relevance {info['min_relevance']}):")
        for name, row in info["off_topic"].items():
            auroc = f"AUROC {row['auroc']:.4f}; " if row["auroc"] is not None else ""  # None: no questions of its own
            click.echo(f"    vs {name} ({row['off_topic_queries']} off-topic questions): {auroc}{_rates_line(row)}")
            _print_answered(row["answered"])
        if suggested := info.get("suggested"):
            _print_suggested_threshold(suggested)
        if keywords := info.get("keywords_alone"):
            _print_keywords_alone(keywords)
    for space_id, info in (report.get("tune") or {}).items():
        curve = "  ".join(f"{w}: {v:.4f}" for w, v in info["ndcg@10_by_weight"].items())
        click.echo(f"  hybrid nDCG@10 by dense weight, {space_id}: {curve}")
        same = "  # the weight in use ranks as well as any" if info["best"] == info.get("current") else ""
        click.echo(f"  To use the best weight, add to this space's [[spaces]] table:\n    hybrid_weight = {info['best']}{same}")


ANSWERED_SHOWN = 5  # off-topic questions answered that `index eval` names; --json lists them all


def _print_answered(answered: list[dict]) -> None:
    from indexer.reporting import one_line

    if not answered:
        return
    more = f" (--json lists all {len(answered)})" if len(answered) > ANSWERED_SHOWN else ""
    click.echo(f"      answered, highest relevance first — does this corpus answer them after all?{more}")
    for a in answered[:ANSWERED_SHOWN]:
        query = one_line(a["query"], 60)  # however the question was written
        where = " › ".join(part for part in (a["title"], a["heading"]) if part)
        click.echo(f"        {a['relevance']:.3f}  “{query}” → {where}")


def _print_keywords_alone(info: dict) -> None:
    """The same for a search by keywords alone (lexical mode, a degraded one): its rates, and its own threshold to set."""
    click.echo(f"    by keywords alone (lexical mode, a degraded search; min_lexical_relevance {info['min_relevance']}):")
    for name, row in info["off_topic"].items():
        click.echo(f"      vs {name}: {_rates_line(row)}")
    if suggested := info.get("suggested"):
        _print_suggested_threshold(suggested, key="min_lexical_relevance")


def _rates_line(row: dict) -> str:
    """An off-topic set's two shares at the threshold, each with the questions it counts."""
    line = f"off-topic answered {row['off_topic_answered']:.1%} ({row['off_topic_answered_count']})"
    if row["answerable_abstained"] is not None:
        line += (f", answerable abstained {row['answerable_abstained']:.1%} ({row['answerable_abstained_count']} of "
                 f"{row['answerable_found']} with a relevant document in the top 10)")
    return line


def _print_suggested_threshold(suggested: dict, key: str = "min_relevance") -> None:
    from indexer.quality import MAX_ABSTAINED, MAX_ANSWERED, ROOM_TO_CHANGE

    targets = f"at most {MAX_ANSWERED:.0%} of off-topic questions answered and {MAX_ABSTAINED:.0%} of answerable ones abstained"
    answered, abstained = suggested["at"]
    at = f"{key} = {suggested['min_relevance']}"
    if not suggested["meets_targets"]:
        click.echo(f"  No threshold meets {targets}; the closest, {at}, answers {answered:.1%} and abstains on {abstained:.1%}.")
        return
    same = f"  # the threshold in use: no other has {ROOM_TO_CHANGE * 100:g} points more room" if suggested["min_relevance"] == suggested.get("current") else ""
    click.echo(f"  For {targets}, add to this space's [[spaces]] table:\n    {at}{same}")
    click.echo(f"  (at it: {answered:.1%} answered, {abstained:.1%} abstained{' on the sets it serves' if suggested['unserved'] else ''})")
    alone = suggested.get("alone", {})
    if never := [name for name in suggested["unserved"] if name not in alone]:
        click.echo(f"  (no threshold serves {', '.join(never)}: those questions may have answers in this corpus)")
    for name, at_alone in alone.items():
        click.echo(f"  ({name} is served by {key} = {at_alone} alone, which serves fewer sets in all: those questions may have answers in this corpus)")


PLAN_LINES = 50  # documents a dry run lists by name before summarizing the rest
LASTMOD_HINT_MIN = 50  # pages asked for that a sitemap lastmod vouched for, before `index run` names trust_lastmod


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

    from indexer.reporting import changed, peak_memory

    seconds = sum(report.seconds.values())
    took = f"{seconds:.{1 if seconds >= 1 else 2}f}s{peak_memory(report.peak_rss_mb, ', ')}"
    changes = changed(report.counts, report.moved_documents)
    if report.by_lastmod:  # why a large site's run was quick, and what it took on trust
        n = len(report.by_lastmod)
        click.echo(f"{n} page{'' if n == 1 else 's'} not requested: {'its' if n == 1 else 'their'} sitemap's lastmod says "
                   f"{'it has' if n == 1 else 'they have'} not changed since last read (trust_lastmod).")
    for name, n in report.could_spare.items():
        if n >= LASTMOD_HINT_MIN:  # each costs the politeness delay at least: a large site's night is mostly these
            click.echo(f"{name}: {n} pages were asked for that the sitemap's lastmod says have not changed since last read; "
                       "if the site keeps <lastmod> up to date, `trust_lastmod = true` asks only for the others (README: Web pages).")
    if report.unchanged:
        click.echo(f"Nothing changed: generation {report.generation_id} stays current ({report.documents} documents); "
                   f"nothing was written  ({took}).")
        _print_problems(report)  # what is left out (a scan, a blank page) is still said every run
        return
    measured = [step.split(":", 1)[1] for step in report.seconds if step.startswith("chance:")]
    if measured and all(name == "skipped" for name, n in report.counts.items() if n):  # why a run without changes published
        changes += f"; the chance level of {', '.join(measured)} measured again"
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
    for space_id, stats in report.spaces.items():
        if stats.get("postings_rewritten"):  # why a run that changed nothing published: once, after an upgrade
            n = stats["postings_rewritten"]
            click.echo(f"Rewrote the lexical postings of {space_id} ({n} segment{'' if n == 1 else 's'}) for this version's analyzer: "
                       "once, after an upgrade; nothing was embedded for it.")
    click.echo(f"Artifacts: {artifacts.resolve()}  ({took})")
    _print_problems(report)


def _print_problems(report) -> None:
    """Errors (failed documents), then warnings (things left out on purpose), one line each, on stderr."""
    from indexer.reporting import streak

    for error in report.errors:
        click.echo(f"  {error.code} [{error.step}] {error.message}{streak(error.failing_since, error.failed_runs, ' ')}", err=True)
    for warning in report.warnings:
        click.echo(f"  warning: {warning.code} {warning.message}", err=True)


@contextmanager
def _reporting(silent: bool):
    """Progress bars on stderr with known totals; nothing at all when silent. Each step of
    progress is also where a stop that a native library swallowed surfaces (`raise_if_stopped`)."""
    if silent:

        @contextmanager
        def quiet_task(description: str, total: int | None):
            yield lambda n: raise_if_stopped()

        yield quiet_task
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    class StaysOnBrokenPipe(Console):
        def on_broken_pipe(self) -> None:
            """Go quiet. Rich's default ends the process (SystemExit): when a pipe's reader (`| head`)
            ended, the run stopped, or, if it had published, was logged as failed."""
            self.quiet = True

    bars = Progress(
        TextColumn("{task.description:<40}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        console=StaysOnBrokenPipe(stderr=True), transient=False,
    )

    @contextmanager
    def task(description: str, total: int | None):
        task_id = bars.add_task(description, total=total)

        def advance(n: int) -> None:
            raise_if_stopped()
            bars.advance(task_id, n)

        yield advance

    bars.start()
    try:
        yield task
    finally:
        try:
            bars.stop()
        except OSError:  # stderr is gone (its terminal closed, its pipe's reader ended): not the run's outcome
            pass
