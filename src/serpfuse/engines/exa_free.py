"""Exa's keyless MCP endpoint (https://mcp.exa.ai/mcp): Exa's neural index without a key, rate-limited per IP.

One search is one MCP session of three JSON-RPC POSTs: ``initialize``, the ``notifications/initialized``
notification, then ``tools/call`` of ``web_search_exa`` with ``{query, numResults}`` (at most 10). Replies may
be plain JSON or a server-sent-events stream whose ``data:`` lines carry the JSON-RPC message. The tool
answers with text blocks ("Title: ...", "URL: ...", "Published Date: ...", "Highlights:"/"Text: ...")
separated by ``---`` lines; a JSON ``{results: [...]}`` text (older servers) is read too.

This engine is multi-step, so it defines ``run(client, q)`` instead of ``build_request``: it holds the session
and returns the ``tools/call`` reply, which ``parse`` reads, live (off the event loop, under the parse budget,
like any engine's answer) and in replays.

The per-IP rate limit answers any step with HTTP 429 or with a JSON-RPC error saying so ("You've hit Exa's
free MCP rate limit...", code -32000, on a 2xx or a 4xx); either is ``RateLimited``, which cools the engine
down for Retry-After or 180 s, instead of a plain error retried 5 s later only to be refused again.
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
    EngineInfo,
    EngineQuery,
    ParseFailure,
    RateLimited,
    Reply,
    RequestSpec,
    check_status,
    clamp,
    classify_http,
    header,
    retry_after_seconds,
)
from serpfuse.engines.bodies import decode_body
from serpfuse.engines.dates import parse_published
from serpfuse.engines.rows import RowFields, rows_from_json_list
from serpfuse.models import EngineRow

INFO = EngineInfo(
    name="exa-free",
    website="https://exa.ai",
    tier="primary",
    region="both",
    kind="mcp",
    needs_key=False,
    rows_per_request=10,
    timeout_s=25.0,
    group="exa",
)

URL = "https://mcp.exa.ai/mcp"
PROTOCOL_VERSION = "2025-03-26"
TOOL = "web_search_exa"
CLIENT_INFO = {"name": "serpfuse", "version": "0.1"}
HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
SESSION_HEADER = "Mcp-Session-Id"
SNIPPET_CHARS = 300

BLOCK_SEPARATOR = re.compile(r"^\s*-{3,}\s*$", re.MULTILINE)
FIELD = re.compile(
    r"^(Title|URL|Published Date|Published|Author|Highlights|Text|Summary):[ \t]*(.*)$", re.MULTILINE
)
SNIPPET_FIELDS = ("Highlights", "Summary", "Text")
RATE_LIMIT_TEXT = re.compile(r"rate[ -_]?limit|too many requests", re.IGNORECASE)

_ids = itertools.count(1)


def _rpc(method: str, params: dict[str, Any], *, notification: bool = False) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
    if not notification:
        message["id"] = next(_ids)
    return message


def _spec(q: EngineQuery, message: dict[str, Any], session: str | None) -> RequestSpec:
    headers = dict(HEADERS)
    if session:
        headers[SESSION_HEADER] = session
    return RequestSpec(method="POST", url=URL, headers=headers, json=message)


def tool_call(q: EngineQuery) -> dict[str, Any]:
    arguments = {"query": q.text, "numResults": clamp(q.limit, 1, INFO.rows_per_request)}
    return _rpc("tools/call", {"name": TOOL, "arguments": arguments})


def rpc_message(headers: Mapping[str, str], body: bytes) -> dict[str, Any]:
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
        except ValueError:
            continue
        if isinstance(message, dict) and ("result" in message or "error" in message):
            return message
    raise ParseFailure("Exa MCP: no JSON-RPC reply in the response")


def rate_limit(status: int, headers: Mapping[str, str], body: bytes) -> RateLimited | None:
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
    return RateLimited("Exa MCP: the keyless rate limit was reached", retry_after_s=retry_after_s)


def _check(status: int, headers: Mapping[str, str], body: bytes) -> None:
    """A rate limit first (its body may ride a 4xx the central mapper would call a plain error), then the rest."""
    limited = rate_limit(status, headers, body)
    if limited is not None:
        raise limited
    check_status(status, headers, body)


def _field_blocks(text: str) -> list[dict[str, str]]:
    blocks = []
    for chunk in BLOCK_SEPARATOR.split(text):
        fields: dict[str, str] = {}
        matches = list(FIELD.finditer(chunk))
        for m, nxt in zip(matches, [*matches[1:], None], strict=True):
            end = nxt.start() if nxt else len(chunk)
            # A multi-line field (Highlights, Text) runs until the next field.
            fields.setdefault(m.group(1), (m.group(2) + chunk[m.end() : end]).strip())
        if fields:
            blocks.append(fields)
    return blocks


def _pick_block(item: dict) -> RowFields:
    snippet = next((item[k] for k in SNIPPET_FIELDS if isinstance(item.get(k), str) and item[k]), "")
    published = parse_published(item.get("Published Date") or item.get("Published"))
    return item.get("URL"), item.get("Title"), snippet[:SNIPPET_CHARS], published


def parse_text(text: str) -> list[EngineRow]:
    """Rows of the ``web_search_exa`` tool text; rank counts every block, usable or not."""
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, dict) and isinstance(data.get("results"), list):
        items = [
            {
                "Title": r.get("title"),
                "URL": r.get("url"),
                "Published Date": r.get("publishedDate"),
                "Text": " … ".join(r.get("highlights") or []) or r.get("text"),
            }
            for r in data["results"]
            if isinstance(r, dict)
        ]
    else:
        items = [b for b in _field_blocks(text) if "URL" in b or "Title" in b]
    return rows_from_json_list(INFO.name, items, _pick_block, markup=False)


def parse(status: int, headers: Mapping[str, str], body: bytes, q: EngineQuery) -> list[EngineRow]:
    """Rows of one ``tools/call`` reply."""
    _check(status, headers, body)
    message = rpc_message(headers, body)
    if "error" in message:
        raise EngineError("Exa MCP returned a JSON-RPC error")
    result = message.get("result")
    if not isinstance(result, dict):
        raise ParseFailure("Exa MCP: reply without a result")
    if result.get("isError"):
        raise EngineError("Exa MCP tool reported an error")
    content = result.get("content")
    if not isinstance(content, list):
        raise ParseFailure("Exa MCP: result without content")
    text = "\n".join(c.get("text", "") for c in content if isinstance(c, dict) and c.get("type") == "text")
    return parse_text(text) if text.strip() else []


async def run(client: EngineClient, q: EngineQuery) -> Reply:
    """The session's three steps; the ``tools/call`` reply, for ``parse``."""
    init = _rpc(
        "initialize", {"protocolVersion": PROTOCOL_VERSION, "capabilities": {}, "clientInfo": CLIENT_INFO}
    )
    status, headers, body = await client.send(_spec(q, init, None))
    _check(status, headers, body)
    # Read here, on the event loop: so only as much as an initialize reply holds (a few hundred bytes).
    if len(body) > BODY_HEAD_BYTES:
        raise ParseFailure("Exa MCP: an initialize reply larger than any initialize reply")
    if "error" in rpc_message(headers, body):
        raise EngineError("Exa MCP refused to initialize")
    session = header(headers, SESSION_HEADER)
    # The notification's reply is an empty 202; only a rate limit or a block there is worth acting on.
    status, headers, body = await client.send(
        _spec(q, _rpc("notifications/initialized", {}, notification=True), session)
    )
    error = rate_limit(status, headers, body) or classify_http(status, headers, body[:BODY_HEAD_BYTES])
    if error is not None and error.status != "error":
        raise error
    return await client.send(_spec(q, tool_call(q), session))
