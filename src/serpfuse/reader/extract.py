"""Main content of a document as markdown, plain text and HTML, with its metadata.

HTML: readability-lxml finds the article; trafilatura cleans and converts it as it does readability's output in
its own fallback, into structure (headings, lists, tables, code, links), and reads the metadata. One rule on top,
and it is the fast path too:

- **A short article gets a second reading.** When readability's article has fewer than ``SHORT_ARTICLE`` words,
  it has usually settled on one small block of a page it could not score (a teaser, a caption, a byline), so
  trafilatura (fast mode, comments off) reads the page as well and the longer of the two texts is kept. Every
  other page is read by readability alone.

Measured on three dev corpora (scrapinghub's article-extraction half, Dragnet, L3S-GN1) against trafilatura's and
readability's own defaults, the threshold chosen on folds and reported held out: ``python -m
benchmarks.reader_suite`` (BENCHMARKS.md, "Page reader"). Trimming trafilatura's edge blocks, what the reader did
before, lost text at the edges of articles on pages it had not been fitted to. PDF goes through pypdf, plain text
passes through.
"""

from __future__ import annotations

import contextlib
import copy
import io
import logging
import re
from dataclasses import dataclass, field
from typing import Literal

import lxml.html
import trafilatura
from htmldate import find_date
from lxml import etree
from trafilatura.external import sanitize_tree
from trafilatura.metadata import (
    examine_meta,
    extract_author,
    extract_meta_json,
    extract_title,
    extract_url,
    set_date_params,
)
from trafilatura.settings import Document, Extractor
from trafilatura.utils import load_html
from trafilatura.xml import xmltotxt

from serpfuse.reader.models import CallerError, PageOverBudget

# trafilatura warns per page ("discarding data: URL"), readability logs what it could not score; the reader says
# the same once, as its one-line error.
logging.getLogger("trafilatura").setLevel(logging.ERROR)
logging.getLogger("readability").setLevel(logging.ERROR)

# Fewer words than this is not an article but a block readability settled on: trafilatura reads the page too.
# Chosen on folds of the dev corpora from 0 (never), 25, 50 and 100 (benchmarks/reader_suite.py).
SHORT_ARTICLE = 25

# One token per CJK character (no spaces between words there), one per run of other word characters.
_TOKEN = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]|\w+")
_INLINE_LINK = re.compile(r"(?<!!)\[([^\]\n]+)\]\((https?://[^)\s]+)\)")
_LANG = re.compile(r"^[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{2,8})*$")


class ExtractionError(CallerError):
    """The document has no readable text. One line."""


@dataclass
class Extraction:
    markdown: str
    text: str
    html: str
    title: str | None = None
    author: str | None = None
    date: str | None = None
    language: str | None = None
    canonical_url: str | None = None
    kind: Literal["html", "pdf", "text"] = "html"
    extractor: str = "readability"
    notes: list[str] = field(default_factory=list)


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


def longer(article: str, second: str, short: int = SHORT_ARTICLE) -> bool:
    """Whether the second reading replaces the article: only a short article is checked, and then the text with
    more words wins (ties keep the article)."""
    n = len(tokens(article))
    return n < short and len(tokens(second)) > n


# --- the two readings -------------------------------------------------------------------------------------


def _readability_document():
    """readability-lxml's Document, less its pass over every link and event attribute for javascript (a third of
    its time on a news page): it changes no text, and the reader neither runs a page's scripts nor follows its
    links. The rest of its parse is readability's own."""
    from lxml_html_clean import Cleaner
    from readability import Document
    from readability.htmls import build_doc
    from readability.readability import REGEXES

    cleaner = Cleaner(
        scripts=True, javascript=False, comments=True, style=True, links=True, meta=False, add_nofollow=False,
        page_structure=False, processing_instructions=True, embedded=False, frames=False, forms=False,
        annoying_tags=False, remove_tags=None, remove_unknown_tags=False, safe_attrs_only=False,
    )  # fmt: skip  # readability's own html_cleaner, javascript=True the one difference

    class Readability(Document):
        def _parse(self, input):
            doc, self.encoding = build_doc(input)
            for elem in doc.xpath("//*[@hidden]"):
                elem.drop_tree()
            for elem in doc.xpath("//*[@style]"):
                if REGEXES["displayNoneRe"].search(elem.get("style")):
                    elem.drop_tree()
            doc = cleaner.clean_html(doc)
            doc.resolve_base_href(handle_failures=self.handle_failures)
            return doc

    return Readability


