"""The web page in a real browser: Playwright for Python driving Debian's Chromium (/usr/bin/chromium).

`serpfuse serve --replay` runs as a real process on 127.0.0.1; the browser may reach nothing else (every other
request is aborted, and Chromium runs with its background networking off). Each test does what a person does
(search from the home page with the keyboard, open the explain view, switch engines, send bad input) and
fails on any console error, page error or failed request. Screenshots of each state go to a temporary folder,
or to docs/ when SERPFUSE_SCREENSHOTS=docs (`make screenshots`, which refreshes the README's pictures).
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import quote, urlparse

import pytest

from conftest import need
from redis_server import ServeProcess, start_serpfuse, stop

CHROMIUM = Path("/usr/bin/chromium")
if not CHROMIUM.exists():
    pytest.skip(
        "Debian's chromium is not installed at /usr/bin/chromium (apt-get install chromium; .ci/run installs it)",
        allow_module_level=True,
    )
from playwright.sync_api import Browser, ConsoleMessage, Page, expect, sync_playwright  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
QUERY = "top restaurants in belgrad"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip
VIEWPORT = {"width": 1100, "height": 760}
expect.set_options(timeout=20_000)  # a loaded 2-core machine: generous waits, still bounded


@pytest.fixture(scope="module")
def server(data_dir, tmp_path_factory):
    recording = need(data_dir / "crw56" / "searxng_raw.json")
    env = {"SERPFUSE_RATE_LIMIT_BURST": "10000"}
    proc = start_serpfuse(tmp_path_factory.mktemp("browser"), ["--replay", str(recording)], env=env)
    yield proc
    stop(proc.proc)


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, timeout=60_000)
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def shots(tmp_path_factory) -> Path:
    if os.environ.get("SERPFUSE_SCREENSHOTS") == "docs":
        return ROOT / "docs"
    return tmp_path_factory.mktemp("screenshots")


class Watched:
    """A page whose console errors, uncaught errors and failed requests are collected, to be asserted empty."""

    def __init__(self, page: Page, origin: str) -> None:
        self.page = page
        self.problems: list[str] = []
        self.outside: list[str] = []
        page.on("console", self._console)
        page.on("pageerror", lambda exc: self.problems.append(f"page error: {exc}"))
        page.on("requestfailed", lambda req: self.problems.append(f"request failed: {req.url}"))
        page.context.route("**/*", lambda route: self._only_loopback(route, origin))

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
def page(browser: Browser, server: ServeProcess, request):
    context = browser.new_context(viewport=VIEWPORT, color_scheme=getattr(request, "param", "light"))
    watched = Watched(context.new_page(), server.base)
    yield watched
    context.close()
    assert watched.outside == [], "the page asked for something beyond the server"
    assert watched.problems == [], "the page logged errors"


def _search_url(server: ServeProcess, query: str = QUERY, **params: str) -> str:
    extra = "".join(f"&{k}={quote(v)}" for k, v in params.items())
    return f"{server.base}/search?q={quote(query)}{extra}"


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
    expect(first.locator(".badge")).to_have_text(["duckduckgo #1", "google #3"])
    expect(first.locator(".why")).to_contain_text("2 engines agree")
    report = p.locator(".engines-report tbody tr")
    expect(report).to_have_count(7)
    expect(p.locator(".engines-report tr", has_text="brave")).to_contain_text("rate-limited")
    expect(p.get_by_role("link", name="Results 8")).to_have_attribute("aria-current", "page")
    p.screenshot(path=str(shots / "page-results.png"))


def test_open_the_explain_view(page: Watched, server: ServeProcess, shots: Path):
    p = page.page
    p.goto(_search_url(server))
    p.get_by_role("link", name="Explain").click()
    p.wait_for_url("**view=explain**")
    rows = p.locator("table.candidates tbody tr")
    expect(rows.first).to_be_visible()
    assert rows.count() > 8 and p.locator("tr.kept").count() == 8
    cut = p.locator("tr.cut", has_text="dictionary.cambridge.org")
    expect(cut.locator(".cutby")).to_contain_text("junk")
    expect(p.locator("tr.kept").first.locator(".parts")).to_contain_text("evidence=")
    expect(p.locator(".summary")).to_contain_text("8 shown")
    p.screenshot(path=str(shots / "page-explain.png"))


def test_switch_engines_and_time_range(page: Watched, server: ServeProcess, shots: Path):
    p = page.page
    p.goto(_search_url(server))
    p.get_by_label("google").check()
    p.get_by_label("past week").check()
    p.get_by_role("button", name="Search").click()
    p.wait_for_url("**engines=google**")
    badges = p.locator("li.result .badge")
    expect(badges.first).to_be_visible()
    assert set(badges.all_inner_texts()) <= {f"google #{i}" for i in range(1, 11)}
    expect(p.locator(".engines-report tbody th")).to_have_text(["google"])
    expect(p.get_by_label("google")).to_be_checked()
    expect(p.get_by_label("past week")).to_be_checked()
    expect(p.locator(".warning")).to_contain_text("could not be checked")  # the recording's rows are undated
    p.screenshot(path=str(shots / "page-engines.png"))


def test_bad_input_shows_the_message(page: Watched, server: ServeProcess, shots: Path):
    p = page.page
    p.goto(_search_url(server, engines="nosuch"))  # as a hand-edited or stale link would send it
    alert = p.get_by_role("alert")
    expect(alert).to_contain_text("unknown engine 'nosuch'; choose from:")
    expect(p.locator("#q")).to_have_value(QUERY)  # the form stays, filled in, to correct it
    # The document's own 400 is the one thing Chromium logs; anything else still fails the test.
    page.problems.remove(
        "console error: Failed to load resource: the server responded with a status of 400 (Bad Request)"
    )
    p.screenshot(path=str(shots / "page-error.png"))


@pytest.mark.parametrize("page", ["dark"], indirect=True)
def test_dark_scheme(page: Watched, server: ServeProcess, shots: Path):
    p = page.page
    p.goto(_search_url(server))
    background = p.evaluate("getComputedStyle(document.body).backgroundColor")
    assert background == "rgb(21, 23, 27)"  # the dark palette, chosen by prefers-color-scheme alone
    p.screenshot(path=str(shots / "page-dark.png"))
    p.keyboard.press("Tab")  # the first stop is the skip link, shown when focused; Enter jumps to the answer
    expect(p.locator("a.skip")).to_be_focused()
    expect(p.locator("a.skip")).to_be_in_viewport()
    p.keyboard.press("Enter")
    expect(p.locator("main")).to_be_focused()
    p.keyboard.press("Tab")  # and the next stop is the first link of the answer: the Results tab
    expect(p.get_by_role("link", name="Results 8")).to_be_focused()
