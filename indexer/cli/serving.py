"""Reading a generation: `index search`, `extract` (what one page becomes), and `serve`."""

from __future__ import annotations

import errno
import json
import logging
import os
import signal
import tempfile
from pathlib import Path

import click

from indexer.cli.base import (
    CONTEXT, DEFAULT_CONFIG, artifacts_dir, cli, config_options, json_option, library_call, load_config_file, optional_config,
)
from indexer.errors import ConfigError, StaticRagError


@cli.command(context_settings=CONTEXT)
@click.argument("query")
@config_options
@json_option
@click.option("-k", "--top-k", default=5, show_default=True, type=click.IntRange(1, 50), help="How many hits.")
@click.option("--mode", type=click.Choice(["hybrid", "dense", "lexical"]), default="hybrid", show_default=True)
@click.option("--space", help="Embedding space id (default: the config's [server] default_space, else the space rebuilt last).")
@click.option("--source", help="Only documents from this source.")
@click.option("--parse-time", is_flag=True, help='Read a time phrase ("last week", "since Monday", "in October") as a date filter.')
@click.option("--timezone", "zone_name", metavar="ZONE", help="IANA time zone for --parse-time (default UTC), e.g. Europe/Berlin.")
def search(query, config_path, artifacts, as_json, top_k, mode, space, source, parse_time, zone_name):
    """Search the current generation from the shell, with the same code the server runs.

    \b
    Examples:
        index search "how do I roll back a bad index?" --config examples/index.toml
        index search "rate limits" --artifacts artifacts --mode lexical --json
        index search "what changed last week?" --parse-time --timezone Europe/Berlin
    """
    from indexer.config import ServerConfig
    from server.search import SearchFilters
    from server.service import SearchService, ServiceError, Settings
    from server.timefilter import zone

    config = optional_config(config_path)  # its [server] default_space applies
    folder = artifacts or (config.artifacts if config else Path("artifacts"))
    service = SearchService(Settings(artifacts=folder, server=config.server if config else ServerConfig()))
    # A server's warnings (a space that cannot embed queries here) would repeat what the answer shows.
    server_log = logging.getLogger("static_rag.server")
    level = server_log.level
    server_log.setLevel(logging.ERROR)
    try:
        service.load(ready_models=False)  # one query: the model loads only if it embeds it
        result = service.search(query, space_id=space, top_k=top_k, mode=mode, filters=SearchFilters(source=source),
                                parse_time=parse_time, tz=zone(zone_name))
    except ServiceError as exc:
        raise click.ClickException(exc.message) from None
    except StaticRagError as exc:
        raise click.ClickException(str(exc)) from None
    finally:
        service.close()
        server_log.setLevel(level)
    if as_json:  # the API's own response body, field for field
        import msgspec

        from server.bodies import search_response

        click.echo(json.dumps(msgspec.to_builtins(search_response(result, offset=0)), indent=2, ensure_ascii=False))
        return
    if result.degraded_reason:
        click.echo(f"Answered by keywords only: {result.degraded_reason}", err=True)
    if result.time_filter is not None:
        window = result.time_filter
        if window.after is None and window.before is None:  # "what's new?"
            click.echo("The documents updated most recently, newest first")
        else:
            click.echo(f"Updated {window.phrase}: {_window(window.after, window.before)} (UTC)" + (", newest first" if window.only_time else ""))
    for answer in result.answers:
        click.echo(click.style(f"Answer: {answer.question}", bold=True) + f"  (relevance {answer.relevance:.2f}{', ' + answer.url if answer.url else ''})")
        click.echo(f"   {answer.answer}\n")
    if not result.hits:
        only_time = result.time_filter is not None and result.time_filter.only_time
        click.echo(f"Nothing was updated {result.time_filter.phrase}." if only_time else "No hits.")
    elif not result.answerable:
        click.echo(click.style("Nothing in these documents seems to answer that; the closest hits:", bold=True))
    for rank, hit in enumerate(result.hits, start=1):
        where = " › ".join(hit.heading_path)
        click.echo(click.style(f"{rank}. {hit.title}", bold=True) + f"  ({hit.link or hit.path or hit.doc_id})"
                   + (f" p. {hit.page_start}" if hit.page_start else ""))
        if where:
            click.echo(f"   {where}")
        click.echo(f"   {_terminal(hit.snippet)}")
        measure = f"updated {hit.updated_at:%Y-%m-%d %H:%M} UTC" if result.mode == "recent" and hit.updated_at else f"score {hit.score:.4f}, relevance {hit.relevance:.2f}"
        click.echo(f"   {measure}" + (" (stale: this space has an older version of the page)" if hit.stale else ""))


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
        index extract manuals/returns.pdf
        index extract http://127.0.0.1:8080/page --allow-private-network 127.0.0.0/8
    """
    from indexer.config import SourceConfig, check_networks
    from indexer.extract import ExtractionError, not_text
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
        if result.moved and not as_json:
            click.echo(f"(indexed as {document.url}: {target} leads there)", err=True)
    else:
        path = Path(target)
        if not path.is_file():
            raise click.BadParameter(f"not a file or an http(s) URL: {target}", param_hint="TARGET")
        try:
            document = read_file(path, path.name, f"file:{path.name}", "extract")
        except ExtractionError as exc:
            raise click.ClickException(f"{exc.code or 'FILE_EXTRACTION_FAILED'}: {path}: {exc}") from None
        except UnicodeDecodeError as exc:
            raise click.ClickException(f"FILE_EXTRACTION_FAILED: {path}: {not_text(exc)}") from None
        except OSError as exc:
            raise click.ClickException(f"FILE_EXTRACTION_FAILED: {path}: {exc}") from None
        if not document.text.strip():
            raise click.ClickException(f"FILE_EXTRACTION_EMPTY: {path}: no text found")
    if as_json:
        fields = ("doc_id", "title", "url", "path", "updated_at", "tags", "authors", "metadata", "text", "pages", "anchors")
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
    from indexer.scratch import scratch_folder
    from server.launch import check_address  # imports no metrics

    address = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    try:
        check_address(host, port)  # before the model loads and the banner says "Serving"
    except OSError as exc:
        advice = ("another program (another index serve?) is listening there: stop it, or pass another --port"
                  if exc.errno == errno.EADDRINUSE else "--host must name an address of this machine (127.0.0.1, 0.0.0.0, ::1, …)")
        raise click.ClickException(f"cannot listen on {address}: {exc.strerror or exc}; {advice}") from None
    # Before anything imports prometheus_client: its metrics choose per-process files at creation.
    metrics_dir = scratch_folder("metrics")  # every worker's counters, summed by /metrics
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = metrics_dir.name
    _remove_on_sigterm(metrics_dir)
    from server import launch
    from server.guard import Guard

    folder = artifacts_dir(config_path, artifacts)
    if config_path is not None or Path(DEFAULT_CONFIG).exists():
        path = config_path or Path(DEFAULT_CONFIG)
        library_call(Guard, load_config_file(path, artifacts).server)  # a key whose variable is unset stops us here (exit 2), not in each worker
        os.environ["STATIC_RAG_CONFIG"] = str(path.resolve())
    os.environ["STATIC_RAG_ARTIFACTS"] = str(folder.resolve())  # how each worker process finds its settings
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    os.environ.setdefault("PYTHONFAULTHANDLER", "1")  # a worker that crashes in native code prints its threads' stacks too
    os.environ["STATIC_RAG_JSON_LOGS"] = "1"
    os.environ["STATIC_RAG_ACCESS_LOG"] = "1" if access_log else "0"
    click.echo(f"Serving {folder.resolve()} on http://{address} with {workers} worker(s)  (OpenAPI: http://{address}/schema)")
    click.echo(f"Demo page: http://{address}/  (the same box on your own site: http://{address}/widget.js, README \"Demo page and widget\")")
    click.echo(
        f"Try: curl -s -XPOST 'http://{address}/v1/search' -H 'content-type: application/json' "
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


def _remove_on_sigterm(folder: tempfile.TemporaryDirectory) -> None:
    """Remove `folder` when SIGTERM (systemd, `docker stop`) ends the server, then end by that signal.

    After its graceful shutdown, uvicorn raises the signal again under the handler it found, so the
    process ends by SIGTERM as supervisors expect. Under the default handler that ended it before
    `with metrics_dir` could close, and every restart left a metrics folder in /tmp. (With several
    workers the supervisor returns normally; Ctrl-C raises KeyboardInterrupt; both close the `with`.)"""

    def end(signum, frame):
        folder.cleanup()
        signal.signal(signum, signal.SIG_DFL)
        signal.raise_signal(signum)

    signal.signal(signal.SIGTERM, end)


def _window(after, before) -> str:
    """A range read from a question, as `index search` shows it: "2026-11-23 00:00 – now", "before 2026-10-01 00:00"."""
    if after is None:
        return f"before {before:%Y-%m-%d %H:%M}"
    return f"{after:%Y-%m-%d %H:%M} – {f'{before:%Y-%m-%d %H:%M}' if before else 'now'}"
