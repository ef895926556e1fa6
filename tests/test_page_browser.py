"""The web page in a real browser: Playwright for Python driving Debian's Chromium (/usr/bin/chromium).

`serpfuse serve --replay` runs as a real process on 127.0.0.1; the browser may reach nothing else (every other
request is aborted, and Chromium runs with its background networking off). Each test does what a person does,
with the keyboard only (search from the home page, unfold the filters and choose, open the explain view and its
legend, page on, follow a recorded query), at a desktop width and a phone's 390 px, light and dark, and fails
on any console error, page error, failed request or sideways scrolling. A second server, live engines behind a
proxy address where nothing listens, is the page with no network. Screenshots of each state go to a temporary
folder, or to docs/ when SERPFUSE_SCREENSHOTS=docs (`make screenshots`, which refreshes the README's pictures).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import quote, urlparse

import pytest
from playwright.sync_api import Browser, ConsoleMessage, Page, expect

import browser_support  # noqa: F401  (it skips this module where Chromium is missing)
from conftest import need
from redis_server import ServeProcess, free_port, start_serpfuse, stop
from serpfuse.service import NO_ANSWER_HINT

QUERY = "top restaurants in belgrad"
VIEWPORTS = {"desktop": {"width": 1100, "height": 760}, "phone": {"width": 390, "height": 844}}


@pytest.fixture(scope="module")
def server(data_dir, tmp_path_factory):
    recording = need(data_dir / "crw56" / "searxng_raw.json")
    env = {"SERPFUSE_RATE_LIMIT_BURST": "10000"}
    proc = start_serpfuse(tmp_path_factory.mktemp("browser"), ["--replay", str(recording)], env=env)
    yield proc
    stop(proc.proc)


class Watched:
    """A page whose console errors, uncaught errors and failed requests are collected, to be asserted empty."""

    def __init__(self, page: Page, origin: str) -> None:
        self.page = page
        self.problems: list[str] = []
        self.outside: list[str] = []
        page.on("console", self._console)
        page.on("pageerror", lambda exc: self.problems.append(f"page error: {exc}"))
        page.on("requestfailed", self._request_failed)
        page.context.route("**/*", lambda route: self._only_loopback(route, origin))

    def _request_failed(self, request) -> None:
        # One the browser cancelled itself (the next goto, or the context closing, while a favicon still loaded)
        # is no failure of the page's; any other (refused, reset, empty answer) is.
        if request.failure != "net::ERR_ABORTED":
            self.problems.append(f"request failed: {request.url} ({request.failure})")

    def _console(self, msg: ConsoleMessage) -> None:
        if msg.type in ("error", "warning"):
            self.problems.append(f"console {msg.type}: {msg.text}")

    def _only_loopback(self, route, origin: str) -> None:
        if route.request.url.startswith(origin + "/"):
            route.continue_()
        else:  # never leave the machine, whatever the page links to
            self.outside.append(route.request.url)
            route.abort()


@pytest.fixture
def offline(tmp_path):
    """Live engines with no way out: every engine request goes to a proxy on 127.0.0.1 where nothing listens.
    One per test: engines that failed cool down, and then the hint no longer blames the network."""
    dead = f"http://127.0.0.1:{free_port()}"
    env = {"HTTP_PROXY": dead, "HTTPS_PROXY": dead, "ALL_PROXY": dead, "NO_PROXY": ""}
    proc = start_serpfuse(tmp_path, ["--no-cache"], env=env)
    yield proc
    stop(proc.proc)


def _open(browser: Browser, base: str, param: str) -> Watched:
    width, _, scheme = param.partition("-")
    context = browser.new_context(viewport=VIEWPORTS[width], color_scheme=scheme or "light")
    return Watched(context.new_page(), base)


def _close(watched: Watched) -> None:
    watched.page.context.close()
    assert watched.outside == [], "the page asked for something beyond the server"
    assert watched.problems == [], "the page logged errors"


@pytest.fixture
def page(browser: Browser, server: ServeProcess, request):
    """A page on the replay server; ``param`` "desktop" (the default), "phone", "phone-dark", ..."""
    watched = _open(browser, server.base, getattr(request, "param", "desktop"))
    yield watched
    _close(watched)


@pytest.fixture
def offline_page(browser: Browser, offline: ServeProcess, request):
    watched = _open(browser, offline.base, getattr(request, "param", "desktop"))
    yield watched
    _close(watched)


def _search_url(server: ServeProcess, query: str = QUERY, **params: str) -> str:
    extra = "".join(f"&{k}={quote(v)}" for k, v in params.items())
    return f"{server.base}/search?q={quote(query)}{extra}"


def _no_sideways_scroll(p: Page) -> None:
    overflow = p.evaluate("document.scrollingElement.scrollWidth - document.scrollingElement.clientWidth")
    assert overflow <= 0, f"the page scrolls sideways by {overflow} px"


def _tab_to(p: Page, target, *, back: bool = False, most: int = 40) -> None:
    """Press Tab (Shift+Tab) until ``target`` has the focus, as a keyboard user does."""
    for _ in range(most):
        if target.evaluate("el => el === document.activeElement"):
            return
        p.keyboard.press("Shift+Tab" if back else "Tab")
    raise AssertionError(f"{target} never took the focus in {most} presses")


def _within_width(p: Page, locator) -> None:
    box, width = locator.bounding_box(), p.viewport_size["width"]
    assert box and box["x"] >= 0 and box["x"] + box["width"] <= width + 1, (box, width)


def _shot(p: Page, shots: Path, name: str, *, full: bool = False) -> None:
    p.screenshot(path=str(shots / name), full_page=full)


def test_search_from_the_home_page_with_the_keyboard(page: Watched, server: ServeProcess, shots: Path):
    p = page.page
    p.goto(server.base + "/")
    expect(p.locator("#q")).to_be_focused()  # the search box has the focus: type and press Enter
    p.keyboard.type(QUERY)
    p.keyboard.press("Enter")
    p.wait_for_url("**/search?**")
    assert urlparse(p.url).path == "/search"
    results = p.locator("li.result")
    expect(results).to_have_count(8)
    first = results.first
    expect(first.locator("h2 a")).to_have_text("THE 10 BEST Restaurants in Belgrade (Updated May 2026)")
    expect(first.locator(".site .domain")).to_have_text("tripadvisor.com")  # the domain line
    expect(first.locator(".badge")).to_have_text(["duckduckgo #1", "google #3"])
    expect(first.locator(".score")).to_have_text(
        re.compile(r"score \d+\.\d{3}")
    )  # labelled, not a bare number
    expect(first.locator(".why")).to_contain_text("2 engines agree")
    expect(results.locator(".site time", has_text="2024-03-15")).to_have_count(1)  # stamped in its snippet
    report = p.locator(".engines-report tbody tr")
    expect(report).to_have_count(7)
    expect(p.locator(".engines-report tr", has_text="brave")).to_contain_text("rate-limited")
    expect(p.get_by_role("link", name="Results 8")).to_have_attribute("aria-current", "page")
    expect(p.locator("details.filters")).not_to_have_attribute("open", "")  # folded away
    expect(p.locator("fieldset.engines")).to_be_hidden()
    _no_sideways_scroll(p)
    _shot(p, shots, "page-results.png")


SHOTS = {"desktop-dark": "page-dark.png", "phone": "page-phone.png", "phone-dark": "page-phone-dark.png"}


@pytest.mark.parametrize("page", list(SHOTS), indirect=True)
def test_results_at_a_phones_width_and_in_the_dark(page: Watched, server: ServeProcess, shots: Path, request):
    p = page.page
    p.goto(_search_url(server))
    expect(p.locator("li.result")).to_have_count(8)
    expect(p.locator("details.filters")).not_to_have_attribute("open", "")
    expect(p.locator("fieldset.timerange")).to_be_hidden()
    expect(p.locator("details.filters summary")).to_have_text("Filters any time · every engine")
    # the folded filters leave the first screen to the answer: on a phone, two whole rows are on it
    expect(p.locator("li.result").nth(1).locator(".why")).to_be_in_viewport()
    expect(p.locator("li.result").first.locator(".score")).to_be_visible()
    _no_sideways_scroll(p)
    report = p.locator(".engines-report .scroll")  # every engine's reason readable without scrolling sideways
    assert report.evaluate("el => el.scrollWidth - el.clientWidth") <= 0
    _within_width(p, p.locator(".engines-report tr", has_text="brave").locator("td").last)
    background = p.evaluate("getComputedStyle(document.body).backgroundColor")
    dark = request.node.callspec.params["page"].endswith("dark")
    assert background == ("rgb(21, 23, 27)" if dark else "rgb(251, 251, 250)")  # prefers-color-scheme alone
    _shot(p, shots, SHOTS[request.node.callspec.params["page"]])


@pytest.mark.parametrize("page", ["desktop", "phone"], indirect=True)
def test_unfold_the_filters_and_choose_with_the_keyboard(
    page: Watched, server: ServeProcess, shots: Path, request
):
    p = page.page
    p.goto(_search_url(server))
    summary = p.locator("details.filters summary")
    _tab_to(p, summary)
    p.keyboard.press("Enter")  # unfolds
    expect(p.locator("details.filters")).to_have_attribute("open", "")
    p.keyboard.press("Tab")
    expect(p.get_by_label("any time")).to_be_focused()
    p.keyboard.press("ArrowRight")
    p.keyboard.press("ArrowRight")  # arrows move through a radio group: any time, past day, past week
    expect(p.get_by_label("past week")).to_be_checked()
    # a recording offers the engines it holds for this query: wikipedia answered other queries, not this one
    offered = p.locator("fieldset.engines input").evaluate_all("els => els.map(e => e.value)")
    assert offered == ["bing", "brave", "duckduckgo", "google", "mojeek", "startpage", "yahoo"]
    _tab_to(p, p.get_by_label("google"))
    p.keyboard.press("Space")
    expect(p.get_by_label("google")).to_be_checked()
    _no_sideways_scroll(p)
    if request.node.callspec.params["page"] == "desktop":
        _shot(p, shots, "page-filters.png")
    _tab_to(p, p.get_by_role("button", name="Search"), back=True)
    p.keyboard.press("Enter")
    p.wait_for_url("**engines=google**")
    badges = p.locator("li.result .badge")
    expect(badges.first).to_be_visible()
    assert set(badges.all_inner_texts()) <= {f"google #{i}" for i in range(1, 11)}
    expect(p.locator(".engines-report tbody th")).to_have_text(["google"])
    expect(summary).to_have_text("Filters past week · google")  # folded again, saying what is chosen
    expect(p.get_by_label("google")).to_be_checked()
    expect(p.get_by_label("past week")).to_be_checked()
    expect(p.locator(".warning")).to_contain_text("could not be checked")  # the recording's rows are undated


EXPLAIN_SHOTS = {"desktop": "page-explain.png", "phone": "page-explain-phone.png", "phone-dark": None}
# the picture of a phone's explain view shows cards of cut rows, from the fifth
PHONE_SHOT_FROM = "tr.cut >> nth=4"


@pytest.mark.parametrize("page", list(EXPLAIN_SHOTS), indirect=True)
def test_the_explain_view_and_its_legend_by_keyboard(
    page: Watched, server: ServeProcess, shots: Path, request
):
    p = page.page
    p.goto(_search_url(server))
    _tab_to(p, p.get_by_role("link", name="Explain"))
    p.keyboard.press("Enter")
    p.wait_for_url("**view=explain**")
    rows = p.locator("table.candidates tbody tr")
    expect(rows.first).to_be_visible()
    assert rows.count() > 8 and p.locator("tr.kept").count() == 8
    cut = p.locator("tr.cut", has_text="dictionary.cambridge.org")
    expect(cut.locator(".cutby")).to_contain_text(
        "relevance"
    )  # a dictionary page about none of the key terms
    expect(p.locator("tr.kept").first.locator(".parts")).to_contain_text("combsum=")  # the default's parts
    expect(p.locator(".summary")).to_contain_text("8 shown")
    # "cut by" is on screen at every width: on a phone each row is a card, each cell labelled
    cut.locator(".cutby").scroll_into_view_if_needed()
    expect(cut.locator(".cutby")).to_be_in_viewport()
    _within_width(p, cut.locator(".cutby"))
    _within_width(p, p.locator("tr.kept").first.locator(".parts"))
    _no_sideways_scroll(p)
    scroller = p.locator(".explain .scroll")
    assert scroller.evaluate("el => el.scrollWidth - el.clientWidth") <= 0  # nothing hidden to the right
    name = EXPLAIN_SHOTS[request.node.callspec.params["page"]]
    if name and "phone" in name:
        p.locator(PHONE_SHOT_FROM).evaluate("el => el.scrollIntoView({block: 'start'})")
        _shot(p, shots, name)
    # the legend: folded under the summary, opened from the keyboard, a line per kind of part shown
    p.keyboard.press("Control+Home")
    legend = p.locator("details.legend")
    _tab_to(p, legend.locator("summary"))
    p.keyboard.press("Enter")
    expect(legend.locator("dt")).to_contain_text(["combsum", "hits"])
    expect(legend.locator("dd").nth(1)).to_contain_text("how many engines returned the row")
    _within_width(p, legend)
    if name and "phone" not in name:
        _shot(p, shots, name)


@pytest.mark.parametrize("page", ["desktop", "phone"], indirect=True)
def test_the_second_page_is_rows_9_to_16(page: Watched, server: ServeProcess):
    p = page.page
    status, _, raw = server.get(f"/v1/search?q={quote(QUERY)}&limit=16")
    sixteen = [r["url"] for r in json.loads(raw)["results"]]
    p.goto(_search_url(server))
    titles = p.locator("li.result h2 a")
    assert titles.evaluate_all("els => els.map(a => a.href)") == sixteen[:8]
    _tab_to(p, p.get_by_role("link", name="Next →"), most=80)
    p.keyboard.press("Enter")
    p.wait_for_url("**pageno=2**")
    expect(p.locator("ol.results")).to_have_attribute("start", "9")
    expect(p.locator(".pages .at")).to_have_text("rows 9–16")
    assert titles.evaluate_all("els => els.map(a => a.href)") == sixteen[8:]
    _no_sideways_scroll(p)
    _tab_to(p, p.get_by_role("link", name="← Previous"), most=80)
    p.keyboard.press("Enter")
    p.wait_for_url(lambda url: "pageno" not in url)
    assert titles.evaluate_all("els => els.map(a => a.href)") == sixteen[:8]


def test_every_page_offers_serpfuse_as_a_search_engine(page: Watched, server: ServeProcess):
    p = page.page
    for url in (server.base + "/", _search_url(server), _search_url(server, view="explain")):
        p.goto(url)
        link = p.locator('head link[rel="search"]')
        expect(link).to_have_attribute("type", "application/opensearchdescription+xml")
        described = p.request.get(server.base + link.get_attribute("href"))
        assert described.ok and described.headers["content-type"] == "application/opensearchdescription+xml"
        assert f'template="{server.base}/search?q={{searchTerms}}"' in described.text()


RTL_QUERY = "أفضل المطاعم في بلغراد"


@pytest.mark.parametrize("page", ["phone"], indirect=True)
def test_a_query_the_recording_lacks_lists_its_queries_and_an_rtl_query_reads_right_to_left(
    page: Watched, server: ServeProcess, shots: Path
):
    p = page.page
    p.goto(_search_url(server, RTL_QUERY))
    expect(p.get_by_role("alert")).to_contain_text("is not in the recording")
    assert p.locator("#q").evaluate("el => el.matches(':dir(rtl)')")  # dir=auto: its own text's direction
    links = p.locator(".recorded a")
    assert links.count() == 56
    _no_sideways_scroll(p)
    _shot(p, shots, "page-recorded.png")
    _tab_to(p, links.filter(has_text=QUERY), most=120)
    p.keyboard.press("Enter")
    p.wait_for_url("**q=top+restaurants**")
    expect(p.locator("li.result")).to_have_count(8)
    assert p.locator("li.result h2").first.evaluate("el => el.matches(':dir(ltr)')")
    page.problems.remove(
        "console error: Failed to load resource: the server responded with a status of 404 (Not Found)"
    )


def test_bad_input_shows_the_message(page: Watched, server: ServeProcess):
    p = page.page
    p.goto(_search_url(server, engines="nosuch"))  # as a hand-edited or stale link would send it
    alert = p.get_by_role("alert")
    expect(alert).to_contain_text("unknown engine 'nosuch'; choose from:")
    expect(p.locator("#q")).to_have_value(QUERY)  # the form stays, filled in, to correct it
    # The document's own 400 is the one thing Chromium logs; anything else still fails the test.
    page.problems.remove(
        "console error: Failed to load resource: the server responded with a status of 400 (Bad Request)"
    )


@pytest.mark.parametrize("page", ["desktop-dark"], indirect=True)
def test_the_skip_link_leads_to_the_answer(page: Watched, server: ServeProcess):
    p = page.page
    p.goto(_search_url(server))
    p.keyboard.press("Tab")  # the first stop is the skip link, shown when focused; Enter jumps to the answer
    expect(p.locator("a.skip")).to_be_focused()
    expect(p.locator("a.skip")).to_be_in_viewport()
    p.keyboard.press("Enter")
    expect(p.locator("main")).to_be_focused()
    p.keyboard.press("Tab")  # and the next stop is the first link of the answer: the Results tab
    expect(p.get_by_role("link", name="Results 8")).to_be_focused()


@pytest.mark.parametrize("offline_page", ["desktop", "phone"], indirect=True)
def test_with_no_network_the_page_says_what_to_try(
    offline_page: Watched, offline: ServeProcess, shots: Path, request
):
    p = offline_page.page
    hint = NO_ANSWER_HINT[0].upper() + NO_ANSWER_HINT[1:] + "."
    p.goto(_search_url(offline, "rust async runtime", engines="ddg,bing"))
    expect(p.get_by_role("status")).to_have_text(hint)
    expect(p.locator(".engines-report tbody tr")).to_have_count(2)
    assert "what cut each candidate" not in p.content()
    _no_sideways_scroll(p)
    if request.node.callspec.params["offline_page"] == "desktop":
        _shot(p, shots, "page-offline.png")
    _tab_to(p, p.get_by_role("link", name="Explain"))
    p.keyboard.press("Enter")
    p.wait_for_url("**view=explain**")
    # not an empty table; the engines that just failed may be cooling down now: then that is the hint
    expect(p.get_by_role("status")).to_have_text(re.compile(r"^No engine answered\b.*--replay FILE\.$"))
    expect(p.locator("table.candidates")).to_have_count(0)
