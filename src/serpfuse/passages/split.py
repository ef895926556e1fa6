"""A page's main text cut into the units passages are made of: sentences inside the page's own blocks.

A block is a paragraph, a list item, a table row or a heading, as the reader's text lays them out (one block a
line; list items start with "- " or "* " or a number, table rows with "|"). A block is cut into sentences; a
sentence is never cut, except a run-on "sentence" longer than ``MAX_UNIT`` characters (a menu, a list of links,
a table row of a hundred cells), which is cut at its clauses and then between words, since no budget would
ever hold it whole. Each unit keeps its character offsets into the text it was cut from, the index of its block,
and its context: the nearest heading above it and, for a table row, the table's first row (its header).

Headings: a line the caller names as one (``headings``: the markdown's "#" lines, which the plain text has lost),
a line written as a markdown heading, or a short line without closing punctuation followed by a longer block.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from typing import Literal

BlockKind = Literal["paragraph", "item", "row", "heading"]

# A run of text longer than this with no sentence end is no sentence: it is cut at clauses, then at words.
MAX_UNIT = 600
# A line this short without closing punctuation, before a longer block, reads as a heading.
HEADING_MAX = 90

# A sentence ends at . ! ? (and what closes after them: quotes, brackets) before spaces and a capital, a digit,
# or an opening quote or bracket.
_END = re.compile(
    r"""[.!?…]+["'”’)\]]*\s+(?=["'“‘(\[]?[A-Z0-9À-ÖØ-Þ])"""
    r"""|[。！？]+[」』”’）)]*\s*"""  # Chinese and Japanese full stops need no space after them
)
# Words after which a full stop is not a sentence's end.
_ABBREVIATIONS = frozenset(
    [
        "mr",
        "mrs",
        "ms",
        "dr",
        "prof",
        "sr",
        "jr",
        "st",
        "mt",
        "ft",
        "no",
        "nos",
        "vs",
        "etc",
        "al",
        "fig",
        "figs",
        "e.g",
        "i.e",
        "approx",
        "ca",
        "cf",
        "gen",
        "col",
        "lt",
        "sgt",
        "capt",
        "rev",
        "hon",
        "gov",
        "sen",
        "rep",
        "pres",
        "inc",
        "ltd",
        "co",
        "corp",
        "jan",
        "feb",
        "mar",
        "apr",
        "jun",
        "jul",
        "aug",
        "sep",
        "sept",
        "oct",
        "nov",
        "dec",
        "u.s",
        "u.k",
        "u.n",
        "p",
        "pp",
        "vol",
        "vols",
        "ed",
        "eds",
        "op",
        "est",
        "dept",
        "univ",
        "assn",
        "bros",
        "ave",
        "blvd",
        "rd",
    ]
)
_LIST_ITEM = re.compile(r"^\s*(?:[-*•·]|\d{1,3}[.)])\s+")
_MD_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+")
_TABLE_RULE = re.compile(r"^[\s|:-]+$")
_CLAUSE = re.compile(r"[;:,]\s+|\s+[-–—]\s+")
_DOTTED = re.compile(r"^(?:[a-z]{1,2}\.)+[a-z]{1,2}$")
_CLOSING = tuple(".!?:;,…\"'”’)]")


@dataclass(frozen=True)
class Unit:
    """One sentence (or piece of a run-on) of the text: ``text[start:end]``."""

    start: int
    end: int
    block: int  # index of its block in the page
    kind: BlockKind
    heading: str | None = None  # the nearest heading above it
    header: str | None = None  # a table row's: the table's first row


def _is_abbreviation(text: str, dot: int) -> bool:
    """Whether the full stop at ``dot`` closes an abbreviation or an initial, not a sentence."""
    i = dot
    while i > 0 and not text[i - 1].isspace() and text[i - 1] not in "([\"'":
        i -= 1
    word = text[i:dot].lower().rstrip(".")
    if not word:
        return False
    if word in _ABBREVIATIONS:
        return True
    if len(word) == 1 and word.isalpha():  # an initial: "J. R. R. Tolkien"
        return True
    return bool(_DOTTED.match(word))  # letters with stops between: "a.k.a.", "ph.d."


