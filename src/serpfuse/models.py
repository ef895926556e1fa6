"""The data model: what goes into a search, what engines give back, what comes out.

Every public model serialises to camelCase JSON (``model_dump(by_alias=True)``), the shape agents and
the consensus-v2.1 fields (``evidenceScore``, ``dateStatus``...) use; Python code uses snake_case.
"""

from __future__ import annotations

import datetime as dt
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic.alias_generators import to_camel

from serpfuse.text import url_without_controls, without_controls
from serpfuse.validation import LOCALE_MAX_CHARS, check_locale, check_strings

TimeRange = Literal["day", "week", "month", "year"]
# What a search looks for: the web, or news articles (asked of the engines' news endpoints).
Category = Literal["general", "news"]
CATEGORIES: tuple[str, ...] = get_args(Category)
# "decoy": the engine answered rows about another question (the query's first word only, engines.decoy); they
# are kept out of the results.
EngineStatus = Literal[
    "ok", "empty", "decoy", "error", "timeout", "parse-timeout", "rate-limited", "challenge", "skipped"
]
DateStatus = Literal["known", "unknown", "conflicting"]
# The statuses of an engine that answered (with rows or without): everything else is a failure or a skip.
ANSWERED: frozenset[str] = frozenset({"ok", "empty"})

MAX_QUERY_CHARS = 500
# passages: characters of a page's passages (per row), the bounds a request may ask within
DEFAULT_PASSAGE_CHARS = 1500
MIN_PASSAGE_CHARS = 100
MAX_PASSAGE_CHARS = 20000
# Why a row has no passages: its page timed out, refused us (401/403/429/451 or our address guard), its robots.txt
# said no, it was too large, it was not text (or had none), it was a bot check, or an empty JavaScript shell; any
# other failure (unreachable, HTTP 404 or 500) is "error".
PassagesStatus = Literal[
    "timeout", "blocked", "robots", "too_large", "not_text", "challenge", "js_shell", "error"
]
MAX_LIMIT = 20
DEFAULT_LIMIT = 8


