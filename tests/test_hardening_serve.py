"""``serpfuse serve`` against clients that send their headers slowly or never (slowloris), 50 loopback
connections at a time: each is closed once the header timeout has passed, however it drips, and while they
hold more connections than the cap a new request is answered 503 at once rather than waiting. Both serving
paths: one process, and ``--workers 2`` (whose settings travel to spawned workers)."""

from __future__ import annotations

import contextlib
import json
import socket
import time

import pytest

from redis_server import http, start_serpfuse, stop

HEADER_TIMEOUT_S = 1.0
SLACK_S = 1.0  # a loaded 2-core machine; the timeout itself is the contract
SLOW_CLIENTS = 50
CAP = 20  # per server process: fewer than the slow clients, so they fill it


def _slow_clients(port: int, n: int) -> list[tuple[socket.socket, float]]:
    out = []
    for _ in range(n):
        sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        sock.sendall(
            b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        )  # never the blank line that ends the head
        sock.setblocking(False)
        out.append((sock, time.monotonic()))
    return out


def _drip_until_closed(clients: list[tuple[socket.socket, float]], give_up_s: float) -> dict[int, float]:
    """Send each client one more header line every 0.2 s until the server closes it; how long each lasted."""
    lasted: dict[int, float] = {}
    stop_at = time.monotonic() + give_up_s
    while len(lasted) < len(clients) and time.monotonic() < stop_at:
        for i, (sock, opened) in enumerate(clients):
            if i in lasted:
                continue
            try:
                if sock.recv(1024) == b"":  # closed by the server
                    lasted[i] = time.monotonic() - opened
                    continue
            except BlockingIOError:
                pass
            except OSError:  # reset by the server
                lasted[i] = time.monotonic() - opened
                continue
            try:
                sock.send(b"X-Slow: 1\r\n")
            except OSError:
                lasted[i] = time.monotonic() - opened
        time.sleep(0.2)
    return lasted


def _response(sock: socket.socket) -> bytes:
    """One whole response (its head, then as much body as its Content-Length says)."""
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(65536)
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(
        next(
            v
            for k, v in (h.split(b":", 1) for h in head.split(b"\r\n")[1:])
            if k.lower() == b"content-length"
        )
    )
    while len(body) < length:
        body += sock.recv(65536)
    return head + b"\r\n\r\n" + body


@pytest.mark.parametrize("workers", [1, 2])
def test_slow_header_clients_are_closed_after_the_header_timeout(recording, tmp_path, workers):
    env = {"SERPFUSE_HEADER_TIMEOUT_S": str(HEADER_TIMEOUT_S), "SERPFUSE_MAX_CONNECTIONS": str(CAP)}
    server = start_serpfuse(tmp_path, ["--replay", str(recording), "--workers", str(workers)], env=env)
    clients: list[tuple[socket.socket, float]] = []
    try:
        clients = _slow_clients(server.port, SLOW_CLIENTS)
        if workers == 1:  # one process holds all 50: over its cap, a request is refused, not queued
            started = time.monotonic()
            assert http("GET", server.base + "/healthz")[0] == 503
            assert time.monotonic() - started < HEADER_TIMEOUT_S
        lasted = _drip_until_closed(clients, give_up_s=20 * HEADER_TIMEOUT_S)
        assert len(lasted) == SLOW_CLIENTS, f"{SLOW_CLIENTS - len(lasted)} slow clients still connected"
        assert max(lasted.values()) <= HEADER_TIMEOUT_S + SLACK_S, sorted(lasted.values())[-5:]
        assert http("GET", server.base + "/healthz")[0] == 200  # and the server serves again
    finally:
        for sock, _ in clients:
            sock.close()
        stop(server.proc)


