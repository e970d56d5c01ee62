"""A run's summary for people: counts, spaces, errors by code, slowest documents, tokens and cost.

`index report` renders it in a terminal or as Markdown (a GitHub Actions job summary); the
summary is what `index run --json` prints and what each generation keeps in report.json.
"""

from __future__ import annotations

import html
import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from indexer.artifacts import GENERATIONS, REPORT, current_generation, list_generations
from indexer.errors import ArtifactError

DECISIONS = ("added", "updated", "metadata_only", "skipped", "deleted", "failed")


@dataclass(frozen=True)
class Table:
    title: str
    header: tuple[str, ...]
    rows: list[tuple[str, ...]]


def load_summary(artifacts: Path, ref: str | None = None) -> dict:
    """The summary of run `ref`: a generation id, a run id, a file `index run --json` wrote, or
    (None) the run that built the current generation."""
    if ref is not None and ref.endswith(".json"):
        return _summary_file(Path(ref))
    artifacts = Path(artifacts)
    if ref is None:
        return _stored(current_generation(artifacts) / REPORT)
    from indexer import runlog

    logged = next((r for r in runlog.read(artifacts) if r["run_id"] == ref), None)
    if logged is not None and logged["status"] in runlog.PUBLISHED_NOTHING:  # the log is all there is
        return {"run_id": ref, "status": logged["status"], "exit_code": logged.get("exit_code"), "error": logged.get("error"),
                "started_at": logged.get("started_at"), "finished_at": logged.get("finished_at"), "errors": logged.get("errors", [])}
    kept = list_generations(artifacts)
    if ref in kept:
        return _stored(artifacts / GENERATIONS / ref / REPORT)
    for generation_id in reversed(kept):
        path = artifacts / GENERATIONS / generation_id / REPORT
        if path.is_file() and json.loads(path.read_text(encoding="utf-8")).get("run_id") == ref:
            return _stored(path)
    raise ArtifactError(f"no run or generation {ref!r} in {artifacts}; kept generations: {', '.join(kept) or 'none'} "
                        "(`index runs` lists their run ids; a JSON file from `index run --json` works too)")


def _stored(path: Path) -> dict:
    try:
        stored = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ArtifactError(f"{path} is missing: this generation has no run report") from None
    return {**stored["summary"], "errors": stored["errors"]}


