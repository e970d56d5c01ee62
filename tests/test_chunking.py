"""Chunker promises: exact spans, full coverage, no chunk over any limit, structure-following boundaries."""

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from indexer.chunking import ChunkingParams, chunk_text, count_tokens, encoding, span_token_count, token_byte_lengths, token_starts
from indexer.documents import MAX_TITLE_CHARS

WORDS = st.sampled_from(
    "the index server chunk vector fsync rename généré naïve 東京 données 1234 3.14 e.g. API-key "
    "x supercalifragilistic http://example.com/a?b=c αβγ".split()
)
PARAGRAPH = st.lists(st.lists(WORDS, min_size=1, max_size=30).map(" ".join), min_size=1, max_size=8).map(". ".join)
HEADING = st.tuples(st.integers(1, 4), st.lists(WORDS, min_size=1, max_size=5).map(" ".join)).map(lambda t: "#" * t[0] + " " + t[1])
LIST = st.lists(st.lists(WORDS, min_size=1, max_size=12).map(lambda ws: "- " + " ".join(ws)), min_size=1, max_size=6).map("\n".join)
CODE = st.lists(WORDS, min_size=1, max_size=20).map(lambda ws: "```\n" + "\n\n".join(ws) + "\n```")
BLOCK = st.one_of(PARAGRAPH, HEADING, LIST, CODE, st.text(max_size=200))
MARKDOWN = st.lists(BLOCK, max_size=15).flatmap(lambda blocks: st.sampled_from(["\n\n", "\n", "\n \n\t\n"]).map(lambda sep: sep.join(blocks)))
PARAMS = st.tuples(st.integers(8, 120), st.integers(0, 30)).map(lambda t: ChunkingParams(max_tokens=t[0], overlap=min(t[1], t[0] // 2)))

relaxed = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def check_promises(text, chunks, params, fits=lambda s: True):
    covered = [False] * len(text)
    for i, c in enumerate(chunks):
        assert c.ordinal == i
        assert c.text == text[c.start : c.end]
        assert c.text and c.text == c.text.strip(), "chunks are never empty and never start or end with whitespace"
        assert c.token_count == count_tokens(c.text) <= params.max_tokens
        assert fits(c.text)
        for j in range(c.start, c.end):
            covered[j] = True
    missed = [j for j, ch in enumerate(text) if not ch.isspace() and not covered[j]]
    assert not missed, f"characters not in any chunk: {[text[j] for j in missed[:10]]}"


@relaxed
@given(text=MARKDOWN, params=PARAMS)
def test_every_character_is_covered_and_no_chunk_exceeds_its_limit(text, params):
    check_promises(text, chunk_text(text, params), params)


@relaxed
@given(text=st.text(max_size=3000), params=PARAMS)
def test_arbitrary_unicode_text_keeps_the_promises(text, params):
    check_promises(text, chunk_text(text, params), params)


@relaxed
@given(text=MARKDOWN, chars=st.integers(20, 200))
def test_an_extra_limit_is_respected_too(text, chars):
    params = ChunkingParams(max_tokens=400, overlap=20)
    fits = lambda s: len(s) <= chars  # stands in for a model tokenizer with a smaller window
    check_promises(text, chunk_text(text, params, fits), params, fits)


# Characters where cl100k_base's pieces begin or end in unusual ways: contractions, runs of spaces,
# a non-breaking space, newlines after punctuation, digits grouped by three, special-token text.
TRICKY = st.lists(st.sampled_from(["a", "Zb", " ", "  ", " x", "\u00a0y", "\n", "\r\n", "\t", ".", "?!", "'s", "'LL", "'t",
                                   "12345", "²", "é", "東京", "-", "(", "<|endoftext|>", "\U0001f600"]), max_size=30).map("".join)


@relaxed
@given(text=TRICKY)
def test_every_spans_token_count_from_the_documents_tokens_is_exact(text):
    starts = token_starts(text)
    for start in range(len(text)):
        for end in range(start + 1, len(text) + 1):
            assert span_token_count(text, starts, start, end) == count_tokens(text[start:end]), (start, end)


@relaxed
@given(text=st.one_of(MARKDOWN, st.text(min_size=1, max_size=400)), data=st.data())
def test_a_long_spans_token_count_from_the_documents_tokens_is_exact(text, data):
    start = data.draw(st.integers(0, max(0, len(text) - 1)))
    end = data.draw(st.integers(start, len(text)))
    assert span_token_count(text, token_starts(text), start, end) == count_tokens(text[start:end])


def test_whitespace_only_or_empty_text_gives_no_chunks():
    assert chunk_text("", ChunkingParams(50, 10)) == []
    assert chunk_text(" \n\n\t \n", ChunkingParams(50, 10)) == []


def test_heading_path_follows_the_heading_tree():
    text = "# Guide\n\nIntro.\n\n## Install\n\nRun make.\n\n### On Linux\n\nUse apt.\n\n## Usage\n\nCall the API.\n\n# Appendix\n\nMore."
    chunks = chunk_text(text, ChunkingParams(200, 0))
    assert [(c.heading_path, c.text.splitlines()[-1]) for c in chunks] == [
        (("Guide",), "Intro."),
        (("Guide", "Install"), "Run make."),
        (("Guide", "Install", "On Linux"), "Use apt."),
        (("Guide", "Usage"), "Call the API."),
        (("Appendix",), "More."),
    ]
    assert chunks[1].text == "## Install\n\nRun make.", "a chunk starts with its section's heading"


def test_a_heading_longer_than_a_line_is_cut_at_a_word_in_the_heading_path():
    run_on = "Returns " + "and refunds " * 40 + "within thirty days"
    unbroken = "x" * 500
    chunks = chunk_text(f"# {run_on}\n\nIntro.\n\n## {unbroken}\n\nBody.", ChunkingParams(200, 0))
    first, second = (c.heading_path for c in chunks)
    kept = first[0].removesuffix("…")
    assert first[0].endswith("…") and MAX_TITLE_CHARS - 20 < len(first[0]) <= MAX_TITLE_CHARS and run_on.startswith(kept) and run_on[len(kept)] == " ", "cut after a whole word"
    assert second[1] == "x" * (MAX_TITLE_CHARS - 1) + "…", "a word longer than a line is cut inside it"
    assert chunks[0].text.startswith(f"# {run_on}\n"), "the text keeps the whole heading"


def test_a_heading_followed_directly_by_a_subheading_is_not_a_chunk_of_its_own():
    chunks = chunk_text("# Guide\n\n## Install\n\nRun make.", ChunkingParams(200, 0))
    assert [(c.heading_path, c.text) for c in chunks] == [(("Guide", "Install"), "# Guide\n\n## Install\n\nRun make.")]


def test_long_paragraphs_split_at_sentences_with_overlap():
    text = " ".join(f"Sentence {i} talks about topic {i}." for i in range(200))
    chunks = chunk_text(text, ChunkingParams(60, 15))
    assert len(chunks) > 5
    for a, b in zip(chunks, chunks[1:]):
        assert b.start < a.end, "consecutive chunks overlap"
        assert text[b.start : a.end].startswith("Sentence"), "overlap starts at a sentence boundary"


def test_a_long_paragraph_of_chinese_or_japanese_splits_after_its_full_stops():
    """No space follows "。", "！" or "？": chunks end at them, not inside a sentence, and a closing
    quote stays with the sentence it closes."""
    sentences = ["商品到着後30日以内であれば、未使用の商品に限り返品を受け付けます。", "「本当に返品できますか？」というご質問をよくいただきます。",
                 "はい、できます！", "我们为所有订单提供电子发票。", "发票将在发货后发送到您的电子邮箱。"]
    text = "".join(sentences * 6)
    chunks = chunk_text(text, ChunkingParams(60, 10))
    assert len(chunks) > 5
    for chunk in chunks:
        assert chunk.text.endswith(("。", "！")) and chunk.text.startswith(tuple(s[:3] for s in sentences)), chunk.text


def test_editing_one_paragraph_changes_few_chunks():
    rng = random.Random(7)
    vocabulary = "alpha beta gamma delta epsilon zeta theta kappa lambda sigma".split()
    sections = [
        f"## Section {s}\n\n" + "\n\n".join(" ".join(rng.choice(vocabulary) for _ in range(60)) + "." for _ in range(4))
        for s in range(12)
    ]
    before = "# Doc\n\n" + "\n\n".join(sections)
    edited = sections[5].replace("alpha", "omega", 1)
    after = before.replace(sections[5], edited)
    params = ChunkingParams(200, 40)
    old = {c.chunk_hash for c in chunk_text(before, params)}
    new = [c.chunk_hash for c in chunk_text(after, params)]
    changed = [h for h in new if h not in old]
    assert 1 <= len(changed) <= 2, f"{len(changed)} of {len(new)} chunks changed"


def test_local_space_chunks_fit_the_models_window(local_embedder, local_space):
    """Measured with the model's own tokenizer, independently of the chunker's check."""
    rng = random.Random(1)
    # Punctuation-dense strings cost 1.5-3 word pieces per cl100k token (prose costs ~1.05):
    # the worst case for the window.
    words = ["a.b.c.d.e", "...!!!???", "a-b-c-d-e-f", "don't", "can't", "(a)(b)(c)", "phosphatidylinositol", "the", "of", "Zn2+-dependent"]
    text = "\n\n".join(" ".join(rng.choice(words) for _ in range(rng.randint(50, 400))) + "." for _ in range(20))
    params = ChunkingParams(local_space.chunk_tokens, local_space.chunk_overlap)
    chunks = chunk_text(text, params, local_embedder.fits)
    check_promises(text, chunks, params)
    from transformers import AutoTokenizer  # the reference tokenizer, not the one our `fits` reads

    tokenizer = AutoTokenizer.from_pretrained(str(local_embedder.path))
    pieces = [len(tokenizer(c.text)["input_ids"]) for c in chunks]
    assert max(pieces) <= 256, "a chunk would be truncated by the model"
    # Without the model check, the same budget would overflow the window: the check is doing real work.
    unchecked = chunk_text(text, params)
    assert max(len(tokenizer(c.text)["input_ids"]) for c in unchecked) > 256


def test_the_byte_length_of_every_token_is_what_tiktoken_decodes_it_to():
    enc, lengths = encoding(), token_byte_lengths()
    for token in range(enc.n_vocab):
        try:
            expected = len(enc.decode_single_token_bytes(token))
        except KeyError:  # no token has this id
            expected = 0
        assert lengths[token] == expected, token