def test_a_request_sent_in_time_is_served_on_a_kept_alive_connection(recording, tmp_path):
    """The timeout is on the head only: a request whose head arrives in time is answered, and so is the next
    one on the same connection."""
    server = start_serpfuse(tmp_path, ["--replay", str(recording)], env={"SERPFUSE_HEADER_TIMEOUT_S": "1"})
    try:
        with socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
            for _ in range(2):
                sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
                time.sleep(0.5)  # half the timeout, then the rest of the head
                sock.sendall(b"\r\n")
                assert _response(sock).startswith(b"HTTP/1.1 200")
    finally:
        stop(server.proc)


def test_a_kept_alive_connection_whose_next_head_is_late_is_closed(recording, tmp_path):
    """After an answer the next request's head gets the same time as the first: a connection that then drips
    its head is closed by the header timeout (1 s here), long before uvicorn's keep-alive timeout (5 s) would."""
    server = start_serpfuse(tmp_path, ["--replay", str(recording)], env={"SERPFUSE_HEADER_TIMEOUT_S": "1"})
    try:
        with socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            assert _response(sock).startswith(b"HTTP/1.1 200")
            answered = time.monotonic()
            sock.sendall(b"GET /healthz HTTP/1.1\r\n")
            sock.setblocking(False)
            lasted = _drip_until_closed([(sock, answered)], give_up_s=10)
        assert lasted and lasted[0] <= 1 + SLACK_S, lasted
    finally:
        stop(server.proc)


def test_a_request_head_past_its_cap_is_refused_at_once(recording, tmp_path):
    """A client that streams headers fast (a megabyte of them) is answered 431 and closed once its head passes
    the cap, not buffered until the header timeout."""
    server = start_serpfuse(tmp_path, ["--replay", str(recording)], env={"SERPFUSE_HEADER_TIMEOUT_S": "10"})
    try:
        with socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
            started = time.monotonic()
            head = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            with contextlib.suppress(OSError):  # the server may close before all of it is sent
                sock.sendall(head)
                for _ in range(64):
                    sock.sendall(b"X-Big: " + b"a" * 16 * 1024 + b"\r\n")
            answer = b""
            with contextlib.suppress(OSError):
                while chunk := sock.recv(65536):
                    answer += chunk
        assert answer.startswith(b"HTTP/1.1 431"), answer[:80]
        assert time.monotonic() - started < 5
        assert http("GET", server.base + "/healthz")[0] == 200  # and the server serves the next client
    finally:
        stop(server.proc)


def test_a_post_whose_body_comes_with_its_head_is_served(recording, tmp_path):
    """The cap is on the head alone: a body (up to its own cap) in the same packets as the head is not counted."""
    server = start_serpfuse(tmp_path, ["--replay", str(recording)])
    try:
        query = json.loads(recording.read_text(encoding="utf-8"))[0]["query"]
        body = json.dumps({"query": query, "limit": 3}).encode()[:-1] + b" " * 40 * 1024 + b"}"
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
            sock.sendall(
                b"POST /v1/search HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                + b"Content-Length: %d\r\n\r\n" % len(body)
                + body
            )
            answer = _response(sock)
            assert answer.startswith(b"HTTP/1.1 200"), answer[:300]
    finally:
        stop(server.proc)


def _read_all(sock: socket.socket) -> bytes:
    answer = b""
    with contextlib.suppress(OSError):
        while chunk := sock.recv(65536):
            answer += chunk
    return answer


def test_a_request_head_past_its_cap_in_one_packet_is_refused(recording, tmp_path):
    """README promises 431 past 16 KiB: a 20 KB head sent at once (parsed whole in one read) is refused too,
    not only a head streamed past the cap; the next request on a new connection is served."""
    server = start_serpfuse(tmp_path, ["--replay", str(recording)])
    try:
        with socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"a" * 20_000 + b"\r\n\r\n")
            answer = _read_all(sock)
        assert answer.startswith(b"HTTP/1.1 431"), answer[:80]
        assert b"HTTP/1.1 200" not in answer
        assert http("GET", server.base + "/healthz")[0] == 200
    finally:
        stop(server.proc)