def _summary_file(path: Path) -> dict:
    try:  # bytes: json finds UTF-8, or the UTF-16 that PowerShell's `> run.json` writes, by itself
        summary = json.loads(path.read_bytes())
    except FileNotFoundError:
        raise ArtifactError(f"no such file: {path}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ArtifactError(f"{path} is not JSON ({exc}); pass the output of `index run --json`") from None
    if not isinstance(summary, dict) or "documents" not in summary:
        raise ArtifactError(f"{path} is not a run summary; pass the output of `index run --json`")
    return summary


def changed(counts: dict[str, int], moved: int = 0) -> str:
    """"3 added, 2 skipped, 3 deleted, 3 of them moved": the documents of a run by decision."""
    said = [f"{counts[k]} {k.replace('_', '-')}" + (f", {moved} of them moved" if k == "deleted" and moved else "")
            for k in DECISIONS if counts.get(k)]
    return ", ".join(said) or "no changes"


def headline(summary: dict) -> str:
    if summary.get("status") == "failed":
        return f"Run {summary['run_id']} failed (exit {summary.get('exit_code')}) and published nothing: {summary.get('error')}"
    unpublished = {
        "running": "is still running (its process is alive on this machine)",
        "unfinished": "ended without finishing: its process is gone (killed, or crashed; a crash's stack is in the job's log)",
        "in_progress": "has no end in the log (still running on another machine, or killed)",
    }
    if summary.get("status") in unpublished:
        return f"Run {summary['run_id']} started {summary.get('started_at')} and {unpublished[summary['status']]}. Nothing was published by it."
    changes = changed(summary["documents"], summary.get("moved", 0))
    if summary.get("dry_run"):
        return (f"Dry run: {summary['total_documents']} documents would be published ({changes}); "
                f"estimated cost {_dollars(summary['estimated_cost_usd'])}. Nothing was written.")
    kept = " (nothing changed: the served generation was kept)" if summary.get("unchanged") else ""
    return (f"Generation {summary['generation']}{kept} (run {summary['run_id']}): {summary['total_documents']} documents ({changes}); "
            f"{summary['chunks']['embedded']} chunks embedded, {summary['chunks']['reused']} reused; "
            f"{summary['tokens_embedded']} tokens, {_dollars(summary['cost_usd'])}{peak_memory(summary.get('peak_rss_mb'), '; ')}.")


def streak(since: str | None, runs: int, before: str = "") -> str:
    """How long an error has been failing, after `before`; "" for one this run met first."""
    if runs <= 1 or not since:
        return ""
    return f"{before}(failed in {runs} runs in a row, since {since[:10]})"


def peak_memory(mb: float | None, before: str = "") -> str:
    """A run's peak memory as people read it, after `before` ("" when unknown), for sizing the
    machine that runs it. `index run`'s own output has it; the report a generation keeps does not
    (it is written before the generation is)."""
    return f"{before}peak memory {mb:.0f} MB" if mb else ""


def _dollars(amount: float) -> str:
    return f"${amount:.4f}" if amount else "no cost"


def tables(summary: dict, limit: int = 10) -> list[Table]:
    if "documents" not in summary:  # a run that published nothing has no counts
        return []
    counts = summary["documents"]
    out = [Table("Documents", tuple(k.replace("_", "-") for k in DECISIONS), [tuple(str(counts.get(k, 0)) for k in DECISIONS)])]
    if summary.get("dry_run"):
        out.append(Table("Spaces", ("space", "chunks to embed", "tokens to embed", "from the vector cache", "estimated cost (USD)"), [
            (space_id, str(s["chunks_to_embed"]), str(s["tokens_to_embed"]), str(s["chunks_reused"]), f"{s['estimated_cost_usd']:.4f}")
            for space_id, s in summary["spaces"].items()
        ]))
    else:
        rows = []
        for space_id, s in summary["spaces"].items():
            if "embedded" not in s:
                rows.append((space_id, str(s.get("chunks", "-")), "-", "-", "-", "-", s.get("skipped") or "carried over"))
                continue
            usage = s.get("usage") or {}
            rows.append((space_id, str(s["chunks"]), str(s["embedded"]), str(s["reused"] + s["carried"]), str(usage.get("tokens", "-")),
                         f"{usage['cost_usd']:.4f}" if usage else "-", ""))
        out.append(Table("Spaces", ("space", "chunks", "embedded", "reused", "tokens", "cost (USD)", "note"), rows))
    for label, problems in (("Errors by code", summary.get("errors", [])), ("Warnings by code", summary.get("warnings", []))):
        if problems:
            by_code = Counter(p["code"] for p in problems)
            first, longest = {}, {}
            for p in problems:
                first.setdefault(p["code"], f"{p['doc_id'] or p['source'] or ''}: {p['message']}".lstrip(": "))
                if p.get("failed_runs", 1) > longest.get(p["code"], {}).get("failed_runs", 1):
                    longest[p["code"]] = p
            rows = [(code, str(n), first[code]) for code, n in by_code.most_common()]
            if longest:  # failures that repeat run after run: a stale page, not a blip
                rows = [(*row, streak(longest[row[0]]["failing_since"], longest[row[0]]["failed_runs"]) if row[0] in longest else "-") for row in rows]
            out.append(Table(label, ("code", "count", "first", *(("longest failing",) if longest else ())), rows))
    if summary.get("retries"):
        out.append(Table("Fetches retried in the run", ("source", "retries"), [(name, str(n)) for name, n in summary["retries"].items()]))
    slowest = summary.get("slowest_documents") or []
    if slowest:
        out.append(Table("Slowest documents to fetch", ("document", "source", "seconds"),
                         [(f"{d['title']} ({d['doc_id']})", d["source"], f"{d['seconds']:.2f}") for d in slowest[:limit]]))
    if summary.get("seconds"):
        out.append(Table("Time by step", ("step", "seconds"), [(step, f"{s:.1f}") for step, s in summary["seconds"].items()]))
    return out


def markdown(summary: dict) -> str:
    """GitHub-flavoured Markdown; text from sources (titles, messages) is escaped, never markup."""
    parts = ["### static-rag ingest", "", _cell(headline(summary), 1000), ""]  # room for all of it: the cost and memory come last
    for table in tables(summary):
        parts += [f"#### {table.title}", "", _row(table.header), _row(("---",) * len(table.header))]
        parts += [_row(row) for row in table.rows]
        parts.append("")
    return "\n".join(parts)


def _row(cells) -> str:
    return "| " + " | ".join(_cell(c) for c in cells) + " |"


def one_line(text: str, limit: int) -> str:
    """`text` on one line (whitespace runs as one space), cut to `limit` characters with "…"."""
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _cell(text: str, limit: int = 200) -> str:
    """Text as Markdown shows it literally, on one line, cut to `limit` characters."""
    return html.escape(one_line(text, limit), quote=False).replace("|", "\\|").replace("`", "\\`").replace("*", "\\*").replace("_", "\\_").replace("[", "\\[")
