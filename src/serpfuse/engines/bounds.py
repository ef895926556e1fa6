"""Input bounds that keep every parser's cost linear in the size of the response.

An engine's answer is hostile input. HTML tree builders are superlinear in nesting depth (lexbor took 4.6 s
on 200 KB of unclosed ``<div>``s), a JSON list can hold 30,000 rows, and fields can be megabytes long. So:

- ``markup_problem`` walks the markup once, before any tree is built, and refuses a page nested deeper or
  holding more elements than any results page does (the AQL captures: depth <= 60, <= 2,300 elements), read
  as the parser reads it (where comments end, what an end tag closes), so no markup hides depth from it;
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
# Raw-text elements: their content is not markup ("a<b" in a script opens nothing). Not noscript: the parser
# runs without scripting, so a noscript's content is markup to it.
_RAW_TEXT = frozenset(
    ["script", "style", "textarea", "title", "xmp", "iframe", "noembed", "noframes", "plaintext"]
)
# Inside svg or math no element is raw text (an svg <title> holds markup), and "/>" closes what it ends.
_FOREIGN = frozenset(["svg", "math"])
# One of each, whatever the page says: the parser merges a second <body> into the first, and </body> closes
# nothing (what follows still goes inside).
_SINGLETONS = frozenset(["html", "head", "body"])
# End tags that close every element opened inside them, as far as the nearest element of their name, unless a
# scope boundary lies in between (the tree builder's "pop until" rule). Any other end tag closes only the
# innermost open element, and only when it names it: the parser ignores a stray end tag ("<div></span>" nests),
# and </form> or </h1> close less than everything inside them.
_CLOSES_INSIDE = frozenset(
    [
        "address",
        "article",
        "aside",
        "blockquote",
        "button",
        "center",
        "details",
        "dialog",
        "dir",
        "div",
        "dl",
        "fieldset",
        "figcaption",
        "figure",
        "footer",
        "header",
        "hgroup",
        "listing",
        "main",
        "menu",
        "nav",
        "ol",
        "pre",
        "search",
        "section",
        "summary",
        "ul",
        "applet",
        "marquee",
        "object",
        "template",
        "table",
        "select",
    ]
)
_SCOPE_BOUNDARIES = frozenset(
    [
        "applet",
        "caption",
        "html",
        "table",
        "td",
        "th",
        "marquee",
        "object",
        "template",
        "select",
        "mi",
        "mo",
        "mn",
        "ms",
        "mtext",
        "annotation-xml",
        "foreignobject",
        "desc",
        "title",
    ]
)
# Formatting elements: one closed from outside (</div> around an unclosed <b>) stays active, and the parser
# builds it again before the next text or element, as many times as the page closes it so. What that can
# build is bounded by the most formatting elements active at once (at most 4 on any AQL capture).
_FORMATTING = frozenset(
    ["a", "b", "big", "code", "em", "font", "i", "nobr", "s", "small", "strike", "strong", "tt", "u"]
)
# Elements the parser may build, counting rebuilt formatting elements at their worst (2 per element per active
# formatting element); an ordinary page stays far below (2,300 elements and 4 active: 21,000).
MAX_BUILT = 4 * MAX_ELEMENTS
_TAG = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9:_-]*)|<!--|<[!?]")
_RAW_END = {name: re.compile(rf"</{name}", re.IGNORECASE) for name in _RAW_TEXT}
# Where the HTML tokenizer ends a comment: "<!-->" and "<!--->" end at once, the rest at the first "-->" or
# "--!>". Looking only for "-->" would skip the markup the parser reads after "<!-->".
_COMMENT_END = re.compile(r">|->|.*?--!?>", re.DOTALL)


class _OpenElements:
    """The elements the parser has open, as far as ``markup_problem`` can tell without building a tree: never
    fewer than the parser has (less the auto-closed and rebuilt ones, which the caller bounds)."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self._at: dict[str, list[int]] = {}  # name -> its places in ``names``, innermost last
        self._boundaries: list[int] = []

    def __len__(self) -> int:
        return len(self.names)

    def push(self, name: str) -> None:
        self._at.setdefault(name, []).append(len(self.names))
        if name in _SCOPE_BOUNDARIES:
            self._boundaries.append(len(self.names))
        self.names.append(name)

    def close(self, name: str) -> None:
        """What the end tag ``</name>`` closes."""
        places = self._at.get(name)
        if not places:
            return
        innermost = places[-1]
        if innermost == len(self.names) - 1 or (
            name in _CLOSES_INSIDE and not (self._boundaries and self._boundaries[-1] > innermost)
        ):
            while len(self.names) > innermost:
                self._pop()

    def _pop(self) -> None:
        name = self.names.pop()
        self._at[name].pop()
        if self._boundaries and self._boundaries[-1] == len(self.names):
            self._boundaries.pop()


