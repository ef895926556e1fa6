"""What a read returns (``Page``) and how it fails (``ReadError`` and its kinds, each with the exit code it means)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from serpfuse.errors import SerpfuseError
from serpfuse.models import Model

Format = Literal["markdown", "text", "html"]
FORMATS: tuple[str, ...] = ("markdown", "text", "html")


class ReadError(SerpfuseError):
    """A read that failed, said in one line. ``exit_code`` 1: the network or the remote page (unreachable,
    timed out, HTTP error, too large); 2: the caller's request cannot be served (a refused address, a type the
    reader does not read, robots.txt says no, nothing readable)."""

    exit_code = 1
    http_status = 502  # what the HTTP API answers

    def __init__(self, message: str) -> None:
        super().__init__(message.splitlines()[0] if message else type(self).__name__)


class PageOverBudget(ReadError):
    """Extracting the page would cost more than the reader spends on one page (time, memory or input size):
    a huge table, a PDF whose streams inflate to gigabytes. One line, starting with what the caller needs."""

    def __init__(self, why: str) -> None:
        super().__init__(f"the page is too large or too slow to read ({why})")


class CallerError(ReadError):
    exit_code = 2
    http_status = 422


class Unsupported(CallerError):
    """A content type the reader does not read (images, archives, video...)."""


class RobotsDisallowed(CallerError):
    """The site's robots.txt disallows this path for serpfuse (a setting turns the check off)."""


class Challenge(ReadError):
    """The server answered with a bot check (a CAPTCHA, "Just a moment...", "verify you are human"), not the
    page: never returned as its content."""

    def __init__(self, why: str = "") -> None:
        super().__init__("the page is a bot check, not its content" + (f" ({why})" if why else ""))


class JsShell(CallerError):
    """The page is an empty shell its scripts fill in (the reader runs no scripts): nothing to read."""

    def __init__(self) -> None:
        super().__init__(
            "no readable text: the page is an empty JavaScript shell (scripts draw its content; the reader runs none)"
        )


class Page(Model):
    """One document read: its main content in three forms and its metadata."""

    url: str  # what was asked
    final_url: str | None = None  # after redirects (None for a file)
    canonical_url: str | None = None  # the page's own <link rel=canonical>, else final_url
    title: str | None = None
    author: str | None = None
    date: str | None = None
    language: str | None = None
    content_type: str  # the media type read: text/html, application/pdf, text/plain
    kind: Literal["html", "pdf", "text"]
    extractor: str
    markdown: str
    text: str
    html: str
    cached: bool = False
    chars: int = Field(0, description="length of the markdown")

    def content(self, fmt: Format) -> str:
        return {"markdown": self.markdown, "text": self.text, "html": self.html}[fmt]
