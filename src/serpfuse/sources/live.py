"""The live source: each ``ask`` is one real engine call, and every way it can fail becomes a status.

One call goes: availability (key, base URL, time-range support, cooldown) -> ``EngineQuery`` -> the engine's
rate-limit queue -> (the ``build_preflight`` page, for engines that need one, or the one an earlier call
fetched while it is still good) -> ``build_request`` ->
``Transport.send`` -> ``classify_http`` -> ``parse`` (off the loop, under a budget: ``sources.parsing``) ->
the decoy check (``engines.decoy``: a list about the query's first word only is status ``decoy``, its rows
dropped, after one more try with a fresh first page where the engine has one) -> cooldown bookkeeping ->
``EngineAnswer``. The whole call, queue included, runs under the engine's timeout; the fan-out's
overall deadline cancels it from outside, and cancellation is never swallowed (nothing is left running).

Redirects: an HTML engine's answers are followed here, hop by hop (at most ``MAX_REDIRECTS``), and only to
http(s) URLs whose every address is public (``urls.address_refusal``: never loopback, private, link-local or
the other special ranges); the operator's base URL for the engine is the one such host allowed, so a base URL on
this machine serves the engine's own requests. A refused hop is the engine's error, and nothing is sent there.

Keys: every text that leaves here (reason, log line, rows) goes through ``KeyStore.mask``; a non-2xx body is
never read for engines whose ``INFO.read_error_body`` is False (AnySearch's 402 can carry generated
credentials).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import math
import os
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from types import ModuleType
from typing import Any
from urllib.parse import urljoin, urlsplit

from serpfuse.engines import ENGINES, base_url_env, classifier, get_engine, has_preflight, option_env
from serpfuse.engines.base import (
    BODY_HEAD_BYTES,
    ChallengeDetected,
    EngineError,
    EngineQuery,
    EngineTimeout,
    InvalidRequest,
    ParseFailure,
    QueryNotServed,
    RateLimited,
    Reply,
    RequestSpec,
)
from serpfuse.engines.decoy import decoy_reason
from serpfuse.errors import ConfigError, SerpfuseError
from serpfuse.models import EngineAnswer, EngineRow, SearchRequest
from serpfuse.secrets import KeyStore, url_secrets
from serpfuse.sources import parsing
from serpfuse.sources.base import EngineFacts, EngineSlot, SourceBase
from serpfuse.sources.capped_body import HttpResponse
from serpfuse.sources.redirects import check_redirect, redirected, sent_url
from serpfuse.sources.transport import DEFAULT_TIMEOUT_S, Transport
from serpfuse.sources.transport_errors import ImpersonationUnavailable
from serpfuse.sources.transport_limits import (
    DEFAULT_CONNECTIONS,
    DEFAULT_IDLE_CONNECTIONS,
    DEFAULT_KEEPALIVE_S,
    DEFAULT_MAX_BYTES,
)
from serpfuse.state.cooldown import CooldownState, CooldownStore, InMemoryCooldownStore, fit_to_engine
from serpfuse.state.ratelimit import Buckets, QueueTooLong, RateLimiter
from serpfuse.urls import rebase_url
from serpfuse.workers import WORKERS

log = logging.getLogger(__name__)

# Called with (engine, variant, response) for every HTTP response an engine receives: `serpfuse record`.
ResponseHook = Callable[[str, str, HttpResponse], None]

PROXY_ENV = "SERPFUSE_PROXY"
IMPERSONATE_ENV = "SERPFUSE_IMPERSONATE"
ROWS_WANTED = 10  # rows asked of each engine: fusion needs more candidates than the ~8 it returns
LATENCY_WEIGHT = 0.3  # of the newest answer time in an engine's moving average
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
MAX_REDIRECTS = 5
PARSE_BUDGET_S = 2.0  # CPU time one answer may cost to parse; bounded inputs (engines.bounds) need < 0.3 s


def _modules_of(engines: Iterable[str | ModuleType] | None) -> dict[str, ModuleType]:
    """Engine modules by name, in the order given (default: the registry). A name is looked up in the registry
    (``UnknownEngine`` if absent); a module given itself wins over the registry's by the same name."""
    if engines is None:
        return dict(ENGINES)
    out: dict[str, ModuleType] = {}
    for item in engines:
        if isinstance(item, str):
            out.setdefault(item, get_engine(item))
        else:
            out[item.INFO.name] = item
    return out


