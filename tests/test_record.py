"""`serpfuse record` against the fake server: the replay format, raw bodies, masking, and the round trip."""

from __future__ import annotations

import json
import os

import pytest
import typer
from typer.testing import CliRunner

from conftest import need
from fakeserver import Reply, echo_headers, fake_engine, ok
from serpfuse.api import asearch
from serpfuse.cli import engines as engines_cli
from serpfuse.cli import record as record_cli
from serpfuse.cli.record import query_slug, read_queries, record_queries
from serpfuse.config import RankingConfig
from serpfuse.engines import get_engine
from serpfuse.secrets import KeyStore
from serpfuse.sources.live import LiveSource
from serpfuse.sources.replay import FORMAT, ReplaySource, load_recording
from serpfuse.sources.transport import Transport
from serpfuse.state.cooldown import InMemoryCooldownStore

SECRET = "sk-record-SECRET-0a1b2c3d"


def live(server, tmp_path, engines, env=None) -> LiveSource:
    keys = KeyStore(
        env=env or {}, keys_file=tmp_path / "keys.json", infos={e.INFO.name: e.INFO for e in engines}
    )
    return LiveSource(
        keys,
        InMemoryCooldownStore(),
        Transport(trust_env=False),
        engines=engines,
        base_urls={e.INFO.name: server.url for e in engines},
        timeout_s=5,
        owns_transport=True,
    )


def test_query_files_text_and_json(tmp_path):
    text = tmp_path / "q.txt"
    text.write_text("# bench\nrust async runtime\n\n  postgres   logical replication \nrust async runtime\n")
    assert read_queries(text) == ["rust async runtime", "postgres logical replication"]
    as_json = tmp_path / "q.json"
    as_json.write_text(
        json.dumps({"queries": [{"query": "a b", "expected": ["x.org"]}, {"query": "东数西算"}]})
    )
    assert read_queries(as_json) == ["a b", "东数西算"]
    as_json.write_text(json.dumps(["one", "two"]))
    assert read_queries(as_json) == ["one", "two"]
    as_json.write_text("[1, 2]")
    with pytest.raises(ValueError):
        read_queries(as_json)
    text.write_text("# nothing\n")
    with pytest.raises(ValueError):
        read_queries(text)


def test_slugs_are_ordered_and_safe():
    assert query_slug(3, "Rust async: runtime?") == "003-rust-async-runtime"
    cjk = query_slug(4, "东数西算 八个国家枢纽节点")
    assert cjk.startswith("004-") and len(cjk) == 14 and cjk.isascii()


async def test_recording_holds_rows_statuses_raw_bodies_and_replays(server, tmp_path):
    server.route("/good", ok(["https://a.example/1", "https://b.example/2"]))
    server.route("/bad", Reply(503, {"Content-Type": "text/html"}, b"<html>down</html>"))
    engines = [fake_engine("good"), fake_engine("bad", path="/bad"), fake_engine("fb", tier="fallback")]
    server.route("/fb", ok(["https://c.example/3"]))
    out = tmp_path / "rec"
    source = live(server, tmp_path, engines)
    lines: list[str] = []
    try:
        summary = await record_queries(source, ["rust async runtime"], out, echo=lines.append)
    finally:
        await source.aclose()

    index = json.loads((out / "index.json").read_text())
    assert index["format"] == FORMAT
    assert index["queries"] == [{"query": "rust async runtime", "file": "001-rust-async-runtime.json"}]
    entry = json.loads((out / "001-rust-async-runtime.json").read_text())
    good, bad, fb = (entry["engines"][n] for n in ("good", "bad", "fb"))
    assert good["status"] == "ok" and [r["url"] for r in good["rows"]] == [
        "https://a.example/1",
        "https://b.example/2",
    ]
    assert good["rows"][0]["rank"] == 1 and good["latency_ms"] > 0
    assert fb["status"] == "ok" and fb["tier"] == "fallback"  # recording ignores tiers: every engine is asked
    assert bad["status"] == "error" and bad["reason"] == "HTTP 503" and bad["http_status"] == 503
    assert json.loads((out / good["raw_file"]).read_text())["results"][0]["url"] == "https://a.example/1"
    assert good["raw_file"] == "raw/001-rust-async-runtime/good.json"
    assert (out / bad["raw_file"]).read_bytes() == b"<html>down</html>"
    assert summary.queries == 1 and summary.answered == 2
    assert lines and lines[0].startswith("[1/1] rust async runtime: good ok (2 rows)")

    # The lead's replay source reads it back, and a search over it gives the recorded rows.
    recording = load_recording(out)
    assert set(recording["rust async runtime"].engines) == {"good", "bad", "fb"}
    # the fake rows do not mention the query: the non-junk fallback (opt-in) shows them instead of nothing
    shown = RankingConfig(filters={"fallback_when_empty": True}, experimental=True)
    response = await asearch("rust async runtime", source=ReplaySource(out), deadline_s=5, config=shown)
    assert {r.url for r in response.results} >= {"https://a.example/1", "https://b.example/2"}
    assert {e.engine: e.status for e in response.engines}["bad"] == "error"


