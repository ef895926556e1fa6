"""MCP over a real stdio subprocess with requests a hostile or sloppy client sends (issue 10): each one is
answered, none kills the server, and the log on stderr holds no query or key."""

from __future__ import annotations

import json
import select
import subprocess
import sys

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

    def send(self, line: str) -> None:
        self.proc.stdin.write(line.encode() + b"\n")
        self.proc.stdin.flush()

    def reply(self, timeout_s: float = 30.0) -> dict:
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout_s)
        assert ready, "no reply"
        return json.loads(self.proc.stdout.readline())

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
        mcp.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}))  # fmt: skip
        assert "result" in mcp.reply()
        mcp.send('{"jsonrpc":"2.0","method":"notifications/initialized"}')
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
