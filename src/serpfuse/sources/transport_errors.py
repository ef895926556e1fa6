"""What a client's failure means for the engine: one vocabulary of fixed, key-free messages, whichever client sent.

Never ``str(exc)``: a client's own message can quote the URL, and a URL's query string can hold an API key.
Messages name at most the host; they end up in answers, logs and recordings.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from serpfuse.engines.base import EngineError, EngineTimeout, InvalidRequest, ParseFailure
from serpfuse.errors import ConfigError

if TYPE_CHECKING:
    import httpx2

IMPERSONATE_HINT = (
    "browser impersonation needs curl_cffi (a serpfuse dependency): pip install 'curl_cffi>=0.17'"
)


class ResponseTooLarge(ParseFailure):
    default_message = "response too large"


class ImpersonationUnavailable(ConfigError, RuntimeError):
    """``impersonate=True`` without curl_cffi installed."""

    def __init__(self) -> None:
        super().__init__(IMPERSONATE_HINT)


def host_of(url: str) -> str:
    try:
        return urlsplit(url).hostname or "?"
    except ValueError:
        return "?"


def map_httpx_error(exc: httpx2.HTTPError, host: str) -> EngineError:
    """A fixed, key-free message per failure kind. Never ``str(exc)``: it can quote the URL."""
    import httpx2

    if isinstance(exc, httpx2.ConnectTimeout):
        return EngineTimeout(f"connect timed out ({host})")
    if isinstance(exc, httpx2.TimeoutException):
        return EngineTimeout(f"timed out ({host})")
    if isinstance(exc, httpx2.ProxyError):
        return EngineError("proxy error")
    if isinstance(exc, httpx2.ConnectError):
        return EngineError(f"connection failed ({host})")
    if isinstance(exc, httpx2.RemoteProtocolError | httpx2.ReadError | httpx2.WriteError):
        return EngineError(f"connection reset or closed early ({host})")
    if isinstance(exc, httpx2.TooManyRedirects):
        return EngineError(f"too many redirects ({host})")
    if isinstance(exc, httpx2.DecodingError):
        return EngineError(f"undecodable response body ({host})")
    return EngineError(f"HTTP transport error: {type(exc).__name__} ({host})")


def map_curl_error(exc: Exception, host: str, limit: int) -> EngineError:
    """libcurl's failures, by error code, onto the httpx path's messages, so callers (cooldowns, answers,
    recordings) see one vocabulary whichever client sent the request. Never ``str(exc)``: it quotes the URL."""
    from curl_cffi.const import CurlECode as E  # only reached when curl_cffi raised, so it is installed

    code = getattr(exc, "code", None)
    try:
        name = E(code).name if isinstance(code, int) else ""
    except ValueError:
        name = ""
    if code == E.OPERATION_TIMEDOUT:
        return EngineTimeout(f"timed out ({host})")
    # The request was broken before it left (by the caller's input, say): no cooldown, as on the httpx2 path.
    if code in (E.URL_MALFORMAT, E.UNSUPPORTED_PROTOCOL):
        return InvalidRequest(f"invalid request: {name} ({host})")
    connect_failed = (E.COULDNT_RESOLVE_PROXY, E.COULDNT_RESOLVE_HOST, E.COULDNT_CONNECT)
    if code in connect_failed or name.startswith("SSL") or code == E.PEER_FAILED_VERIFICATION:
        return EngineError(f"connection failed ({host})")
    if code == E.PROXY:  # the proxy was reached but refused the tunnel
        return EngineError("proxy error")
    closed_early = (
        E.GOT_NOTHING,
        E.RECV_ERROR,
        E.SEND_ERROR,
        E.PARTIAL_FILE,
        E.WEIRD_SERVER_REPLY,
        E.HTTP2,
        E.HTTP2_STREAM,
    )
    if code in closed_early:
        return EngineError(f"connection reset or closed early ({host})")
    if code == E.TOO_MANY_REDIRECTS:
        return EngineError(f"too many redirects ({host})")
    if code == E.BAD_CONTENT_ENCODING:
        return EngineError(f"undecodable response body ({host})")
    if code == E.FILESIZE_EXCEEDED:  # MAXFILESIZE_LARGE: the transport's own cap, enforced in C
        return ResponseTooLarge(f"response too large (over {limit} bytes)")
    return EngineError(f"HTTP transport error: {name or type(exc).__name__} ({host})")


def client_failure(exc: Exception, host: str, limit: int) -> EngineError | None:
    """What a client's exception means for the engine, by the client that raised it; None for anything else
    (a bug, raised as it is)."""
    if type(exc).__module__.startswith("httpx2"):  # only raised where httpx2 sent, so it is imported
        import httpx2

        if isinstance(exc, httpx2.HTTPError):
            return map_httpx_error(exc, host)
        if isinstance(exc, httpx2.InvalidURL):
            return InvalidRequest(f"invalid request: {type(exc).__name__} ({host})")
    if isinstance(exc, ValueError):  # a URL or parameter no client could send (curl_cffi's InvalidURL too)
        return InvalidRequest(f"invalid request: {type(exc).__name__} ({host})")
    if type(exc).__module__.startswith("curl_cffi"):
        return map_curl_error(exc, host, limit)
    return None