_READABILITY: list[type] = []  # built on the first page: readability loads with the reader, not with serpfuse


def readability_article(html: str) -> str:
    """readability-lxml's article as an HTML fragment ('' when it finds none)."""
    if not _READABILITY:
        _READABILITY.append(_readability_document())
    try:
        return _READABILITY[0](html).summary(html_partial=True) or ""
    except Exception:  # readability gives up on documents it cannot score: no article then
        return ""


Reading = tuple[
    etree._Element | None, str
]  # (trafilatura-XML body with links and formatting, its plain text)


def _reading(body: etree._Element | None) -> Reading:
    if body is None or not len(body):
        return None, ""
    return body, _render(_without_links(body), formatting=False)


def readability_reading(html: str, url: str | None) -> Reading:
    """readability's article, cleaned and converted the way trafilatura treats readability's output in its own
    fallback (its sanitize_tree): figures, asides, forms and navigation go, structure stays."""
    fragment = readability_article(html)
    if not fragment.strip():
        return None, ""
    try:  # a fragment, or on a page readability could not score the whole document
        tree = lxml.html.fromstring(fragment)
    except (etree.ParserError, ValueError):
        return None, ""
    if tree.tag == "html":
        tree = tree.find("body")
        if tree is None:
            return None, ""
    options = Extractor(tables=True, formatting=True, links=True, comments=False, url=url)
    body, _ = sanitize_tree(tree, options)
    body.tag = "body"
    return _reading(body)


def trafilatura_reading(tree: lxml.html.HtmlElement, url: str | None) -> Reading:
    """trafilatura's own article (fast mode: no fallback extractors, comments off)."""
    doc = trafilatura.bare_extraction(
        copy.deepcopy(tree),
        url=url,
        fast=True,
        include_comments=False,
        include_tables=True,
        include_formatting=True,
        include_links=True,
        with_metadata=False,
    )
    if doc is None or isinstance(doc, dict):  # a dict only for as_dict=True, which this call does not ask
        return _reading(None)
    return _reading(doc.body)


# --- HTML -------------------------------------------------------------------------------------------------


def page_metadata(tree: lxml.html.HtmlElement, url: str | None) -> Document:
    """trafilatura's Document with title, author, date and canonical URL as its extract_metadata finds them,
    without the fields a reading does not return (site name, categories, tags, licence: 40 % of its time on
    scrapinghub's pages); each is '' or None when the page has none."""
    meta = examine_meta(tree)
    if meta.author and " " not in meta.author:  # a single word is a handle, not a name (trafilatura's rule)
        meta.author = None
    # as trafilatura guards its JSON-LD reader: a bad block is no metadata
    with contextlib.suppress(Exception):
        meta = extract_meta_json(tree, meta)
    meta.title = meta.title or extract_title(tree)
    meta.author = meta.author or extract_author(tree)
    meta.url = meta.url or extract_url(tree, url)
    # extensive=False: the date from the markup and the URL, not a scan of every text node (half the time); the
    # parameters per page, as they hold today's date as the latest a page can carry
    meta.date = find_date(tree, **{**set_date_params(extensive=False), "url": meta.url})
    meta.clean_and_trim()  # entities, spaces and control characters out, as extract_metadata leaves them
    return meta


def _language(tree: lxml.html.HtmlElement) -> str | None:
    for value in (
        tree.get("lang"),
        tree.get("xml:lang"),
        *tree.xpath(
            "//meta[@http-equiv and translate(@http-equiv,'CONTENTLANGUAGE','contentlanguage')"
            "='content-language']/@content"
        ),
        *tree.xpath("//meta[@property='og:locale']/@content"),
    ):
        if value and _LANG.match(value.strip()):
            return value.strip().replace("_", "-")
    return None


