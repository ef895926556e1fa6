"""Caller input, checked where it enters: every face (HTTP, MCP, CLI, Python) refuses the same things with the
same one-line message, and nothing a caller sends can reach a code path that crashes on it.

What it guards against, each once a 500 or a hang: text holding a lone surrogate (cannot
be encoded, so the cache key and every reply crashed), JSON nested thousands deep, keys a body may not hold,
and region/language codes that end in a newline (``$`` matches before one; ``fullmatch`` does not).
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Collection, Iterable
from typing import Any

from serpfuse.errors import InputError

MAX_JSON_DEPTH = 8  # a request body is an object of scalars and lists: 2 levels; 8 is generous
# A locale: "us", "de-DE", "us-en", "zh-Hans-CN", "wt-wt" (no region). Used with fullmatch only.
LOCALE = re.compile(r"[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{2,8}){0,2}")
LOCALE_MAX_CHARS = 35  # BCP 47's practical longest tag
_SURROGATE = re.compile(r"[\ud800-\udfff]")


def check_text(value: str, field: str) -> str:
    """``value`` when it is valid Unicode text, else ``InputError``."""
    m = _SURROGATE.search(value)
    if m is not None:
        raise InputError(
            f"{field}: holds a lone surrogate (U+{ord(m.group()):04X} at character {m.start()}); "
            "send valid UTF-8 text"
        )
    return value


def check_strings(data: Any, field: str | None = None) -> None:
    """``check_text`` on every string (keys included) inside a parsed JSON value or a dict of fields."""
    if isinstance(data, str):
        check_text(data, field or "text")
    elif isinstance(data, dict):
        for key, value in data.items():
            check_text(str(key), f"a key of {field or 'the request'}")  # checked first: names quote it
            check_strings(value, str(key) if field is None else f"{field}.{key}")
    elif isinstance(data, list | tuple):
        for item in data:
            check_strings(item, field)


def check_locale(value: str | None, field: str) -> str | None:
    """A region or language code, or None; ``InputError`` for anything else (no trailing newline either)."""
    if value is None:
        return None
    if len(value) > LOCALE_MAX_CHARS or not LOCALE.fullmatch(value):
        raise InputError(f"{field}: must be a code like us, de-DE or zh-Hans-CN (letters, digits and '-')")
    return value


def _depth(data: Any) -> int:
    if isinstance(data, dict):
        return 1 + max((_depth(v) for v in data.values()), default=0)
    if isinstance(data, list):
        return 1 + max((_depth(v) for v in data), default=0)
    return 0


def parse_json_object(raw: bytes, *, max_depth: int = MAX_JSON_DEPTH) -> dict[str, Any]:
    """A request body as a JSON object of valid text, nested at most ``max_depth`` deep; else ``InputError``."""
    if not raw.strip():
        raise InputError("request body is empty; send a JSON object")
    too_deep = InputError(f"request body nests deeper than {max_depth} levels")
    try:
        body = json.loads(raw)
        depth = _depth(body)
    except RecursionError:  # json's own limit (~1,000 levels), hit before ours can be measured
        raise too_deep from None
    except (ValueError, UnicodeDecodeError):
        raise InputError("request body is not valid JSON") from None
    if depth > max_depth:
        raise too_deep
    if not isinstance(body, dict):
        raise InputError("request body must be a JSON object")
    check_strings(body)
    return body


def did_you_mean(name: str, valid: Iterable[str]) -> str:
    """ " (did you mean 'limit'?)" for a name close to a valid one, else ""."""
    by_lower = {v.lower(): v for v in valid}  # case aside: "Limit" and "includedomains" are misspellings too
    close = difflib.get_close_matches(name.lower(), list(by_lower), n=1, cutoff=0.6)
    return f" (did you mean {by_lower[close[0]]!r}?)" if close else ""


def unknown_name(kind: str, name: str, valid: Iterable[str]) -> InputError:
    """The one line for a key or parameter that is not one: named, the nearest valid one, then every valid one."""
    names = sorted(set(valid))
    return InputError(
        f"unknown {kind} {name!r}{did_you_mean(name, names)}; valid {kind}s: {', '.join(names)}"
    )


def reject_unknown_keys(body: dict[str, Any], known: Iterable[str], kind: str = "key") -> None:
    """``InputError`` naming the first key of ``body`` outside ``known``, the nearest valid one and the keys
    that are valid."""
    valid = known if isinstance(known, Collection) else list(known)
    for key in body:
        if key not in valid:
            raise unknown_name(kind, key, valid)


def reject_misspelt_keys(body: Iterable[str], known: Collection[str], kind: str = "parameter") -> None:
    """For a shape whose real clients send options serpfuse does not read (and that the API they were written
    for ignores): ``InputError`` for a key that is not known but is close to one that is (``limt``), a
    misspelling whose value would otherwise be silently dropped; other unknown keys pass."""
    for key in body:
        if key not in known and did_you_mean(key, known):
            raise unknown_name(kind, key, known)


TRUE_WORDS = frozenset({"1", "true", "yes", "on"})
FALSE_WORDS = frozenset({"0", "false", "no", "off"})


def read_bool(value: Any, field: str) -> bool:
    """A flag: a JSON boolean, or one of true/false, yes/no, on/off, 1/0 (any case); ``InputError`` for
    anything else (``ture`` is not read as false)."""
    if isinstance(value, bool):
        return value
    word = str(value).strip().lower() if isinstance(value, str | int) else None
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    raise InputError(f"{field}: must be true or false (or 1/0, yes/no, on/off)")


def bounded_int(value: Any, field: str, low: int, high: int) -> int:
    """An integer (not a bool) from ``low`` to ``high``; ``InputError`` otherwise."""
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise InputError(f"{field} must be an integer from {low} to {high}")
    return value
