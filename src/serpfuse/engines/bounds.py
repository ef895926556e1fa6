"""Input bounds that keep every parser's cost linear in the size of the response.

An engine's answer is hostile input. HTML tree builders are superlinear in nesting depth (lexbor took 4.6 s
on 200 KB of unclosed ``<div>``s), a JSON list can hold 30,000 rows, and fields can be megabytes long. So:

- ``markup_problem`` walks the markup once, before any tree is built, and refuses a page nested deeper or
  holding more elements than any results page does (the AQL captures: depth <= 60, <= 2,300 elements);
- ``MAX_ITEMS``: no engine is asked for more than 30 rows, so a response is read up to its 100th result;
- ``MAX_URL_CHARS`` / ``MAX_TITLE_CHARS`` / ``MAX_SNIPPET_CHARS``: what one row may carry.
"""

from __future__ import annotations

import re

MAX_DEPTH = 256
MAX_ELEMENTS = 30_000
MAX_ITEMS = 100
MAX_URL_CHARS = 4096
MAX_TITLE_CHARS = 500
MAX_SNIPPET_CHARS = 2000

# Elements that never hold children, or whose end tag the HTML parser supplies itself (a list of unclosed
# <li>/<p> is flat, not deep): neither adds to the depth.
_NO_DEPTH = frozenset(
    [
        "area",
        "base",
        "br",
        "col",
        "embed",
        "hr",
        "img",
        "input",
        "link",
        "meta",
        "param",
        "source",
        "track",
        "wbr",
        "keygen",
        "basefont",
        "bgsound",
        "frame",
        "p",
        "li",
        "dt",
        "dd",
        "option",
        "optgroup",
        "tr",
        "td",
        "th",
        "thead",
        "tbody",
        "tfoot",
        "colgroup",
        "caption",
        "rb",
        "rt",
        "rtc",
        "rp",
    ]
)
# Raw-text elements: their content is not markup ("a<b" in a script opens nothing).
_RAW_TEXT = frozenset(
    ["script", "style", "textarea", "title", "xmp", "iframe", "noembed", "noframes", "noscript", "plaintext"]
)
_TAG = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9:_-]*)|<!--|<[!?]")
_RAW_END = {name: re.compile(rf"</{name}", re.IGNORECASE) for name in _RAW_TEXT}


def markup_problem(text: str, *, max_depth: int = MAX_DEPTH, max_elements: int = MAX_ELEMENTS) -> str | None:
    """Why ``text`` is no results page (nested deeper than ``max_depth`` open elements, or more than
    ``max_elements`` elements), or None. One pass; each character is looked at a bounded number of times."""
    depth = elements = 0
    pos = 0
    find = text.find
    while (m := _TAG.search(text, pos)) is not None:
        token = m.group(0)
        if token == "<!--":
            end = find("-->", m.end())
            if end < 0:
                return None
            pos = end + 3
            continue
        gt = find(">", m.end())
        if gt < 0:
            return None
        pos = gt + 1
        name = m.group(2)
        if name is None:  # <!doctype ...>, <?xml ...?>
            continue
        name = name.lower()
        if m.group(1):  # an end tag
            if name not in _NO_DEPTH and name not in _RAW_TEXT:
                depth = max(0, depth - 1)
            continue
        elements += 1
        if elements > max_elements:
            return f"page holds more than {max_elements:,} elements; not a results page"
        if name in _RAW_TEXT:
            end_tag = _RAW_END[name].search(text, pos)
            if end_tag is None:
                return None
            pos = end_tag.end()  # the raw text and its end tag: neither opens anything
            continue
        if name in _NO_DEPTH or text[gt - 1] == "/":
            continue
        depth += 1
        if depth > max_depth:
            return f"page nests more than {max_depth} elements deep; not a results page"
    return None
