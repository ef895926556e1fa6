"""The web page over HTTP, from a real `serpfuse serve` on 127.0.0.1 answering from the crw56 recording.

What a browser is sent: SearXNG's URL scheme (``/search?q=`` without ``format`` is the page, ``format=json``
the API), the same rows and engine reports as the API, escaping, the security headers, the API's token rule,
and bad input as the API's one-line message with the API's status. test_page_browser.py drives it in Chromium.
"""

from __future__ import annotations

import json
import re
from html import unescape
from urllib.parse import quote

import pytest

from redis_server import ServeProcess, start_serpfuse, stop

QUERY = "top restaurants in belgrad"
Q = quote(QUERY)


def _page(api: ServeProcess, path: str, expected: int = 200) -> str:
    status, headers, raw = api.get(path)
    assert status == expected, raw[:500]
    assert headers["content-type"].startswith("text/html")
    assert "script-src" not in headers["content-security-policy"]  # default-src 'none': no script at all
    assert headers["content-security-policy"].startswith("default-src 'none'")
    return raw.decode()


def _text(fragment: str) -> str:
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", fragment)).split())


def test_home_is_a_search_form_with_the_choices(api: ServeProcess):
    html = _page(api, "/")
    assert 'action="/search"' in html and 'name="q"' in html and "autofocus" in html
    for value in ("day", "week", "month", "year"):
        assert f'name="time_range" value="{value}"' in html
    # the engine choices are the engines this deployment has: here, the recording's
    assert re.findall(r'name="engines" value="([^"]+)"', html) == sorted(
        ["bing", "brave", "duckduckgo", "google", "mojeek", "startpage", "wikipedia", "yahoo"]
    )


def test_live_home_offers_every_engine_and_says_which_cannot_run(tmp_path):
    server = start_serpfuse(tmp_path, [])  # live engines; the home page asks none of them
    try:
        html = _page(server, "/")
    finally:
        stop(server.proc)
    marked = re.findall(r'<label class="unready" title="([^"]+)"><input [^>]*value="([^"]+)"', html)
    offered = re.findall(r'name="engines" value="([^"]+)"', html)
    assert {"ddg", "bing", "wikipedia", "brave"} <= set(offered)
    unready = {engine: why for why, engine in marked}
    assert unready["brave"] == "no API key (set BRAVE_API_KEY)" and "ddg" not in unready


