"""MCP over streamable HTTP against clients that initialize and never close (issue 39, item 6): a real
``serpfuse mcp --http`` process on loopback holds at most ``mcp_max_sessions`` sessions (a new one past that is
a 503, logged once per burst; existing ones go on) and closes a session idle for ``mcp_session_idle_s`` (its id then answers 404, and a
new session can be opened)."""

from __future__ import annotations

import json
import time

from redis_server import http, start_serpfuse, stop

CAP = 5
IDLE_S = 4.0  # longer than the refusals below take on a loaded machine
INIT = {
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}  # fmt: skip
HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def _initialize(base: str) -> tuple[int, str | None]:
    status, headers, _ = http("POST", base + "/mcp", data=json.dumps(INIT).encode(), headers=HEADERS)
    return status, headers.get("mcp-session-id")


def _list_tools(base: str, session: str) -> int:
    body = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).encode()
    headers = {**HEADERS, "Mcp-Session-Id": session, "Mcp-Protocol-Version": "2025-06-18"}
    return http("POST", base + "/mcp", data=body, headers=headers)[0]


def test_sessions_never_closed_are_capped_and_expire_when_idle(recording, tmp_path):
    env = {"SERPFUSE_MCP_MAX_SESSIONS": str(CAP), "SERPFUSE_MCP_SESSION_IDLE_S": str(IDLE_S)}
    server = start_serpfuse(
        tmp_path, ["--replay", str(recording), "--no-cache"], env, command=("mcp", "--http")
    )
    try:
        sessions = []
        for _ in range(CAP):
            status, session = _initialize(server.base)
            assert status == 200 and session
            sessions.append(session)
        for _ in range(10):  # the cap: no more sessions while these are open
            assert _initialize(server.base)[0] == 503
        assert _list_tools(server.base, sessions[0]) == 200  # an open one still serves
        # Each request restarts a session's idle clock: the others are left alone, then each asked once.
        time.sleep(IDLE_S + 3)
        assert [_list_tools(server.base, s) for s in sessions[1:]] == [404] * (
            CAP - 1
        )  # closed, ids forgotten
        status, session = _initialize(server.base)  # room again
        assert status == 200 and session not in sessions
    finally:
        stop(server.proc)
    refusals = [
        line for line in server.log.read_text().splitlines() if "Refusing to open a new session" in line
    ]
    assert len(refusals) == 1, refusals  # one line for the burst, not one per refused initialize