def markup_problem(
    text: str, *, max_depth: int = MAX_DEPTH, max_elements: int = MAX_ELEMENTS, max_built: int = MAX_BUILT
) -> str | None:
    """Why ``text`` is no results page (nested deeper than ``max_depth`` open elements, more than
    ``max_elements`` elements, or misnested so that the parser would build more than ``max_built``), or None.
    One pass; each character is looked at a bounded number of times, each tag costs a bounded number of steps.
    It reads the markup as the HTML parser does where that could hide depth: comments, raw text, stray and
    misnested end tags, "/>", foreign content, formatting elements the parser rebuilds."""
    open_elements = _OpenElements()
    active: dict[str, int] = {}  # formatting elements the parser may hold active, by name
    active_now = active_most = 0
    elements = foreign = 0
    pos = 0
    find = text.find
    while (m := _TAG.search(text, pos)) is not None:
        token = m.group(0)
        if token == "<!--":
            end = _COMMENT_END.match(text, m.end())
            if end is None:  # the rest of the page is a comment
                return None
            pos = end.end()
            continue
        gt = find(">", m.end())
        if gt < 0:
            return None
        pos = gt + 1
        name = m.group(2)
        if name is None:  # <!doctype ...>, <?xml ...?>
            continue
        name = name.lower()
        if name.startswith("h") and name[1:] in ("1", "2", "3", "4", "5", "6"):
            name = "h1"  # </h2> closes an open <h3>: one name for every heading
        if m.group(1):  # an end tag
            if name in _FORMATTING and active.get(name):
                active[name] -= 1
                active_now -= 1
            if name in _FOREIGN:
                foreign = max(0, foreign - 1)
            if name not in _NO_DEPTH and name not in _SINGLETONS:
                open_elements.close(name)
            continue
        elements += 1
        if elements > max_elements:
            return f"page holds more than {max_elements:,} elements; not a results page"
        if name in _FORMATTING:
            # A second <a> closes the first; any other formatting element adds one more.
            added = 0 if name == "a" and active.get(name) else 1
            active[name] = active.get(name, 0) + added
            active_now += added
            if active_now > active_most:
                active_most = active_now
        if elements * (1 + 2 * active_most) > max_built:
            return f"page is misnested so that its parser would build over {max_built:,} elements; not a results page"
        self_closed = text[gt - 1] == "/"
        if name in _FOREIGN and not self_closed:
            foreign += 1
        elif name in _RAW_TEXT and not foreign:
            end_tag = _RAW_END[name].search(text, pos)
            if end_tag is None:
                return None
            pos = end_tag.end()  # the raw text and its end tag: neither opens anything
            continue
        if name in _NO_DEPTH or name in _SINGLETONS or (foreign and self_closed):
            continue
        open_elements.push(name)
        # Every active formatting element the parser might rebuild inside this one adds a level.
        if len(open_elements) + active_now > max_depth:
            return f"page nests more than {max_depth} elements deep; not a results page"
    return None