async def test_every_variant_is_recorded_so_replay_can_answer_the_retry(server, tmp_path):
    server.route("/good", lambda seen: ok([f"https://a.example/{seen.query['q'][0].replace(' ', '-')}"]))
    out = tmp_path / "rec"
    source = live(server, tmp_path, [fake_engine("good")])
    try:
        await record_queries(source, ["how to fix a flaky pytest"], out)
    finally:
        await source.aclose()
    entry = json.loads((out / "001-how-to-fix-a-flaky-pytest.json").read_text())
    assert list(entry["variants"]) == ["how to fix a flaky pytest", "fix flaky pytest"]
    core = entry["variants"]["fix flaky pytest"]["good"]
    assert core["rows"][0]["url"] == "https://a.example/fix-flaky-pytest"
    assert core["raw_file"] == "raw/001-how-to-fix-a-flaky-pytest/good.v1.json"
    replay = ReplaySource(out)
    from serpfuse.models import SearchRequest

    answer = await replay.ask("good", "fix flaky pytest", SearchRequest(query="how to fix a flaky pytest"))
    assert answer.status == "ok" and answer.rows[0].variant == "fix flaky pytest"


async def test_keys_are_masked_in_rows_reasons_and_raw_files(server, tmp_path):
    server.route("/echo", lambda seen: ok([f"https://a.example/?token={seen.headers['x-api-key']}"]))
    server.route("/err", echo_headers(500))
    kw = {"needs_key": True, "key_envs": ("FAKE_API_KEY",)}
    engines = [fake_engine("echo", **kw), fake_engine("err", path="/err", **kw)]
    out = tmp_path / "rec"
    source = live(server, tmp_path, engines, env={"FAKE_API_KEY": SECRET})
    try:
        await record_queries(source, ["rust async runtime"], out, core_variant=False)
    finally:
        await source.aclose()
    assert all(s.headers["x-api-key"] == SECRET for s in server.requests)
    written = [p for p in out.rglob("*") if p.is_file()]
    assert len(written) == 4  # index, query file, two raw bodies
    for path in written:
        assert SECRET.encode() not in path.read_bytes(), f"key leaked into {path}"
    assert b"***" in (out / "raw/001-rust-async-runtime/err.json").read_bytes()


async def test_error_bodies_of_body_blind_engines_are_not_saved(server, tmp_path):
    # The real AnySearch module (its INFO says never read an error body), posting to its base URL.
    server.route(
        "/v1/search", Reply(402, {"Content-Type": "application/json"}, b'{"password": "pw-generated"}')
    )
    out = tmp_path / "rec"
    source = live(server, tmp_path, [get_engine("anysearch")])
    try:
        await record_queries(source, ["rust async runtime"], out, core_variant=False)
    finally:
        await source.aclose()
    assert not any(b"pw-generated" in p.read_bytes() for p in out.rglob("*") if p.is_file())


