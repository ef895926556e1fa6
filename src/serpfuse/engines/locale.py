"""Locale: a caller's region and language, read the ways engines and users write them."""

from __future__ import annotations

import re
from functools import cache

from serpfuse import data
from serpfuse.text import has_cjk


def split_locale(region: str | None, language: str | None) -> tuple[str | None, str | None]:
    """(country, language), lowercase, from a region ("us", "en-US", "us-en") and/or a language ("zh-CN")."""
    country = lang = None
    if language:
        pieces = [p for p in re.split(r"[-_]", language.strip().lower()) if p]
        lang = pieces[0] if pieces else None
        country = pieces[1] if len(pieces) > 1 else None
    if region:
        pieces = [p for p in re.split(r"[-_]", region.strip().lower()) if p]
        if len(pieces) == 1:
            country = pieces[0]
        elif len(pieces) > 1:
            # "en-US" is language-country; DuckDuckGo's "us-en" is country-language.
            first, second = pieces[0], pieces[1]
            if first not in _LANGS and second in _LANGS:
                first, second = second, first
            country = second
            lang = lang or first
    # "wt-wt" / "all": no region at all.
    country = None if country in _NO_REGION else country
    lang = None if lang in _NO_REGION else lang
    return country, lang


_NO_REGION = frozenset({"all", "wt", "xx", "any"})


# Languages common enough to tell "us-en" (country-language) from "en-us" (language-country).
_LANGS = frozenset(
    [
        "en",
        "zh",
        "ja",
        "ko",
        "de",
        "fr",
        "es",
        "it",
        "pt",
        "ru",
        "nl",
        "sv",
        "pl",
        "tr",
        "ar",
        "he",
        "hi",
        "id",
        "th",
        "vi",
        "uk",
        "cs",
        "da",
        "fi",
        "no",
        "el",
        "hu",
        "ro",
    ]
)


@cache
def _countries() -> tuple[dict[str, str], dict[str, str]]:
    """(country -> the language its first DuckDuckGo region serves, country aliases), from data/ddg_regions.json:
    the one table of countries and their languages the engines share."""
    table = data.json("ddg_regions.json")
    languages: dict[str, str] = {}
    for country, language in table["regions"].values():
        if country is not None:
            languages.setdefault(country, language)
    return languages, dict(table["country_aliases"])


def iso_country(region: str | None, language: str | None) -> str | None:
    """The caller's country as an ISO 3166 code, upper case ("GB" for "uk"); None when none is given."""
    country, _ = split_locale(region, language)
    if not country:
        return None
    country = _countries()[1].get(country, country)
    return country.upper() if len(country) == 2 else None


def accept_language(region: str | None, language: str | None) -> str | None:
    """The ``Accept-Language`` a browser in this region and language sends ("de-DE,de;q=0.9"); the region's own
    language when only a region is given; None when neither is (the transport's default then stands)."""
    country, lang = split_locale(region, language)
    languages, aliases = _countries()
    country = aliases.get(country or "", country)
    return accept_language_for(country, lang or languages.get(country or ""))


def accept_language_for(country: str | None, lang: str | None) -> str | None:
    """``Accept-Language`` for a known country and language: "de-DE,de;q=0.9", or "ja,en;q=0.5" for a language
    without a country; None without a language."""
    if not lang:
        return None
    return f"{lang}-{country.upper()},{lang};q=0.9" if country else f"{lang},en;q=0.5"


_KANA = re.compile(r"[\u3040-\u30ff]")
_HANGUL = re.compile(r"[\uac00-\ud7af]")


def script_language(text: str) -> str | None:
    """The language a query's script names: Japanese for kana, Korean for hangul, Chinese for Han alone; None
    for any other script (Latin says nothing about which language)."""
    if _KANA.search(text):
        return "ja"
    if _HANGUL.search(text):
        return "ko"
    return "zh" if has_cjk(text) else None
