"""Every engine's parser on arbitrary input (issue 10): whatever an engine sends, ``parse`` returns rows or
raises an ``EngineError`` (never another exception, which would read as a parser bug), ranks stay 1-based
positions, and the rows stay within the bounds (engines.bounds) however large the answer claims to be."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from serpfuse.engines import ENGINES, is_multi_step
from serpfuse.engines.base import EngineError, EngineQuery
from serpfuse.engines.bounds import MAX_ITEMS
from serpfuse.engines.searxng import MAX_SIGHTINGS
from serpfuse.models import EngineRow

PARSERS = {name: module for name, module in ENGINES.items() if not is_multi_step(module)}
Q = EngineQuery(text="rust async runtime")
HEADERS = st.sampled_from(
    [
        {},
        {"content-type": "text/html; charset=utf-8"},
        {"content-type": "application/json"},
        {"content-type": "text/html; charset=nope"},
    ]
)
MARKUP = st.lists(
    st.sampled_from(
        ["<div>", "</div>", "<b>", "<a href='https://example.com/x'>", "<a href='/l/?uddg=https%3A%2F%2Fa.example%2F'>",
         "</a>", "<li class='b_algo'>", "<h2>", "<h3>", "</h2>", "<p>", "x y z", "<script>", "</script>", "<!--", "-->",
         "<table><tr><td>", "&amp;", "\u00e9", "<meta charset='latin-1'>", "<html><body>"]
    ),
    max_size=400,
).map(lambda parts: "".join(parts).encode())  # fmt: skip
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=30)
    | st.sampled_from(["https://example.com/a", "http://b.example/", "rust async runtime", "2024-01-01T00:00:00Z"]),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(
        st.sampled_from(["results", "web", "query", "search", "url", "title", "content", "description", "snippet",
                         "engines", "engine", "positions", "data", "link", "publishedDate", "timestamp", "pageid"]),
        inner, max_size=6,
    ),
    max_leaves=40,
).map(lambda value: json.dumps(value).encode())  # fmt: skip


def check(module, status: int, headers: dict, body: bytes) -> None:
    try:
        rows = module.parse(status, headers, body, Q)
    except EngineError:
        return
    rows = list(rows)
    assert all(isinstance(r, EngineRow) and r.rank >= 1 for r in rows)
    assert all(r.url.startswith(("http://", "https://")) for r in rows)
    assert len(rows) <= MAX_ITEMS * MAX_SIGHTINGS


FAST = settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize("name", sorted(PARSERS))
@FAST
@given(body=st.binary(max_size=2048), headers=HEADERS, status=st.sampled_from([200, 202, 403, 429, 500]))
def test_arbitrary_bytes(name, body, headers, status):
    check(PARSERS[name], status, headers, body)


@pytest.mark.parametrize("name", sorted(PARSERS))
@FAST
@given(body=MARKUP, headers=HEADERS)
def test_arbitrary_markup(name, body, headers):
    check(PARSERS[name], 200, headers, body)


@pytest.mark.parametrize("name", sorted(PARSERS))
@FAST
@given(body=JSON_VALUES)
def test_arbitrary_json(name, body):
    check(PARSERS[name], 200, {"content-type": "application/json"}, body)