def test_results_page_shows_the_apis_rows_badges_reasons_and_engines(api: ServeProcess):
    _, _, native = api.json("GET", f"/v1/search?q={Q}")
    html = _page(api, f"/search?q={Q}")
    items = re.findall(r'<li class="result">(.*?)</li>', html, re.S)
    assert len(items) == len(native["results"]) == 8
    for item, row in zip(items, native["results"], strict=True):
        assert f'href="{row["url"]}"' in item.replace("&amp;", "&")
        badges = [_text(b) for b in re.findall(r'<span class="badge"[^>]*>(.*?)</span>', item)]
        ranked = sorted(row["engineRanks"].items(), key=lambda t: (t[1], t[0]))
        assert badges == [f"{e} #{r}" for e, r in ranked]
        assert _text(re.search(r'<p class="why">(.*?)</p>', item, re.S)[1]) == "Why: " + row["reason"]
    report = re.search(r'<section class="engines-report".*?</section>', html, re.S)[0]
    for engine in native["engines"]:
        row = re.search(rf'<th scope="row">{engine["engine"]}</th>(.*?)</tr>', report, re.S)
        cells = [_text(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", row[1], re.S)]
        assert cells[:3] == [engine["status"], f"{engine['latencyMs']:.0f} ms", str(engine["rows"])]
        assert cells[3] == (engine["reason"] or "")


def test_explain_view_lists_every_candidate_with_its_parts_and_cut(api: ServeProcess):
    _, _, native = api.json("GET", f"/v1/search?q={Q}&explain=true")
    html = _page(api, f"/search?q={Q}&view=explain")
    rows = re.findall(r'<tr class="(kept|cut)">(.*?)</tr>', html, re.S)
    assert len(rows) == len(native["candidates"])
    for (kind, row), cand in zip(rows, native["candidates"], strict=True):
        assert (kind == "kept") == cand["selected"]
        assert f'href="{cand["url"]}"' in row.replace("&amp;", "&")
        cut = _text(re.search(r'<td class="cutby">(.*?)</td>', row, re.S)[1])
        assert cut == ("" if cand["selected"] else f"{cand['cutBy']} {cand['cutReason']}")
        parts = _text(re.search(r'<td class="parts">(.*?)</td>', row, re.S)[1])
        assert parts == " ".join(f"{k}={v:.3g}" for k, v in cand["scoreParts"].items() if v)
    summary = _text(re.search(r'<p class="summary">(.*?)</p>', html, re.S)[1])
    assert summary.startswith(f"{len(native['candidates'])} candidates: 8 shown, ")
    assert 'aria-current="page">Explain' in html


def test_time_range_and_engine_choices_reach_the_search_and_stay_ticked(api: ServeProcess):
    html = _page(api, f"/search?q={Q}&time_range=week&engines=google&engines=bing")
    assert 'value="week" checked' in html
    assert 'value="google" checked' in html and 'value="bing" checked' in html
    assert 'value="duckduckgo" >' in html  # not ticked
    report = re.search(r'<section class="engines-report".*?</section>', html, re.S)[0]
    assert re.findall(r'<th scope="row">([^<]+)</th>', report) == ["google", "bing"]
    assert "the date window could not be checked" in html  # the recording's rows carry no dates
    assert "engines=google" in html and "time_range=week" in html  # the view links keep the choices


def test_a_searxng_style_post_form_is_the_page_and_with_format_json_the_api(api: ServeProcess):
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    status, headers, raw = api.post("/search", None, form, raw=f"q={Q}&engines=google".encode())
    assert status == 200 and headers["content-type"].startswith("text/html")
    assert 'value="google" checked' in raw.decode()
    status, headers, raw = api.post("/search", None, form, raw=f"q={Q}&format=json".encode())
    assert status == 200 and json.loads(raw)["query"] == QUERY


@pytest.mark.parametrize(
    ("path", "status", "message"),
    [
        (f"/search?q={Q}&engines=nosuch", 400, "unknown engine 'nosuch'"),
        (f"/search?q={Q}&time_range=fortnight", 400, "time_range"),
        ("/search?q=" + "x" * 501, 400, "the limit is 500"),
        ("/search?q=a+query+nobody+recorded", 404, "a query nobody recorded"),
    ],
)
def test_bad_input_is_the_apis_one_line_message_on_the_page(api: ServeProcess, path, status, message):
    html = _page(api, path, status)
    alert = _text(re.search(r'<div class="error" role="alert">(.*?)</div>', html, re.S)[1])
    assert message in alert
    assert 'name="q"' in html  # the form is still there to correct it


def test_what_the_user_typed_is_escaped(api: ServeProcess):
    html = _page(api, "/search?q=" + quote('<img src=x onerror="alert(1)">'), 404)
    assert "<img src=x" not in html and "&lt;img src=x onerror=&#34;alert(1)&#34;&gt;" in html


def test_stylesheet_and_icon_ship_in_the_package(api: ServeProcess):
    status, headers, css = api.get("/static/serpfuse.css")
    assert status == 200 and headers["content-type"].startswith("text/css")
    assert b"prefers-color-scheme: dark" in css and b"@import" not in css and b"url(" not in css
    status, headers, _ = api.get("/static/favicon.svg")
    assert status == 200 and headers["content-type"].startswith("image/svg")
    assert api.get("/static/../__init__.py")[0] == 404


def test_the_page_follows_the_apis_token_rule(recording, tmp_path):
    token = "page-token-5e2"
    server = start_serpfuse(tmp_path, ["--replay", str(recording)], {"SERPFUSE_API_TOKEN": token})
    try:
        for path in ("/", f"/search?q={Q}", "/static/serpfuse.css"):
            status, headers, raw = server.get(path)
            assert status == 401 and headers["www-authenticate"].startswith("Bearer"), path
            assert "bearer token" in json.loads(raw)["error"]["message"]
        status, _, raw = server.get(f"/search?q={Q}", headers={"Authorization": f"Bearer {token}"})
        assert status == 200 and b'<li class="result">' in raw
    finally:
        stop(server.proc)
