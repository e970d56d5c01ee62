"""Front matter: the metadata a Markdown file carries above its text — YAML between `---` lines,
or TOML between `+++` lines as Hugo writes it — read safely (an alias bomb or a 20,000-deep
nesting is an error, not a hang)."""

from __future__ import annotations

import re
import tomllib

import yaml

from indexer.errors import ExtractionError

FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.DOTALL)
TOML_FRONT_MATTER = re.compile(r"\A\+\+\+[ \t]*\r?\n(.*?)\r?\n\+\+\+[ \t]*(?:\r?\n|\Z)", re.DOTALL)  # Hugo's
YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when PyYAML has it: ~10x faster


def split_front_matter(raw: str) -> tuple[dict, str]:
    """(metadata, text below it); ({}, raw) for a file without front matter."""
    if match := FRONT_MATTER.match(raw):
        meta = load_front_matter(match.group(1))
        if not isinstance(meta, dict):
            raise ExtractionError("front matter must be a YAML mapping of key: value lines")
        return meta, raw[match.end() :]
    if match := TOML_FRONT_MATTER.match(raw):
        return _toml_front_matter(match.group(1)), raw[match.end() :]
    return {}, raw


FRONT_MATTER_MAX_NODES = 10_000  # scalars, lists and mappings, aliases expanded: real front matter has tens
FRONT_MATTER_MAX_DEPTH = 32


def load_front_matter(text: str, what: str = "front matter", first_line: int = 2) -> dict | list | str | None:
    """YAML front matter, safely: parsed into nodes first and refused when it would expand past
    FRONT_MATTER_MAX_NODES (an alias bomb) or nest deeper than FRONT_MATTER_MAX_DEPTH; only then
    are the nodes turned into Python values. `what` names the text in errors, and `first_line` is
    its first line's number in its file (front matter follows a `---` line; a YAML file: 1)."""
    loader = YAML_LOADER(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        budget = FRONT_MATTER_MAX_NODES
        stack = [(node, 1)]
        while stack:  # iterative: a 20,000-deep document must not exhaust Python's stack here either
            current, depth = stack.pop()
            budget -= 1
            if budget < 0:
                raise ExtractionError(f"{what} expands to more than {FRONT_MATTER_MAX_NODES} values (YAML aliases?)")
            if depth > FRONT_MATTER_MAX_DEPTH:
                raise ExtractionError(f"{what} nests deeper than {FRONT_MATTER_MAX_DEPTH} levels")
            if isinstance(current, yaml.SequenceNode):
                stack.extend((child, depth + 1) for child in current.value)
            elif isinstance(current, yaml.MappingNode):
                stack.extend((part, depth + 1) for pair in current.value for part in pair)
        return loader.construct_document(node)
    except RecursionError:
        raise ExtractionError(f"{what} nests deeper than {FRONT_MATTER_MAX_DEPTH} levels") from None
    except yaml.YAMLError as exc:
        if "nesting depth" in str(getattr(exc, "problem", "")):  # PyYAML >= 6.0.4 stops at 1,000 levels itself
            raise ExtractionError(f"{what} nests deeper than {FRONT_MATTER_MAX_DEPTH} levels") from None
        raise ExtractionError(f"{what} is not valid YAML: {_yaml_problem(exc, first_line)}") from None
    finally:
        loader.dispose()


def _yaml_problem(exc, first_line: int) -> str:
    """PyYAML's complaint on one line, with where it is in the file (the text begins on its line
    `first_line`): its own message spans four lines, and a run's report shows one per problem."""
    problem = getattr(exc, "problem", None) or getattr(exc, "context", None)
    mark = getattr(exc, "problem_mark", None)
    if problem and mark is not None:
        return f"{problem} at line {mark.line + first_line}, column {mark.column + 1}"
    return " ".join(str(exc).split())


def _toml_front_matter(text: str) -> dict:
    """TOML front matter between `+++` lines, as Hugo writes it."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        where = re.sub(r"at line (\d+)", lambda m: f"at line {int(m.group(1)) + 1}", str(exc))  # the file's line: `+++` is line 1
        raise ExtractionError(f"front matter between +++ lines is not valid TOML: {where}") from None
