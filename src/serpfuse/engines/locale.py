"""Locale: a caller's region and language, read the ways engines and users write them."""

from __future__ import annotations

import re


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
