"""The web page over HTTP, from a real `serpfuse serve` on 127.0.0.1 answering from the crw56 recording.

What a browser is sent: SearXNG's URL scheme (``/search?q=`` without ``format`` is the page, ``format=json``
the API), the same rows and engine reports as the API, escaping, the security headers, the API's token rule,
and bad input as the API's one-line message with the API's status. test_page_browser.py drives it in Chromium.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from html import escape, unescape
from urllib.parse import quote, quote_plus
from xml.etree import ElementTree

import pytest

from redis_server import ServeProcess, free_port, start_serpfuse, stop
from serpfuse.ranking.rankers.parts import meaning

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
        cut = _text(re.search(r'<td class="cutby"[^>]*>(.*?)</td>', row, re.S)[1])
        assert cut == ("" if cand["selected"] else f"{cand['cutBy']} {cand['cutReason']}")
        parts = _text(re.search(r'<td class="parts"[^>]*>(.*?)</td>', row, re.S)[1])
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


# --- what a person reads on each row, and the ways on from a page -------------------------------------------


def _items(html: str) -> list[str]:
    return re.findall(r'<li class="result">(.*?)</li>', html, re.S)


def test_each_row_has_its_domain_line_date_and_a_labelled_score(api: ServeProcess):
    _, _, native = api.json("GET", f"/v1/search?q={Q}")
    html = _page(api, f"/search?q={Q}")
    dated = 0
    for item, row in zip(_items(html), native["results"], strict=True):
        site = re.search(r'<p class="site">(.*?)</p>', item, re.S)[1]
        assert re.search(r'<span class="domain">([^<]+)</span>', site)[1] == row["domain"]
        stamp = re.match(r"(?:[A-Z][a-z]{2} \d{1,2}, \d{4})", row["snippet"])  # "Mar 15, 2024 · ..."
        when = re.search(r'<time datetime="([\d-]+)"', site)
        assert bool(when) == bool(stamp), (row["snippet"][:30], site)  # the recording's rows carry no dates
        if when:
            dated += 1
            assert dt.datetime.strptime(stamp[0], "%b %d, %Y").date().isoformat() == when[1]
        score = _text(re.search(r'<span class="score"[^>]*>(.*?)</span>', item, re.S)[1])
        assert score == f"score {row['score']:.3f}"
    assert dated >= 3


def test_the_query_titles_and_snippets_take_their_direction_from_their_text(api: ServeProcess):
    html = _page(api, f"/search?q={Q}")
    assert re.search(r'<input id="q"[^>]* dir="auto"', html)
    for item in _items(html):
        assert '<h2 dir="auto">' in item and '<p class="snippet" dir="auto">' in item
    explain = _page(api, f"/search?q={Q}&view=explain")
    assert explain.count('rel="noreferrer noopener" dir="auto"') == len(
        re.findall(r'<tr class="(?:kept|cut)"', explain)
    )


def test_the_filters_are_folded_away_and_say_what_is_chosen(api: ServeProcess):
    plain = _page(api, f"/search?q={Q}")
    fold = re.search(r'<details class="filters"( open)?>\s*<summary>(.*?)</summary>', plain, re.S)
    assert fold and not fold[1] and _text(fold[2]) == "Filters any time · every engine"
    chosen = _page(api, f"/search?q={Q}&time_range=week&engines=google")
    fold = re.search(r'<details class="filters">\s*<summary>(.*?)</summary>', chosen, re.S)
    assert _text(fold[1]) == "Filters past week · google"


def test_a_recording_offers_only_the_engines_it_holds_for_the_query(api: ServeProcess):
    home = re.findall(r'name="engines" value="([^"]+)"', _page(api, "/"))
    assert "wikipedia" in home  # some recorded query has it
    offered = re.findall(r'name="engines" value="([^"]+)"', _page(api, f"/search?q={Q}"))
    _, _, native = api.json("GET", f"/v1/search?q={Q}")
    assert offered == sorted(e["engine"] for e in native["engines"]) and "wikipedia" not in offered


def test_a_query_the_recording_lacks_lists_the_queries_it_holds(api: ServeProcess, recording):
    html = _page(api, "/search?q=" + quote("a query nobody recorded") + "&engines=google", 404)
    recorded = sorted(
        {" ".join(e["query"].split()) for e in json.loads(recording.read_text())}, key=str.casefold
    )
    section = re.search(r'<section class="recorded".*?</section>', html, re.S)[0]
    links = re.findall(r'<a href="([^"]+)" dir="auto">([^<]+)</a>', section)
    assert [unescape(text) for _, text in links] == recorded
    href = unescape(dict((text, link) for link, text in links)[QUERY])
    assert href == "/search?q=" + quote_plus(QUERY)  # a link that searches it, the engines reset
    assert _page(api, href).count('<li class="result">') == 8


def test_pageno_2_is_rows_9_to_16_of_the_fused_list_with_prev_and_next(api: ServeProcess):
    _, _, sixteen = api.json("GET", f"/v1/search?q={Q}&limit=16")
    first, second = _page(api, f"/search?q={Q}"), _page(api, f"/search?q={Q}&pageno=2")
    urls = [unescape(re.search(r'<a href="([^"]+)"', i)[1]) for i in _items(first) + _items(second)]
    assert urls == [r["url"] for r in sixteen["results"]]
    assert '<ol class="results" start="9">' in second
    nav = re.search(r'<nav class="pages".*?</nav>', second, re.S)[0]
    assert f'rel="prev" href="/search?q={Q.replace("%20", "+")}"' in nav and "pageno=3" in nav
    assert _text(nav) == "← Previous rows 9–16 Next →"
    assert 'rel="next" href="/search?q=top+restaurants+in+belgrad&amp;pageno=2"' in first
    assert 'rel="prev"' not in first
    assert 'Results <span class="count">8</span>' in second
    explain = _page(api, f"/search?q={Q}&pageno=2&view=explain")
    assert "16 shown" in _text(re.search(r'<p class="summary">(.*?)</p>', explain, re.S)[1])


@pytest.mark.parametrize(
    ("pageno", "message"),
    [("0", "pageno must be a whole number from 1, got '0'"), ("two", "got 'two'"), ("9", "pageno 1 to 3")],
)
def test_a_pageno_the_list_cannot_fill_is_a_one_line_400(api: ServeProcess, pageno, message):
    html = _page(api, f"/search?q={Q}&pageno={pageno}", 400)
    assert message in _text(re.search(r'<div class="error" role="alert">(.*?)</div>', html, re.S)[1])


def test_the_explain_view_has_a_legend_for_the_parts_it_shows(api: ServeProcess):
    html = _page(api, f"/search?q={Q}&view=explain")
    legend = re.search(r'<details class="legend">(.*?)</details>', html, re.S)[1]
    named = dict((_text(n), _text(m)) for n, m in re.findall(r"<dt>(.*?)</dt><dd>(.*?)</dd>", legend, re.S))
    shown = {k.split("=")[0] for k in re.findall(r"<span[^>]*>([\w:]+=[^<]+)</span>", html)}
    kinds = {re.sub(r":.*", ":ENGINE", k) for k in shown}
    assert set(named) == kinds and {"combsum", "hits"} <= kinds  # the default's parts: plain CombMNZ
    assert named["hits"] == meaning("hits") and "engines" in named["combsum"]
    assert re.search(
        rf'title="{re.escape(escape(meaning("hits"), quote=True))}">hits=', html.replace("&#39;", "&#x27;")
    )


def test_every_part_every_ranker_reports_has_a_meaning(recording):
    import serpfuse
    from serpfuse.ranking.rankers import available

    queries = [e["query"] for e in json.loads(recording.read_text())[:6]]
    for strategy in available():
        for query in queries:
            resp = serpfuse.search(query, replay=recording, strategy=strategy, explain=True, time_range=None)
            missing = {p for c in resp.candidates for p in c.score_parts if meaning(p) is None}
            assert not missing, (strategy, missing)


def test_every_page_links_the_opensearch_description(api: ServeProcess):
    for path, status in (("/", 200), (f"/search?q={Q}", 200), (f"/search?q={Q}&view=explain", 200),
                         ("/search?q=nobody+recorded", 404), (f"/search?q={Q}&engines=nosuch", 400)):  # fmt: skip
        link = re.search(r'<link rel="search" type="([^"]+)" href="([^"]+)"', _page(api, path, status))
        assert link and link.groups() == ("application/opensearchdescription+xml", "/opensearch.xml"), path
    status, headers, raw = api.get("/opensearch.xml")
    assert status == 200 and headers["content-type"] == "application/opensearchdescription+xml"
    doc = ElementTree.fromstring(raw)
    ns = {"os": "http://a9.com/-/spec/opensearch/1.1/"}
    assert doc.find("os:ShortName", ns).text == "serpfuse"
    html_url = doc.find("os:Url[@type='text/html']", ns)
    assert html_url.get("template") == f"{api.base}/search?q={{searchTerms}}"
    status, _, raw = api.get(html_url.get("template").replace("{searchTerms}", Q)[len(api.base) :])
    assert status == 200 and b'<li class="result">' in raw  # the template searches


def test_with_no_network_the_page_says_the_clis_hint(tmp_path):
    from serpfuse.service import NO_ANSWER_HINT, NOT_REACHED_HINT

    dead = f"http://127.0.0.1:{free_port()}"  # every engine request goes to a proxy nobody listens on
    env = {"HTTP_PROXY": dead, "HTTPS_PROXY": dead, "ALL_PROXY": dead, "NO_PROXY": ""}
    server = start_serpfuse(tmp_path, ["--no-cache"], env=env)
    try:
        # the first search fails on the network; once an engine is cooling down, the hint says that instead
        for view, said in (("results", {NO_ANSWER_HINT}), ("explain", {NO_ANSWER_HINT, NOT_REACHED_HINT})):
            html = _page(server, f"/search?q=rust+async+runtime&engines=ddg&engines=bing&view={view}")
            hint = _text(re.search(r'<p class="empty nothing" role="status">(.*?)</p>', html, re.S)[1])
            assert hint in {h[0].upper() + h[1:] + "." for h in said}
            assert "what cut each candidate" not in html and '<table class="candidates">' not in html
            assert 'class="warning"' not in html  # said once: the warnings would say it again
    finally:
        stop(server.proc)