# --- the commands, as a user runs them ----------------------------------------------------------------------


def cli_app() -> typer.Typer:
    app = typer.Typer()

    @app.callback()
    def _root() -> None: ...

    record_cli.register(app)
    engines_cli.register(app)
    return app


def isolated_env(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("SERPFUSE_KEYS_FILE", str(tmp_path / "no-keys.json"))
    monkeypatch.setenv("SERPFUSE_CONFIG", "")
    monkeypatch.delenv("SERPFUSE_REDIS_URL", raising=False)
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)


def test_record_command_with_brave_against_a_real_capture(server, tmp_path, monkeypatch, data_dir):
    capture = need(data_dir / "api-json" / "brave.json").read_bytes()
    server.route("/brave/res/v1/web/search", Reply(200, {"Content-Type": "application/json"}, capture))
    isolated_env(monkeypatch, tmp_path)
    monkeypatch.setenv("BRAVE_API_KEY", SECRET)
    (tmp_path / "q.txt").write_text("python\n")
    result = CliRunner().invoke(
        cli_app(),
        ["record", "-q", "q.txt", "-o", "rec", "-e", "brave", "--base-url", f"brave={server.url}/brave"],
    )
    assert result.exit_code == 0, result.output
    assert "brave ok (" in result.output and SECRET not in result.output
    entry = json.loads((tmp_path / "rec" / "001-python.json").read_text())
    rows = entry["engines"]["brave"]["rows"]
    assert len(rows) >= 5 and rows[0]["url"].startswith("https://")
    assert server.seen("/brave/res/v1/web/search")[0].headers["x-subscription-token"] == SECRET
    assert SECRET not in json.dumps(entry)


def test_record_command_fails_clearly(server, tmp_path, monkeypatch):
    isolated_env(monkeypatch, tmp_path)
    server.route("/down/search", Reply(reset=True))
    (tmp_path / "q.txt").write_text("python\n")
    runner = CliRunner()
    result = runner.invoke(cli_app(), ["record", "-q", "missing.txt", "-o", "rec"])
    assert result.exit_code == 2 and "cannot read queries file" in result.output
    result = runner.invoke(cli_app(), ["record", "-q", "q.txt", "-o", "rec", "-e", "nosuch"])
    assert result.exit_code == 2 and "unknown engine 'nosuch'" in result.output
    result = runner.invoke(
        cli_app(),
        ["record", "-q", "q.txt", "-o", "rec", "-e", "mojeek", "--base-url", f"mojeek={server.url}/down"],
    )
    assert result.exit_code == 1 and "no engine answered" in result.output
    assert (tmp_path / "rec" / "index.json").exists()  # the failures are recorded all the same


def test_engines_command_lists_every_engine_with_key_status(tmp_path, monkeypatch):
    from serpfuse.engines import ENGINES

    isolated_env(monkeypatch, tmp_path)
    monkeypatch.setenv("BRAVE_API_KEY", SECRET)
    monkeypatch.delenv("TAVILY_API_KEY", raising=False)
    monkeypatch.delenv("SERPFUSE_TAVILY_API_KEY", raising=False)
    result = CliRunner().invoke(cli_app(), ["engines", "--json"])
    assert result.exit_code == 0, result.output
    rows = {r["engine"]: r for r in json.loads(result.output)}
    assert set(rows) == set(ENGINES)
    assert rows["brave"]["key"] == "configured" and rows["brave"]["status"] == "ready"
    assert (
        rows["tavily"]["key"] == "missing" and rows["tavily"]["reason"] == "no API key (set TAVILY_API_KEY)"
    )
    assert rows["ddg"]["key"] == "not needed" and rows["ddg"]["group"] == "bing"
    # the weight the active strategy reads: the default's (combmnz) is the learned one, 1 unless set
    assert rows["bing"]["weightOf"] == "combmnz" and rows["bing"]["weight"] == 1.0
    consensus = CliRunner().invoke(cli_app(), ["engines", "--json"], env={"SERPFUSE_STRATEGY": "consensus"})
    assert {r["engine"]: r for r in json.loads(consensus.output)}["bing"]["weight"] == pytest.approx(
        0.9572, abs=1e-4
    )
    agree = CliRunner().invoke(cli_app(), ["engines", "--json"], env={"SERPFUSE_STRATEGY": "borda"})
    assert all(r["weight"] is None for r in json.loads(agree.output))
    assert SECRET not in result.output
    table = CliRunner().invoke(cli_app(), ["engines"], env={"COLUMNS": "160"})
    assert table.exit_code == 0 and "brave" in table.output and "no API key" in table.output


