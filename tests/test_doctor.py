"""`serpfuse doctor`: the verdicts, and the whole command against loopback servers that play each failure.

The real engine modules (ddg, bing, brave-web, startpage) are pointed at a fake server with ``--base-url``, so
their own request builders and parsers run: a 202 challenge, an empty results page, rows about another
subject and a page in an unknown layout must each come out with the right status, and exit 1.
"""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import parse_qs

import pytest
from typer.testing import CliRunner

from fakeserver import Reply, Seen, challenge_page
from serpfuse.engines import ENGINES
from serpfuse.models import EngineAnswer, EngineRow
from serpfuse.sources.doctor import (
    DoctorQuery,
    EngineCheck,
    QueryCheck,
    add_overlap,
    judge,
    on_topic_share,
    shipped_queries,
)
from test_record import isolated_env

FIXTURES = Path(__file__).parent / "fixtures" / "engines"
HTML = {"Content-Type": "text/html; charset=utf-8"}
QUERIES = ("rust async runtime", "mount everest height")


def row(url: str, title: str = "t", snippet: str = "s", engine: str = "e") -> EngineRow:
    return EngineRow(engine=engine, rank=1, url=url, title=title, snippet=snippet)


# --- the query set and the verdicts ---------------------------------------------------------------------------


def test_shipped_query_set_has_several_languages_and_kinds() -> None:
    queries = shipped_queries()
    assert len(queries) >= 6
    assert len({q.language for q in queries}) >= 4 and len({q.kind for q in queries}) >= 4
    assert any(q.language in ("zh", "ja") for q in queries)  # a CJK query, judged by its bigrams


def test_on_topic_share_counts_rows_with_the_querys_key_terms() -> None:
    rows = [
        row("https://a.example/", "Tokio, an async runtime for Rust", "fast"),
        row("https://b.example/", "Rust (video game)", "survival game"),  # "rust" only: not enough
        row("https://c.example/", "Async runtimes", "compared in Rust"),
        row("https://d.example/", "Rust language", "systems programming"),
    ]
    assert on_topic_share("rust async runtime", rows) == pytest.approx(0.5)
    # "how" and "best" ask for nothing; "python" and "reverse" do
    assert (
        on_topic_share(
            "how to reverse a list in python", [row("https://x.example/", "Reverse a Python list")]
        )
        == 1
    )
    cjk = [row("https://z.example/", "量子计算的基本原理", ""), row("https://y.example/", "天气预报", "")]
    assert on_topic_share("量子计算 原理", cjk) == pytest.approx(0.5)
    assert on_topic_share("rust", []) is None


def answer(status: str, rows: list[EngineRow] | None = None, reason: str | None = None) -> EngineAnswer:
    return EngineAnswer(engine="e", status=status, rows=rows or [], reason=reason, latency_ms=12.0)


def test_verdicts() -> None:
    on_topic = [row("https://a.example/", "Rust async runtime", "Tokio")] * 3
    off_topic = [row("https://a.example/", "Chocolate cake", "a recipe")] * 3
    untitled = [row("https://a.example/", "", "Rust async runtime")] * 3
    q = "rust async runtime"
    assert judge(answer("ok", on_topic), q, 200).verdict == "ok"
    assert judge(answer("ok", off_topic), q, 200).verdict == "off-topic"
    assert judge(answer("ok", untitled), q, 200).verdict == "wrong layout"
    assert judge(answer("empty"), q, 200).verdict == "empty"
    assert judge(answer("challenge", reason="DuckDuckGo bot challenge"), q, 202).verdict == "challenge"
    refused = judge(answer("error", reason="response could not be parsed"), q, 200)
    assert refused.verdict == "wrong layout" and "200 page" in refused.reason
    assert judge(answer("error", reason="HTTP 500"), q, 500).verdict == "error"
    assert judge(answer("error", reason="connection failed"), q, None).verdict == "error"
    assert judge(answer("skipped", reason="no API key"), q, None).verdict == "skipped"