class Model(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")

    def to_json_dict(self) -> dict:
        return self.model_dump(mode="json", by_alias=True)

    def to_json_bytes(self) -> bytes:
        """``to_json_dict`` as JSON (UTF-8, compact), encoded by pydantic's own serialiser: a third of the CPU of
        dumping the dict with ``json``, once per answer a server sends."""
        return self.model_dump_json(by_alias=True).encode("utf-8")


def _clean_domain(value: str) -> str:
    d = value.strip().lower()
    if "://" in d:
        d = d.split("://", 1)[1]
    d = d.split("/", 1)[0].split(":", 1)[0].strip(".")
    if d.startswith("www."):
        d = d[4:]
    if not d or "." not in d or any(c.isspace() or not c.isprintable() for c in d):
        raise ValueError(f"not a domain: {value!r}")
    return d


class SearchRequest(Model):
    """One search as asked by a caller (CLI, MCP tool, HTTP API or Python): the one declaration of a search's
    fields, their bounds and their descriptions. Every face reads it: ``GET`` and ``POST /v1/search`` take
    exactly these fields (``search_shapes``), the SearXNG, Tavily and Firecrawl shapes map their own onto them,
    the MCP tools' schemas are generated from it (``mcp_server.search_parameters``), the CLI's help and the
    OpenAPI document quote it. A new search field is added here, with its description, and every face has it."""

    # The bounds as schema only: the validator below says "query is empty" better than a length error.
    query: str = Field(
        json_schema_extra={"minLength": 1, "maxLength": MAX_QUERY_CHARS},
        description='What to search for. site:, -site:, "phrases" and OR work.',
    )
    limit: int = Field(DEFAULT_LIMIT, ge=1, le=MAX_LIMIT, description="How many results.")
    engines: list[str] | None = Field(
        None, description="Only these engines (see engine_status); default: all ready ones."
    )
    include_domains: list[str] = Field(
        default_factory=list, description="Only these domains, e.g. python.org; subdomains included."
    )
    exclude_domains: list[str] = Field(
        default_factory=list, description="Never these domains (nor their subdomains)."
    )
    time_range: TimeRange | None = Field(
        None, description="Only pages from the last day/week/month/year. Not with date_from/date_to."
    )
    date_from: dt.date | None = Field(None, description="Earliest date, YYYY-MM-DD. Not with time_range.")
    date_to: dt.date | None = Field(None, description="Latest date, YYYY-MM-DD. Not with time_range.")
    region: str | None = Field(
        None, max_length=LOCALE_MAX_CHARS, description="Region, e.g. us, de-DE, us-en."
    )
    language: str | None = Field(None, max_length=LOCALE_MAX_CHARS, description="Language, e.g. en, zh-CN.")
    strategy: str | None = Field(None, description="Ranker.")
    min_score: float = Field(0.0, ge=0.0, allow_inf_nan=False, description="Drop results scoring below this.")
    category: Category = Field("general", description="general (the web) or news (news articles).")
    passages: bool = Field(
        False,
        description="Also read the shown rows' pages and give each row the passages that answer the query "
        "(or why not), within the deadline + 2 s.",
    )
    max_chars: int | None = Field(
        None,
        ge=MIN_PASSAGE_CHARS,
        le=MAX_PASSAGE_CHARS,
        description=f"Characters of passages per row (default {DEFAULT_PASSAGE_CHARS}); with passages.",
    )

    @model_validator(mode="before")
    @classmethod
    def _valid_text(cls, data: object) -> object:
        # Before anything else reads the input: a lone surrogate cannot be encoded, so every reply (and
        # the cache key) that carried it would crash.
        check_strings(data)
        return data

    @field_validator("region", "language")
    @classmethod
    def _locale_ok(cls, v: str | None, info) -> str | None:
        return check_locale(v, info.field_name)

    @field_validator("category", mode="before")
    @classmethod
    def _category_ok(cls, v: object) -> object:
        name = v.strip().lower() if isinstance(v, str) else v
        if name not in CATEGORIES:
            raise ValueError(f"unknown category {v!r} (choose from: {', '.join(CATEGORIES)})")
        return name

    @field_validator("query")
    @classmethod
    def _query_ok(cls, v: str) -> str:
        v = " ".join(v.split())
        if not v:
            raise ValueError("query is empty")
        if len(v) > MAX_QUERY_CHARS:
            raise ValueError(f"query is longer than {MAX_QUERY_CHARS} characters")
        return v

    @field_validator("include_domains", "exclude_domains")
    @classmethod
    def _domains_ok(cls, v: list[str]) -> list[str]:
        return sorted({_clean_domain(d) for d in v})

    @field_validator("engines")
    @classmethod
    def _engines_ok(cls, v: list[str] | None) -> list[str] | None:
        if v is None:
            return None
        names = [e.strip().lower() for e in v if e.strip()]
        if not names:
            raise ValueError("engines is empty")
        return list(dict.fromkeys(names))

    @model_validator(mode="after")
    def _dates_ok(self) -> SearchRequest:
        if self.time_range and (self.date_from or self.date_to):
            raise ValueError("time_range cannot be combined with date_from/date_to")
        if self.date_from and self.date_to and self.date_from > self.date_to:
            raise ValueError("date_from is after date_to")
        return self


class SearchCall(SearchRequest):
    """A search and how it is run: beside the request, whether to list every candidate and whether the cache
    may answer (the CLI's --explain and --no-cache, the HTTP API's explain and cache)."""

    explain: bool = Field(False, description="List every candidate with its score parts and what cut it.")
    cache: bool = Field(True, description="false bypasses the cache.")


def field_bounds(model: type[BaseModel], name: str) -> tuple[float | None, float | None]:
    """A field's declared lower and upper bounds (``ge``/``le``), or None where it has none."""
    low = high = None
    for bound in model.model_fields[name].metadata:
        low = getattr(bound, "ge", low)
        high = getattr(bound, "le", high)
    return low, high


def field_help(model: type[BaseModel], name: str, default: object = None) -> str:
    """A field's description as a face shows it, with its bounds and (when given) the default it runs with:
    "How many results (1-20; default 8)." from the one declaration."""
    text = (model.model_fields[name].description or name).rstrip(".")
    low, high = field_bounds(model, name)
    notes = [f"{low:g}-{high:g}"] if low is not None and high is not None else []
    if default is not None:
        notes.append(f"default {default}")
    return f"{text} ({'; '.join(notes)})." if notes else f"{text}."


class EngineRow(Model):
    """One row as an engine returned it, before any filtering.

    ``rank`` is the provider's own 1-based position, recorded before rows are dropped, so a malformed
    row never promotes the rows below it (consensus-v2.1's providerRank rule).
    """

    engine: str
    rank: int = Field(ge=1)
    url: str
    title: str = ""
    snippet: str = ""
    published: dt.datetime | None = None
    variant: str = ""

    # Here, where every engine's rows are built (and every recording's read back), so every face (terminal,
    # JSON, MCP, the page) gets text no terminal would obey: an engine's ESC or BEL is shown, never acted on.
    @field_validator("engine", "title", "snippet", "variant")
    @classmethod
    def _text_shown_as_is(cls, v: str) -> str:
        return without_controls(v)

    @field_validator("url")
    @classmethod
    def _url_shown_as_is(cls, v: str) -> str:
        return url_without_controls(v)


class EngineAnswer(Model):
    """What one engine said for one query variant: its rows and how the call went."""

    engine: str
    status: EngineStatus
    rows: list[EngineRow] = Field(default_factory=list)
    latency_ms: float = 0.0
    reason: str | None = None
    variant: str = ""
    tier: Literal["primary", "fallback"] = "primary"
    retry_after_s: float | None = None

    @field_validator("reason")
    @classmethod
    def _reason_shown_as_is(cls, v: str | None) -> str | None:
        return None if v is None else without_controls(v)


class Observation(Model):
    """Provenance: one engine's sighting of a result."""

    engine: str
    rank: int
    variant: str = ""
    url: str
    title: str = ""
    snippet: str = ""
    published: dt.datetime | None = None


class Passage(Model):
    """A piece of a page's main text that answers the query: ``text`` is the page text's ``[start:end]``."""

    text: str
    start: int
    end: int
    why: str | None = Field(None, exclude_if=lambda v: v is None)  # with explain: why it was chosen
    heading: str | None = Field(
        None, exclude_if=lambda v: v is None
    )  # with explain: the heading it sits under


PASSAGE_FIELDS = frozenset({"passages", "passages_status", "date_source", "date_conflict"})


class FusedResult(Model):
    url: str
    title: str
    snippet: str
    domain: str
    published: dt.datetime | None = None
    date_status: DateStatus = "unknown"
    score: float
    evidence_score: float
    selection_score: float
    metadata_delta: float = 0.0
    engines: list[str]
    engine_ranks: dict[str, int]
    contributions: dict[str, float]
    provenance: list[Observation]
    reason: str = ""
    # Only with passages asked for (absent from the JSON otherwise): the page's passages in page order, or None
    # with the reason the page gave none; where the date came from, and whether the page's own date and the
    # engines' disagree.
    passages: list[Passage] | None = None
    passages_status: PassagesStatus | None = None
    date_source: Literal["page", "engine"] | None = None
    date_conflict: bool = False


class CandidateExplanation(Model):
    """Every candidate the ranker saw, with its score parts and, if cut, the step that cut it."""

    url: str
    title: str
    snippet: str = ""
    domain: str
    engines: list[str]
    engine_ranks: dict[str, int]
    score: float | None = None
    score_parts: dict[str, float] = Field(default_factory=dict)
    selected: bool = False
    position: int | None = None
    cut_by: str | None = None
    cut_reason: str | None = None


class EngineReport(Model):
    engine: str
    status: EngineStatus
    latency_ms: float = 0.0
    rows: int = 0
    reason: str | None = None
    tier: Literal["primary", "fallback"] = "primary"

    @field_validator("reason")
    @classmethod
    def _reason_shown_as_is(cls, v: str | None) -> str | None:
        return None if v is None else without_controls(v)


# --- the outcome: what every face says first -------------------------------------------------------------

OutcomeStatus = Literal["results", "empty", "degraded", "failed"]
# What a failed engine's trouble most likely is, and what to do about it. Read off its status and reason
# (the transport's fixed, key-free wording); the advice is face-neutral (no CLI flag, no URL).
HINTS: dict[str, str] = {
    "network": "check the network connection (and any proxy settings)",
    "timeout": "no answer in time (a slow network or engine); try again later",
    "challenge": "a bot check (CAPTCHA) was asked for; the engine rests a while, try it later",
    "rate limit": "too many requests; try again after the engine's cooldown",
    "blocked": "the engine refused this client",
    "engine error": "the engine failed on its side; try it later",
    "page layout": "the engine's page could not be read (its layout may have changed)",
    "decoy": "pages unrelated to the query came back; they were left out",
    "budget": "this deployment's outbound budget for the engine is spent for now",
}
_NOT_SET_UP = ("no API key", "no base URL")  # the live source's words for an engine nobody set up
_COOLING = "cooling down"
REASON_CHARS = 100
NONE_TO_ASK = "no engine to ask for this search"  # each engine's reason in the outcome's message


def _hint(status: str, reason: str) -> str:
    text = reason.lower()
    if status == "skipped":  # a cooldown names the failure that started it: "cooling down 42 s after: ..."
        if text.startswith("outbound budget"):
            return "budget"
        cause = text.split("after:", 1)[1] if "after:" in text else text
        status = next(
            (s for word, s in (("captcha", "challenge"), ("challenge", "challenge"), ("rate limit", "rate-limited"))
             if word in cause),
            "error",
        )  # fmt: skip
        text = cause
    if status == "rate-limited":
        return "rate limit"
    if status in ("challenge", "decoy"):
        return status
    if status == "timeout":
        return "timeout"
    if status == "parse-timeout" or "pars" in text or "layout" in text:
        return "page layout"
    if "denied" in text or "http 403" in text or "http 401" in text:
        return "blocked"
    if any(
        word in text for word in ("connect", "proxy", "reset", "transport", "dns", "tls", "ssl", "closed")
    ):
        return "network"
    return "engine error"


class EngineTrouble(Model):
    """An engine that was asked (or would have been) and gave no usable answer: its status, why, and a hint."""

    engine: str
    status: str
    reason: str | None = None
    hint: str


class Outcome(Model):
    """How the search went, in one word and one line, computed once from the engine reports (every face renders
    it, none recomputes it): ``results``; ``empty`` (engines answered, nothing relevant); ``degraded`` (some
    engines failed, some answered); ``failed`` (no engine answered). ``failed`` lists the engines that did not
    answer (failures, and engines cooling down after one), ``not_set_up`` those skipped for want of a key or
    base URL; an engine not needed (a backup tier) or unable to serve the query as asked is in neither."""

    status: OutcomeStatus
    summary: str = Field(description="a few words: how many engines failed, each with its hint")
    message: str = Field(
        description="one line: each failed engine and why, advice, what answered, not set up"
    )
    failed: list[EngineTrouble] = Field(default_factory=list)
    answered: list[str] = Field(default_factory=list)
    not_set_up: list[str] = Field(default_factory=list)

    @classmethod
    def of(cls, engines: list[EngineReport], results: int) -> Outcome:
        if not engines:  # a recording without news, say: nothing was there to ask
            return cls(
                status="failed", summary=NONE_TO_ASK, message=NONE_TO_ASK[0].upper() + NONE_TO_ASK[1:] + "."
            )
        failed, answered, not_set_up = [], [], []
        for e in sorted(engines, key=lambda e: e.engine):  # by name: the order they answered in says nothing
            reason = e.reason or ""
            if e.status in ANSWERED:
                answered.append(e.engine)
            elif e.status == "skipped" and reason.startswith(_NOT_SET_UP):
                not_set_up.append(e.engine)
            elif e.status != "skipped" or reason.startswith((_COOLING, "outbound budget")):
                failed.append(
                    EngineTrouble(
                        engine=e.engine, status=e.status, reason=e.reason, hint=_hint(e.status, reason)
                    )
                )
        if not answered:
            status: OutcomeStatus = "failed"
        elif failed:
            status = "degraded"
        else:
            status = "results" if results else "empty"
        return cls(
            status=status,
            summary=_summary(status, failed, answered, results),
            message=_message(status, failed, answered, not_set_up, results),
            failed=failed,
            answered=answered,
            not_set_up=not_set_up,
        )


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= REASON_CHARS else text[: REASON_CHARS - 1].rstrip() + "…"


def _summary(status: str, failed: list[EngineTrouble], answered: list[str], results: int) -> str:
    troubles = ", ".join(f"{t.engine} ({t.hint})" for t in failed)
    if status == "failed":
        return f"no engine answered: {troubles}" if failed else "no engine answered"
    if status == "degraded":
        return f"{len(failed)} of {len(failed) + len(answered)} engines failed: {troubles}"
    engines = f"{len(answered)} engine{'s' if len(answered) > 1 else ''}"
    return f"{results} results from {engines}" if results else f"{engines} answered; no relevant result"


def _message(
    status: str, failed: list[EngineTrouble], answered: list[str], not_set_up: list[str], results: int
) -> str:
    """One line: what failed first (each engine with its status and reason, then each hint's advice), then
    what answered, then what nobody set up."""
    sentences = []
    troubles = "; ".join(
        f"{t.engine} {t.status}" + (f" ({_clip(t.reason)})" if t.reason else "") for t in failed
    )
    if status == "failed":
        sentences.append(f"no engine answered: {troubles}" if failed else "no engine answered")
    elif failed:
        sentences.append(f"{len(failed)} of {len(failed) + len(answered)} engines failed: {troubles}")
    for hint in dict.fromkeys(t.hint for t in failed):
        sentences.append(f"{hint}: {HINTS[hint]}")
    if answered:
        what = f"{results} result{'s' if results != 1 else ''}" if results else "no relevant result"
        sentences.append(f"{what} from {len(answered)} engine{'s' if len(answered) > 1 else ''} that answered "
                         f"({', '.join(answered)})")  # fmt: skip
    if not_set_up:
        sentences.append(f"not set up (no key or base URL): {', '.join(not_set_up)}")
    return " ".join(s[0].upper() + s[1:] + "." for s in sentences)


class SearchResponse(Model):
    query: str
    strategy: str
    results: list[FusedResult]
    engines: list[EngineReport]
    warnings: list[str] = Field(default_factory=list)
    truncated: bool = False
    took_ms: float = 0.0
    score_version: str
    config_fingerprint: str
    cached: bool = False
    # Another caller's identical search was in flight: this is its answer, shared (single-flight), not a new one.
    shared: bool = False
    candidates: list[CandidateExplanation] | None = None
    # How the search went; filled from ``engines`` and ``results`` when not given (``Outcome.of``).
    outcome: Outcome | None = None

    @model_validator(mode="after")
    def _with_outcome(self) -> SearchResponse:
        if self.outcome is None:
            self.outcome = Outcome.of(self.engines, len(self.results))
        return self

    def _plain(self) -> dict:
        """A search without passages says nothing of them: the rows' passage fields are left out of its JSON."""
        if any(r.passages is not None or r.passages_status is not None for r in self.results):
            return {}
        return {"exclude": {"results": {"__all__": set(PASSAGE_FIELDS)}}}

    def to_json_dict(self) -> dict:
        return self.model_dump(mode="json", by_alias=True, **self._plain())

    def to_json_bytes(self) -> bytes:
        return self.model_dump_json(by_alias=True, **self._plain()).encode("utf-8")
