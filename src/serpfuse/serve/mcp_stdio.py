"""The MCP server over stdio: stdin claimed from the rest of the process, each line screened before the SDK reads
it (an unreadable request is answered with JSON-RPC's error, not dropped), and the requests in flight finished
when stdin closes."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import AsyncIterator, Iterator
from typing import Any, BinaryIO

import anyio
from mcp.shared.message import SessionMessage
from mcp_types import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    PARSE_ERROR,
    ErrorData,
    JSONRPCError,
    jsonrpc_message_adapter,
)

from serpfuse.serve.mcp_server import build_server, log
from serpfuse.service import SearchService
from serpfuse.validation import InputError, check_strings


async def run_stdio(service: SearchService) -> None:
    """``MCPServer.run_stdio_async``, except that every line is screened first (``screen_line``): the SDK only
    logs a line it cannot read, so a request it cannot read would never be answered."""
    from mcp.server.stdio import stdio_server

    server = build_server(service)
    lowlevel = server._lowlevel_server  # what run_stdio_async runs; the SDK has no hook for unread lines
    service.start()
    try:
        with _claimed_stdin() as wire:
            lines = ScreenedLines(anyio.wrap_file(wire))
            async with stdio_server(stdin=lines) as (read_stream, write_stream):  # type: ignore[arg-type]
                lines.answer_with(write_stream)
                answers = AnswerWatch(write_stream, lines)
                await lowlevel.run(read_stream, answers, lowlevel.create_initialization_options())
    finally:
        await service.aclose()


@contextlib.contextmanager
def _claimed_stdin() -> Iterator[BinaryIO]:
    """The protocol's input, read through a private duplicate of fd 0 while fd 0 itself reads /dev/null (as
    the SDK does when it reads stdin itself), so nothing else in the process can take the client's bytes."""
    if sys.platform == "win32":  # pragma: no cover
        yield sys.stdin.buffer
        return
    import fcntl

    wire = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    try:
        # Never closed: a reading thread may still block on it after the server stops.
        yield os.fdopen(wire, "rb", closefd=False)
    finally:
        os.dup2(wire, 0)


IN_FLIGHT_GRACE_S = 60.0  # at most this long after stdin closes for the requests it sent to be answered


class ScreenedLines:
    """stdin's lines as the SDK's reader takes them (``async for line in stdin``), each screened first: a line
    the SDK can read goes on; one it cannot is answered here (a JSON-RPC error for each request whose id can be
    read, with a null id for a request whose id is no string or integer), or, with no id to answer, logged (its
    length, never its text) and skipped.

    When stdin closes, the lines end only once every request they carried has been answered (``AnswerWatch``
    sees the answers go out), or after ``IN_FLIGHT_GRACE_S``: the SDK stops serving when its input ends, and
    would answer the searches still running "Connection closed"."""

    def __init__(self, wire: Any) -> None:
        self._wire = wire
        self._replies: Any = None
        self._ready = anyio.Event()
        self.pending: set[str | int] = set()  # requests passed on and not yet answered
        self._answered = anyio.Event()

    def answer_with(self, write_stream: Any) -> None:
        self._replies = write_stream
        self._ready.set()

    def answered(self, request_id: Any) -> None:
        self.pending.discard(request_id)
        if not self.pending:
            self._answered.set()

    def __aiter__(self) -> AsyncIterator[str]:
        return self._screened()

    async def _screened(self) -> AsyncIterator[str]:
        async for raw in self._wire:
            line = raw.decode("utf-8", "replace")  # as the SDK decodes: an invalid byte becomes U+FFFD
            readable, replies = screen_line(line)
            if readable:
                self._note(line)
                yield line
                continue
            if not replies and line.strip():
                log.warning("skipped a line that is no JSON-RPC message with an id (%d bytes)", len(raw))
            if replies:
                await self._ready.wait()
            for reply in replies:
                await self._replies.send(SessionMessage(reply))
        if self.pending:  # stdin closed with requests in flight: their answers first
            self._answered = anyio.Event()
            with anyio.move_on_after(IN_FLIGHT_GRACE_S):
                while self.pending:
                    await self._answered.wait()
                    self._answered = anyio.Event()

    def _note(self, line: str) -> None:
        """A request passed on is pending until answered; a cancelled one is not waited for."""
        try:
            message = json.loads(line)
        except ValueError:
            return
        if not isinstance(message, dict):
            return
        if "method" in message and _request_id(message) is not None:
            self.pending.add(message["id"])
        elif message.get("method") == "notifications/cancelled":
            params = message.get("params")
            if isinstance(params, dict):
                self.answered(params.get("requestId"))


