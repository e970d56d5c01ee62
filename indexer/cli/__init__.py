"""The `index` command. It parses, calls the library and translates errors; the work lives elsewhere.

Exit codes: 0 success · 1 fatal error · 2 usage or configuration error (a missing API
key included) · 3 stopped by the delete guard · 4 published, but some documents failed ·
5 stopped by --max-cost · 6 index eval: a metric or abstain rate outside its --gate limit.

One module per group of commands; importing them registers their commands on `cli`.
"""

from indexer.cli import deploying, indexing, inspecting, serving, starting  # noqa: F401  (registers the commands)
from indexer.cli.base import cli, main

__all__ = ["cli", "main"]
