"""`serpfuse judge` in a real browser: Playwright for Python driving Debian's Chromium, as the search page's
tests do (tests/test_page_browser.py).

`serpfuse judge` runs as a real process on 127.0.0.1 over three crw56 queries; the browser may reach nothing
else. A person grades with the keyboard (0/1/2, j/k, n/p) and the mouse; the process is killed (SIGKILL, no
chance to flush anything) and started again on the same file, and the page opens where the grading stopped.
Every test fails on a console error, a page error or a failed request.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

import browser_support  # noqa: F401  (it skips this module where Chromium is missing)
from conftest import crw56_subset
from redis_server import CLI, free_port, http, isolated_env, stop
from serpfuse.judge.pool import load_pool

VIEWPORT = {"width": 1100, "height": 760}


class Judge:
    """A ``serpfuse judge`` process on a free loopback port, up once its page answers."""

    def __init__(self, home: Path, recording: Path, out: Path) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log = home / f"judge-{self.port}.log"
        cmd = [
            sys.executable,
            "-c",
            CLI,
            "judge",
            str(recording),
            "--out",
            str(out),
            "--port",
            str(self.port),
        ]
        with self.log.open("wb") as log:
            self.proc = subprocess.Popen(
                cmd, stdout=log, stderr=subprocess.STDOUT, cwd=home, env=isolated_env(home)
            )
        deadline = time.monotonic() + 30
        while True:
            assert self.proc.poll() is None, f"serpfuse judge exited: {self.log.read_text()[-800:]}"
            try:
                if http("GET", self.base + "/q/1")[0] == 200:
                    return
            except OSError:
                pass
            assert time.monotonic() < deadline, (
                f"serpfuse judge did not answer: {self.log.read_text()[-800:]}"
            )
            time.sleep(0.1)

    def kill(self) -> None:
        self.proc.kill()  # SIGKILL: nothing is flushed or closed on the way out
        self.proc.wait(timeout=10)


@pytest.fixture(scope="module")
def small(data_dir: Path, tmp_path_factory) -> Path:
    recording, _ = crw56_subset(data_dir, tmp_path_factory.mktemp("small"), 3)
    return recording


@pytest.fixture
def page(browser: Browser):
    """A page that may reach only 127.0.0.1 and logs no error; both asserted at the end."""
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    problems: list[str] = []
    outside: list[str] = []
    page.on(
        "console", lambda msg: msg.type in ("error", "warning") and problems.append(f"console: {msg.text}")
    )
    page.on("pageerror", lambda exc: problems.append(f"page error: {exc}"))
    page.on("requestfailed", lambda req: problems.append(f"request failed: {req.url} ({req.failure})"))
    in_flight: set = set()  # what settle() waits for: the icon, say, is fetched after the page has loaded
    page.on("request", lambda req: in_flight.add(req))
    page.on("requestfinished", lambda req: in_flight.discard(req))
    page.on("requestfailed", lambda req: in_flight.discard(req))
    page.in_flight = in_flight  # type: ignore[attr-defined]

    def only_loopback(route) -> None:
        if route.request.url.startswith("http://127.0.0.1:"):
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()

    context.route("**/*", only_loopback)
    yield page
    context.close()
    assert outside == [], "the page asked for something beyond loopback"
    assert problems == [], "the page logged errors"


def settle(page: Page, quiet_ms: int = 300) -> None:
    """Wait until the page has loaded and no request has been in flight for ``quiet_ms`` (Chromium asks for the
    icon only after the load event): before the judge is killed or stopped under the page, or the page
    navigates away, either of which would abort a request still under way."""
    page.wait_for_load_state("load")
    deadline = time.monotonic() + 20
    quiet_since = time.monotonic()
    while time.monotonic() - quiet_since < quiet_ms / 1000:
        if page.in_flight:  # type: ignore[attr-defined]
            quiet_since = time.monotonic()
        assert time.monotonic() < deadline, f"requests still in flight: {page.in_flight}"  # type: ignore[attr-defined]
        page.wait_for_timeout(50)


def lines_of(path: Path) -> list[dict]:
    return (
        [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] if path.exists() else []
    )


def test_grade_with_the_keyboard_kill_the_judge_and_resume(
    page: Page, small: Path, tmp_path: Path, shots: Path
):
    pool = load_pool(small)
    rows = pool[0].rows
    total = sum(len(q.rows) for q in pool)
    out = tmp_path / "judged.jsonl"
    judge = Judge(tmp_path, small, out)
    try:
        page.goto(judge.base + "/")
        page.wait_for_url("**/q/1")
        expect(page.locator("#total")).to_have_text(str(total))
        expect(page.locator("#r0")).to_be_focused()  # the first row: grade it at once
        page.keyboard.press("2")
        expect(page.locator("#graded")).to_have_text("1")
        expect(page.locator("#r0")).to_have_class("result judge-row graded g2")
        expect(page.locator("#r1")).to_be_focused()  # on to the next row without a grade
        page.keyboard.press("j")
        expect(page.locator("#r2")).to_be_focused()
        page.keyboard.press("2")
        expect(page.locator("#graded")).to_have_text("2")
        expect(page.locator("#r3")).to_be_focused()
        page.keyboard.press("k")
        page.keyboard.press("k")
        expect(page.locator("#r1")).to_be_focused()
        page.keyboard.press("0")
        expect(page.locator("#graded")).to_have_text("3")
        expect(page.locator("#query-graded")).to_have_text("3")
        expect(page.locator("#r3")).to_be_focused()  # r2 is graded: the first one after r1 without a grade
        expect(page.locator("#r1 .grade-text")).to_have_text("not relevant")
        page.evaluate("window.scrollTo(0, 0)")  # the progress line and the first rows
        page.screenshot(path=str(shots / "judge-page.png"))
        # each grade was on disk when the page showed it
        assert lines_of(out) == [
            {"query": pool[0].query, "url": rows[0].url, "rel": 2},
            {"query": pool[0].query, "url": rows[2].url, "rel": 2},
            {"query": pool[0].query, "url": rows[1].url, "rel": 0},
        ]
        settle(page)
        judge.kill()
    finally:
        stop(judge.proc)
    judge = Judge(tmp_path, small, out)  # the same file, a new process (and port)
    try:
        page.goto(judge.base + "/")
        page.wait_for_url("**/q/1")
        expect(page.locator("#graded")).to_have_text("3")
        expect(page.locator("#r3")).to_be_focused()  # the first row without a grade
        expect(page.locator("#r0")).to_have_class("result judge-row graded g2")
        expect(page.locator("#r1 button[aria-pressed=true]")).to_have_text("0")
        # the rest of the query as fast as the keys go: every grade lands on its own row
        for _ in range(len(rows) - 3):
            page.keyboard.press("1")
        expect(page.locator("#query-graded")).to_have_text(str(len(rows)))
        expect(page.locator("#status")).to_contain_text("every row of this query is graded")
        assert len(lines_of(out)) == len(rows)
        assert {(j["url"], j["rel"]) for j in lines_of(out)} == {
            (r.url, {0: 2, 1: 0, 2: 2}.get(i, 1)) for i, r in enumerate(rows)
        }
        settle(page)  # before each navigation: a request of the page left would be aborted
        page.keyboard.press("n")
        page.wait_for_url("**/q/2")
        expect(page.locator(".asked")).to_have_text(pool[1].query)
        expect(page.locator("#r0")).to_be_focused()
        settle(page)
        page.keyboard.press("p")
        page.wait_for_url("**/q/1")
        settle(page)
        page.goto(judge.base + "/")  # query 1 is done: the start is query 2
        page.wait_for_url("**/q/2")
        settle(page)
    finally:
        stop(judge.proc)


def test_grade_with_the_mouse_and_the_page_names_no_engine(page: Page, small: Path, tmp_path: Path):
    pool = load_pool(small)
    out = tmp_path / "judged.jsonl"
    judge = Judge(tmp_path, small, out)
    try:
        page.goto(judge.base + "/q/3")
        row = page.locator(".judge-row").nth(4)
        row.get_by_role("button", name="2").click()
        expect(page.locator("#graded")).to_have_text("1")
        expect(row.locator(".grade-text")).to_have_text("highly relevant")
        assert lines_of(out) == [{"query": pool[2].query, "url": pool[2].rows[4].url, "rel": 2}]
        # what the person sees: each row's title, URL and snippet, and no word of which engine gave it
        entries = json.loads(small.read_text(encoding="utf-8"))
        engines = {e for entry in entries for r in entry["results"] for e in r["engines"]}
        shown = page.locator(".judge-row").all_inner_texts()
        assert len(shown) == len(pool[2].rows)
        chrome = page.locator("header").inner_text() + page.locator("nav").inner_text()
        assert not any(engine in chrome.lower() for engine in engines)
        for text, r in zip(shown, pool[2].rows, strict=True):
            rest = " ".join(text.split())  # as the browser lays text out: runs of white space are one space
            # the longest first: a title may be the start of its snippet
            for part in sorted((r.title, r.url, r.snippet), key=len, reverse=True) + [
                "0 1 2",
                "highly relevant",
            ]:
                rest = rest.replace(" ".join(part.split()), "")
            assert rest.split() in ([], ["ungraded"]), rest
        settle(page)
    finally:
        stop(judge.proc)