def _impersonate_from_env(value: str | None) -> bool:
    """On unless switched off: ``$SERPFUSE_IMPERSONATE=0`` (or false/no/off) sends HTML engines via httpx2."""
    return (value or "").strip().lower() not in ("0", "false", "no", "off")


class LiveSource(SourceBase):
    """A ``Source`` over the real engines (or any engine modules given in ``engines``)."""

    name = "live"

    def __init__(
        self,
        keys: KeyStore,
        cooldowns: CooldownStore,
        transport: Transport,
        engines: Iterable[str | ModuleType] | None = None,
        base_urls: Mapping[str, str] | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        *,
        contacts: Mapping[str, str] | None = None,
        rate_limiter: RateLimiter | None = None,
        budget: Buckets | None = None,
        on_response: ResponseHook | None = None,
        env: Mapping[str, str] | None = None,
        clock: Callable[[], float] = time.time,
        owns_transport: bool = False,
    ) -> None:
        self.keys = keys
        self.cooldowns = cooldowns
        self.transport = transport
        self.modules = _modules_of(engines)
        self.timeout_s = timeout_s
        self.rate_limiter = rate_limiter or RateLimiter()
        self.budget = budget  # requests per engine per minute, shared by the fleet through Redis
        self.on_response = on_response
        self._base_urls = dict(base_urls or {})
        keys.also_mask(url_secrets(self._base_urls.values()))  # a settings file's base URL password
        self._contacts = dict(contacts or {})
        self._env = os.environ if env is None else env
        self._clock = clock
        self._owns_transport = owns_transport
        self._started_parsers = False
        # Sync mirror of the cooldown store for slots(); ask() re-checks the (possibly shared) store itself.
        self._cooling: dict[str, CooldownState] = {}
        self._latency_s: dict[str, float] = {}  # each engine's recent answer time (see expected_s)
        self._kept_pages: dict[str, KeptPage] = {}  # preflight pages still good (INFO.preflight_reuse_s)
        self._profiles: dict[str, str | None] = {}  # each browser engine's impersonated release (_profile)

    @classmethod
    def from_environment(
        cls,
        *,
        engines: Iterable[str] | None = None,
        proxy: str | None = None,
        impersonate: bool | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        cooldowns: CooldownStore | None = None,
        connections: int = DEFAULT_CONNECTIONS,
        idle_connections: int = DEFAULT_IDLE_CONNECTIONS,
        keepalive_s: float = DEFAULT_KEEPALIVE_S,
        max_bytes: int = DEFAULT_MAX_BYTES,
        **options: Any,
    ) -> LiveSource:
        """Keys from env/keys file, proxy from ``$SERPFUSE_PROXY``, impersonation from ``$SERPFUSE_IMPERSONATE``.

        Raises ``ConfigError`` (a one-line message; ``KeysFileError`` is one) for an unusable keys file or a
        missing curl_cffi.
        """
        try:
            keys = KeyStore()
            transport = Transport(
                proxy=proxy or os.environ.get(PROXY_ENV) or None,
                impersonate=_impersonate_from_env(os.environ.get(IMPERSONATE_ENV))
                if impersonate is None
                else impersonate,
                connections=connections,
                idle_connections=idle_connections,
                keepalive_s=keepalive_s,
                max_bytes=max_bytes,
            )
        except ImpersonationUnavailable as exc:
            raise ConfigError(str(exc)) from None
        return cls(
            keys,
            cooldowns or InMemoryCooldownStore(),
            transport,
            engines=engines,
            timeout_s=timeout_s,
            owns_transport=True,
            **options,
        )

    def __repr__(self) -> str:
        return f"LiveSource(engines={list(self.modules)!r}, timeout_s={self.timeout_s})"

    def start(self) -> None:
        """For a server, before it serves: parse answers in worker processes from now on (``sources.parsing``),
        and import curl_cffi now when a browser engine would (on the first such call, in a thread, it held the
        GIL for most of a second while the loop served others)."""
        WORKERS.start()
        self._started_parsers = True
        if any(m.INFO.transport == "browser" for m in self.modules.values()):
            self.transport.pick_profile()

    async def aclose(self) -> None:
        if self._started_parsers:
            WORKERS.close()
        if self._owns_transport:
            await self.transport.aclose()

    # --- availability ------------------------------------------------------------------------------------

    def base_url(self, engine: str) -> str | None:
        """Where the operator sends this engine's requests: the ``base_urls`` given (the settings'
        ``[engines.NAME] base_url``), else ``SERPFUSE_ENGINES__NAME__BASE_URL``, else an older variable the engine
        names (``SERPFUSE_SEARXNG_URL``); None for the engine's own address."""
        if self._base_urls.get(engine):
            return self._base_urls[engine]
        module = self.modules.get(engine)
        for name in (base_url_env(engine), *(module.INFO.base_url_envs if module else ())):
            if self._env.get(name, "").strip():
                return self._env[name].strip()
        return None

    def contact(self, engine: str) -> str | None:
        """The operator's contact for an engine whose policy asks for one (Wikimedia's): the ``contacts`` given
        (the settings' ``[engines.NAME] contact``), else ``SERPFUSE_ENGINES__NAME__CONTACT``."""
        module = self.modules.get(engine)
        if module is None or not module.INFO.user_agent_contact:
            return None
        return self._contacts.get(engine) or self._env.get(option_env(engine, "contact"), "").strip() or None

    def _static_reason(self, module: ModuleType, request: SearchRequest) -> str | None:
        """Why this engine cannot serve this request whatever its cooldown, or None."""
        info = module.INFO
        if info.needs_key and not self.keys.get(info.name):
            return f"no API key ({self.keys.hint(info.name)})"
        if info.needs_base_url and not self.base_url(info.name):
            envs = (*info.base_url_envs, base_url_env(info.name))
            return f"no base URL (set {' or '.join(envs)})"
        if request.time_range and not info.time_range_support:
            return "cannot filter by time range"
        if (request.date_from or request.date_to) and not info.date_range_support:
            return "cannot filter by date range"
        return None

    def expected_s(self, engine: str) -> float | None:
        """How long ``engine`` is expected to take to answer (a moving average of its recent answers), or None
        before it has answered: the fan-out asks the slowest first (``fanout._ask_all``)."""
        return self._latency_s.get(engine)

    def identity(self) -> str:
        return f"{self.name}:{','.join(sorted(self.modules))}"

    def engine_names(self, query: str | None = None) -> list[str]:
        return list(self.modules)

    def facts(self, engine: str) -> EngineFacts:
        module = self.modules.get(engine)
        if module is None:
            return EngineFacts()
        info = module.INFO
        reason = self._static_reason(module, SearchRequest(query="engine status"))
        return EngineFacts(
            tier=info.tier, region=info.region, key=self.keys.status(engine), unavailable=reason
        )

    def _cooling_state(self, engine: str) -> CooldownState | None:
        state = self._cooling.get(engine)
        if state is not None and not state.active(self._clock()):
            del self._cooling[engine]
            return None
        return state

    def slots(self, request: SearchRequest) -> list[EngineSlot]:
        out = []
        for name, module in self.modules.items():
            reason = self._static_reason(module, request)
            if reason is None and (state := self._cooling_state(name)) is not None:
                reason = state.describe(self._clock())
            info = module.INFO
            out.append(
                EngineSlot(
                    name=name,
                    tier=info.tier,
                    region=info.region,
                    available=reason is None,
                    unavailable_reason=reason,
                )
            )
        return out

    async def refresh(self) -> None:
        """Pull every engine's cooldown from the store into the mirror ``slots()`` reads (for shared stores)."""
        for name in self.modules:
            state = await self.cooldowns.get(name)
            if state is None:
                self._cooling.pop(name, None)
            else:
                self._cooling[name] = state

    # --- one call ----------------------------------------------------------------------------------------

    def _query(self, module: ModuleType, variant: str, request: SearchRequest) -> EngineQuery:
        info = module.INFO
        wants_key = info.needs_key or info.accepts_key
        return EngineQuery(
            text=variant or request.query,
            limit=max(1, min(info.rows_per_request, max(request.limit, ROWS_WANTED))),
            time_range=request.time_range,
            date_from=request.date_from,
            date_to=request.date_to,
            region=request.region,
            language=request.language,
            include_domains=tuple(request.include_domains),
            exclude_domains=tuple(request.exclude_domains),
            api_key=self.keys.get(info.name) if wants_key else None,
            base_url=self.base_url(info.name),
            contact=self.contact(info.name),
        )

    def _timeout_for(self, module: ModuleType) -> float:
        return min(float(module.INFO.timeout_s or self.timeout_s), self.timeout_s)

    async def ask(self, engine: str, variant: str, request: SearchRequest) -> EngineAnswer:
        started = time.monotonic()
        module = self.modules.get(engine)
        if module is None:
            return EngineAnswer(engine=engine, status="skipped", variant=variant, reason="unknown engine")
        tier = module.INFO.tier

        def answer(status: str, **fields: Any) -> EngineAnswer:
            seconds = time.monotonic() - started
            latency_ms = round(seconds * 1000, 1)
            if status in ("ok", "empty"):
                last = self._latency_s.get(engine)
                self._latency_s[engine] = (
                    seconds if last is None else last + LATENCY_WEIGHT * (seconds - last)
                )
            return EngineAnswer(
                engine=engine, status=status, variant=variant, tier=tier, latency_ms=latency_ms, **fields
            )

        reason = self._static_reason(module, request)
        if reason is not None:
            return answer("skipped", reason=reason)
        state = await self.cooldowns.get(engine)
        if state is not None:
            self._cooling[engine] = state
            return answer("skipped", reason=state.describe(self._clock()))
        if self.budget is not None and (wait_s := await self.budget.take(engine)) > 0:
            # Spent by this deployment, not refused by the engine: no cooldown, and no request sent.
            return answer("skipped", reason=f"outbound budget spent; next request in {math.ceil(wait_s)} s")

        timeout_s = self._timeout_for(module)
        error: EngineError | None = None
        decoy: str | None = None
        try:
            async with asyncio.timeout(timeout_s):
                waited_s = await self.rate_limiter.wait_turn(
                    engine, module.INFO.min_interval_s, max_wait_s=timeout_s
                )
                # A call that queued behind one the engine rate-limited or blocked is not sent after it: the
                # engine asked for a pause, and a second request in the same search would only lengthen it.
                if waited_s > 0 and (state := await self.cooldowns.get(engine)) is not None:
                    self._cooling[engine] = state
                    return answer("skipped", reason=state.describe(self._clock()))
                q = self._query(module, variant, request)
                rows = await self._call(module, variant, q, started + timeout_s)
                decoy = decoy_reason(rows, q.text)
                if decoy is not None and has_preflight(module):
                    # A stale first page (Bing's cookie jar) is what makes a decoy: once more with a fresh one.
                    log.info("%s: decoy list; asking once more with a fresh first page", engine)
                    self._kept_pages.pop(engine, None)
                    rows = await self._call(module, variant, q, started + timeout_s)
                    decoy = decoy_reason(rows, q.text)
        except QueueTooLong:
            # Our own queue, not the engine's fault: no cooldown.
            return answer("timeout", reason="rate-limit queue is longer than the engine's timeout")
        except NothingToSend:
            return answer("skipped", reason="the engine cannot serve this query")
        except QueryNotServed as exc:
            return answer("skipped", reason=str(exc))
        except InvalidRequest as exc:
            # Built from the caller's input (a region no host name can hold...): the caller's mistake, so
            # the engine is not cooled down for it, here or, through a shared store, for anyone else.
            return answer("skipped", reason=self.keys.mask(exc.message))
        except TimeoutError:
            error = EngineTimeout(f"no answer within {timeout_s:g} s")
        except EngineError as exc:
            error = exc
        except Exception as exc:  # a parser bug must not take the search down; its text may quote the body
            error = ParseFailure(f"parser failed: {type(exc).__name__}")

        if error is not None:
            if isinstance(error, ChallengeDetected):
                # The bot check has this browser's fingerprint now: the engine's next call comes as another.
                self._profiles.pop(engine, None)
            new_state = await self.cooldowns.record_failure(engine, fit_to_engine(module.INFO, error))
            self._cooling[engine] = new_state
            safe_reason = self.keys.mask(error.message)
            log.info("%s: %s: %s", engine, error.status, safe_reason)
            retry_after = error.retry_after_s if isinstance(error, RateLimited) else None
            return answer(error.status, reason=safe_reason, retry_after_s=retry_after)

        if decoy is not None:
            # An answer about another question: no cooldown (the next query may be answered), no rows.
            self._kept_pages.pop(engine, None)
            log.info("%s: decoy: %s", engine, decoy)
            return answer("decoy", reason=decoy)
        await self.cooldowns.record_success(engine)
        self._cooling.pop(engine, None)
        rows = [
            self._safe_row(row, variant)
            for row in cap_rows(rows, self._query(module, variant, request).limit)
        ]
        return answer("ok" if rows else "empty", rows=rows)

    async def _call(
        self, module: ModuleType, variant: str, q: EngineQuery, deadline: float
    ) -> list[EngineRow]:
        info = module.INFO
        hook = self.on_response
        options = {
            "timeout_s": max(0.001, deadline - time.monotonic()),
            "read_error_body": info.read_error_body,
            "browser": info.transport == "browser",
            # Keyless HTML pages redirect routinely; keyed APIs must not carry their key header to another host.
            "follow_redirects": info.kind == "html",
        }
        if options["browser"]:  # one browser release for the whole call: a preflight's token is tied to it
            options["profile"] = await self._profile(info.name)
        run = getattr(module, "run", None)
        if run is not None:  # a multi-step engine: it holds the conversation, the answer parses like any
            seen = None if hook is None else (lambda response: hook(info.name, variant, response))
            client = StepClient(lambda spec: self._send(spec, q.base_url, options), seen)
            status, headers, body = await run(client, q)
            return await self._parse(module, HttpResponse(status, dict(headers), body), q, deadline)
        if has_preflight(module):
            spec = await self._preflight(module, variant, q, options)
            options["timeout_s"] = max(
                0.001, deadline - time.monotonic()
            )  # the second request gets what is left
        else:
            try:
                spec = module.build_request(q)
            except QueryNotServed:
                raise
            except Exception as exc:  # built from the caller's text and options only
                raise InvalidRequest(f"invalid request: {type(exc).__name__}") from None
        if spec is None:
            raise NothingToSend()
        try:
            response = await self._send(spec, q.base_url, options)
            if hook is not None:
                hook(info.name, variant, response)
            self._raise_for_status(module, response)
            return await self._parse(module, response, q, deadline)
        except Exception:
            # A search that failed may have failed for its first page (a token gone stale): fetch it anew.
            self._kept_pages.pop(info.name, None)
            raise

    @staticmethod
    async def _parse(
        module: ModuleType, response: HttpResponse, q: EngineQuery, deadline: float
    ) -> list[EngineRow]:
        args = (response.status, response.headers, response.body, q)
        budget_s = min(PARSE_BUDGET_S, deadline - time.monotonic() - 0.01)
        return await parsing.parse_answer(module.parse, args, budget_s)

    async def _preflight(
        self, module: ModuleType, variant: str, q: EngineQuery, options: dict[str, Any]
    ) -> Any:
        """The engine's first page (Startpage's home page and its token), then the request built from it. The
        first page is recorded only when it ends the call, so a recording keeps the page ``parse`` reads."""
        info = module.INFO
        first = module.build_preflight(q)
        if first is None:
            raise NothingToSend()
        kept = self._kept_pages.get(info.name)
        if kept is not None and kept.serves(q.base_url, time.monotonic()):
            options["profile"] = kept.profile  # the search goes out as the browser the page was given to
            return module.build_request(q, kept.response)
        response = await self._send(first, q.base_url, options)
        try:
            self._raise_for_status(module, response)
            spec = module.build_request(q, response)
        except EngineError:
            if self.on_response is not None:
                self.on_response(info.name, variant, response)
            raise
        if info.preflight_reuse_s > 0:
            until = time.monotonic() + info.preflight_reuse_s
            self._kept_pages[info.name] = KeptPage(response, options.get("profile"), q.base_url, until)
        return spec

    async def _profile(self, engine: str) -> str | None:
        """The browser release this engine is asked as: the same one call after call, as one person's browser
        (a new fingerprint on every search is what no person has), until the engine challenges it."""
        if engine not in self._profiles:
            # In a thread: the first pick imports curl_cffi (most of a second), which must not stall the loop.
            self._profiles[engine] = await asyncio.to_thread(self.transport.pick_profile)
        return self._profiles[engine]

    async def _send(self, spec: RequestSpec, base_url: str | None, options: dict[str, Any]) -> HttpResponse:
        """One request of an engine's call, sent to the operator's base URL when there is one: its scheme, host
        and port replace the engine's, the path, parameters and headers stay. Redirects, when the call follows
        them, are followed here, each hop only to a public http(s) address (or the base URL's own host)."""
        if base_url:
            try:
                spec = dataclasses.replace(spec, url=rebase_url(spec.url, base_url))
            except ValueError:
                raise InvalidRequest("the engine's base URL is not an http(s) URL") from None
        follow = options.get("follow_redirects", False)
        hop_options = {**options, "follow_redirects": False}
        for _ in range(MAX_REDIRECTS + 1):
            response = await self.transport.send(spec, **hop_options)
            location = response.headers.get("location")
            if not follow or response.status not in REDIRECT_STATUSES or not location:
                return response
            target = urljoin(sent_url(spec), location.strip())
            # The hop goes to the address checked, not to whatever the name resolves to a moment later.
            hop_options["connect_to"] = await check_redirect(target, base_url)
            spec = redirected(spec, response.status, target)
        raise EngineError(f"too many redirects ({urlsplit(spec.url).hostname or '?'})")

    @staticmethod
    def _raise_for_status(module: ModuleType, response: HttpResponse) -> None:
        # The engine's own mapper when it has one (SearXNG's 403, AnySearch's body-blind one), else the central one.
        error = classifier(module)(response.status, response.headers, response.body[:BODY_HEAD_BYTES])
        if error is not None:
            raise error

    def _safe_row(self, row: EngineRow, variant: str) -> EngineRow:
        update: dict[str, Any] = {"variant": variant}
        for name in ("url", "title", "snippet"):
            value = getattr(row, name)
            masked = self.keys.mask(value)
            if masked != value:
                update[name] = masked
        return row.model_copy(update=update)


