"""A fetched body to a ``Page``: the extractor its media type calls for, and nothing of the network.

This is what runs in an extraction worker (``reader.workers``): it imports the extractors and the models only.
An extractor that fails in a way of its own (a bug, a limit of a library) fails this one page with one line;
a page that exhausts the memory it may use is over the budget.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from serpfuse.reader.fetch import HTML_TYPES, PDF_TYPES, TEXT_TYPES, Fetched, decode
from serpfuse.reader.models import Challenge, JsShell, Page, PageOverBudget, ReadError, Unsupported

if TYPE_CHECKING:
    from serpfuse.reader.extract import Extraction


def sniff(body: bytes) -> str:
    """The media type of a body that came without one."""
    head = body[:1024].lstrip().lower()
    if head.startswith(b"%pdf-"):
        return "application/pdf"
    if head.startswith((b"<!doctype html", b"<html", b"<head", b"<body")) or b"<html" in head:
        return "text/html"
    return "text/plain"


def media_kind(fetched: Fetched) -> str:
    return fetched.content_type or sniff(fetched.body)


def page_of(fetched: Fetched, asked: str) -> Page:
    """Extract a fetched body by its media type (sniffed when the server sent none). Raises ``ReadError``."""
    try:
        return _page_of(fetched, asked)
    except ReadError:
        raise
    except MemoryError:
        raise PageOverBudget("extraction needed more memory than allowed") from None
    except Exception as exc:  # an extractor's own failure on this body: the page is unreadable, in one line
        from serpfuse.reader.extract import ExtractionError

        raise ExtractionError(f"the extractor failed on this page ({type(exc).__name__})") from None


def _page_of(fetched: Fetched, asked: str) -> Page:
    from serpfuse.reader.extract import extract_pdf, extract_text  # the extractors load on the first page

    kind = media_kind(fetched)
    if kind in PDF_TYPES:
        extraction = extract_pdf(fetched.body)
    elif kind in HTML_TYPES:
        extraction = _html(decode(fetched), fetched.url)
    elif kind in TEXT_TYPES:
        extraction = extract_text(decode(fetched))
    else:
        raise Unsupported(f"unsupported content type {kind}")
    return _page(extraction, asked, fetched.url, kind)


def _html(html: str, url: str) -> Extraction:
    """``extract_html``, refusing a bot check or an empty JavaScript shell (``blockers``): their few words are
    never the page's content."""
    from serpfuse.reader.blockers import blocker
    from serpfuse.reader.extract import ExtractionError, extract_html, tokens

    try:
        extraction = extract_html(html, url)
    except ExtractionError:
        _refuse(blocker(html))
        raise
    _refuse(blocker(html, len(tokens(extraction.text))))
    return extraction


def _refuse(found: str | None) -> None:
    if found == "challenge":
        raise Challenge()
    if found == "js_shell":
        raise JsShell()


def _page(extraction: Extraction, asked: str, final_url: str | None, content_type: str) -> Page:
    return Page(
        url=asked,
        final_url=final_url,
        canonical_url=extraction.canonical_url or final_url,
        title=extraction.title,
        author=extraction.author,
        date=extraction.date,
        language=extraction.language,
        content_type=content_type,
        kind=extraction.kind,
        extractor=extraction.extractor,
        markdown=extraction.markdown,
        text=extraction.text,
        html=extraction.html,
        chars=len(extraction.markdown),
    )
