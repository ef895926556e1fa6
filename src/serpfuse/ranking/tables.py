"""The filters' data tables (src/serpfuse/data/), loaded once and matched by host or by whole words."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache

from serpfuse import data
from serpfuse.text import words


def parse_sections(lines: Iterable[str]) -> dict[str, set[str]]:
    """``[section]`` headers, each followed by one entry per line -> {section: entries}; blank lines are
    skipped, and entries before the first header are in section ""."""
    sections: dict[str, set[str]] = {}
    current = ""
    for line in lines:
        if not line:
            continue
        if line.startswith("[") and line.endswith("]"):
            current = line[1:-1].strip()
            sections.setdefault(current, set())
        else:
            sections.setdefault(current, set()).add(line)
    return sections


def parse_host_table(lines: Iterable[str]) -> dict[str, str]:
    """`[category]` sections of one host per line -> {host: category}."""
    return {
        host: category or "uncategorised"
        for category, hosts in parse_sections(lines).items()
        for host in hosts
    }


@cache
def junk_hosts() -> dict[str, str]:
    return parse_host_table(data.lines("junk_hosts.txt"))


@cache
def official_domains() -> dict[str, str]:
    return parse_host_table(data.lines("official_domains.txt"))


def host_category(host: str, table: dict[str, str]) -> tuple[str, str] | None:
    """(listed domain, category) of the entry that `host` is or is a subdomain of, else None.

    `host` is a lowercase host as urls.host_of gives it; a leading "www." needs no care, it is just a label.
    """
    if not host:
        return None
    labels = host.lower().rstrip(".").split(".")
    # Walk the host's own suffixes (a.b.c -> b.c -> c) instead of scanning the whole table.
    for i in range(len(labels)):
        suffix = ".".join(labels[i:])
        if suffix in table:
            return suffix, table[suffix]
    return None


def is_official(host: str) -> bool:
    """True when the host belongs to an official domain (the RRF ranker's authority boost)."""
    return host_category(host, official_domains()) is not None


@dataclass(frozen=True)
class JunkRules:
    dictionary_title_words: frozenset[str]
    dictionary_title_max_tokens: int
    title_site_separators: tuple[str, ...]
    definition_query_words: frozenset[str]
    definition_query_cjk: tuple[str, ...]
    bot_check_titles: tuple[str, ...]
    bot_check_max_tokens: int
    shop_homepage_words: frozenset[str]
    asset_url_markers: tuple[str, ...]
    asset_url_extensions: tuple[str, ...]
    echo_title_words: frozenset[str]
    echo_filler_words: frozenset[str]


@cache
def junk_rules() -> JunkRules:
    raw = data.json("filter_junk_rules.json")
    return JunkRules(
        dictionary_title_words=frozenset(raw["dictionary_title_words"]),
        dictionary_title_max_tokens=int(raw["dictionary_title_max_tokens"]),
        title_site_separators=tuple(raw["title_site_separators"]),
        definition_query_words=frozenset(raw["definition_query_words"]),
        definition_query_cjk=tuple(raw["definition_query_cjk"]),
        bot_check_titles=tuple(raw["bot_check_titles"]),
        bot_check_max_tokens=int(raw["bot_check_max_tokens"]),
        shop_homepage_words=frozenset(raw["shop_homepage_words"]),
        asset_url_markers=tuple(raw["asset_url_markers"]),
        asset_url_extensions=tuple(raw["asset_url_extensions"]),
        echo_title_words=frozenset(raw["echo_title_words"]),
        echo_filler_words=frozenset(raw["echo_filler_words"]),
    )


@cache
def geo_competitors() -> dict[tuple[str, ...], tuple[tuple[str, ...], ...]]:
    """{place words: (competitor words, ...)}, every entry as a tuple of folded word tokens."""
    raw = data.json("geo_competitors.json")["places"]
    return {
        tuple(words(place)): tuple(tuple(words(c)) for c in entry["competitors"])
        for place, entry in raw.items()
    }


def contains_phrase(tokens: list[str] | tuple[str, ...], phrase: tuple[str, ...]) -> bool:
    """True when the word sequence `phrase` occurs in `tokens` as consecutive whole words."""
    n = len(phrase)
    if n == 0:
        return False
    if n == 1:
        return phrase[0] in tokens
    return any(tuple(tokens[i : i + n]) == phrase for i in range(len(tokens) - n + 1))
