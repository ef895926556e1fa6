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
import mmap
import os
import struct
import threading
from array import array
from collections.abc import Callable, Iterator, Mapping
from functools import cache, lru_cache
from pathlib import Path
from typing import Any, TypeAlias
from zlib import crc32

from serpfuse.data.derived import derived_path, write_whole

Ints: TypeAlias = (
    "array[Any] | memoryview[Any]"  # of unsigned ints ("I"), or of floats ("d") for a table's values
)
Bytes: TypeAlias = "bytes | memoryview[Any]"

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


class WordTable(Mapping[str, Any]):
    """A word table as flat buffers: the words (UTF-8, end to end), where each starts, each word's value (a
    float array, or a second text buffer with its own starts), and an open-addressing hash index over them
    (CRC-32, linear probing), so a lookup is a probe or two (about a µs) and opening one is reading one file
    (milliseconds; only the pages looked up are read), where building wordfreq's or simplemma's table takes
    0.3-0.7 s and 25-40 MB, which a one-shot search cannot afford. Ranking is no slower for it: a lookup is a
    few µs against a dict's 0.3, and the words' stems and lemmas are memoised above it."""

    def __init__(self, words: Bytes, starts: Ints, values: Ints | tuple[Bytes, Ints], slots: Ints) -> None:
        self._words, self._starts, self._values, self._slots = words, starts, values, slots
        self._n, self._mask = len(starts) - 1, len(slots) - 1

    @classmethod
    def of(cls, table: Mapping[str, Any]) -> WordTable:
        keys = list(table)
        words, starts = _packed(keys)
        slots = array("I", bytes(4 * (1 << (2 * len(keys)).bit_length())))  # at most half full
        mask = len(slots) - 1
        for i, key in enumerate(keys, 1):
            h = crc32(key.encode()) & mask
            while slots[h]:
                h = (h + 1) & mask
            slots[h] = i
        if keys and isinstance(table[keys[0]], float):
            return cls(words, starts, array("d", (table[k] for k in keys)), slots)
        return cls(words, starts, _packed([table[k] for k in keys]), slots)

    def _word(self, i: int) -> Bytes:
        return self._words[self._starts[i] : self._starts[i + 1]]

    def _value(self, i: int) -> Any:
        if not isinstance(self._values, tuple):
            return self._values[i]
        text, starts = self._values
        return str(text[starts[i] : starts[i + 1]], "utf-8")

    def __getitem__(self, word: str) -> Any:
        key = word.encode()
        slots, mask, h = self._slots, self._mask, crc32(key) & self._mask
        while i := slots[h]:
            if self._word(i - 1) == key:
                return self._value(i - 1)
            h = (h + 1) & mask
        raise KeyError(word)

    def __iter__(self) -> Iterator[str]:
        return (str(self._word(i), "utf-8") for i in range(self._n))

    def __len__(self) -> int:
        return self._n

    def dump(self) -> bytes:
        """The buffers end to end after their lengths (``load`` maps them back in place)."""
        parts = self._values if isinstance(self._values, tuple) else (self._values,)
        raw = [bytes(p) for p in (self._words, self._starts, self._slots, *parts)]
        return struct.pack(f"<{len(raw) + 1}Q", len(raw), *map(len, raw)) + b"".join(raw)

    @classmethod
    def load(cls, path: Path) -> WordTable:
        """The table ``dump`` wrote, memory-mapped: only the pages a lookup touches are ever read."""
        with path.open("rb") as f:
            data = memoryview(mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ))
        (count,) = struct.unpack_from("<Q", data)
        lengths = struct.unpack_from(f"<{count}Q", data, 8)
        parts, at = [], 8 * (count + 1)
        for length in lengths:
            parts.append(data[at : at + length])
            at += length
        if at != len(data) or count not in (4, 5):
            raise ValueError("not a word table")
        words, starts, slots, *values = parts
        parsed = values[0].cast("d") if count == 4 else (values[0], values[1].cast("I"))
        return cls(words, starts.cast("I"), parsed, slots.cast("I"))


def _packed(texts: list[str]) -> tuple[bytes, array]:
    encoded = [t.encode() for t in texts]
    starts = array("I", [0])
    for e in encoded:
        starts.append(starts[-1] + len(e))
    return b"".join(encoded), starts


def _compact(kind: str, lang: str, build: Callable[[], Mapping[str, Any]]) -> Mapping[str, Any]:
    """``build()``'s table as a ``WordTable``, kept as a derived file (``serpfuse.data.derived``): only a
    machine's first search builds it (from the library, as before), every later process reads the file. The
    file's name holds the library's version, so an upgrade builds a new one."""
    from serpfuse.version import __version__

    name = f"{kind}-{lang}-{_library_stamp('wordfreq' if kind == 'freq' else 'simplemma')}-{__version__}.bin"
    path = derived_path(name)
    try:
        return WordTable.load(path)
    except (OSError, ValueError, struct.error):
        pass
    table = WordTable.of(build())
    write_whole(path, table.dump())
    return table


def _library_stamp(package: str) -> str:
    """Which installed copy of a library a table came from (its ``__init__``'s size and mtime), found without
    importing it (importing wordfreq is a third of a second) or reading its metadata."""
    import importlib.util

    spec = importlib.util.find_spec(package)
    st = os.stat(spec.origin) if spec and spec.origin else None
    return f"{package}{st.st_size}.{st.st_mtime_ns}" if st else package


def _load_frequencies(lang: str) -> Mapping[str, float]:
    def build() -> Mapping[str, float]:
        import wordfreq  # imported on first use: ~0.3 s, which `serpfuse --help` should not pay

        return wordfreq.get_frequency_dict(lang, wordlist="best")

    return _compact("freq", lang, build)


def _load_lemmas(lang: str) -> Mapping[str, str]:
    def build() -> Mapping[str, str]:
        from simplemma.strategies.dictionaries.dictionary_factory import DefaultDictionaryFactory

        return DefaultDictionaryFactory().get_dictionary(lang)

    return _compact("lemma", lang, build)


def _frequencies(lang: str) -> Mapping[str, float]:
    return _loaded(_FREQUENCIES, lang, _load_frequencies)


def _lemma_table(lang: str) -> Mapping[str, str]:
    return _loaded(_LEMMAS, lang, _load_lemmas)


def load_tables(language: str | None = None) -> None:
    """Load the word tables a request's language is judged by, now (each once per process, milliseconds from
    the compact files): what the first ranking of a process would otherwise pay after the last engine answered."""
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


@lru_cache(maxsize=1 << 16)  # a lookup in the mapped table costs a few µs, and the pool's words recur
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
