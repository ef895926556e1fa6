"""What the engines on a hosted MCP server share: one search is one MCP session over Streamable HTTP.

Three JSON-RPC POSTs, as any MCP client makes them (the MCP specification, protocol 2025-03-26): ``initialize``
(with the client's name, and the ``Mcp-Session-Id`` the server may hand out), the ``notifications/initialized``
notification, then ``tools/call`` of the provider's search tool. Replies may be plain JSON or a server-sent-events
stream whose ``data:`` lines carry the JSON-RPC message. Exa's, Parallel's and You.com's keyless servers are asked
this way (``exa_free``, ``parallel``, ``you_free``).

A provider's free tier answers a spent limit with HTTP 429 or with a JSON-RPC (or tool) error saying so, on any
step, on a 2xx or a 4xx: either is ``RateLimited``, which cools the engine down for Retry-After or 180 s instead of
a plain error retried 5 s later only to be refused again.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Mapping
from typing import Any

from serpfuse.engines.base import (
    BODY_HEAD_BYTES,
    EngineClient,
    EngineError,
    ParseFailure,
    RateLimited,
    Reply,
    RequestSpec,
    check_status,
    classify_http,
    header,
    retry_after_seconds,
)
from serpfuse.engines.bodies import decode_body

PROTOCOL_VERSION = "2025-03-26"
# Who the client is: the project's name, no vendor or attribution header (hermes-agent#49758 review).
CLIENT_INFO = {"name": "serpfuse", "version": "0.1"}
HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
SESSION_HEADER = "Mcp-Session-Id"
RATE_LIMIT_TEXT = re.compile(r"rate[ -_]?limit|too many requests|quota", re.IGNORECASE)

_ids = itertools.count(1)


def rpc(method: str, params: dict[str, Any], *, notification: bool = False) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
    if not notification:
        message["id"] = next(_ids)
    return message


def spec(url: str, message: dict[str, Any], session: str | None) -> RequestSpec:
    headers = dict(HEADERS)
    if session:
        headers[SESSION_HEADER] = session
    return RequestSpec(method="POST", url=url, headers=headers, json=message)


def rpc_message(headers: Mapping[str, str], body: bytes, who: str = "MCP") -> dict[str, Any]:
    """The JSON-RPC message of a reply, plain JSON or SSE (the last ``data:`` event that is a reply)."""
    text = decode_body(body, headers).strip()
    candidates = [text]
    if "text/event-stream" in (header(headers, "content-type") or "") or text.startswith(("event:", "data:")):
        events = re.split(r"\r?\n\r?\n", text)
        candidates = [
            "\n".join(ln[5:].lstrip() for ln in ev.splitlines() if ln.startswith("data:")) for ev in events
        ]
    for candidate in reversed(candidates):
        try:
            message = json.loads(candidate)
        except (ValueError, RecursionError):
            continue
        if isinstance(message, dict) and ("result" in message or "error" in message):
            return message
    raise ParseFailure(f"{who}: no JSON-RPC reply in the response")


def rate_limit(status: int, headers: Mapping[str, str], body: bytes, who: str = "MCP") -> RateLimited | None:
    """The rate limit a reply stands for: HTTP 429, or a JSON-RPC error (or a tool error) that says it is one,
    whatever the status. Only a small body is read for it: a rate-limit reply is a sentence, not results."""
    retry_after_s = retry_after_seconds(header(headers, "retry-after"))
    if status == 429:
        return RateLimited(retry_after_s=retry_after_s)
    if not body or len(body) > BODY_HEAD_BYTES:
        return None
    try:
        message = rpc_message(headers, body)
    except ParseFailure:
        return None
    error, result = message.get("error"), message.get("result")
    if isinstance(error, dict):
        said = str(error.get("message") or "")
    elif isinstance(result, dict) and result.get("isError") and isinstance(result.get("content"), list):
        said = " ".join(str(c.get("text") or "") for c in result["content"] if isinstance(c, dict))
    else:
        return None
    if not RATE_LIMIT_TEXT.search(said):
        return None
    return RateLimited(f"{who}: the keyless rate limit was reached", retry_after_s=retry_after_s)


def check(status: int, headers: Mapping[str, str], body: bytes, who: str = "MCP") -> None:
    """A rate limit first (its body may ride a 4xx the central mapper would call a plain error), then the rest."""
    limited = rate_limit(status, headers, body, who)
    if limited is not None:
        raise limited
    check_status(status, headers, body)


def tool_result(status: int, headers: Mapping[str, str], body: bytes, who: str) -> dict[str, Any]:
    """The ``result`` of a ``tools/call`` reply, checked (``ParseFailure`` when there is none)."""
    check(status, headers, body, who)
    message = rpc_message(headers, body, who)
    if "error" in message:
        raise EngineError(f"{who} returned a JSON-RPC error")
    result = message.get("result")
    if not isinstance(result, dict):
        raise ParseFailure(f"{who}: reply without a result")
    if result.get("isError"):
        raise EngineError(f"{who}: the tool reported an error")
    return result


def tool_text(result: dict[str, Any], who: str) -> str:
    """The text blocks of a tool result, joined."""
    content = result.get("content")
    if not isinstance(content, list):
        raise ParseFailure(f"{who}: result without content")
    return "\n".join(c.get("text", "") for c in content if isinstance(c, dict) and c.get("type") == "text")


async def call_tool(client: EngineClient, url: str, tool: str, arguments: dict[str, Any], who: str) -> Reply:
    """One MCP session: initialize, the initialized notification, the tool call; the call's reply, for
    ``parse``. Each step's rate limit or block ends it there."""
    init = rpc(
        "initialize", {"protocolVersion": PROTOCOL_VERSION, "capabilities": {}, "clientInfo": CLIENT_INFO}
    )
    status, headers, body = await client.send(spec(url, init, None))
    check(status, headers, body, who)
    # Read here, on the event loop: so only as much as an initialize reply holds (a few hundred bytes).
    if len(body) > BODY_HEAD_BYTES:
        raise ParseFailure(f"{who}: an initialize reply larger than any initialize reply")
    if "error" in rpc_message(headers, body, who):
        raise EngineError(f"{who} refused to initialize")
    session = header(headers, SESSION_HEADER)
    # The notification's reply is an empty 202; only a rate limit or a block there is worth acting on.
    status, headers, body = await client.send(
        spec(url, rpc("notifications/initialized", {}, notification=True), session)
    )
    error = rate_limit(status, headers, body, who) or classify_http(status, headers, body[:BODY_HEAD_BYTES])
    if error is not None and error.status != "error":
        raise error
    return await client.send(spec(url, rpc("tools/call", {"name": tool, "arguments": arguments}), session))
