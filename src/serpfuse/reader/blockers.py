"""Pages that are not the page: a bot check (challenge) or an empty JavaScript shell.

Both answer 200 with HTML, and an extractor finds a little text in each ("Checking your browser before
accessing...", "You need to enable JavaScript to run this app."), which must never stand in for the page's content.
They are told apart only when the extraction found little (``SHORT_WORDS``), so an article that mentions a CAPTCHA,
or a page that loads Cloudflare's scripts beside its text, is read as usual:

- **challenge**: a marker of a bot check in the markup (Cloudflare, DataDome, PerimeterX, Incapsula, Akamai, the
  words of a check page) on a page of under ``CHALLENGE_WORDS`` visible words;
- **js_shell**: under ``SHELL_WORDS`` words of visible text outside scripts, and as few extracted, while the page
  has scripts (or a ``<noscript>`` asking for JavaScript).

On the 2,093 pages of the extraction corpora (article-extraction, Dragnet, L3S-GN1), markers and visible text
alone (no word gate) flag 12 real articles: an unclosed ``<title>`` that swallows the body for the HTML parser,
"Please enable cookies" in a footer. With these rules none is called a challenge, and the 9 called a shell are
pages the extraction finds no text in at all (8) or 2 words: "no readable text" before, as after.
"""

from __future__ import annotations

import re
from typing import Literal

Blocker = Literal["challenge", "js_shell"]

SHORT_WORDS = 150  # an extraction this short is checked
SHELL_WORDS = 40  # visible (and extracted) words under which a page with scripts is a shell
CHALLENGE_WORDS = (
    300  # a bot check says a sentence or two; a page with more text around its marker is the page
)

_CHALLENGE = re.compile(
    r"<title>\s*(?:just a moment|attention required|access denied|security check|verifying you are human"
    r"|are you a robot|robot check|ddos-guard|pardon our interruption|one more step)"
    r"|cf-browser-verification|cf_chl_opt|challenge-form|cf-turnstile|/cdn-cgi/challenge-platform/h/"
    r"|captcha-delivery\.com|px-captcha|_incapsula_resource|perimeterx"
    r"|checking your browser before|verify you are (?:a )?human|please enable cookies|unusual traffic from your"
    r"|press (?:&amp; |and |& )?hold",
    re.IGNORECASE,
)
_NOSCRIPT_JS = re.compile(
    r"<noscript[^>]*>[^<]{0,300}?(?:enable|turn on|requires?)\s+javascript", re.IGNORECASE
)
_SCRIPT = re.compile(r"<script\b", re.IGNORECASE)


def visible_words(html: str) -> int:
    """Words of the page's visible text: scripts, styles, templates and noscript blocks left out."""
    from selectolax.lexbor import LexborHTMLParser as HTMLParser

    tree = HTMLParser(html)
    tree.strip_tags(["script", "style", "noscript", "template", "svg", "head"])
    body = tree.body
    text = body.text(separator=" ") if body is not None else ""
    return len(text.split())


def blocker(html: str, extracted_words: int | None = None) -> Blocker | None:
    """What keeps this HTML from being the page, or None. ``extracted_words``: how many words the extraction
    found (None: it found nothing); a long extraction is the page."""
    if extracted_words is not None and extracted_words >= SHORT_WORDS:
        return None
    scripted = _SCRIPT.search(html) or _NOSCRIPT_JS.search(html)
    marked = _CHALLENGE.search(html)
    if not (marked or scripted):
        return None
    # Visible words by another parser than the extractor's: a page whose markup fools one (an unclosed <title>
    # swallowing the body) is not taken for an empty one unless the extraction found next to nothing too.
    visible = visible_words(html)
    if marked and visible < CHALLENGE_WORDS:
        return "challenge"
    if scripted and visible < SHELL_WORDS and (extracted_words or 0) < SHELL_WORDS:
        return "js_shell"
    return None
