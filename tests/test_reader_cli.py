"""`serpfuse read` as a real process against a loopback server, loopback allowed by the setting tests use."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from fakeserver import Reply
from test_reader_extract import minimal_pdf
from test_reader_fetch import ARTICLE, HTML

BIN = Path(sys.executable).parent / "serpfuse"


def _env(tmp_path, port: int | None = None, loopback: bool = True) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SERPFUSE_") and "proxy" not in k.lower()}
    env.update(
        HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path / "config"), SERPFUSE_CACHE_DIR=str(tmp_path / "c")
    )
    if loopback:
        env["SERPFUSE_READ_ALLOW_LOOPBACK"] = "1"
    if port:
        env["SERPFUSE_READ_PORTS"] = f"80,443,{port}"
    return env


def _read(tmp_path, *args, port=None, loopback=True):
    return subprocess.run(
        [str(BIN), "read", *args], capture_output=True, text=True, timeout=120, env=_env(tmp_path, port, loopback),
        cwd=tmp_path,
    )  # fmt: skip


def _dead_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def page_server(server):
    server.route(
        "/robots.txt", Reply(200, {"Content-Type": "text/plain"}, b"User-agent: *\nDisallow: /secret\n")
    )
    server.route("/story", Reply(200, HTML, ARTICLE))
    server.route(
        "/paper.pdf", Reply(200, {"Content-Type": "application/pdf"}, minimal_pdf("A harbour report in PDF"))
    )
    server.route(
        "/notes.txt", Reply(200, {"Content-Type": "text/plain; charset=utf-8"}, "plain notes ✓".encode())
    )
    server.route("/photo", Reply(200, {"Content-Type": "image/jpeg"}, b"\xff\xd8" + bytes(100)))
    server.route("/empty", Reply(200, HTML, b"<html><body><script>x()</script></body></html>"))
    server.route("/secret", Reply(200, HTML, ARTICLE))
    return server


def test_read_prints_markdown_text_html_and_json(tmp_path, page_server):
    url = f"{page_server.url}/story"
    proc = _read(tmp_path, url, port=page_server.port)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("# Harbour news") and "berths, tides" in proc.stdout
    text = _read(tmp_path, url, "--format", "text", "--no-cache", port=page_server.port)
    assert text.returncode == 0 and "# " not in text.stdout and "berths, tides" in text.stdout
    html = _read(tmp_path, url, "-f", "html", port=page_server.port)
    assert html.stdout.startswith("<article>")
    out = json.loads(_read(tmp_path, url, "--json", port=page_server.port).stdout)
    assert out["title"] == "Harbour news" and out["language"] == "en" and out["kind"] == "html"
    assert (
        out["content"].startswith("# Harbour news") and out["cached"] is True
    )  # the first run filled the cache
    assert out["finalUrl"] == url


def test_read_pdf_and_plain_text_over_http_and_from_files(tmp_path, page_server):
    pdf = _read(tmp_path, f"{page_server.url}/paper.pdf", port=page_server.port)
    assert pdf.returncode == 0 and "A harbour report in PDF" in pdf.stdout
    txt = _read(tmp_path, f"{page_server.url}/notes.txt", port=page_server.port)
    assert txt.returncode == 0 and txt.stdout.strip() == "plain notes ✓"
    (tmp_path / "r.pdf").write_bytes(minimal_pdf("Local PDF text"))
    assert "Local PDF text" in _read(tmp_path, str(tmp_path / "r.pdf")).stdout


@pytest.mark.parametrize(
    ("path", "code", "message"),
    [
        ("/photo", 2, "unsupported content type image/jpeg"),
        ("/empty", 2, "no readable text"),
        ("/secret", 2, "robots.txt"),
        ("/missing", 1, "HTTP 404"),
    ],
)
def test_read_failures_are_one_line_with_the_right_exit(tmp_path, page_server, path, code, message):
    proc = _read(tmp_path, f"{page_server.url}{path}", "--no-cache", port=page_server.port)
    assert proc.returncode == code, proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith("serpfuse: error: ") and message in line and "Traceback" not in proc.stderr


def test_read_refuses_loopback_without_the_setting_and_unreachable_is_a_network_error(tmp_path, page_server):
    refused = _read(tmp_path, f"{page_server.url}/story", port=page_server.port, loopback=False)
    assert refused.returncode == 2 and "loopback" in refused.stderr
    assert page_server.seen("/story") == [] and page_server.seen("/robots.txt") == []
    port = _dead_port()
    dead = _read(tmp_path, f"http://127.0.0.1:{port}/x", port=port)
    assert dead.returncode == 1 and "cannot reach 127.0.0.1" in dead.stderr
    for bad in ("ftp://example.com/x", "not-a-file-or-url"):
        proc = _read(tmp_path, bad)
        assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1


def test_several_targets_are_one_process_and_one_json_line_each_in_order(tmp_path, page_server):
    (tmp_path / "local.html").write_bytes(ARTICLE.replace(b"Harbour news", b"Local harbour"))
    targets = [
        f"{page_server.url}/story",
        f"{page_server.url}/missing",
        str(tmp_path / "local.html"),
        f"{page_server.url}/paper.pdf",
        "no-such-file.html",
        f"{page_server.url}/notes.txt",
    ]
    proc = _read(tmp_path, *targets, "--json", "--no-cache", port=page_server.port)
    assert proc.returncode == 2, proc.stderr  # a caller's failure (no such file) among them
    lines = proc.stdout.splitlines()
    assert len(lines) == len(targets)
    out = [json.loads(line) for line in lines]
    assert [o["url"] for o in out] == targets
    assert [o["error"] is None for o in out] == [True, False, True, True, False, True]
    assert out[0]["title"] == "Harbour news" and out[0]["content"].startswith("# Harbour news")
    assert "HTTP 404" in out[1]["error"] and "neither an http(s) URL nor a readable file" in out[4]["error"]
    assert out[2]["title"] == "Local harbour" and out[2]["finalUrl"] is None
    assert out[3]["kind"] == "pdf" and out[5]["content"] == "plain notes ✓"
    errors = proc.stderr.strip().splitlines()
    assert len(errors) == 2 and all(e.startswith("serpfuse: error: ") for e in errors)
    assert f"{page_server.url}/missing: " in errors[0] and "Traceback" not in proc.stderr


def test_several_targets_as_markdown_each_under_its_name_and_the_exit_says_a_page_failed(
    tmp_path, page_server
):
    ok, missing = f"{page_server.url}/story", f"{page_server.url}/missing"
    proc = _read(tmp_path, ok, missing, f"{page_server.url}/notes.txt", "--no-cache", port=page_server.port)
    assert proc.returncode == 1, proc.stderr  # the network's or the page's failure only
    assert proc.stdout.startswith(f"==> {ok} <==\n# Harbour news")
    assert f"\n\n==> {page_server.url}/notes.txt <==\nplain notes ✓\n" in proc.stdout
    assert missing not in proc.stdout
    (line,) = proc.stderr.strip().splitlines()
    assert line == f"serpfuse: error: {missing}: 127.0.0.1 answered HTTP 404"
    every = _read(tmp_path, ok, f"{page_server.url}/notes.txt", "--json", port=page_server.port)
    assert every.returncode == 0 and [json.loads(x)["error"] for x in every.stdout.splitlines()] == [
        None,
        None,
    ]
