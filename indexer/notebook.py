"""Jupyter notebooks (.ipynb; Jupyter Book's pages, a team's worked examples) as the Markdown the
rest of the reader understands: what the rendered notebook shows.

Markdown cells are Markdown (MyST included), code cells fenced code in the kernel's language, and
their text outputs (a printed line, a result's plain text, an error's name and message) a `text`
block after them, each cut to MAX_OUTPUT_LINES: a 5,000-row table printed whole would drown the
prose. Images and HTML outputs, raw cells and the notebook's metadata are not text.
"""

from __future__ import annotations

import json

from indexer.errors import ExtractionError

MAX_OUTPUT_LINES = 20


def notebook_to_markdown(raw: bytes) -> str:
    """The notebook's cells as Markdown, or an ExtractionError that says why it is no notebook."""
    try:
        notebook = json.loads(raw.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise ExtractionError(f"not a Jupyter notebook: its JSON cannot be read ({exc})") from None
    cells = notebook.get("cells") if isinstance(notebook, dict) else None
    if not isinstance(cells, list):
        raise ExtractionError("not a Jupyter notebook: no list of cells (nbformat 4 writes one; open and save it in Jupyter to convert an older one)")
    metadata = notebook.get("metadata") if isinstance(notebook.get("metadata"), dict) else {}
    language = str((metadata.get("kernelspec") or {}).get("language") or (metadata.get("language_info") or {}).get("name") or "")
    parts: list[str] = []
    for cell in cells:
        if not isinstance(cell, dict):
            continue
        source = _text(cell.get("source"))
        if cell.get("cell_type") == "markdown":
            parts.append(source)
        elif cell.get("cell_type") == "code" and source.strip():
            parts.append(f"```{language}\n{source.rstrip()}\n```")
            shown = [text for output in cell.get("outputs") or [] if isinstance(output, dict) and (text := _output(output))]
            if shown:
                parts.append("```text\n" + "\n".join(shown) + "\n```")
    return "\n\n".join(part.strip("\n") for part in parts if part.strip())


def _text(value) -> str:
    """A notebook's multi-line string: one string, or a list of lines."""
    if isinstance(value, list):
        return "".join(str(line) for line in value)
    return str(value) if value is not None else ""


def _output(output: dict) -> str:
    kind = output.get("output_type")
    if kind == "stream":
        text = _text(output.get("text"))
    elif kind in ("execute_result", "display_data"):
        data = output.get("data") if isinstance(output.get("data"), dict) else {}
        text = _text(data.get("text/plain")) if "text/plain" in data and not any(k.startswith("image/") for k in data) else ""
    elif kind == "error":
        text = f"{output.get('ename', 'Error')}: {output.get('evalue', '')}"
    else:
        text = ""
    lines = text.rstrip("\n").split("\n")
    if len(lines) > MAX_OUTPUT_LINES:
        lines = lines[:MAX_OUTPUT_LINES] + [f"… ({len(lines) - MAX_OUTPUT_LINES} more lines)"]
    return "\n".join(lines).strip("\n").replace("```", "'''")
