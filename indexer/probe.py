"""Does the provider still embed as it did? A space's cached vectors are reused run after run, and
new chunks are embedded beside them; if the model behind a name changes (a provider's silent
update, an alias moved to a newer model, another version of the local model's libraries), the
new vectors no longer compare with the cached ones and search ranks old against new at random,
with no error anywhere.

Each space keeps, in `spaces/<id>/probe.json`, the vectors of two fixed sentences from the first
run that embedded it (artifacts/README.md). A run that embeds new chunks next to cached ones
embeds the sentences again first (two short queries) and stops, before embedding anything else,
when they moved: `EmbeddingDrift`, exit 1, nothing published. `index run --reembed` embeds the
space anew and starts a new probe.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from indexer.errors import StaticRagError

FILE = "probe.json"
TEXTS = (
    "Refunds are paid to the card used for the order within five business days of the return.",
    "The lighthouse keeper climbed the spiral stairs at dusk to light the lamp for passing ships.",
)
# A model answers the same text with the same vector up to float noise (the local model: 1.000000); a
# changed model moves it far more. Below this the cached vectors and new ones do not compare.
DRIFT_COSINE = 0.98


class EmbeddingDrift(StaticRagError):
    """The provider embeds the probe sentences differently than when this space's vectors were cached."""


def read_probe(space_dir: Path | None) -> dict | None:
    """The space's probe (texts, vectors, measured_at), or None: absent (a space from before
    probes), unreadable, or of other sentences than TEXTS."""
    if space_dir is None:
        return None
    try:
        probe = json.loads((Path(space_dir) / FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(probe, dict) or probe.get("texts") != list(TEXTS) or not isinstance(probe.get("vectors"), list):
        return None
    return probe


def embed(embedder) -> np.ndarray:
    """The sentences as `embedder` (indexer.embedders.Embedder) embeds them now, as queries: one request."""
    return embedder.embed_queries(list(TEXTS))


def new_probe(vectors: np.ndarray) -> dict:
    return {"texts": list(TEXTS), "vectors": [[round(float(x), 7) for x in row] for row in vectors],
            "measured_at": datetime.now(timezone.utc).isoformat(timespec="seconds")}


def similarity(probe: dict, vectors: np.ndarray) -> float:
    """The lowest cosine between the probe's stored vectors and the same sentences embedded now."""
    stored = np.asarray(probe["vectors"], dtype=np.float64)
    now = np.asarray(vectors, dtype=np.float64)
    if stored.shape != now.shape:
        return 0.0
    norms = np.linalg.norm(stored, axis=1) * np.linalg.norm(now, axis=1)
    return float(np.min(np.sum(stored * now, axis=1) / np.maximum(norms, 1e-12)))


def moved(probe: dict, vectors: np.ndarray) -> float | None:
    """How far the sentences embedded now (`vectors`) lie from `probe`'s, as `similarity`, when the
    model changed (below DRIFT_COSINE); None while it embeds as it did."""
    cosine = similarity(probe, vectors)
    return cosine if cosine < DRIFT_COSINE else None


def check(space_id: str, probe: dict, vectors: np.ndarray) -> None:
    """Raise EmbeddingDrift when the sentences embedded now (`vectors`) moved away from `probe`'s."""
    if (cosine := moved(probe, vectors)) is not None:
        raise EmbeddingDrift(
            f"{space_id}: the provider now embeds text differently than when this space's vectors were cached "
            f"(the same sentences as on {probe.get('measured_at', 'an earlier run')} come back at cosine {cosine:.3f}; "
            f"below {DRIFT_COSINE} the model has changed). New vectors would not compare with the cached ones, so nothing "
            f"was embedded or published. Run `index run --reembed` to embed the space's chunks anew "
            f"(`--dry-run --reembed` shows the cost)."
        )