def test_overlap_is_the_share_of_rows_another_engine_also_returned() -> None:
    answers = {
        "a": answer(
            "ok", [row("https://x.example/1"), row("https://www.x.example/2"), row("https://y.example/")]
        ),
        "b": answer("ok", [row("https://x.example/2"), row("https://z.example/")]),
        "c": answer("empty"),
    }
    checks = {n: judge(a, "q", 200) for n, a in answers.items()}
    add_overlap(checks, answers)
    assert checks["a"].overlap == pytest.approx(1 / 3)  # www. and the scheme do not hide a shared row
    assert checks["b"].overlap == pytest.approx(1 / 2)
    assert checks["c"].overlap is None


def test_engine_status_aggregation() -> None:
    def report(*verdicts: str, primary: bool = True) -> EngineCheck:
        r = EngineCheck("e", "primary", "e", primary)
        r.checks = [QueryCheck(f"q{i}", v, v) for i, v in enumerate(verdicts)]
        return r

    assert report("ok", "ok", "empty").status == "ok"
    assert report("ok", "empty", "empty").status == "empty"
    assert report("ok", "ok", "challenge", "skipped").status == "challenge"  # one suspends the engine
    assert report("skipped", "skipped").status == "skipped" and not report("skipped").broken
    assert report("off-topic", "off-topic", "ok").broken
    assert not report("empty", "empty", primary=False).broken  # a fallback never fails the check


def test_independent_indexes_count_groups_not_engines() -> None:
    from serpfuse.config import engine_table
    from serpfuse.sources.doctor import DoctorReport

    groups = engine_table()["groups"]

    def report(name: str, *verdicts: str) -> EngineCheck:
        info = ENGINES[name].INFO
        r = EngineCheck(name, info.tier, groups.get(name, name), info.tier == "primary", info.region)
        r.checks = [QueryCheck(q, v, v) for q, v in zip(("q1", "q2"), verdicts, strict=True)]
        return r

    engines = [
        report("bing", "ok", "ok"),
        report("ddg", "ok", "empty"),  # Microsoft's index again: one index, however many engines
        report("yahoo", "ok", "ok"),
        report("google", "ok", "challenge"),
        report("brave-web", "challenge", "skipped"),  # did not answer: not counted
        report("yep", "empty", "empty"),
        report("mwmbl", "ok", "ok"),
        report("wikipedia", "ok", "ok"),  # an encyclopedia's search, not a web index
        report("ddg-news", "ok", "ok"),  # news, not the web
        report("bing-cn", "ok", "decoy"),  # Microsoft's again; its second list was about another question
    ]
    doctor = DoctorReport(engines=engines, queries=[DoctorQuery("q1"), DoctorQuery("q2")], checked_at="now")
    assert doctor.indexes_answered == ["bing", "mwmbl"]  # google's status is its challenge
    assert doctor.indexes_for("q1") == ["bing", "google", "mwmbl"] and doctor.indexes_for("q2") == [
        "bing",
        "mwmbl",
    ]
    out = doctor.to_json()
    indexes = out["independentIndexes"]
    assert (indexes["answered"], indexes["groups"]) == (2, ["bing", "mwmbl"])
    # per tier: yahoo, the fallback, reads Microsoft's index; the primaries add Mwmbl's
    assert indexes["byTier"] == {
        "primary": {"answered": 2, "groups": ["bing", "mwmbl"]},
        "fallback": {"answered": 1, "groups": ["bing"]},
    }
    # per region: bing-cn alone answers CJK sources; wikipedia (both) holds no index of its own
    assert indexes["byRegion"] == {
        "both": {"answered": 0, "groups": []},
        "cjk": {"answered": 1, "groups": ["bing"]},
        "global": {"answered": 2, "groups": ["bing", "mwmbl"]},
    }
    assert [q["independentIndexes"] for q in out["queries"]] == [3, 2]
    # the decoy is named, with the query it answered so, though its overall status is ok
    assert out["decoys"] == [
        {"engine": "bing-cn", "group": "bing", "queries": ["q2"], "queriesAsked": 2, "reason": None}
    ]
    assert [q["decoys"] for q in out["queries"]] == [[], ["bing-cn"]]


