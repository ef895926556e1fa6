"""``serpfuse judge`` as a hostile page and an unlucky user would meet it (issue 39, item 6), against a real
judge process on loopback: a form posted from another site and a page reached through another name (DNS
rebinding) are refused; a second judge on the same --out refuses in one line instead of losing the first one's
grades; the judgments are 0600; a result URL that is not http(s) is shown, never linked."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from conftest import crw56_subset
from redis_server import CLI, free_port, http, isolated_env, stop
from serpfuse.judge.app import Judging, create_app
from serpfuse.judge.pool import load_pool
from serpfuse.judge.store import JudgmentsFile

FORM = {"Content-Type": "application/x-www-form-urlencoded"}


class Judge:
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
            assert self.proc.poll() is None, self.log.read_text()[-800:]
            try:
                if http("GET", self.base + "/q/1")[0] == 200:
                    return
            except OSError:
                pass
            assert time.monotonic() < deadline, self.log.read_text()[-800:]
            time.sleep(0.1)


@pytest.fixture(scope="module")
def small(data_dir: Path, tmp_path_factory) -> Path:
    recording, _ = crw56_subset(data_dir, tmp_path_factory.mktemp("small"), 2)
    return recording


@pytest.fixture
def judge(small, tmp_path):
    running = Judge(tmp_path, small, tmp_path / "j.jsonl")
    yield running
    stop(running.proc)


def test_a_cross_site_form_post_writes_no_grade(judge, tmp_path):
    out = tmp_path / "j.jsonl"
    form = b"q=1&row=0&rel=2"
    for headers in (
        {**FORM, "Origin": "http://evil.example"},
        {**FORM, "Origin": "null"},  # a sandboxed frame or a data: page
        {**FORM, "Sec-Fetch-Site": "cross-site"},
        {**FORM, "Origin": f"http://127.0.0.1:{judge.port + 1}"},  # another local server's page
    ):
        status, _, body = http("POST", judge.base + "/grade", data=form, headers=headers)
        assert status == 403, (headers, body)
    assert not out.exists()
    # the page's own form (same origin) is taken
    own = {**FORM, "Origin": judge.base, "Sec-Fetch-Site": "same-origin"}
    assert http("POST", judge.base + "/grade", data=form, headers=own)[0] in (200, 303)
    assert out.exists()


def test_a_foreign_host_is_refused(judge):
    """DNS rebinding: a page at evil.example whose name now points at 127.0.0.1 reads and posts with its own
    Host; the judge answers loopback names only."""
    for host in ("evil.example", f"evil.example:{judge.port}", "127.0.0.1.evil.example"):
        assert http("GET", judge.base + "/q/1", headers={"Host": host})[0] == 421
        status = http("POST", judge.base + "/grade", data=b"q=1&row=0&rel=2", headers={**FORM, "Host": host})[
            0
        ]
        assert status == 421
    for host in (f"127.0.0.1:{judge.port}", f"localhost:{judge.port}"):
        assert http("GET", judge.base + "/q/1", headers={"Host": host})[0] == 200


def test_a_second_judge_on_the_same_file_refuses_in_one_line(judge, small, tmp_path):
    second = subprocess.run(
        [sys.executable, "-c", CLI, "judge", str(small), "--out", str(tmp_path / "j.jsonl"), "--port", "0"],
        capture_output=True, text=True, timeout=60, cwd=tmp_path, env=isolated_env(tmp_path),
    )  # fmt: skip
    assert second.returncode == 2
    lines = second.stderr.strip().splitlines()
    assert len(lines) == 1 and "another serpfuse judge" in lines[0] and str(judge.proc.pid) in lines[0]
    # the first goes on writing, and its file is the user's alone
    http("POST", judge.base + "/grade", data=json.dumps({"q": 1, "row": 0, "rel": 1}).encode(),
         headers={"Content-Type": "application/json"})  # fmt: skip
    assert (tmp_path / "j.jsonl").stat().st_mode & 0o777 == 0o600


def test_only_http_urls_become_links(small, tmp_path):
    entries = json.loads(small.read_text(encoding="utf-8"))[:1]
    entries[0]["results"] = [
        {"url": "javascript:alert(document.domain)", "title": "js", "content": "", "engines": ["bing"]},
        {"url": "JavaScript:alert(1)", "title": "js2", "content": "", "engines": ["bing"]},
        {"url": "https://a.example/", "title": "web", "content": "", "engines": ["bing"]},
    ]
    recording = tmp_path / "rec.json"
    recording.write_text(json.dumps(entries), encoding="utf-8")
    pool = load_pool(recording)
    client = TestClient(
        base_url="http://127.0.0.1:8766", app=create_app(Judging(pool, JudgmentsFile(tmp_path / "j")))
    )
    html = client.get("/q/1").text
    hrefs = [h.lower() for h in re.findall(r'href="([^"]*)"', html)]
    assert "https://a.example/" in hrefs
    assert not [h for h in hrefs if h.startswith("javascript")], hrefs
    assert "javascript:alert(document.domain)" in html  # still shown, as text
