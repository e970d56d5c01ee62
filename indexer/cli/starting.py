"""Starting out: `index init` writes a first config from where the documents are."""

from __future__ import annotations

import tomllib
from pathlib import Path

import click

from indexer.cli.base import CONTEXT, DEFAULT_CONFIG, ConfigProblem, cli, library_call
from indexer.models import PROVIDERS


@cli.command(context_settings=CONTEXT)
@click.argument("places", nargs=-1, required=True)
@click.option("-c", "--config", "config_path", type=click.Path(dir_okay=False, path_type=Path), default=DEFAULT_CONFIG, show_default=True,
              help="The config file to write.")
@click.option("-p", "--provider", "providers", multiple=True, type=click.Choice(PROVIDERS), default=("local",), show_default=True,
              help="An embedding space per provider (repeatable): local is the bundled model, offline; openai and gemini need their key.")
@click.option("--force", is_flag=True, help="Overwrite the config file if it exists.")
def init(places, config_path, providers, force):
    """Write a first config from where your documents are: folders, web pages, sitemaps, Notion pages.

    A folder becomes a files source; a .csv, .toml or .yaml file of question/answer pairs curated
    answers; a sitemap URL a source of the pages it lists; any other page a crawl of its site kept
    below that page's folder; a Notion page or database URL (or id) a Notion source. The file is checked as `index run` would read it, and says which keys to
    consider next.

    \b
    Examples:
        index init docs/
        index init https://example.com/help/ https://example.com/sitemap.xml
        index init docs/ faq.csv https://www.notion.so/acme/Handbook-c01166c613ae45cbb96818b4ef2f5a77 --provider gemini
    """
    import os

    from indexer.config import parse_config
    from indexer.starter import config_text, key_variables, place_of

    if config_path.exists() and not force:
        raise ConfigProblem(f"{config_path} exists; choose another --config FILE, or add --force to overwrite it")
    config_dir = config_path.resolve().parent
    if not config_dir.is_dir():
        raise ConfigProblem(f"no folder {config_dir} to write {config_path.name} in")
    found = [library_call(place_of, spec, config_dir) for spec in places]
    text = config_text(found, list(dict.fromkeys(providers)))
    config = library_call(parse_config, tomllib.loads(text), config_dir, None, config_path)  # what `index run` will read
    config_path.write_text(text, encoding="utf-8")
    click.echo(f"Wrote {config_path}:")
    for source, place in zip(config.sources, found):
        click.echo(f"  source {source.name!r}: {place.summary}")
    for space in config.spaces:
        click.echo(f"  space {space.space_id}")
    needed = [(place.needs,) for place in found if place.needs] + [key_variables(p) for p in providers if key_variables(p)]
    missing = sorted({names[0] for names in needed if not any(os.environ.get(name, "").strip() for name in names)})
    option = "" if config_path.name == DEFAULT_CONFIG and config_dir == Path.cwd().resolve() else f" -c {config_path}"
    steps = []
    for variable in missing:
        where = "share the root pages with your integration (… menu → Connections)" if variable == "NOTION_TOKEN" else "the provider's API key"
        steps.append((f"export {variable}=…", where))
    if _committable(config_dir / "artifacts"):
        steps.append(("echo /artifacts/ >> .gitignore", "generations are build output, not for version control"))
    steps += [(f"index run{option} --dry-run", "what would be indexed, and what it would cost"), (f"index run{option}", "index it"),
              (f"index serve{option}", "search it at http://127.0.0.1:8000/")]
    width = max(len(command) for command, _ in steps)
    click.echo("Next:")
    for command, why in steps:
        click.echo(f"  {command:<{width}}   # {why}")

def _committable(folder: Path) -> bool:
    """Whether `folder` lies in a git work tree that does not ignore it."""
    from indexer.sources.files import _git

    return _git(folder.parent, "rev-parse", "--is-inside-work-tree") is not None and _git(folder.parent, "check-ignore", "-q", str(folder)) is None