# --- the command against loopback engines ---------------------------------------------------------------------


def asked(seen: Seen) -> str:
    form = parse_qs(seen.body.decode()) if seen.body else {}
    for name in ("q", "query"):
        values = seen.query.get(name) or form.get(name)
        if values:
            return values[0]
    raise AssertionError(f"no query in {seen.path}")


def _slug(text: str) -> str:
    return "-".join(text.split())


def brave_page(seen: Seen) -> Reply:
    q = asked(seen)
    items = "".join(
        f'<div class="snippet" data-type="web"><div class="result-content">'
        f'<a class="l1" href="https://site{i}.example/{_slug(q)}"><div class="title search-snippet-title">'
        f'{q} - page {i}</div></a><div class="generic-snippet"><div class="content">All about {q}.</div></div>'
        f"</div></div>"
        for i in range(1, 6)
    )
    return Reply(200, HTML, f'<html><body><div id="results">{items}</div></body></html>'.encode())


def ddg_page(seen: Seen) -> Reply:
    q = asked(seen)
    items = "".join(
        f'<div class="result results_links web-result"><h2 class="result__title">'
        f'<a class="result__a" href="https://site{i}.example/{_slug(q)}">{q} guide {i}</a></h2>'
        f'<a class="result__snippet">Everything on {q}.</a></div>'
        for i in range(1, 6)
    )
    return Reply(200, HTML, f'<html><body><div id="links">{items}</div></body></html>'.encode())


def startpage_results(title_of) -> callable:
    def handler(seen: Seen) -> Reply:
        q = asked(seen)
        results = [
            {
                "clickUrl": f"https://site{i}.example/{_slug(title_of(q, i))}",
                "title": title_of(q, i),
                "description": f"On {title_of(q, i)}.",
            }
            for i in range(1, 6)
        ]
        data = {
            "render": {
                "presenter": {"regions": {"mainline": [{"display_type": "web-google", "results": results}]}}
            }
        }
        body = f"<script>React.createElement(UIStartpage.AppSerpWeb, {json.dumps(data)})</script>"
        return Reply(200, HTML, body.encode())

    return handler


def run_doctor(server, tmp_path, monkeypatch, engines: dict[str, str]) -> tuple[int, dict]:
    isolated_env(monkeypatch, tmp_path)
    (tmp_path / "queries.txt").write_text("\n".join(QUERIES) + "\n")
    args = ["doctor", "--json", "-q", "queries.txt", "--timeout", "5"]
    for name, path in engines.items():
        args += ["-e", name, "--base-url", f"{name}={server.url}{path}"]
    from serpfuse.cli import app

    result = CliRunner().invoke(app, args)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, json.loads(result.stdout)


def test_doctor_passes_when_every_engine_answers_on_topic(server, tmp_path, monkeypatch):
    server.route("/ddg/html/", ddg_page)
    server.route("/brave/search", brave_page)
    server.route("/sp/", Reply(200, HTML, (FIXTURES / "startpage_home_handmade.html").read_bytes()))
    server.route("/sp/sp/search", startpage_results(lambda q, i: q))
    code, report = run_doctor(
        server, tmp_path, monkeypatch, {"ddg": "/ddg", "brave-web": "/brave", "startpage": "/sp"}
    )
    engines = {e["engine"]: e for e in report["engines"]}
    assert code == 0, report
    assert report["ok"] is True and report["brokenPrimaries"] == []
    for name in ("ddg", "brave-web", "startpage"):
        e = engines[name]
        assert (e["status"], e["queriesAsked"], e["queriesOk"]) == ("ok", 2, 2), e
        assert e["rows"] == 5 and e["withTitle"] == e["withUrl"] == e["withSnippet"] == 1.0
        assert e["onTopic"] == 1.0 and e["overlap"] == 1.0  # all three return the same five URLs
        assert e["latencyMs"] is not None and e["defaultPrimary"] is True
    # the home page's token, then one form per query: the token serves both
    assert len(server.seen("/sp/")) == 1 and len(server.seen("/sp/sp/search")) == 2
    # three engines, three indexes: DuckDuckGo's Microsoft, Brave's own, Startpage's Google
    indexes = report["independentIndexes"]
    assert (indexes["answered"], indexes["groups"]) == (3, ["bing", "brave", "google"])
    assert indexes["byTier"] == {"primary": {"answered": 3, "groups": ["bing", "brave", "google"]}}
    assert indexes["byRegion"] == {"global": {"answered": 3, "groups": ["bing", "brave", "google"]}}
    assert [q["independentIndexes"] for q in report["queries"]] == [3, 3]
    assert report["decoys"] == []


