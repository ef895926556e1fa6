"""Response bodies: decoded text, the parsed HTML tree (within the bounds of ``engines.bounds``), JSON."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from selectolax.lexbor import LexborHTMLParser, LexborNode

from serpfuse.engines.base import ParseFailure, header
from serpfuse.engines.bounds import markup_problem
from serpfuse.models import EngineRow

_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?([A-Za-z0-9_\-]+)""", re.IGNORECASE)


def decode_body(body: bytes, headers: Mapping[str, str]) -> str:
    """Text of a response: charset from Content-Type, else a <meta charset>, else UTF-8 (never raises)."""
    match = re.search(r"charset=([A-Za-z0-9_\-]+)", header(headers, "content-type") or "", re.IGNORECASE)
    meta = None if match else _CHARSET.search(body[:4096])
    charset = match.group(1) if match else (meta.group(1).decode("ascii") if meta else "utf-8")
    try:
        return body.decode(charset, errors="replace")
    except LookupError:  # an unknown charset name
        return body.decode("utf-8", errors="replace")


def html_tree(body: bytes, headers: Mapping[str, str]) -> LexborHTMLParser:
    """The parsed page; ``ParseFailure`` for markup nested or sized beyond any results page (``bounds``),
    checked first because building the tree of such a page is superlinear."""
    text = decode_body(body, headers)
    problem = markup_problem(text)
    if problem is not None:
        raise ParseFailure(problem)
    return LexborHTMLParser(text)


def results_page_without_rows(tree: LexborHTMLParser, frame: str, engine: str) -> list[EngineRow]:
    """What a page that gave no rows (and no challenge) is: a results page with none, ``[]``, when it holds
    the engine's results ``frame`` (a CSS selector every results page of the engine carries, empty or not);
    else a page this parser does not know, ``ParseFailure``, which cools the engine down like any failure
    (``serpfuse doctor`` calls it a wrong layout) instead of passing for "no results" on every search."""
    if tree.root is not None and tree.root.css_first(frame) is not None:
        return []
    raise ParseFailure(f"{engine}: not a results page (layout changed?)")


def node_text(node: LexborNode | None) -> str:
    """The visible text of a node (entities already decoded by the parser), whitespace collapsed."""
    if node is None:
        return ""
    return " ".join((node.text(deep=True) or "").split())


def json_body(body: bytes) -> Any:
    try:
        return json.loads(body)
    except (ValueError, UnicodeDecodeError, RecursionError):  # RecursionError: nested thousands deep
        raise ParseFailure("response is not JSON") from None