def test_engines_command_refuses_an_open_keys_file(tmp_path, monkeypatch):
    isolated_env(monkeypatch, tmp_path)
    keys = tmp_path / "open.json"
    keys.write_text(json.dumps({"brave": SECRET}))
    keys.chmod(0o644)
    monkeypatch.setenv("SERPFUSE_KEYS_FILE", str(keys))
    result = CliRunner().invoke(cli_app(), ["engines"])
    assert result.exit_code == 2 and "chmod 600" in result.output and SECRET not in result.output


async def test_a_recording_is_private_files_0600_in_folders_0700(server, tmp_path):
    """A recording holds engines' raw pages for the user's queries: every file is 0600 and every folder record
    creates 0700 (they were 0644 in a 0755 folder), whatever the umask."""
    server.route("/good", ok(["https://a.example/1"]))
    out = tmp_path / "deeper" / "rec"
    source = live(server, tmp_path, [fake_engine("good")])
    old = os.umask(0o022)
    try:
        await record_queries(source, ["rust async runtime"], out)
    finally:
        os.umask(old)
        await source.aclose()
    files = [p for p in out.rglob("*") if p.is_file()]
    folders = [tmp_path / "deeper", out, *(p for p in out.rglob("*") if p.is_dir())]
    assert any(p.parent.name != "rec" for p in files)  # the raw bodies, in their own folders
    assert {oct(p.stat().st_mode & 0o777) for p in files} == {"0o600"}
    assert {oct(p.stat().st_mode & 0o777) for p in folders} == {"0o700"}


def test_every_file_serpfuse_writes_is_0600_in_0700_folders(tmp_path):
    """Bench runs and qrels, calibrate's weights file and the derived tables are written the one way
    (``files.write_private``): 0600 from the first byte, the folders made for them 0700."""
    from serpfuse.bench.trec import write_qrels, write_run
    from serpfuse.data.derived import write_whole

    old = os.umask(0o022)
    try:
        write_run(tmp_path / "runs" / "a.run", {"q1": [("d1", 1.0)]}, "tag")
        write_qrels(tmp_path / "runs" / "a.qrels", {"q1": {"d1": 1}})
        write_whole(tmp_path / "cache" / "derived" / "t.bin", b"table")
    finally:
        os.umask(old)
    for path in (
        tmp_path / "runs" / "a.run",
        tmp_path / "runs" / "a.qrels",
        tmp_path / "cache" / "derived" / "t.bin",
    ):
        assert path.stat().st_mode & 0o777 == 0o600, path
    for folder in (tmp_path / "runs", tmp_path / "cache", tmp_path / "cache" / "derived"):
        assert folder.stat().st_mode & 0o777 == 0o700, folder


def test_the_cache_and_state_files_are_0600_in_0700_folders(tmp_path):
    """The SQLite files (the results cache, the shared state) and every folder made for them."""
    from serpfuse.state.sqlite_store import state_file

    old = os.umask(0o022)
    try:
        shared = state_file(tmp_path / "a" / "b")
        shared.connect(1.0)
        shared.close()
    finally:
        os.umask(old)
    files = [p for p in (tmp_path / "a").rglob("*") if p.is_file()]
    assert files and {oct(p.stat().st_mode & 0o777) for p in files} == {"0o600"}
    assert {oct(p.stat().st_mode & 0o777) for p in (tmp_path / "a", tmp_path / "a" / "b")} == {"0o700"}
