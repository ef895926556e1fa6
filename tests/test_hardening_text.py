"""Control characters from engines never reach a terminal: ESC, BEL, NUL, the C1 controls, DEL and the bidi
overrides are dropped where engine rows are built (``EngineRow``), so the table, --json, MCP and the page all
get the same clean text; and the table shows "[...]" in engine text as it is, not as rich markup."""

from __future__ import annotations

import json
import re
import subprocess
import sys

from fakeserver import Reply
from redis_server import CLI, isolated_env
from serpfuse.models import EngineRow
from serpfuse.text import url_without_controls, without_controls

HOSTILE = "\x1b[31mred\x1b[0m \x07bell \x00nul \x9b2J csi \x7fdel \u202eevil\u202c \u2066iso\u2069 \r\nlines"
# Anything a terminal acts on: C0 but tab and newline (the table's own lines), DEL, C1, bidi controls.
TERMINAL_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def test_engine_rows_keep_the_text_and_drop_the_controls():
    row = EngineRow(engine="x\x1b", rank=1, url="https://a.example/p\x1b[1m?q=\u202e1\n", title=HOSTILE)
    assert row.title == "[31mred[0m bell nul 2J csi del evil iso   lines"
    assert row.engine == "x"
    assert row.url == "https://a.example/p%1B[1m?q=%E2%80%AE1"  # still the same link, nothing raw in it
    assert without_controls("plain, ünïcode, 中文 and \u200fmarks") == "plain, ünïcode, 中文 and \u200fmarks"
    assert url_without_controls("https://a.example/ok") == "https://a.example/ok"


def _searxng_with(title: str, server) -> None:
    rows = [
        {"url": f"https://site{i}.example/page", "title": f"rust async {title} {i}", "content": f"snippet {title}",
         "engine": f"eng{i}\x1b]8;;https://evil.example\x07", "engines": ["x"], "positions": [1]}
        for i in range(3)
    ]  # fmt: skip
    body = json.dumps({"query": "rust async", "results": rows}).encode()
    server.route("/search", Reply(200, {"Content-Type": "application/json"}, body))


def _search(server, tmp_path, *args: str) -> str:
    env = isolated_env(tmp_path, {"SERPFUSE_SEARXNG_URL": server.url})
    cmd = [sys.executable, "-c", CLI, "search", "rust async", "-e", "searxng", "--no-cache", *args]
    done = subprocess.run(cmd, capture_output=True, env=env, cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert b"Traceback" not in done.stderr
    return done.stdout.decode("utf-8")


def test_the_table_and_json_hold_no_control_character(server, tmp_path):
    _searxng_with(HOSTILE + " [link=https://evil.example]click[/link]", server)
    table = _search(server, tmp_path)
    assert "rust async" in table and "evil" in table
    assert TERMINAL_CONTROLS.findall(table) == []
    assert "[link=https://evil.example]click[/link]" in table.replace("\n", "").replace("│", "").replace(
        " ", ""
    )
    answer = json.loads(_search(server, tmp_path, "--json"))
    texts = [r["title"] + r["snippet"] + "".join(r["engines"]) for r in answer["results"]]
    assert len(texts) == 3 and all(TERMINAL_CONTROLS.findall(t) == [] for t in texts)