@dataclasses.dataclass(frozen=True)
class KeptPage:
    """A preflight page kept for later calls: the answer, the browser release it was given to, the base URL it
    came from, and until when (``time.monotonic``) it serves."""

    response: HttpResponse
    profile: str | None
    base_url: str | None
    until: float

    def serves(self, base_url: str | None, now: float) -> bool:
        return now < self.until and base_url == self.base_url


class StepClient:
    """The ``EngineClient`` a multi-step engine's ``run`` holds: each step goes out as the live source sends any
    request of the call (base URL, the call's options), and ``on_response`` sees each answer."""

    def __init__(
        self,
        send: Callable[[RequestSpec], Any],
        on_response: Callable[[HttpResponse], None] | None = None,
    ) -> None:
        self._send = send
        self._on_response = on_response

    async def send(self, spec: RequestSpec) -> Reply:
        response = await self._send(spec)
        if self._on_response is not None:
            self._on_response(response)
        return response


class NothingToSend(SerpfuseError):
    """``build_request`` returned None: the engine cannot express this query (SearXNG's ``url = None``)."""


def cap_rows(rows: list[EngineRow], limit: int) -> list[EngineRow]:
    """At most ``limit`` rows per engine name, by the engine's own rank (SearXNG's one answer holds several
    engines' lists): an engine that floods its answer gets no more say than one that answers as asked."""
    kept: dict[str, int] = defaultdict(int)
    out = []
    for row in sorted(rows, key=lambda r: (r.engine, r.rank)):
        if kept[row.engine] < limit:
            kept[row.engine] += 1
            out.append(row)
    return out
