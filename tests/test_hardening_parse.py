"""The markup check reads a page as the HTML parser does, and a one-shot search never waits for a parse.

The check (``engines.bounds.markup_problem``) refuses a page nested deeper than any results page before lexbor
builds its tree, because the tree builder is superlinear in depth. Each hostile page below hides its depth from
a check that reads markup naively (a comment closed by "<!-->", a stray end tag, "<div/>", markup in a
noscript or an svg title, formatting elements the parser rebuilds); lexbor itself shows how deep it is. The
one-shot processes (the CLI, a script's ``serpfuse.search``) run against a loopback SearXNG whose parse stalls:
the search gives the parse up at its budget, and the process ends when its answer is out, not when the parse is.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from selectolax.lexbor import LexborHTMLParser

from fakeserver import Reply
from redis_server import CLI, isolated_env
from serpfuse.engines.bounds import MAX_BUILT, MAX_DEPTH, markup_problem

HERE = Path(__file__).resolve().parent
HTML = {"Content-Type": "text/html; charset=utf-8"}
DIVS = "<div>" * (MAX_DEPTH + 44)


def built(html: str) -> tuple[int, int]:
    """(depth, elements) of the tree lexbor builds from ``html``."""
    deepest = count = 0
    todo = [(LexborHTMLParser(html).root, 0)]
    while todo:
        node, depth = todo.pop()
        deepest, count = max(deepest, depth), count + 1
        child = node.child
        while child is not None:
            if child.tag != "-text":
                todo.append((child, depth + 1))
            child = child.next
    return deepest, count


def bold(n: int) -> str:
    return "".join(f"<b id={i}>" for i in range(n))  # distinct, so the parser keeps every one active


HIDDEN_DEPTH = {
    "a comment closed at once by <!-->": "<!-->" + DIVS + "-->",
    "a comment closed at once by <!--->": "<!--->" + DIVS + "-->",
    "a comment closed by --!>": "<!-- x --!>" + DIVS + "-->",
    "noscript content": "<noscript>" + DIVS + "</noscript>",
    "an svg title": "<svg><title>" + DIVS + "</title></svg>",
    "an svg style": "<svg><style>" + "<span>" * 300 + "</style></svg>",
    "stray end tags": "<div></span>" * 300,
    "<div/> (not self-closing in HTML)": "<div/>" * 300,
    "</form> closes only the form": ("<form>" + "<div>" * 100 + "</form>") * 3,
    "</body> closes nothing": ("<body>" + "<div>" * 100 + "</body>") * 3,
    "</div> inside a select": ("<div>" * 100 + "<select></div></select>") * 3,
    "formatting rebuilt deeper each time": ("<div>" + bold(100) + "</div>x") * 30,
}


@pytest.mark.parametrize("page", HIDDEN_DEPTH.values(), ids=HIDDEN_DEPTH.keys())
def test_markup_the_parser_nests_is_refused(page):
    depth, _ = built(page)
    assert depth > MAX_DEPTH  # what lexbor really builds
    assert "deep" in (markup_problem(page) or "")


def test_formatting_the_parser_rebuilds_for_every_paragraph_is_refused():
    # Twenty unclosed <b>s closed from outside, then paragraphs: the parser builds all twenty again in each.
    page = "<div>" + bold(20) + "</div>" + "<p>x" * 7000
    _, elements = built(page)
    assert elements > MAX_BUILT
    assert "misnested" in (markup_problem(page) or "")


ORDINARY = {
    "markup in a comment": "<!-- " + DIVS + " -->",
    "markup in a script": "<script>" + "'<div>'" * 300 + "</script>",
    "a closed svg, then content": "<svg><title>t</title><path/></svg>" + "<p>x</p>" * 300,
    "a table of bold cells": "<table>" + "<tr><td><b>x</b></td>" * 600 + "</table>",
    "spans closed by their div": "<div><span>x</div>" * 300,
    "unclosed paragraphs and items": "<ul>" + "<li><p>row<br><img src=x>" * 3000 + "</ul>",
}


@pytest.mark.parametrize("page", ORDINARY.values(), ids=ORDINARY.keys())
def test_ordinary_markup_passes(page):
    assert built(page)[0] < 20
    assert markup_problem(page) is None


def _tag_soup(seed: int) -> str:
    pick = random.Random(seed)
    names = [
        "div",
        "span",
        "b",
        "i",
        "a",
        "p",
        "li",
        "ul",
        "table",
        "tr",
        "td",
        "form",
        "select",
        "h1",
        "h2",
        "body",
        "svg",
        "title",
        "style",
        "script",
        "noscript",
    ]
    tokens = ["<!-->", "<!--->", "<!--", "-->", "--!>", "<!x>", "x", " "]
    out = []
    for _ in range(pick.randint(50, 1200)):
        name, kind = pick.choice(names), pick.random()
        out.append(
            (f"<{name}>" if kind < 0.4 else f"<{name}/>")
            if kind < 0.45
            else f"</{name}>"
            if kind < 0.85
            else pick.choice(tokens)
        )
    return "".join(out)


def test_no_tag_soup_passes_deeper_than_the_cap_allows():
    """On random tag soup (comments, stray and misnested end tags, foreign and raw-text elements), a page the
    check passes at a cap of 32 is never built deeper than 4 x 32 by the parser (auto-closed elements such as
    <li> and <td> nest within the levels counted)."""
    for seed in range(300):
        page = _tag_soup(seed)
        if markup_problem(page, max_depth=32) is None:
            assert built(page)[0] <= 4 * 32, f"seed {seed}"


# --- one-shot processes do not wait for an abandoned parse ---------------------------------------------------

STALL_S = 30.0  # how long the stalled parse would hold the process
DEADLINE_S = 5.0  # well past the parse's own budget (2 s), so the parse is what gives up, not the search


def _run_until_exit(args: list[str], env: dict[str, str], cwd: Path) -> tuple[subprocess.Popen, str, float]:
    """Run the process; its output, and how long it took to exit after its output arrived."""
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=cwd, text=True)
    first: list[float] = []
    lines: list[str] = []

    def read() -> None:
        for line in proc.stdout:
            first.append(first[0] if first else time.monotonic())
            lines.append(line)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        proc.wait(timeout=STALL_S + 30)
    finally:
        if proc.poll() is None:
            proc.kill()
    exited = time.monotonic()
    reader.join(timeout=5)
    assert first, f"no output; stderr: {proc.stderr.read()[-2000:]}"
    return proc, "".join(lines), exited - first[0]


def _searxng(server, tmp_path) -> dict[str, str]:
    server.route("/search", Reply(200, {"Content-Type": "application/json"}, b'{"results": []}'))
    return isolated_env(tmp_path, {"SERPFUSE_SEARXNG_URL": server.url})


def test_the_cli_exits_once_its_answer_is_out(server, tmp_path):
    env = _searxng(server, tmp_path)
    args = [sys.executable, str(HERE / "stalled_parse.py"), str(STALL_S), "cli"]
    args += ["search", "rust async", "-e", "searxng", "--json", "--no-cache", "--deadline", str(DEADLINE_S)]
    proc, out, exit_lag_s = _run_until_exit(args, env, tmp_path)
    engines = {e["engine"]: e["status"] for e in json.loads(out)["engines"]}
    assert engines == {"searxng": "parse-timeout"}  # the parse was given up at its budget...
    assert exit_lag_s < 1.0, f"the CLI took {exit_lag_s:.1f} s to exit after answering"  # ...and left behind
    assert "Traceback" not in proc.stderr.read()


def test_a_library_search_exits_once_its_answer_is_out(server, tmp_path):
    env = _searxng(server, tmp_path)
    args = [sys.executable, str(HERE / "stalled_parse.py"), str(STALL_S), "library", "rust async"]
    proc, out, exit_lag_s = _run_until_exit([*args, str(DEADLINE_S)], env, tmp_path)
    assert json.loads(out) == {"searxng": "parse-timeout"}
    assert exit_lag_s < 1.0, f"the script took {exit_lag_s:.1f} s to exit after answering"
    assert proc.returncode == 0 and "Traceback" not in proc.stderr.read()


def test_the_cli_refuses_a_page_hiding_its_depth_in_a_comment(server, tmp_path):
    """The real bing module, pointed at the fake with ``--base-url``, answered with "<!-->" and deep markup:
    refused by the check at once (not parsed until the budget runs out), and the process ends with it."""
    server.route_prefix("/bing", Reply(200, HTML, b"<html><body>home</body></html>"))  # its home page first
    server.route(
        "/bing/search", Reply(200, HTML, ("<html><body><!-->" + "<div>" * 40_000 + "--></body>").encode())
    )
    (tmp_path / "q.txt").write_text("rust async\n")
    args = [sys.executable, "-c", CLI, "record", "-q", "q.txt", "-o", "rec", "-e", "bing"]
    args += ["--base-url", f"bing={server.url}/bing", "--no-core-variant", "--timeout", "10"]
    started = time.monotonic()
    done = subprocess.run(
        args, capture_output=True, text=True, env=isolated_env(tmp_path), cwd=tmp_path, timeout=60
    )
    took_s = time.monotonic() - started
    entry = json.loads(next((tmp_path / "rec").glob("001-*.json")).read_text())
    bing = entry["engines"]["bing"]
    assert bing["status"] == "error" and "nests more than" in bing["reason"], bing
    assert took_s < 10, f"record took {took_s:.1f} s"  # lexbor needs minutes for this page
    assert "Traceback" not in done.stderr
