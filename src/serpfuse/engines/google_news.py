"""Google News, keyless, from the news tab of Google's feature-phone page (``/wml/search?tbm=nws``).

The request is ``engines.google``'s (a Nokia User-Agent, the consent cookie) with ``tbm=nws`` and without
``lr``, as SearXNG's google news sends it; the news tab takes no time filter there (SearXNG's engine sends none),
so the engine is skipped for time-range searches. Google's "sorry" wall is handled as for the web search.

Each article is one ``/url?q=TARGET`` link holding spans: the title (``span.M3vVJe``, or ``span.CVA68e`` as
on the web tab), the publisher (``span.dXDvrc``, kept as the row's text) and when it appeared
(``span.YVIcad``: "3 hours ago", "Mar 5, 2024"), the row's publication date. Links without a title are no
articles and take no rank; a target is listed once.
"""

from __future__ import annotations

from collections.abc import Mapping

from selectolax.lexbor import LexborNode

from serpfuse.engines import google
from serpfuse.engines.base import ChallengeDetected, EngineInfo, EngineQuery, RequestSpec, shows_challenge
from serpfuse.engines.bodies import html_tree, node_text, results_page_without_rows
from serpfuse.engines.dates import parse_published
from serpfuse.engines.rows import RowFields, rows_from_items
from serpfuse.models import EngineRow
from serpfuse.urls import unwrap_redirect

INFO = EngineInfo(
    name="google-news",
    website="https://www.google.com",
    tier="primary",
    region="global",
    kind="html",
    needs_key=False,
    transport="api",  # the feature-phone page, as engines.google asks for it
    rows_per_request=10,
    group="google",
    challenge_cooldown_s=google.INFO.challenge_cooldown_s,
    category="news",
)

TITLES = ("span.M3vVJe", "span.CVA68e")
PUBLISHER = "span.dXDvrc"
AGE = "span.YVIcad"
classify = google.classify


def build_request(q: EngineQuery) -> RequestSpec | None:
    if q.date_from or q.date_to:
        return None
    return RequestSpec(
        method="GET",
        url=google.URL,
        params={**{k: v for k, v in google.request_params(q).items() if k != "lr"}, "tbm": "nws"},
        headers=google.request_headers(),
        cookies=dict(google.CONSENT_COOKIE),
    )


def _title(link: LexborNode) -> LexborNode | None:
    for selector in TITLES:
        node = link.css_first(selector)
        if node is not None and node_text(node):
            return node
    return None


def articles(tree) -> list[LexborNode]:
    """The article links, in page order: a title inside, once per target."""
    seen: set[str] = set()
    out = []
    for link in tree.css(google.REDIRECT_LINKS):
        target = unwrap_redirect(link.attributes.get("href") or "")
        if target in seen or _title(link) is None:
            continue
        seen.add(target)
        out.append(link)
    return out


def _pick(link: LexborNode) -> RowFields | None:
    age = link.css_first(AGE)
    published = parse_published(node_text(age)) if age is not None else None
    return (
        link.attributes.get("href"),
        node_text(_title(link)),
        node_text(link.css_first(PUBLISHER)),
        published,
    )


def parse(status: int, headers: Mapping[str, str], body: bytes, q: EngineQuery) -> list[EngineRow]:
    google.check_google_status(status, headers, body)
    tree = html_tree(body, headers)
    rows = rows_from_items(INFO.name, articles(tree), _pick, markup=False)
    if rows:
        return rows
    if shows_challenge(body, google.CHALLENGE_MARKERS):
        raise ChallengeDetected("Google 'unusual traffic' page")
    return results_page_without_rows(tree, google.RESULTS_PAGE, "Google News")
