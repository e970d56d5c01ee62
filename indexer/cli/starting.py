"""Starting out: `index init` writes a first config from where the documents are."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

import click

from indexer import __version__
from indexer.cli.base import CONTEXT, DEFAULT_CONFIG, ConfigProblem, cli, library_call
from indexer.models import PROVIDERS

NIGHTLY_SECRETS = "Settings → Secrets and variables → Actions"


@cli.command(context_settings=CONTEXT)
@click.argument("places", nargs=-1, required=True)
@click.option("-c", "--config", "config_path", type=click.Path(dir_okay=False, path_type=Path), default=DEFAULT_CONFIG, show_default=True,
              help="The config file to write.")
@click.option("-p", "--provider", "providers", multiple=True, type=click.Choice(PROVIDERS), default=("local",), show_default=True,
              help="An embedding space per provider (repeatable): local is the bundled model, offline; openai and gemini need their key.")
@click.option("--github", is_flag=True, help="Also write the nightly job (.github/workflows/nightly-ingest.yml and its script) beside the config.")
@click.option("--force", is_flag=True, help="Overwrite the files if they exist.")
def init(places, config_path, providers, github, force):
    """Write a first config from where your documents are: folders, web pages, sitemaps, Notion pages.

    A folder becomes a files source; a .csv, .toml or .yaml file of question/answer pairs curated
    answers; a sitemap URL a source of the pages it lists; any other page a crawl of its site kept
    below that page's folder; a Notion page or database URL (or id) a Notion source. The file is
    checked as `index run` would read it, and says which keys to consider next. With --github, the
    nightly job of this version is written too (README, "Deploy").

    \b
    Examples:
        index init docs/
        index init https://example.com/help/ https://example.com/sitemap.xml
        index init docs/ faq.csv https://www.notion.so/acme/Handbook-c01166c613ae45cbb96818b4ef2f5a77 --provider gemini --github
    """
    from indexer.config import parse_config
    from indexer.starter import config_text, nightly_job, place_of

    config_dir = config_path.resolve().parent
    if not config_dir.is_dir():
        raise ConfigProblem(f"no folder {config_dir} to write {config_path.name} in")
    job = [(config_dir / target, body) for target, body in nightly_job()] if github else []
    taken = [path for path in [config_path, *(path for path, body in job if path.exists() and path.read_bytes() != body)] if path.exists()]
    if taken and not force:
        raise ConfigProblem(f"{taken[0]} exists; choose another --config FILE, or add --force to overwrite it")
    found = [library_call(place_of, spec, config_dir) for spec in places]
    providers = list(dict.fromkeys(providers))
    text = config_text(found, providers)
    config = library_call(parse_config, tomllib.loads(text), config_dir, None, config_path)  # what `index run` will read
    config_path.write_text(text, encoding="utf-8")
    click.echo(f"Wrote {config_path}:")
    for source, place in zip(config.sources, found):
        click.echo(f"  source {source.name!r}: {place.summary}")
    for space in config.spaces:
        click.echo(f"  space {space.space_id}")
    for path, body in job:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(body)
        if path.suffix == ".sh":
            path.chmod(0o755)
        click.echo(f"Wrote {os.path.relpath(path)}")
    if github and "gemini" not in providers:
        click.echo("Note: the nightly job rebuilds the gemini space (--provider gemini) unless run by hand with another provider; "
                   "add -p gemini to index with Gemini every night.")
    from indexer.starter import key_variables

    needed = [(place.needs,) for place in found if place.needs] + [key_variables(p) for p in providers if key_variables(p)]
    option = "" if config_path.name == DEFAULT_CONFIG and config_dir == Path.cwd().resolve() else f" -c {config_path}"
    steps = _next_steps(needed, config_dir, option, linked=any(source.url_template for source in config.sources))
    width = max(len(command) for command, _ in steps)
    click.echo("Next:")
    for command, why in steps:
        click.echo(f"  {command:<{width}}   # {why}")
    if github:
        click.echo(f"For the nightly job, in the repository's {NIGHTLY_SECRETS}:")
        click.echo(f"  variable STATIC_RAG_PACKAGE = static-rag @ git+https://github.com/YOUR-ORG/static-rag@v{__version__}   (what the job installs)")
        if needed:
            click.echo(f"  secrets  {', '.join(sorted({names[0] for names in needed}))}")


def _next_steps(needed: list[tuple[str, ...]], config_dir: Path, option: str, linked: bool = False) -> list[tuple[str, str]]:
    """(command, why) for what is left before the first run: keys the environment lacks, then the
    run (and, where a url_template was written, the check that its links open)."""
    missing = sorted({names[0] for names in needed if not any(os.environ.get(name, "").strip() for name in names)})
    steps = []
    for variable in missing:
        where = "share the root pages with your integration (… menu → Connections)" if variable == "NOTION_TOKEN" else "the provider's API key"
        steps.append((f"export {variable}=…", where))
    if _committable(config_dir / "artifacts"):
        steps.append(("echo /artifacts/ >> .gitignore", "generations are build output, not for version control"))
    check = [(f"index check-links{option}", "do the hits' links open on the published site?")] if linked else []
    return steps + [(f"index run{option} --dry-run", "what would be indexed, and what it would cost"), (f"index run{option}", "index it"),
                    *check, (f"index serve{option}", "search it at http://127.0.0.1:8000/")]


def _committable(folder: Path) -> bool:
    """Whether `folder` lies in a git work tree that does not ignore it."""
    from indexer.sources.files import git_output

    return git_output(folder.parent, "rev-parse", "--is-inside-work-tree") is not None and git_output(folder.parent, "check-ignore", "-q", str(folder)) is None
