"""How specific a word is, and its dictionary lemma: from a real word-frequency model, not from the corpus.

A place name or a rare word ("zurich", "burnout", "schengen") is what makes a query specific; "signs",
"professional" and "trails" are what every page has. ``zipf`` reads wordfreq's frequency of a word (its Zipf
value: log10 of its occurrences per billion words, 0 for a word wordfreq does not know) and ``lemma`` reads
simplemma's dictionary ("hikes" and "hiking" -> "hike", "mice" -> "mouse"), each for the query's language.

Both tables are loaded once per process and language, on first use or ahead of it by ``load_tables`` (a
search starts that while the engines are asked): a plain dictionary lookup afterwards, so a query costs
microseconds. Only the dictionary part of simplemma is
used: its rule-based fallbacks cost tens of microseconds per unknown word, which a result pool cannot afford.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Mapping
from functools import cache, lru_cache

DEFAULT_LANGUAGE = "en"

# A search loads its language's tables in a thread while the engines are asked (pipeline.search), and the
# ranking, in another thread, may need them before that is done: it then waits for that load, never does it twice.
_LOAD_LOCK = threading.Lock()
_FREQUENCIES: dict[str, Mapping[str, float]] = {}
_LEMMAS: dict[str, Mapping[str, str]] = {}


def _loaded(tables: dict[str, Mapping], lang: str, load: Callable[[str], Mapping]) -> Mapping:
    table = tables.get(lang)
    if table is None:
        with _LOAD_LOCK:
            table = tables.get(lang)
            if table is None:
                table = tables[lang] = load(lang)
    return table


def _load_frequencies(lang: str) -> Mapping[str, float]:
    import wordfreq  # imported on first use: ~0.3 s, which `serpfuse --help` should not pay

    return wordfreq.get_frequency_dict(lang, wordlist="best")


def _load_lemmas(lang: str) -> Mapping[str, str]:
    from simplemma.strategies.dictionaries.dictionary_factory import DefaultDictionaryFactory

    return DefaultDictionaryFactory().get_dictionary(lang)


def _frequencies(lang: str) -> Mapping[str, float]:
    return _loaded(_FREQUENCIES, lang, _load_frequencies)


def _lemma_table(lang: str) -> Mapping[str, str]:
    return _loaded(_LEMMAS, lang, _load_lemmas)


def load_tables(language: str | None = None) -> None:
    """Load the word tables a request's language is judged by, now (each once per process, about 0.3 s in all
    for English): what the first ranking of a process would otherwise pay after the last engine answered."""
    lang = language_of(language)
    _frequencies(lang)
    _lemma_table(lang)


def tables_loaded(language: str | None = None) -> bool:
    """Whether the tables ``language`` is judged by are loaded, without loading anything: the event loop asks."""
    if language and _supported.cache_info().currsize == 0:
        return False  # which tables judge it is not known before wordfreq is imported (~0.1 s)
    lang = language_of(language)
    return lang in _FREQUENCIES and lang in _LEMMAS


@cache
def _supported() -> tuple[frozenset[str], frozenset[str]]:
    import wordfreq
    from simplemma.strategies.dictionaries.dictionary_factory import SUPPORTED_LANGUAGES

    return frozenset(wordfreq.available_languages(wordlist="best")), frozenset(SUPPORTED_LANGUAGES)


def language_of(requested: str | None) -> str:
    """The language whose tables judge a query: the request's primary subtag when both tables have it,
    else English (an unknown or absent language is judged as English, as the relevance word lists are)."""
    if not requested:
        return DEFAULT_LANGUAGE
    primary = requested.lower().replace("_", "-").split("-")[0]
    frequencies, lemmas = _supported()
    return primary if primary in frequencies and primary in lemmas else DEFAULT_LANGUAGE


def zipf(word: str, lang: str = DEFAULT_LANGUAGE) -> float:
    """wordfreq's Zipf frequency of a lowercase word: about 7 for "the", 3.6 for "zurich", 0 when unknown."""
    freq = _frequencies(lang).get(word)
    return math.log10(freq * 1e9) if freq else 0.0


def specificity(word: str, lang: str = DEFAULT_LANGUAGE) -> float:
    """How much a word says about what a page is about: 9 - Zipf (minus log10 of its probability), so a word
    seen once in a billion scores 9 and "the" about 2."""
    return 9.0 - zipf(word, lang)


@lru_cache(maxsize=1 << 16)  # simplemma's table decodes on every lookup; a pool's words recur across searches
def lemma(word: str, lang: str = DEFAULT_LANGUAGE) -> str:
    """simplemma's dictionary lemma of a lowercase word; the word itself when the dictionary lacks it."""
    table = _lemma_table(lang)
    found = table.get(word) or table.get(word.capitalize())
    return found.lower() if found else word
