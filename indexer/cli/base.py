"""What every command shares: the `index` group, --config / --artifacts / --json, exit codes, and
the translation of library errors into one-line messages."""

from __future__ import annotations

import logging
import math
import os
import sys
from functools import wraps
from pathlib import Path

import click

from indexer import __version__
from indexer.cli.stopping import Terminated, end_by_signal, stop_on_signals, stops_kept
from indexer.errors import ConfigError, StaticRagError

EXIT_DELETE_GUARD = 3
EXIT_DOCUMENT_ERRORS = 4
EXIT_BUDGET = 5
EXIT_GATE = 6
CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}
DEFAULT_CONFIG = "index.toml"


class ConfigProblem(click.ClickException):
    exit_code = 2


class FiniteRange(click.FloatRange):
    """A FloatRange that refuses nan and inf: nan compares false with every bound, so `--max-cost nan`
    passed the range and then never stopped a run."""

    def convert(self, value, param, ctx):
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number.", param, ctx)
        return number


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

    \b
    Your own documents (folders, web pages, sitemaps, Notion pages):
        index init docs/ https://example.com/help/

    Every command takes --help with a worked example.
    """


def library_call(func, *args):
    """Call into the library, turning its errors into one-line messages with exit 1 (config errors: 2)."""
    try:
        return func(*args)
    except ConfigError as exc:
        raise ConfigProblem(str(exc)) from None
    except StaticRagError as exc:
        raise click.ClickException(str(exc)) from None


def load_config_file(config_path: Path | None, artifacts: Path | None, sources_required: bool = True):
    from indexer.config import load_config

    path = config_path or Path(DEFAULT_CONFIG)
    if config_path is None and not path.exists():
        raise ConfigProblem(f"no config file: pass --config FILE, or write ./{DEFAULT_CONFIG} with `index init` (e.g. `index init docs/`; see examples/index.toml)")
    try:
        return load_config(path, artifacts_override=artifacts, sources_required=sources_required)
    except ConfigError as exc:
        raise ConfigProblem(str(exc)) from None


def optional_config(config_path: Path | None, sources_required: bool = True):
    """The config when one is given or ./index.toml exists (commands that also work from --artifacts alone)."""
    return load_config_file(config_path, None, sources_required) if (config_path or Path(DEFAULT_CONFIG).exists()) else None


def artifacts_dir(config_path: Path | None, artifacts: Path | None) -> Path:
    """--artifacts wins; else the config's `artifacts`; else ./artifacts."""
    if artifacts is not None:
        return artifacts.expanduser()  # STATIC_RAG_ARTIFACTS="~/…" reaches us unexpanded
    config = optional_config(config_path)
    return config.artifacts if config else Path("artifacts")


_END_WITHOUT_TEARDOWN = False


def end_without_teardown() -> None:
    """Ask `main` to end the process as soon as this command returns or exits, skipping the
    interpreter's teardown, for a command that closes everything it writes but holds much when it
    is done: freeing the hosted client's thousands of classes and a run's objects was 0.22–0.26 s
    of an `index run` that changed 1% of 10,000 documents (~2 s). Without `main` (a test's
    CliRunner, a program calling the command) it changes nothing."""
    global _END_WITHOUT_TEARDOWN
    _END_WITHOUT_TEARDOWN = True


def main():
    """Entry point: a bug surfaces as one line and exit 1, not a traceback (STATIC_RAG_DEBUG=1 shows it).
    A crash in native code (a segfault, an abort) prints every thread's Python stack to stderr
    before the process dies, so a nightly job's log says where it happened. SIGTERM and SIGHUP stop
    a command the way Ctrl-C does, what it holds closed, and then end the process by that signal."""
    import faulthandler

    faulthandler.enable()
    stop_on_signals()
    try:
        _main()
    except Terminated as stopped:
        _flush()
        end_by_signal(stopped)
    except SystemExit as exc:
        if _END_WITHOUT_TEARDOWN:
            _end_now(exc.code)
        raise
    if _END_WITHOUT_TEARDOWN:
        _end_now(0)


def _end_now(code) -> None:
    """Exit with `code` as sys.exit would, once what the command printed is flushed."""
    if code is None:
        code = 0
    elif not isinstance(code, int):
        print(code, file=sys.stderr)
        code = 1
    _flush()
    os._exit(code)


def _flush() -> None:
    """Flush the logs and what the command printed, before the process ends without teardown."""
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed or broken pipe: nothing more can reach it
            pass


def os_problem(exc: BaseException) -> str | None:
    """What the machine refused, in words, for errors that are not bugs: a full disk, a file this
    user may not write, a read-only mount, a path given with a file where a folder must be or a
    name too long. None for anything else."""
    import errno
    import getpass

    from indexer.diskspace import out_of_space

    if out_of_space(exc):
        return f"a disk is full: {exc}; free space there and run again"
    if isinstance(exc, OSError) and exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        where = f"{exc.filename}: " if exc.filename else ""
        try:
            user = f" (this command runs as user {getpass.getuser()})" if exc.errno != errno.EROFS else ""
        except (KeyError, OSError):  # no name for this uid (a container's)
            user = f" (this command runs as uid {os.getuid()})"
        return f"{where}{exc.strerror}{user}"
    if isinstance(exc, OSError) and exc.errno in (errno.ENOTDIR, errno.EEXIST) and exc.filename:  # a path given with a file in it where a folder must be
        return f"{exc.filename}: {exc.strerror}: a file is where a folder is needed"
    if isinstance(exc, OSError) and exc.errno in (errno.ENAMETOOLONG, errno.ELOOP) and exc.filename:
        return f"{exc.filename}: {exc.strerror}"
    return None


def _main():
    try:
        with stops_kept():
            cli(standalone_mode=False)
    except (click.exceptions.Abort, KeyboardInterrupt):  # Ctrl-C: what the command held is closed; threads left on a hanging request are not waited for
        click.echo("Aborted.", err=True)
        end_without_teardown()
        sys.exit(1)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except SystemExit:
        raise
    except Exception as exc:
        if os.environ.get("STATIC_RAG_DEBUG"):
            raise
        problem = os_problem(exc)
        if problem:
            click.echo(f"Error: {problem}. Nothing was published by this command.", err=True)
            sys.exit(1)
        click.echo(f"Error: unexpected {type(exc).__name__}: {exc}. Nothing was published by this command. Set STATIC_RAG_DEBUG=1 to see the traceback.", err=True)
        sys.exit(1)