def test_doctor_reports_each_played_failure_and_exits_1(server, tmp_path, monkeypatch):
    server.route("/ddg/html/", challenge_page())  # DuckDuckGo's 202 bot challenge
    server.route("/bing/", Reply(200, HTML, b"<html><body>Bing</body></html>"))  # its home page, for cookies
    server.route(
        "/bing/search", Reply(200, HTML, b'<html><body><ol id="b_results"></ol></body></html>')
    )  # empty
    server.route(
        "/brave/search", Reply(200, HTML, b'<html><body><div class="v3-app">new</div></body></html>')
    )  # layout
    server.route("/sp/", Reply(200, HTML, (FIXTURES / "startpage_home_handmade.html").read_bytes()))
    # Off the query altogether: the live source's decoy check says so before the doctor reads the rows.
    server.route("/sp/sp/search", startpage_results(lambda q, i: f"Chocolate cake recipe {i}"))
    server.route(
        "/mojeek/search", Reply(200, HTML, b'<html><body><ul class="results-standard"></ul></body></html>')
    )
    server.route("/yahoo/search", Reply(500, HTML, b"boom"))
    code, report = run_doctor(
        server,
        tmp_path,
        monkeypatch,
        {
            "ddg": "/ddg",
            "bing": "/bing",
            "brave-web": "/brave",
            "startpage": "/sp",
            "mojeek": "/mojeek",
            "yahoo": "/yahoo",
        },
    )
    engines = {e["engine"]: e for e in report["engines"]}
    assert code == 1
    assert {n: e["status"] for n, e in engines.items()} == {
        "ddg": "challenge",
        "bing": "empty",
        "brave-web": "wrong layout",
        "startpage": "decoy",
        "mojeek": "empty",
        "yahoo": "error",
    }
    assert "202" in engines["ddg"]["reason"] or "challenge" in engines["ddg"]["reason"].lower()
    # the challenge suspended ddg: its second query was not sent
    assert [q["status"] for q in engines["ddg"]["queries"]] == ["challenge", "skipped"]
    assert len(server.seen("/ddg/html/")) == 1
    assert "parser refused a 200 page" in engines["brave-web"]["reason"]
    assert "decoy list: 0 of 5 rows" in engines["startpage"]["reason"] and engines["startpage"]["rows"] == 0
    (decoy,) = report["decoys"]  # named where a reader of the report looks first
    assert (decoy["engine"], decoy["group"], decoy["queries"]) == ("startpage", "google", list(QUERIES))
    assert decoy["reason"].startswith("decoy list: 0 of 5 rows")
    assert all(q["decoys"] == ["startpage"] for q in report["queries"])
    assert report["independentIndexes"]["byTier"]["primary"]["answered"] == 0
    # a plain HTTP error suspends nothing here: every query was asked
    assert len(server.seen("/yahoo/search")) == 2 and engines["yahoo"]["queriesAsked"] == 2
    assert "HTTP 500" in engines["yahoo"]["reason"]
    # yahoo is a fallback: reported, but it does not fail the check; mojeek is a primary
    assert engines["yahoo"]["defaultPrimary"] is False and engines["mojeek"]["defaultPrimary"] is True
    assert report["ok"] is False and sorted(report["brokenPrimaries"]) == [
        "bing",
        "brave-web",
        "ddg",
        "mojeek",
        "startpage",
    ]


