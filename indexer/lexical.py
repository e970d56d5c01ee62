"""How text becomes the terms of the lexical index (indexer/bm25.py) — documents and queries alike.

Word tokens, lowercased, English stopwords removed (Lucene's list), Snowball English stemming; an
identifier (`add_library`, `addEventListener`, `HTTPServer`, `IL6`) is its whole word and also its
parts, so "add a library" finds the page of `add_library` and "IL-6" the abstract that says `IL6`.
Chinese, Japanese and Korean, written without spaces between words, are indexed as overlapping
pairs of characters (`cjk_words`), so "返品" finds the page that says "返品を受け付けます".
A chunk is indexed with its page's title and its headings before its text (`indexed_text`), so a
passage deep in a page is found by the words of the page's name. The analyzer is recorded in
`lexical/analyzer.json` so a reader can tell what it is searching; indexes of the analyzers before
(`english-snowball-v1`: whole words only, the text alone; `-v2`: the text alone; `-v3`: a run of
Chinese, Japanese or Korean one word) are still read, and queried as they were written.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from functools import lru_cache

ANALYZER = {"name": "english-snowball-v4", "lowercase": True, "token_pattern": r"\w+", "identifier_parts": "snake_case, camelCase, letters|digits",
            "stopwords": "lucene-english", "stemmer": "snowball-english", "k1": 1.2, "b": 0.75, "indexed": "title / headings, then the chunk's text",
            "cjk": "bigrams"}
WHOLE_RUNS = "english-snowball-v3"  # the analyzer before: a run of Chinese, Japanese or Korean is one word
TEXT_ONLY = "english-snowball-v2"  # the one before: the chunk's text alone
WHOLE_WORDS = "english-snowball-v1"  # the one before that: the text alone, without identifier parts
ANALYZERS = {
    WHOLE_WORDS: {k: v for k, v in ANALYZER.items() if k not in ("identifier_parts", "indexed", "cjk")} | {"name": WHOLE_WORDS},
    TEXT_ONLY: {k: v for k, v in ANALYZER.items() if k not in ("indexed", "cjk")} | {"name": TEXT_ONLY},
    WHOLE_RUNS: {k: v for k, v in ANALYZER.items() if k != "cjk"} | {"name": WHOLE_RUNS},
    ANALYZER["name"]: ANALYZER,
}
# The languages a config's `language` may name: those Snowball stems and bm25s has stopwords for
# (NLTK's lists). English keeps Lucene's short list in the index. Chinese, Japanese and Korean are
# read as pairs of characters whichever is chosen.
LANGUAGES = ("english", "danish", "dutch", "french", "german", "italian", "norwegian", "portuguese", "russian", "spanish", "swedish", "turkish")
for _language in LANGUAGES[1:]:
    ANALYZERS[f"{_language}-snowball-v4"] = ANALYZER | {"name": f"{_language}-snowball-v4", "stopwords": f"nltk-{_language}", "stemmer": f"snowball-{_language}"}
PAIRED = frozenset(name for name in ANALYZERS if name.endswith("-v4"))  # the analyzers that read Chinese, Japanese and Korean as pairs
READABLE = tuple(ANALYZERS)


def analyzer_for(language: str) -> str:
    """The analyzer a space's lexical index is written with for a config's `language`."""
    return f"{language}-snowball-v4"


def language_of(analyzer: str) -> str:
    """The language whose stems and stopwords `analyzer` uses."""
    return ANALYZERS[analyzer]["stemmer"].removeprefix("snowball-")
TOKEN = re.compile(ANALYZER["token_pattern"])
# Where an identifier's word splits: at `_`, and before a capital that starts a lowercase part
# (`useState` → use|State, `HTTPServer` → HTTP|Server). A capital followed by capitals or one
# letter is no part: `miRNA`, `NGOs`, `RNAs`, `HbA1c` stay whole (on SciFact, NFCorpus and
# ArguAna, splitting at every capital lost up to 0.4 points of lexical nDCG@10; this, ±0.06).
# And where letters meet digits, as Lucene's word delimiter splits them (`IL6` → IL|6, so "IL-6"
# finds it; `x86_64` → x86, 64, x, 86): SciFact's lexical nDCG@10 +0.0115, NFCorpus −0.0008,
# ArguAna −0.0001 (bench/README.md, "The lexical analyzer").
_HUMP = re.compile(r"(?<=[a-z])(?=[A-Z][a-z])|(?<=[A-Z])(?=[A-Z][a-z]{2,})")
_MAYBE_HUMP = re.compile(r"[a-z][A-Z]|[A-Z]{2}[a-z]")
_NUMERIC = re.compile(r"(?<=[A-Za-z])(?=[0-9])|(?<=[0-9])(?=[A-Za-z])")
_MAYBE_NUMERIC = re.compile(r"[A-Za-z][0-9]|[0-9][A-Za-z]")
_MAYBE_PARTS = re.compile("|".join(("_", _MAYBE_HUMP.pattern, _MAYBE_NUMERIC.pattern)))  # any of identifier_parts' cues, in one search
# ASCII characters `\w` does not match, each made a space: ASCII text's word tokens are then what
# str.split cuts, a third faster than the regex (the words of 21 MB of chunks: 0.52 → 0.34 s).
_ASCII_NON_WORD = str.maketrans({chr(c): " " for c in range(128) if not (chr(c).isalnum() or chr(c) == "_")})


# Chinese, Japanese and Korean characters: Han (with 々 〆 〇), Hiragana, Katakana and Hangul.
# Their words are not set apart by spaces (Korean sets apart phrases, a word with its particles),
# so `\w+` finds a clause in one token, and a question's word never met it.
_CJK = ("\u1100-\u11ff\u3005-\u3007\u3040-\u309f\u30a1-\u30fa\u30fc-\u30ff\u3130-\u318f\u31f0-\u31ff\u3400-\u4dbf"
        "\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0003134f")
# The full-width forms of ASCII (５００円, Ｐｙｔｈｏｎ) and half-width katakana (ﾊﾟｽﾜｰﾄﾞ), which
# Japanese text mixes with the usual ones: read as those (Lucene's CJK width filter).
_WIDE = re.compile("[\uff01-\uff5e\uff61-\uff9f]+")
CJK_CHARACTER = re.compile(f"[{_CJK}\uff01-\uff5e\uff61-\uff9f]")  # a character `cjk_words` reads otherwise
_CJK_RUNS = re.compile(f"([{_CJK}]+)")  # the group keeps the runs in re.split's list, at its odd places


def cjk_words(token: str) -> list[str]:
    """A word token as the index reads it: itself, or, when it holds Chinese, Japanese or Korean
    characters, each run of those as its overlapping pairs and each other part as a word
    ("返品を受け付けます" → 返品, 品を, を受, …; "Python入門" → Python, 入門; a lone character is
    itself). Lucene's CJK bigrams, as Elasticsearch's `cjk` analyzer reads these languages without
    a dictionary: a pair of a question meets the same pair in a page wherever the words end.
    Full-width letters and digits are read as ASCII and half-width katakana as full ("５００円" →
    500, 円), so a question typed either way meets the page."""
    if token.isascii() or not CJK_CHARACTER.search(token):
        return [token]
    token = _WIDE.sub(lambda wide: unicodedata.normalize("NFKC", wide.group()), token)
    if token.isascii():
        return [token]
    out: list[str] = []
    for i, piece in enumerate(_CJK_RUNS.split(token)):
        if i % 2:
            out += [piece[j : j + 2] for j in range(len(piece) - 1)] or [piece]
        elif piece := piece.strip("_"):
            out.append(piece)
    return out


def indexed_text(title: str, heading_path: Sequence[str], text: str) -> str:
    """What the lexical index reads of a chunk: "title / heading / …", then its text. A page's
    first heading is often its title: said once. The separator is ASCII so that an ASCII chunk
    keeps `words`' fast path: building the postings of 163k chunks took 1.08–1.13× as long as
    their texts alone (11% more text), 1.42× with "›". On CMake's help, the lexical nDCG@10 of 42
    visitor's questions went 0.3603 → 0.3863 and of 1,104 questions made of command names 0.7477 →
    0.8182; SciFact +0.35, NFCorpus +0.14, ArguAna +0.32 points. Said only where the text lacks it,
    the worst set gained +0.01 (bench/README.md, "The lexical analyzer": "Titles and headings")."""
    parts = [title] if title else []
    parts += [h for h in heading_path if h and h != title]
    return " / ".join(parts) + "\n\n" + text if parts else text


def words(text: str) -> list[str]:
    """The word tokens of text: `TOKEN.findall(text)`."""
    if text.isascii():
        return text.translate(_ASCII_NON_WORD).split()
    return TOKEN.findall(text)


def identifier_parts(word: str) -> list[str]:
    """The parts of an identifier as written (`add_library` → add, library; `getElementById` →
    get, Element, By, Id; `IL6` → IL, 6; `x86_64` → x86, 64, x, 86), or [] for a word that is not one."""
    pieces = [p for p in word.split("_") if p] if "_" in word else [word]
    if _MAYBE_HUMP.search(word):
        pieces = [part for piece in pieces for part in _HUMP.split(piece)]
    pieces = pieces if pieces != [word] else []
    if _MAYBE_NUMERIC.search(word):  # each piece's letters and digits too (the word's, when it has no other parts)
        pieces += [part for piece in pieces or [word] if len(numbered := _NUMERIC.split(piece)) > 1 for part in numbered]
    return pieces


# Lucene's English stopwords (EnglishAnalyzer), as bm25s ships them; here so that building postings
# does not import bm25s and SciPy (0.18 s of every run that writes a segment).
LUCENE_ENGLISH_STOPWORDS = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the their then there these they this to was will with".split()
)


@lru_cache(maxsize=None)
def stemmer_and_stopwords(language: str = "english"):
    import Stemmer

    if language == "english":
        return Stemmer.Stemmer("english"), LUCENE_ENGLISH_STOPWORDS
    import bm25s.stopwords

    return Stemmer.Stemmer(language), frozenset(getattr(bm25s.stopwords, f"STOPWORDS_{language.upper()}"))


def analyze(text: str, analyzer: str = ANALYZER["name"]) -> list[str]:
    """The index terms of `text`, in order (an identifier's whole word, then its parts)."""
    return [term for terms in analyze_words(words(text), analyzer) for term in terms]


def analyze_words(tokens: list[str], analyzer: str = ANALYZER["name"], skip: frozenset[str] | None = None) -> list[list[str]]:
    """The index terms of each word token as written: [] for a stopword (or a word of `skip`),
    else its lowercased stem, followed for an identifier by the stems of its parts — the stems in
    one batch (a word at a time, 12k new words cost a 1% run 0.26 s)."""
    language = language_of(analyzer)
    skip = stemmer_and_stopwords(language)[1] if skip is None else skip
    split = analyzer != WHOLE_WORDS
    paired = analyzer in PAIRED
    flat: list[str] = []
    ends = []
    for token in tokens:
        for word in cjk_words(token) if paired and not token.isascii() else (token,):
            lowered = word.lower()
            if lowered not in skip:
                flat.append(lowered)
            if split and _MAYBE_PARTS.search(word):
                flat.extend(p for p in map(str.lower, identifier_parts(word)) if p not in skip)
        ends.append(len(flat))
    stems = stem_words(flat, language)
    return [stems[start:end] for start, end in zip([0, *ends], ends)]


_STEMS: dict[str, dict[str, str]] = {}  # language -> word -> stem, for the process: a corpus repeats its words
MAX_STEMS = 1_000_000  # emptied past this (a few hundred MB of odd words at most)


def stem_words(words: list[str], language: str = "english") -> list[str]:
    """Snowball stems of lowercased words, each distinct word stemmed once per process (a corpus
    repeats its words); the misses of a call are stemmed in one batch. Analysing 1,000 bench
    documents: 1.13 s → 0.57 s, the same terms."""
    stems = _STEMS.setdefault(language, {})
    if len(stems) > MAX_STEMS:
        stems.clear()
    missing = [w for w in words if w not in stems]
    if missing:
        stems.update(zip(missing, stemmer_and_stopwords(language)[0].stemWords(missing)))
    return list(map(stems.__getitem__, words))


# Words a question is made of whatever it asks ("what", "can", "how do I get …"): the index keeps
# them (Lucene's short list drops fewer words), but a query's match on them alone means nothing, so
# queries are scored on their other words. NLTK's English list (bm25s ships it) plus the verbs and
# courtesies of questions typed into a chat box.
QUERY_FUNCTION_WORDS = frozenset(
    {"get", "gets", "getting", "got", "could", "would", "may", "might", "must", "shall", "also", "please", "tell", "us", "let", "lets", "anyone", "anything", "someone", "something", "thing", "things", "ever", "yes"}
)


@lru_cache(maxsize=None)
def _function_words(language: str = "english") -> frozenset[str]:
    """Words a question is made of, in `language`: for English a longer list than the index's;
    for the others their stopwords, which the index leaves out already."""
    if language != "english":
        return stemmer_and_stopwords(language)[1]
    from bm25s.stopwords import STOPWORDS_EN_PLUS

    return frozenset(STOPWORDS_EN_PLUS) | QUERY_FUNCTION_WORDS


@lru_cache(maxsize=None)
def _question_skip(language: str) -> frozenset[str]:
    """The words a query is not scored on in `language`: the index's stopwords and the function words of questions."""
    return stemmer_and_stopwords(language)[1] | _function_words(language)


_HIRAGANA = re.compile("[\u3040-\u309f]+")


def _asked(terms: list[str]) -> list[str]:
    """A Japanese question's terms less its pairs of hiragana alone, unless it has no others:
    "送料はいくらですか" asks about 送料, not です or すか, the grammar every page shares (in
    tests/test_languages.py's shop, a question about the weather matched the page on passwords by
    "ですか" alone). A word written in hiragana still counts in a question of nothing else."""
    kana = sum(1 for term in terms if _HIRAGANA.fullmatch(term))
    return [term for term in terms if not _HIRAGANA.fullmatch(term)] if 0 < kana < len(terms) else terms


def function_word_shares(texts: Iterable[str]) -> tuple[int, dict[str, float]]:
    """How many words `texts` hold, and for each of LANGUAGES the share of them that are its
    function words (English's longer question list, the others' stopwords): a text's own language
    has by far the most (28–45% of its words on the sets measured, any other's under 9%;
    bench/README.md, "Other languages"), and which it is tells what to set `language` to."""
    counts: Counter[str] = Counter()
    for text in texts:
        counts.update(words(text.lower()))
    total = sum(counts.values())
    return total, {language: sum(counts[w] for w in _function_words(language) if w in counts) / max(1, total) for language in LANGUAGES}


def query_terms(query: str, analyzer: str = ANALYZER["name"]) -> list[str]:
    """The stems of a query's words, less stopwords and the function words of questions: what
    it asks about, a term per word (its length, as the chance level counts it; the words a
    snippet marks), a pair of characters standing for a word of Chinese, Japanese or Korean;
    in the language of `analyzer` (a space's lexical index)."""
    language = language_of(analyzer)
    skip = _question_skip(language)
    found = words(query.lower())
    if not query.isascii():
        found = _asked([word for token in found for word in cjk_words(token)])
    return stem_words([w for w in found if w not in skip], language)


def scored_terms(query: str, analyzer: str = ANALYZER["name"]) -> list[str]:
    """The terms an index written by `analyzer` scores a query on: its `analyze`, less the
    function words of questions (an identifier's parts too: `get_user` is scored on its whole
    and on `user`). A query whose only terms are single letters or digits ("C++", "R", "5") is
    scored on none, as one of function words is: a lone letter is a flag or a list mark in most
    corpora ("-c", "a)"), and its match made `examples/` answer "C++" with the page on rollback.
    Beside other words it counts ("vitamin D"). No query of SciFact, NFCorpus, ArguAna or
    bench/everyday is of that kind."""
    skip = _question_skip(language_of(analyzer))
    terms = [term for terms in analyze_words(words(query), analyzer, skip) for term in terms]
    terms = terms if query.isascii() else _asked(terms)
    return [] if all(len(term) == 1 and term.isascii() for term in terms) else terms
