"""MCP over a real stdio subprocess with requests a hostile or sloppy client sends: each one is answered, none
kills the server, and the log on stderr holds no query or key. Lines the SDK cannot read at all (params that
are no object, a batch, a NUL byte, JSON cut short) are answered by id when one can be read, else logged and
skipped."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time

from fakeserver import Reply
from redis_server import CLI, isolated_env

QUERY = "top restaurants in belgrad"
SECRET = "sk-hardening-0123456789abcdef"


class Stdio:
    def __init__(self, recording, home, env):
        cmd = [sys.executable, "-c", CLI, "mcp", *(["--replay", str(recording)] if recording else [])]
        self.proc = subprocess.Popen(
            cmd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=isolated_env(home, env),
        )
        self._pending = b""

    def send(self, line: str | bytes) -> None:
        self.proc.stdin.write((line if isinstance(line, bytes) else line.encode()) + b"\n")
        self.proc.stdin.flush()

    def initialize(self) -> None:
        self.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}))  # fmt: skip
        assert "result" in self.reply()
        self.send('{"jsonrpc":"2.0","method":"notifications/initialized"}')

    def reply(self, timeout_s: float = 30.0) -> dict:
        # Read from the descriptor into our own buffer: two answers can come in one read (a batch's), and a
        # buffered readline would keep the second where select() cannot see it.
        deadline = time.monotonic() + timeout_s
        while b"\n" not in self._pending:
            ready, _, _ = select.select([self.proc.stdout], [], [], max(0.0, deadline - time.monotonic()))
            assert ready, "no reply"
            chunk = os.read(self.proc.stdout.fileno(), 65536)
            assert chunk, "the server closed its output"
            self._pending += chunk
        line, _, self._pending = self._pending.partition(b"\n")
        return json.loads(line)

    def call(self, request_id: int, arguments_json: str) -> dict:
        self.send(
            f'{{"jsonrpc":"2.0","id":{request_id},"method":"tools/call",'
            f'"params":{{"name":"web_search","arguments":{arguments_json}}}}}'
        )
        return self.reply()

    def close(self) -> str:
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)
        return self.proc.stderr.read().decode("utf-8", "replace")


def test_every_hostile_call_is_answered_and_the_server_lives_on(recording, tmp_path):
    mcp = Stdio(recording, tmp_path, {"SERPFUSE_BRAVE_API_KEY": SECRET})
    try:
        mcp.initialize()
        hostile = [
            '{"query":"a \\ud800"}',  # a lone surrogate: the SDK itself cannot read the line
            '{"query":"\\udfff\\ud800"}',
            '{"query":"x","region":"ab\\n-zz"}',
            '{"query":"x","limit":1e9}',
            '{"query":"' + "x" * 5000 + '"}',
            f'{{"query":"{SECRET}"}}',
        ]
        for n, arguments in enumerate(hostile, start=2):
            answer = mcp.call(n, arguments)
            assert answer["id"] == n
            error = answer.get("error", {}).get("message") or (
                answer["result"]["content"][0]["text"] if answer["result"].get("isError") else None
            )
            assert error and "\n" not in error, answer
        ok = mcp.call(99, json.dumps({"query": QUERY}))
        assert not ok["result"].get("isError") and ok["result"]["structuredContent"]["results"]
    finally:
        stderr = mcp.close()
    assert SECRET not in stderr and SECRET[:12] not in stderr
    assert QUERY not in stderr


# (line, the ids its answers carry): every line here the SDK cannot read; MARK is in each, and never in the log.
MARK = "zq-unlogged-marker"
UNREADABLE = [
    (f'{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":"{MARK}"}}'.encode(), [7]),
    (f'[{{"jsonrpc":"2.0","id":8,"method":"tools/list"}},{{"jsonrpc":"2.0","id":"b","method":"{MARK}"}}]'.encode(), [8, "b"]),
    (f'{{"jsonrpc":"2.0","id":10,"method":"tools/list","params":{{"q":"{MARK}\x00"}}}}'.encode(), [10]),  # a raw NUL
    (f'{{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{{"name":"web_search","arguments":{{"query":"{MARK}'.encode(), [11]),
    (f'{{"jsonrpc":"1.0","id":12,"method":"{MARK}"}}'.encode(), [12]),
    (f'{{"jsonrpc":"2.0","id":13,"params":{{"x":"{MARK}"}}}}'.encode(), [13]),
    (f'{{"jsonrpc":"2.0","id":14,"method":"tools/list","params":["{MARK}"]}}'.encode(), [14]),
    # nested past json's own limit (it killed the server): the id up front is answered
    (f'{{"jsonrpc":"2.0","id":16,"method":"tools/list","params":{{"{MARK}":{"[" * 100_000}{"]" * 100_000}}}}}'.encode(), [16]),
    # No id to answer: logged (by length) and skipped.
    (f'{{"jsonrpc":"2.0","method":"tools/list","params":"{MARK}"}}'.encode(), []),
    (f'{{"jsonrpc":"2.0","meth\x00od":"{MARK}","id":15}}'.encode(), []),  # the NUL comes before the id
    (f"\xff\xfe{MARK} not json".encode("latin-1"), []),
    (f'{{"jsonrpc":"2.0","id":{{"{MARK}":1}},"method":"tools/list"'.encode(), []),
    (f'["{MARK}",{"[" * 100_000}{"]" * 100_000}]'.encode(), []),
]  # fmt: skip


def test_every_line_with_a_readable_id_is_answered_and_the_rest_skipped(recording, tmp_path):
    mcp = Stdio(recording, tmp_path, {})
    answered = 0
    try:
        mcp.initialize()
        for n, (line, ids) in enumerate(UNREADABLE):
            mcp.send(line)
            answers = [mcp.reply() for _ in ids]
            answered += len(answers)
            assert [a["id"] for a in answers] == ids, line
            for answer in answers:
                assert answer["error"]["code"] in (-32700, -32600, -32602), answer
                assert answer["error"]["message"] and "\n" not in answer["error"]["message"]
            # Nothing else was written for the line: the next answer is the next request's.
            mcp.send(f'{{"jsonrpc":"2.0","id":"next-{n}","method":"tools/list"}}')
            assert mcp.reply()["id"] == f"next-{n}"
        ok = mcp.call(99, json.dumps({"query": QUERY}))
        assert not ok["result"].get("isError") and ok["result"]["structuredContent"]["results"]
    finally:
        stderr = mcp.close()
    skipped = [line for line in stderr.splitlines() if "skipped a line" in line]
    ids = sum(len(ids) for _, ids in UNREADABLE)
    print(
        f"\nmcp: {len(UNREADABLE)} unreadable lines, {ids} readable ids, {answered} answered, {len(skipped)} lines skipped"
    )
    assert len(skipped) == sum(1 for _, ids in UNREADABLE if not ids), stderr[-2000:]
    assert MARK not in stderr and "Traceback" not in stderr


def test_a_request_whose_id_is_no_id_is_answered_with_a_null_id(recording, tmp_path):
    """The SDK read {"a": 1}, [1], true and 1.5 as notifications and never answered: JSON-RPC answers a request
    whose id cannot be read with an error whose id is null."""
    mcp = Stdio(recording, tmp_path, {})
    try:
        mcp.initialize()
        for bad in ('{"a":1}', "[1]", "true", "1.5"):
            mcp.send(f'{{"jsonrpc":"2.0","id":{bad},"method":"tools/list"}}')
            answer = mcp.reply()
            assert answer["id"] is None and answer["error"]["code"] == -32600, (bad, answer)
            assert "id must be" in answer["error"]["message"]
        mcp.send('{"jsonrpc":"2.0","id":"after","method":"tools/list"}')
        assert mcp.reply()["id"] == "after"
    finally:
        stderr = mcp.close()
    assert "Traceback" not in stderr


def test_requests_in_flight_when_stdin_closes_are_answered(server, tmp_path):
    """A client that sends its calls and closes stdin (a script piping requests in) gets every answer: the
    server finishes what it is running before it stops (each search here takes 1.5 s at the engine; they were
    answered "Connection closed")."""
    body = json.dumps({"results": [{"url": "https://a.example/", "title": "A page", "content": "about q"}]})
    server.route(
        "/search", *[Reply(200, {"Content-Type": "application/json"}, body.encode(), delay_s=1.5)] * 8
    )
    env = {
        "SERPFUSE_CACHE": "off",
        "SERPFUSE_ENGINES": "searxng",
        "SERPFUSE_ENGINES__SEARXNG__BASE_URL": server.url,
    }
    mcp = Stdio(None, tmp_path, env)
    mcp.initialize()
    ids = [100, 101, 102]
    for n in ids:
        mcp.send(json.dumps({"jsonrpc": "2.0", "id": n, "method": "tools/call",
                             "params": {"name": "web_search", "arguments": {"query": f"query {n}"}}}))  # fmt: skip
    time.sleep(0.3)  # the searches are under way
    mcp.proc.stdin.close()
    answers = [mcp.reply() for _ in ids]
    mcp.proc.wait(timeout=30)
    assert sorted(a["id"] for a in answers) == ids
    for answer in answers:
        assert "result" in answer and not answer["result"].get("isError"), answer
    assert "Traceback" not in mcp.proc.stderr.read().decode("utf-8", "replace")