def sentence_spans(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """The sentences of ``text[start:end]`` as (start, end) offsets into ``text``, spaces trimmed."""
    end = len(text) if end is None else end
    spans: list[tuple[int, int]] = []
    at = start
    for m in _END.finditer(text, start, end):
        dot = m.start()
        if text[dot] == "." and _is_abbreviation(text, dot):
            continue
        stop = m.end()
        while stop > at and text[stop - 1].isspace():
            stop -= 1
        if stop > at:
            spans.append((at, stop))
        at = m.end()
    while at < end and text[at].isspace():
        at += 1
    stop = end
    while stop > at and text[stop - 1].isspace():
        stop -= 1
    if stop > at:
        spans.append((at, stop))
    return [piece for s, e in spans for piece in _within(text, s, e)]


def _within(text: str, start: int, end: int, limit: int = MAX_UNIT) -> list[tuple[int, int]]:
    """A span no longer than ``limit``, or its pieces: cut after clause marks, else between words."""
    if end - start <= limit:
        return [(start, end)]
    pieces: list[tuple[int, int]] = []
    at = start
    while end - at > limit:
        cut = None
        for m in _CLAUSE.finditer(text, at + limit // 3, at + limit):
            cut = m.end()
        if cut is None:
            space = text.rfind(" ", at + 1, at + limit)
            cut = space + 1 if space > at else at + limit
        stop = cut
        while stop > at and text[stop - 1].isspace():
            stop -= 1
        pieces.append((at, stop))
        at = cut
        while at < end and text[at].isspace():
            at += 1
    if end > at:
        pieces.append((at, end))
    return pieces


def _lines(text: str) -> list[tuple[int, int]]:
    """Each non-blank line as (start, end), spaces trimmed."""
    out = []
    at = 0
    for line in text.split("\n"):
        s, e = at, at + len(line)
        at = e + 1
        while s < e and text[s].isspace():
            s += 1
        while e > s and text[e - 1].isspace():
            e -= 1
        if e > s:
            out.append((s, e))
    return out


def _heading_text(line: str) -> str:
    return _MD_HEADING.sub("", line).strip().strip("#").strip()


def split(text: str, headings: Collection[str] = ()) -> list[Unit]:
    """The units of ``text`` in page order. ``headings``: lines known to be headings (the markdown's)."""
    named = {" ".join(h.split()).casefold() for h in headings}
    lines = _lines(text)
    units: list[Unit] = []
    heading: str | None = None
    header: str | None = None
    in_table = False
    for block, (s, e) in enumerate(lines):
        line = text[s:e]
        if line.startswith("|"):
            if _TABLE_RULE.match(line):
                continue
            if not in_table:  # a table's first row is its header: context for the rows below
                in_table, header = True, " ".join(c.strip() for c in line.strip("| ").split("|") if c.strip())
            units.extend(Unit(a, b, block, "row", heading, header) for a, b in _within(text, s, e))
            continue
        in_table, header = False, None
        if _is_heading(text, line, lines, block, named):
            heading = _heading_text(line) or heading
            units.append(Unit(s, e, block, "heading", heading))
            continue
        kind: BlockKind = "item" if _LIST_ITEM.match(line) else "paragraph"
        units.extend(Unit(a, b, block, kind, heading) for a, b in sentence_spans(text, s, e))
    return units


def _is_heading(text: str, line: str, lines: list[tuple[int, int]], i: int, named: set[str]) -> bool:
    if named and " ".join(_heading_text(line).split()).casefold() in named:
        return True
    if _MD_HEADING.match(line):
        return True
    if len(line) > HEADING_MAX or line.endswith(_CLOSING) or _LIST_ITEM.match(line) or i + 1 >= len(lines):
        return False
    s, e = lines[i + 1]
    return e - s > 2 * len(line) and not text[s:e].startswith("|")


_REFERENCE = re.compile(r"\[([^\]]*)\]\[\d+\]")  # the reader's links: "[text][1]"
_EMPHASIS = re.compile(r"(\*\*|__|\*|_|`)(.+?)\1")


def markdown_headings(markdown: str) -> list[str]:
    """The headings of a markdown text ("# A [title][1]" -> "A title"), for ``split``'s ``headings``."""
    return [
        _EMPHASIS.sub(r"\2", _REFERENCE.sub(r"\1", _heading_text(line)))
        for line in markdown.splitlines()
        if _MD_HEADING.match(line)
    ]