def test_doctor_table_and_bad_input(server, tmp_path, monkeypatch):
    isolated_env(monkeypatch, tmp_path)
    server.route("/brave/search", brave_page)
    (tmp_path / "queries.txt").write_text("rust async runtime\n")
    from serpfuse.cli import app

    runner = CliRunner()
    result = runner.invoke(
        app,
        ["doctor", "-q", "queries.txt", "-e", "brave-web", "--base-url", f"brave-web={server.url}/brave"],
        env={"COLUMNS": "200"},
    )
    assert result.exit_code == 0, result.output
    assert "brave-web*" in result.output and "every default primary answered" in result.output
    assert "independent indexes answered: 1 (brave)" in result.output
    assert "by tier: primary 1 (brave)" in result.output and "by region: global 1 (brave)" in result.output
    assert "decoy:" not in result.output
    assert runner.invoke(app, ["doctor", "-e", "nosuch"]).exit_code == 2
    assert runner.invoke(app, ["doctor", "-q", "missing.txt"]).exit_code == 2
    assert runner.invoke(app, ["doctor", "--timeout", "0"]).exit_code == 2


def test_doctor_query_type_is_usable_from_python() -> None:
    assert DoctorQuery("q").language is None


async def test_a_news_engine_is_checked_but_cannot_fail_the_check(server, transport, tmp_path) -> None:
    from serpfuse.secrets import KeyStore
    from serpfuse.sources.doctor import check_engines, cooldowns
    from serpfuse.sources.live import LiveSource

    server.route(
        "/bingn/news/search",
        Reply(200, {"Content-Type": "application/rss+xml"}, b"<rss><channel></channel></rss>"),
    )
    source = LiveSource(
        KeyStore(env={}, keys_file=tmp_path / "keys.json"),
        cooldowns(),
        transport,
        engines=["bing-news"],
        base_urls={"bing-news": server.url + "/bingn"},
    )
    report = await check_engines(source, [DoctorQuery("mount everest height")])
    (news,) = report.engines
    assert (news.status, news.default_primary, news.broken, report.ok) == ("empty", False, False, True)
    assert report.indexes_answered == []  # news is no web index


async def test_with_no_network_the_check_stops_after_the_first_query(server, transport, tmp_path) -> None:
    """Every engine failing before any HTTP answer means this machine is offline: the other queries would only
    repeat that, a timeout each. An engine that answers, even with an error, keeps the check going."""
    import socket

    from serpfuse.secrets import KeyStore
    from serpfuse.sources.doctor import check_engines, cooldowns
    from serpfuse.sources.live import LiveSource

    with socket.socket() as probe:  # a port nothing listens on: the connection is refused
        probe.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{probe.getsockname()[1]}"
    queries = [DoctorQuery("mount everest height"), DoctorQuery("rust async runtime")]

    def source(base_urls):
        return LiveSource(
            KeyStore(env={}, keys_file=tmp_path / "keys.json"),
            cooldowns(),
            transport,
            engines=list(base_urls),
            base_urls=base_urls,
        )

    offline = await check_engines(source({"mwmbl": dead, "wikipedia": dead}), queries)
    assert offline.offline and [q.query for q in offline.queries] == ["mount everest height"]
    assert offline.to_json()["offline"] is True and not offline.ok
    assert all(len(e.checks) == 1 for e in offline.engines)

    server.route("/api/v1/search/", Reply(500, {"Content-Type": "text/plain"}, b"down"))
    answering = await check_engines(source({"mwmbl": server.url, "wikipedia": dead}), queries)
    assert not answering.offline and all(len(e.checks) == 2 for e in answering.engines)
