"""The judging page: one query's pool at a time, a grade per row from the keyboard, each written at once.

Routes: ``/`` sends the judge to the first query with an ungraded row; ``/q/N`` is query N (1-based) of the
recording; ``POST /grade`` takes ``{"q": N, "row": i, "rel": 0|1|2}`` (JSON from the page's script, or the
row's form without script) and answers the progress. The search page's stylesheet is served as it is, at its
own path, beside this page's small script and additions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from jinja2 import Environment, PackageLoader, select_autoescape
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from serpfuse.errors import InputError
from serpfuse.judge.pool import PoolQuery
from serpfuse.judge.store import JudgmentsFile

GRADES = (0, 1, 2)
GRADE_NAMES = {0: "not relevant", 1: "relevant", 2: "highly relevant"}
# The page's own script and the search page's stylesheet, from this server; nothing else, nowhere else.
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self'; connect-src 'self'; "
        "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",  # a reloaded page shows the grades the file holds
}

_templates = Environment(
    loader=PackageLoader("serpfuse.judge", "templates"),
    autoescape=select_autoescape(default=True, default_for_string=True),
    trim_blocks=True,
    lstrip_blocks=True,
)
# The names this machine answers to from itself. Any other Host is a page elsewhere whose name was pointed at
# 127.0.0.1 (DNS rebinding), and any other Origin a page elsewhere posting a form here.
LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1"})


def web_url(url: str) -> bool:
    """Whether a result's URL may be a link: http(s) only (an engine's ``javascript:`` or ``data:`` row is text)."""
    return urlsplit(url).scheme.lower() in ("http", "https")


_templates.tests["web_url"] = web_url


def _hostname(value: str) -> str | None:
    try:
        return urlsplit(f"//{value}").hostname
    except ValueError:
        return None


class LoopbackOnly:
    """ASGI middleware: a request whose Host is not a loopback name is refused (421), and so is a POST whose
    Origin is not this page's own (403), or that a browser says came from another site."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope.get("headers", [])}
        host = headers.get("host", "")
        problem = None
        if _hostname(host) not in LOOPBACK_NAMES:
            problem = (421, "this page answers on 127.0.0.1 or localhost only")
        elif scope["method"] not in ("GET", "HEAD"):
            origin = headers.get("origin")
            if origin is not None and (origin == "null" or urlsplit(origin).netloc != host):
                problem = (403, "a grade is taken from this page only (foreign Origin)")
            elif headers.get("sec-fetch-site", "same-origin") not in ("same-origin", "none"):
                problem = (403, "a grade is taken from this page only (cross-site request)")
        if problem is None:
            await self.app(scope, receive, send)
            return
        response = JSONResponse({"error": problem[1]}, status_code=problem[0], headers=SECURITY_HEADERS)
        await response(scope, receive, send)


class BadGrade(InputError):
    pass


@dataclass
class JudgingProgress:
    graded: int
    total: int
    query_graded: int
    query_total: int

    def to_json(self) -> dict[str, int]:
        return {
            "graded": self.graded,
            "total": self.total,
            "queryGraded": self.query_graded,
            "queryTotal": self.query_total,
        }


class Judging:
    """The pool and the file, and what the page asks of them."""

    def __init__(self, pool: Sequence[PoolQuery], store: JudgmentsFile) -> None:
        self.pool = list(pool)
        self.store = store

    def grades(self, n: int) -> list[int | None]:
        query = self.pool[n]
        return [self.store.grade(query.query, row.key) for row in query.rows]

    def progress(self, n: int) -> JudgingProgress:
        counts = [(sum(g is not None for g in self.grades(i)), len(q.rows)) for i, q in enumerate(self.pool)]
        return JudgingProgress(sum(c[0] for c in counts), sum(c[1] for c in counts), *counts[n])

    def first_ungraded(self) -> tuple[int, int] | None:
        """(query, row) of the first row without a grade, in page order."""
        for n in range(len(self.pool)):
            for i, grade in enumerate(self.grades(n)):
                if grade is None:
                    return n, i
        return None

    def put(self, n: int, row: int, rel: int) -> JudgingProgress:
        if not 0 <= n < len(self.pool):
            raise BadGrade(f"no query {n + 1}: the recording has {len(self.pool)}")
        rows = self.pool[n].rows
        if not 0 <= row < len(rows):
            raise BadGrade(f"query {n + 1} has no row {row}")
        if rel not in GRADES:
            raise BadGrade(f"a grade is one of {', '.join(map(str, GRADES))}, not {rel!r}")
        self.store.put(self.pool[n].query, rows[row].url, rel)
        return self.progress(n)


def _number(value: Any, name: str) -> int:
    if isinstance(value, bool):
        raise BadGrade(f"{name} must be a whole number")
    try:
        return int(value)
    except (TypeError, ValueError):
        raise BadGrade(f"{name} must be a whole number") from None


def create_app(judging: Judging) -> ASGIApp:
    def render(n: int) -> HTMLResponse:
        grades = judging.grades(n)
        start = next((i for i, g in enumerate(grades) if g is None), 0)
        html = _templates.get_template("judge.html").render(
            n=n,
            count=len(judging.pool),
            query=judging.pool[n],
            grades=grades,
            start=start,
            progress=judging.progress(n),
            grade_names=GRADE_NAMES,
            out=judging.store.path.name,
        )
        return HTMLResponse(html, headers=SECURITY_HEADERS)

    async def home(request: Request) -> Response:
        at = judging.first_ungraded()
        return RedirectResponse(f"/q/{(at[0] if at else 0) + 1}", status_code=303)

    async def query_page(request: Request) -> Response:
        n = request.path_params["n"] - 1
        if not 0 <= n < len(judging.pool):
            return RedirectResponse("/", status_code=303)
        return render(n)

    async def grade(request: Request) -> Response:
        is_json = request.headers.get("content-type", "").startswith("application/json")
        try:
            if is_json:
                try:
                    body = await request.json()
                except ValueError:
                    raise BadGrade("the body is not JSON") from None
                if not isinstance(body, dict):
                    raise BadGrade('expected {"q", "row", "rel"}')
            else:
                body = dict(await request.form())
            n = _number(body.get("q"), "q") - 1
            progress = judging.put(n, _number(body.get("row"), "row"), _number(body.get("rel"), "rel"))
        except BadGrade as exc:
            return JSONResponse({"error": str(exc)}, status_code=400, headers=SECURITY_HEADERS)
        except OSError as exc:  # the grade is not on disk: say so, the page keeps the row ungraded
            error = f"cannot write {judging.store.path}: {exc.strerror or exc}"
            return JSONResponse({"error": error}, status_code=500, headers=SECURITY_HEADERS)
        if is_json:
            return JSONResponse(progress.to_json(), headers=SECURITY_HEADERS)
        return RedirectResponse(f"/q/{n + 1}", status_code=303)  # the form without script: back to the page

    app = Starlette(
        routes=[
            Route("/", home),
            Route("/q/{n:int}", query_page),
            Route("/grade", grade, methods=["POST"]),
            Mount("/static", StaticFiles(packages=[("serpfuse.serve.page", "static")])),
            Mount("/judge-static", StaticFiles(packages=[("serpfuse.judge", "static")])),
        ]
    )
    return LoopbackOnly(app)
