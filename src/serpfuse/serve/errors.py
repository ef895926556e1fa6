"""How the HTTP API says no: ``ApiError`` (a status and one line) and the error body each route's clients read."""

from __future__ import annotations

from typing import Any

from starlette.responses import JSONResponse

from serpfuse.errors import SerpfuseError


class ApiError(SerpfuseError):
    """A refusal of the HTTP API's own (401, 413, 429...): the status is the instance's, not the class's."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.http_status = status
        self.message = " ".join(message.split())
        self.headers = headers or {}


def error_body(route: str, status: int, message: str) -> dict[str, Any]:
    """The error in the shape the route's clients parse: Tavily's, Firecrawl's, or serpfuse's own."""
    if route == "tavily":  # Tavily's own error shape, which its clients read
        return {"detail": {"error": message}}
    if route == "firecrawl":  # Firecrawl's
        return {"success": False, "error": message}
    return {"error": {"status": status, "message": message}}


def error_response(
    route: str, status: int, message: str, headers: dict[str, str] | None = None
) -> JSONResponse:
    return JSONResponse(error_body(route, status, message), status_code=status, headers=headers)