def links_as_references(markdown: str) -> str:
    """``[text](url)`` -> ``[text][n]`` with the URLs listed once at the end: prose reads without URLs in it."""
    numbers: dict[str, int] = {}

    def ref(m: re.Match[str]) -> str:
        n = numbers.setdefault(m.group(2), len(numbers) + 1)
        return f"[{m.group(1)}][{n}]"

    body = _INLINE_LINK.sub(ref, markdown)
    if not numbers:
        return markdown
    return body.rstrip() + "\n\n" + "\n".join(f"[{n}]: {url}" for url, n in numbers.items()) + "\n"


def _render(body: etree._Element | None, *, formatting: bool) -> str:
    return xmltotxt(body, formatting).strip() if body is not None else ""


def _without_links(body: etree._Element) -> etree._Element:
    plain = copy.deepcopy(body)
    etree.strip_tags(plain, "ref")
    return plain


def extract_html(html: str | bytes, url: str | None = None, *, metadata: bool = True) -> Extraction:
    """The article of an HTML page. Raises ExtractionError when neither extractor finds any text."""
    if isinstance(html, bytes):
        html = html.decode("utf-8", errors="replace")
    tree = load_html(html)
    if tree is None:
        raise ExtractionError("the page is not parseable HTML")
    body, text = readability_reading(html, url)
    extractor = "readability"
    if len(tokens(text)) < SHORT_ARTICLE:  # the fast path ends here for every page with an article
        second, second_text = trafilatura_reading(tree, url)
        if longer(text, second_text):
            body, text, extractor = second, second_text, "trafilatura"
    if body is None or not text:
        raise ExtractionError("no readable text in the page")
    meta = page_metadata(tree, url) if metadata else None
    title = (meta.title if meta else None) or None
    markdown = links_as_references(_render(body, formatting=True))
    if title and not markdown.startswith(
        "#"
    ):  # the page's own <h1> is often outside the article; a reader wants it
        markdown = f"# {title}\n\n{markdown}"
    return Extraction(
        markdown=markdown,
        text=text,
        html=_article_html(body),
        title=title,
        author=(meta.author if meta else None) or None,
        date=(meta.date if meta else None) or None,
        language=_language(tree),
        canonical_url=(meta.url if meta else None) or url,
        extractor=extractor,
    )


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _article_html(body: etree._Element) -> str:
    """trafilatura's XML body as plain HTML (its own converter), inside <article>."""
    from trafilatura.htmlprocessing import convert_to_html

    html = convert_to_html(copy.deepcopy(body))
    html.tag = "article"
    return etree.tostring(html, encoding="unicode", method="html")


# --- other types -----------------------------------------------------------------------------------------


def _first_line(exc: Exception) -> str:
    """An exception's message as one line (its first), or its type's name when it has none."""
    text = str(exc)
    return text.splitlines()[0] if text.strip() else type(exc).__name__


def extract_pdf(data: bytes) -> Extraction:
    from pypdf import PdfReader, errors

    # recent pypdf (7.1 here) stops a stream that inflates past its own limits: a bomb, as the reader budget says
    limits = getattr(errors, "LimitReachedError", ())
    try:
        reader = PdfReader(io.BytesIO(data))
        pages = [page.extract_text() or "" for page in reader.pages]
        info = reader.metadata
    except limits as exc:
        raise PageOverBudget(f"pypdf: {_first_line(exc)}") from exc
    except (errors.PyPdfError, ValueError, KeyError, TypeError) as exc:  # its read errors
        raise ExtractionError(f"unreadable PDF: {_first_line(exc)}") from exc
    text = "\n\n".join(p.strip() for p in pages if p.strip())
    if not text:
        raise ExtractionError("no text in the PDF (scanned pages need OCR, which the reader does not do)")
    return _preformatted(
        text,
        kind="pdf",
        extractor="pypdf",
        title=(info.title if info and info.title else None),
        author=(info.author if info and info.author else None),
    )


def extract_text(text: str) -> Extraction:
    text = text.replace("\r\n", "\n").strip()
    if not text:
        raise ExtractionError("the document is empty")
    return _preformatted(text, kind="text", extractor="plain")


def _preformatted(text: str, **fields) -> Extraction:
    """Text with no markup of its own (a PDF's, a plain file's): the same text as markdown and as a <pre>."""
    return Extraction(
        markdown=text, text=text, html=f"<article><pre>{_escape(text)}</pre></article>", **fields
    )