def test_overload_is_a_json_503_with_retry_after_logged_once_per_burst(recording, tmp_path):
    """Past max_connections every new request is a JSON 503 with Retry-After (in the API's error shape), and
    the whole burst of refusals is one log line, not one warning per request."""
    cap, refused = 5, 30
    env = {"SERPFUSE_MAX_CONNECTIONS": str(cap), "SERPFUSE_HEADER_TIMEOUT_S": "30"}
    server = start_serpfuse(tmp_path, ["--replay", str(recording)], env=env)
    holders = []
    try:
        for _ in range(cap):  # idle connections that fill the cap (their heads never end)
            sock = socket.create_connection(("127.0.0.1", server.port), timeout=5)
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            holders.append(sock)
        time.sleep(0.3)
        answers = [http("GET", server.base + "/v1/search?q=x") for _ in range(refused)]
        for status, headers, body in answers:
            assert status == 503
            assert headers.get("retry-after", "").isdigit(), headers
            assert headers["content-type"].startswith("application/json")
            assert json.loads(body)["error"]["status"] == 503
        for sock in holders:
            sock.close()
        holders = []
        time.sleep(0.3)
        assert http("GET", server.base + "/healthz")[0] == 200
    finally:
        for sock in holders:
            sock.close()
        stop(server.proc)
    lines = [line for line in server.log.read_text().splitlines() if "max_connections" in line]
    assert len(lines) == 1, lines
    assert "Exceeded concurrency limit" not in server.log.read_text()


def test_a_client_that_drops_mid_body_is_one_log_line(recording, tmp_path):
    """A client that sends half a body and goes away costs one log line on each body-reading route, never a
    traceback; the server goes on serving."""
    server = start_serpfuse(tmp_path, ["--replay", str(recording)])
    drops = 0
    try:
        for path in (b"/v1/search", b"/tavily/search", b"/v2/search", b"/v1/read") * 5:
            with socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
                sock.sendall(
                    b"POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" % path
                    + b'Content-Length: 1000\r\n\r\n{"query": "half'
                )
                time.sleep(0.05)
            drops += 1
        deadline = time.monotonic() + 5
        while server.log.read_text().count("closed the connection") < drops and time.monotonic() < deadline:
            time.sleep(0.1)
        assert http("GET", server.base + "/healthz")[0] == 200
    finally:
        stop(server.proc)
    text = server.log.read_text()
    assert "Traceback" not in text, text[-2000:]
    assert text.count("closed the connection") == drops, text[-2000:]


def test_a_body_that_does_not_arrive_in_time_is_answered_408(recording, tmp_path):
    """A client that sends its head and then its body a byte at a time (or never) is answered 408 and closed
    once body_timeout_s has passed, instead of holding the connection and a handler for as long as it likes."""
    env = {"SERPFUSE_BODY_TIMEOUT_S": "1"}
    server = start_serpfuse(tmp_path, ["--replay", str(recording)], env=env)
    try:
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
            started = time.monotonic()
            sock.sendall(
                b"POST /v1/search HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                b'Content-Length: 1000\r\n\r\n{"query": '
            )
            answer = b""
            with contextlib.suppress(OSError):
                for _ in range(50):  # a byte every 0.1 s: the body would take 100 s
                    sock.sendall(b" ")
                    time.sleep(0.1)
                    sock.setblocking(False)
                    with contextlib.suppress(BlockingIOError):
                        chunk = sock.recv(65536)
                        if not chunk:
                            break
                        answer += chunk
                    sock.setblocking(True)
            lasted = time.monotonic() - started
        assert answer.startswith(b"HTTP/1.1 408"), answer[:120]
        assert lasted < 1 + 2 * SLACK_S, lasted
        assert http("GET", server.base + "/healthz")[0] == 200
    finally:
        stop(server.proc)
    assert "Traceback" not in server.log.read_text()
