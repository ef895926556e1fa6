"""The junk filter: rows that are never an answer, whatever the query.

Each rule is reported with its own name so a benchmark can count what each one drops:
``dictionary-title`` (a short "X Definition & Meaning" title), ``bot-check-title`` (a block page),
``asset-url`` (a leaked script, font or map tile), ``shop-homepage`` (a shop's front page the query does not
name), ``host:<category>`` (data/junk_hosts.txt) and ``echo`` (a page generated from the query, not about it:
an ideas board or Q&A farm titled with the query, or a page repeating a misspelling the engines corrected).
The dictionary rules stand down when the query itself asks for a meaning or definition. The rules are data (data/filter_junk_rules.json).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from serpfuse.config import DEFAULT_FILTERS, FilterConfig
from serpfuse.ranking.context import FilterContext
from serpfuse.ranking.echo import echo_verdict, page_title_words
from serpfuse.ranking.tables import host_category, junk_hosts, junk_rules
from serpfuse.text import fold, text_memo, words
from serpfuse.urls import host_of, is_plain_url, registrable_domain

if TYPE_CHECKING:
    from serpfuse.ranking.query import QueryAnalysis
    from serpfuse.ranking.types import Candidate


@dataclass(frozen=True)
class JunkVerdict:
    rule: str
    reason: str


# The row rules below read only the row (the rule tables are fixed per process): each title and URL is judged
# once while it keeps coming back (as many rows as text.py keeps texts), and the query-only test once per query.


@lru_cache(maxsize=64)
def asks_for_definition(query: QueryAnalysis | None) -> bool:
    if query is None:
        return False
    rules = junk_rules()
    if any(w in rules.definition_query_words for w in words(query.raw)):
        return True
    return any(marker in query.raw for marker in rules.definition_query_cjk)


@text_memo()
def _dictionary_title(title: str) -> str | None:
    rules = junk_rules()
    own = page_title_words(title)
    if len(own) > rules.dictionary_title_max_tokens:
        return None
    hit = next((w for w in own if w in rules.dictionary_title_words), None)
    return f"dictionary page ({len(own)}-word title with '{hit}')" if hit else None


@text_memo()
def _bot_check_title(title: str) -> str | None:
    rules = junk_rules()
    if len(words(title)) > rules.bot_check_max_tokens:
        return None
    folded = fold(title)
    hit = next((p for p in rules.bot_check_titles if p in folded), None)
    return f"bot-check or block page ('{hit}')" if hit else None


@text_memo()
def _asset_url(url: str) -> str | None:
    rules = junk_rules()
    lowered = url.lower()
    marker = next((m for m in rules.asset_url_markers if m in lowered), None)
    if marker:
        return f"asset URL ({marker})"
    path = _lower_path(url)
    if path is None:
        return None
    ext = next((e for e in rules.asset_url_extensions if path.endswith(e)), None)
    return f"asset URL (*{ext} file)" if ext else None


def _lower_path(url: str) -> str | None:
    """The path of the lowercased URL (None when it does not parse); a plain URL's is read off it."""
    lowered = url.lower()
    if is_plain_url(url):
        return lowered[lowered.index("/", 8) :]
    try:
        return urlsplit(lowered).path
    except ValueError:
        return None


_LOCALE_ONLY_PATH = re.compile(r"^(/[a-z]{2}([-_][a-z]{2})?)*/?$")


def _names_site(query: QueryAnalysis | None, host: str) -> bool:
    """True when the query names the site: its label is a query word or up to three adjacent ones run
    together ("best buy" -> bestbuy.com). Such a navigational query wants the front page."""
    if query is None:
        return False
    label = registrable_domain(host).split(".", 1)[0]
    qwords = words(query.raw)
    spans = {"".join(qwords[i : i + n]) for n in (1, 2, 3) for i in range(len(qwords) - n + 1)}
    return bool(label) and label in spans


@text_memo()
def _shop_word(title: str, url: str) -> str | None:
    """The shopping word of a front page's title (the query aside), else None."""
    path = _lower_path(url)
    if path is None:
        return None
    if not _LOCALE_ONLY_PATH.match(path):
        return None
    return next((w for w in words(title) if w in junk_rules().shop_homepage_words), None)


def _shop_homepage(title: str, url: str, host: str, query: QueryAnalysis | None) -> str | None:
    hit = _shop_word(title, url)
    if hit is None or _names_site(query, host):
        return None
    return f"shop front page ('{hit}' on {host or 'the site root'})"


def junk_verdict(
    title: str,
    url: str,
    host: str = "",
    query: QueryAnalysis | None = None,
    snippet: str = "",
    cfg: FilterConfig = DEFAULT_FILTERS,
) -> JunkVerdict | None:
    """Why a raw row is junk (rule name and one-line reason), or None when it is not."""
    host = host or host_of(url)
    definition_query = asks_for_definition(query)
    if not definition_query and (reason := _dictionary_title(title)):
        return JunkVerdict("dictionary-title", reason)
    if reason := _bot_check_title(title):
        return JunkVerdict("bot-check-title", reason)
    if reason := _asset_url(url):
        return JunkVerdict("asset-url", reason)
    if reason := _shop_homepage(title, url, host, query):
        return JunkVerdict("shop-homepage", reason)
    if cfg.echo and (reason := echo_verdict(title, snippet, query, cfg=cfg, url=url)):
        return JunkVerdict("echo", reason)
    listed = _listed_host(host)
    if listed and not (definition_query and listed[1] == "dictionary"):
        domain, category = listed
        return JunkVerdict(f"host:{category}", f"{category} site ({domain})")
    return None


@text_memo()
def _listed_host(host: str) -> tuple[str, str] | None:
    return host_category(host, junk_hosts())


def is_junk(title: str, url: str, host: str = "", query: QueryAnalysis | None = None) -> bool:
    return junk_verdict(title, url, host, query) is not None


class JunkFilter:
    name = "junk"

    def check(self, candidate: Candidate, ctx: FilterContext) -> str | None:
        verdict = junk_verdict(
            candidate.title, candidate.url, candidate.host, ctx.query, candidate.snippet, ctx.config
        )
        if verdict is None or (not ctx.config.junk and verdict.rule != "echo"):  # echo pages alone
            return None
        return verdict.reason


class EchoFilter:
    """The echo rule's second half, run once the pool has been read: a row repeating a misspelling that the
    engines' rows corrected (``ctx.pool.echoes``). Reported as junk, like a page titled with the query."""

    name = "junk"

    def check(self, candidate: Candidate, ctx: FilterContext) -> str | None:
        return ctx.pool.echoes.get(candidate.key) if ctx.pool is not None else None


JUNK = JunkFilter()
ECHO = EchoFilter()