class AnswerWatch:
    """The SDK's write stream, telling ``ScreenedLines`` of each answer that goes out."""

    def __init__(self, stream: Any, lines: ScreenedLines) -> None:
        self._stream = stream
        self._lines = lines

    async def send(self, item: Any) -> None:
        await self._stream.send(item)
        message = getattr(item, "message", None)
        if message is not None and not hasattr(message, "method"):  # a response or an error, not a request
            self._lines.answered(getattr(message, "id", None))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)

    async def __aenter__(self) -> AnswerWatch:
        await self._stream.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> Any:
        return await self._stream.__aexit__(*exc)


def screen_line(line: str) -> tuple[bool, list[JSONRPCError]]:
    """Whether the SDK can read ``line`` (one JSON-RPC message), and if not, the errors that answer it: one per
    request whose id can be read (in a batch, which MCP does not take, each of its requests), none for a
    notification, a response or a line whose id cannot be read."""
    if not line.strip():
        return False, []
    try:
        jsonrpc_message_adapter.validate_json(line, by_name=False)
        readable = True
    except ValueError:  # pydantic's ValidationError, for JSON or for the message's shape
        readable = False
    if readable:
        # The SDK reads a request whose id is no id ({"a": 1}, [1], true) as a notification, and never answers.
        if _asks_with_unreadable_id(json.loads(line)):
            return False, [_error(None, INVALID_REQUEST, "id must be a string or an integer")]
        return True, []
    try:
        return False, _answers_to_unreadable(line)
    except (
        RecursionError
    ):  # nested past what json (or the checks below) can walk: its id is up front, or none
        try:
            request_id = _leading_id(line)
        except RecursionError:
            request_id = None
        return False, [] if request_id is None else [
            _error(request_id, PARSE_ERROR, "nests too deeply to read")
        ]


def _answers_to_unreadable(line: str) -> list[JSONRPCError]:
    try:
        data = json.loads(line)
    except ValueError:
        request_id = _leading_id(line)
        return [] if request_id is None else [_error(request_id, PARSE_ERROR, "not valid JSON")]
    if isinstance(data, list):
        ids = [i for i in map(_request_id, data) if i is not None]
        return [_error(i, INVALID_REQUEST, "batches are not taken: one message a line") for i in ids]
    request_id = _request_id(data)
    if request_id is None:
        if _asks_with_unreadable_id(data):  # JSON-RPC's answer when the id cannot be read: a null id
            return [_error(None, INVALID_REQUEST, "id must be a string or an integer")]
        return []
    return [_error(request_id, *_what_is_wrong(data))]


def _asks_with_unreadable_id(message: Any) -> bool:
    """A request (it names a method) whose id is there but no id JSON-RPC allows ({"a": 1}, [1], true, 1.5)."""
    return (
        isinstance(message, dict)
        and isinstance(message.get("method"), str)
        and message.get("id") is not None
        and _request_id(message) is None
    )


def _request_id(message: Any) -> str | int | None:
    """The id of a message that asks for an answer (not a response), when it is one JSON-RPC allows."""
    if not isinstance(message, dict) or (
        "method" not in message and ("result" in message or "error" in message)
    ):
        return None
    request_id = message.get("id")
    if isinstance(request_id, bool) or not isinstance(request_id, str | int):
        return None
    if isinstance(request_id, str) and not request_id.isascii():
        try:
            request_id.encode()
        except UnicodeEncodeError:  # a lone surrogate: no answer could carry it
            return None
    return request_id


def _what_is_wrong(request: dict[str, Any]) -> tuple[int, str]:
    try:
        check_strings(request.get("params"), "params")
    except InputError as exc:
        return INVALID_PARAMS, str(exc)
    if request.get("jsonrpc") != "2.0":
        return INVALID_REQUEST, 'jsonrpc must be "2.0"'
    if not isinstance(request.get("method"), str):
        return INVALID_REQUEST, "method must be a string"
    if "params" in request and not isinstance(request["params"], dict):
        return INVALID_PARAMS, "params must be an object"
    return INVALID_REQUEST, "not a JSON-RPC request this server can read"


def _leading_id(line: str) -> str | int | None:
    """The top-level id of a JSON object cut short or broken after it (``{"jsonrpc":"2.0","id":7,"meth``): its
    members read one by one up to the first that does not parse."""
    decoder = json.JSONDecoder()
    at = _skip_space(line, 0)
    if not line.startswith("{", at):
        return None
    at += 1
    while True:
        try:
            key, at = decoder.raw_decode(line, _skip_space(line, at))
            at = _skip_space(line, at)
            if not line.startswith(":", at):
                return None
            value, at = decoder.raw_decode(line, _skip_space(line, at + 1))
        except ValueError:
            return None
        if key == "id":
            return _request_id({"id": value})
        at = _skip_space(line, at)
        if not line.startswith(",", at):
            return None
        at += 1


def _skip_space(text: str, at: int) -> int:
    while at < len(text) and text[at] in " \t\r\n":
        at += 1
    return at


def _error(request_id: str | int | None, code: int, message: str) -> JSONRPCError:
    return JSONRPCError(jsonrpc="2.0", id=request_id, error=ErrorData(code=code, message=message))
