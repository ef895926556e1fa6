"""Query analysis: operators (site:, -site:, quotes, OR), script, ranking-word cleaning, terms and variants.

Only the query text is analysed; the request's own include/exclude domains are merged by the pipeline.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Literal

from serpfuse import data
from serpfuse.text import cjk_bigrams, has_cjk, is_cjk, script_of, words
from serpfuse.urls import host_of


def _load_stopwords() -> frozenset[str]:
    return frozenset(data.lines("query_stopwords.txt"))


STOPWORDS: frozenset[str] = _load_stopwords()

# A leading ranking word ("best", "top") makes Bing answer with dictionaries and shops: it is dropped.
RANKING_WORDS = frozenset({"top", "best", "good", "greatest", "finest", "cheapest"})

_PHRASE = re.compile(r'"([^"]*)"')
_SITE = re.compile(r"(?<!\S)(-?)site:(\S+)", re.IGNORECASE)
_OR = " OR "  # case-sensitive, as the engines read it
# Quoted phrases are swapped for private-use markers so operators inside quotes are left alone.
_MARK = re.compile("\ue000(\\d+)\ue001")


@dataclass(frozen=True)
class QueryAnalysis:
    raw: str  # as the caller typed it (whitespace collapsed)
    text: str  # without site:/-site: operators, and only the first ` OR ` alternative
    cleaned: str  # `text` after the leading-ranking-word cleaning (what engines are sent)
    script: Literal["cjk", "ascii", "mixed"]
    phrases: tuple[str, ...]  # "quoted phrases" of the whole query (without quotes)
    include_domains: tuple[str, ...]  # from site:example.com (lowercased, www stripped)
    exclude_domains: tuple[str, ...]  # from -site:example.com
    alternatives: tuple[
        str, ...
    ]  # the parts after the first ` OR ` (each stripped), as consensus-v2.1 reads a query
    terms: tuple[str, ...]  # distinct important ASCII terms of `text`, in order
    cjk_tokens: tuple[str, ...]  # distinct overlapping CJK bigrams of `text`, in order
    core_variant: str | None  # the core-word retry variant; None when it would equal `cleaned`

    @property
    def variants(self) -> list[str]:
        return list(dict.fromkeys(v for v in (self.cleaned, *self.alternatives) if v))

    @property
    def is_cjk(self) -> bool:
        return self.script in ("cjk", "mixed")


def clean_query(query: str) -> str:
    """Leading-ranking-word cleaning: drop a leading top/best/good/greatest/finest/cheapest (any case) when the
    query has at least 3 whitespace tokens and no `"` or `:` (quoted and operator queries are left alone).

    "best buy" and "top gun" stay; "best coffee shops in lisbon" -> "coffee shops in lisbon".
    """
    tokens = query.split()
    if len(tokens) < 3 or '"' in query or ":" in query:
        return query
    if tokens[0].lower() not in RANKING_WORDS:
        return query
    return " ".join(tokens[1:])


def important_terms(text: str) -> list[str]:
    """ASCII word tokens of `text` (folded) minus the ranking stopwords, de-duplicated in order."""
    return list(dict.fromkeys(w for w in words(text) if w not in STOPWORDS))


def _collapse(text: str) -> str:
    return " ".join(text.split())


def _mask_phrases(query: str) -> tuple[str, list[str]]:
    phrases: list[str] = []

    def keep(match: re.Match[str]) -> str:
        phrases.append(match.group(1))
        return f"\ue000{len(phrases) - 1}\ue001"

    return _PHRASE.sub(keep, query), phrases


def _unmask(text: str, phrases: list[str]) -> str:
    return _MARK.sub(lambda m: f'"{phrases[int(m.group(1))]}"', text)


def _site_domain(value: str) -> str:
    host = host_of(value)
    return host[4:] if host.startswith("www.") else host


def _extract_sites(part: str, include: list[str], exclude: list[str]) -> str:
    def pull(match: re.Match[str]) -> str:
        domain = _site_domain(match.group(2))
        if not domain:
            return match.group(0)  # not a domain: leave the text as typed
        (exclude if match.group(1) else include).append(domain)
        return ""

    return _collapse(_SITE.sub(pull, part))


@lru_cache(maxsize=1024)  # pure, and read by the fan-out, the replay source and the ranking of every search
def analyze_query(query: str) -> QueryAnalysis:
    """Split a typed query into what engines are sent and what the pipeline filters on (see QueryAnalysis)."""
    raw = _collapse(query)
    masked, phrase_texts = _mask_phrases(raw)
    include: list[str] = []
    exclude: list[str] = []
    parts = [_extract_sites(part, include, exclude) for part in masked.split(_OR)]
    parts = [_unmask(part, phrase_texts) for part in parts if part]
    text = parts[0] if parts else ""
    cleaned = clean_query(text)
    core = core_word_variant(text)
    return QueryAnalysis(
        raw=raw,
        text=text,
        cleaned=cleaned,
        script=script_of(text),
        phrases=tuple(dict.fromkeys(p.strip() for p in phrase_texts if p.strip())),
        include_domains=tuple(dict.fromkeys(include)),
        exclude_domains=tuple(dict.fromkeys(exclude)),
        alternatives=tuple(dict.fromkeys(parts[1:])),
        terms=tuple(important_terms(text)),
        cjk_tokens=tuple(dict.fromkeys(cjk_bigrams(text))),
        core_variant=core if core and core != cleaned else None,
    )


# --- core-word variant (the retry when an engine finds nothing) -----------------------------------------------------------------


@dataclass(frozen=True)
class _CoreWords:
    anywhere: re.Pattern[str]
    trailing: tuple[str, ...]
    alone: frozenset[str]
    quantity: re.Pattern[str]


@cache
def _core_words() -> _CoreWords:
    table = data.json("query_core_words.json")
    anywhere = sorted(table["anywhere"], key=len, reverse=True)  # longest first: 是什么 before 什么
    return _CoreWords(
        anywhere=re.compile("|".join(map(re.escape, anywhere))),
        trailing=tuple(table["trailing"]),
        alone=frozenset(table["alone"]),
        quantity=re.compile(f"^[{re.escape(table['numerals'])}]+[{re.escape(table['measure_words'])}]"),
    )


def _core_of_cjk_run(run: str, table: _CoreWords) -> list[str]:
    pieces: list[str] = []
    for piece in table.anywhere.split(run):
        while piece.endswith(table.trailing):
            piece = piece[:-1]
        piece = table.quantity.sub("", piece)
        if piece and piece not in table.alone:
            pieces.append(piece)
    return pieces


def _core_of_token(token: str, table: _CoreWords) -> list[str]:
    """Core pieces of one whitespace token: CJK runs cut at function words, non-CJK words minus stopwords."""
    out: list[str] = []
    chunk: list[str] = []
    chunk_is_cjk = False
    token = table.quantity.sub("", token)  # also "3种", whose digit is not CJK

    def flush() -> None:
        piece = "".join(chunk)
        if chunk_is_cjk:
            out.extend(_core_of_cjk_run(piece, table))
        else:
            word = piece.strip(".,;!?()[]{}'“”‘’，。？！、：；（）")
            tokens = words(word)
            if tokens and not all(w in STOPWORDS for w in tokens):
                out.append(word)

    if has_cjk(token):
        for ch in token:
            if chunk and is_cjk(ch) != chunk_is_cjk:
                flush()
                chunk.clear()
            chunk_is_cjk = is_cjk(ch)
            chunk.append(ch)
    elif token:  # no CJK: the whole token is one non-CJK chunk, no need to walk it character by character
        chunk.append(token)
    if chunk:
        flush()
    return out


def core_word_variant(text: str) -> str:
    """The core-word retry variant of `text` ("" when nothing is left).

    Rule: quoted phrases are kept whole with their quotes. Every other token is split into CJK runs and
    non-CJK words. A non-CJK word is kept unless it is one of the ranking stopwords (how, the, best, ...);
    a CJK run is cut at its function and answer-type words (如何, 什么, 的, 用法, 教程, 定位, ...), loses
    trailing sentence particles (了, 吗, 呢) and a leading quantity (八个, 十大), and a piece that is only a
    particle (是, 在, 和, 与, 中 ...) is dropped; these stay inside words such as 了解, 中国, 在线. What remains of
    each run is kept. Pieces are joined with
    single spaces. For example `东数西算 八个国家枢纽节点 定位` -> `东数西算 国家枢纽节点`,
    `如何配置 postgres 逻辑复制` -> `配置 postgres 逻辑复制`, `how to fix a flaky pytest` -> `fix flaky pytest`.
    """
    table = _core_words()
    masked, phrase_texts = _mask_phrases(_collapse(text))
    pieces: list[str] = []
    for token in masked.split():
        if _MARK.fullmatch(token):
            pieces.append(_unmask(token, phrase_texts))
        else:
            # A phrase glued to a word (foo"bar baz") is rare: treat the whole token as plain text.
            pieces.extend(_core_of_token(_unmask(token, phrase_texts), table))
    return " ".join(dict.fromkeys(pieces))
