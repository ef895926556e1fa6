"""Reading one URL or file: guard, robots.txt, fetch, extract, cache. Every interface calls ``Reader.read``."""

from __future__ import annotations

import contextlib
import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from serpfuse.reader import workers
from serpfuse.reader.fetch import Dial, Fetched, Limits, Resolver, direct, fetch
from serpfuse.reader.guard import Policy, Target, parse_target
from serpfuse.reader.models import CallerError, Page, Unsupported
from serpfuse.reader.pages import sniff
from serpfuse.reader.robots import ROBOTS_LIMITS, ROBOTS_TYPES, RobotsCache
from serpfuse.reader.workers import Budget
from serpfuse.urls import canonical_url, host_of
from serpfuse.workers import ranking

if TYPE_CHECKING:
    from serpfuse.settings import Settings
    from serpfuse.state.cache import ResultCache

# Bump when a Page's layout, the extraction or the keying changes, so old entries are not served. 2: pages are
# no longer filed under the URL their own <link rel=canonical> names.
CACHE_VERSION = 2


def page_key(url: str) -> str:
    return "page:" + hashlib.sha256(f"{CACHE_VERSION}:{cache_url(url)}".encode()).hexdigest()


def cache_url(url: str) -> str:
    """The URL a page is filed under: the URL's own normal form (host case, default port, tracking parameters,
    query order and fragment do not make another page), never the URL a search engine's redirector wraps: a
    redirector's answer is its own page, and must not stand in for its target's."""
    normal = canonical_url(url)
    if normal is None or host_of(normal) != host_of(url):
        return url.strip().split("#", 1)[0]
    return normal


@dataclass
class Reader:
    policy: Policy = field(default_factory=Policy)
    limits: Limits = field(default_factory=Limits)
    robots: bool = True
    resolver: Resolver | None = None
    cache: ResultCache | None = None
    cache_ttl_s: float = 3600.0
    robots_cache: RobotsCache = field(default_factory=RobotsCache)
    dial: Dial = direct  # tests route a pretend public address to their loopback server
    budget: Budget = field(default_factory=Budget)
    # Extract in worker processes (reader.workers)? None: as this process ranks, in a worker when it is a server.
    workers: bool | None = None

    @classmethod
    def from_settings(cls, settings: Settings, cache: ResultCache | None = None) -> Reader:
        """The deployment's reader: loopback and extra ports only as its own settings say, never a request."""
        policy = Policy(allow_loopback=settings.read_allow_loopback, ports=frozenset(settings.read_ports))
        return cls(
            policy=policy,
            limits=Limits(max_bytes=settings.read_max_bytes, timeout_s=settings.read_timeout_s),
            robots=settings.read_robots,
            cache=cache,
            cache_ttl_s=settings.read_cache_ttl_s,
        )

    async def read(self, url: str, *, use_cache: bool = True) -> Page:
        """The page at ``url``, from the cache when read recently. Raises ``ReadError`` with one line.

        A page is cached under the URL asked for and the URL it was served from after redirects: both name
        what the server sent. The URL the page's own ``<link rel=canonical>`` names is metadata only: any page
        can name any URL, and filing it there would let one page stand in for another's text."""
        parse_target(url, self.policy)  # what is no URL, or one the policy refuses, never reaches the cache
        cache = self.cache if use_cache else None
        if cache is not None:
            hit = await _cache_get(cache, page_key(url))
            if hit is not None:
                hit.url = url  # filed by another URL that reached the same page (a redirect's start)
                return hit
        fetched = await fetch(
            url,
            policy=self.policy,
            resolver=self.resolver,
            limits=self.limits,
            dial=self.dial,
            before_hop=self._robots_check if self.robots else None,
        )
        page = await self.extract(fetched, url)
        if cache is not None:
            body = page.to_json_bytes()
            for key in {page_key(url), page_key(fetched.url)}:
                # an unreachable cache costs a refetch later, never this answer
                with contextlib.suppress(Exception):
                    await cache.set_body(key, body, self.cache_ttl_s)
        return page

    async def read_file(self, path: Path) -> Page:
        """A local file, extracted under the same budget as a page (never cached: it is read in no time)."""
        page = await self.extract(load_file(path), str(path))
        page.final_url = None
        return page

    async def extract(self, fetched: Fetched, asked: str) -> Page:
        """A body to a page, off the event loop within the budget (``reader.workers``)."""
        in_workers = self.workers if self.workers is not None else not ranking.ranks_here()
        return await workers.extract(fetched, asked, self.budget, in_workers=in_workers)

    async def _robots_check(self, target: Target) -> None:
        await self.robots_cache.check(target, self._get_robots)

    async def _get_robots(self, url: str) -> Fetched:
        return await fetch(
            url,
            policy=self.policy,
            resolver=self.resolver,
            limits=ROBOTS_LIMITS,
            accept=ROBOTS_TYPES,
            dial=self.dial,
        )


async def _cache_get(cache: ResultCache, key: str) -> Page | None:
    try:
        body = await cache.get_body(key)
        if body is None:
            return None
        page = Page.model_validate_json(body)
    except Exception:  # unreachable cache or an entry of another version: a miss
        return None
    page.cached = True
    return page


FILE_TYPES = {
    ".pdf": "application/pdf",
    ".html": "text/html",
    ".htm": "text/html",
    ".xhtml": "text/html",
    ".txt": "text/plain",
    ".md": "text/markdown",
    ".markdown": "text/markdown",
}


def load_file(path: Path, max_bytes: int = 50 * 1024 * 1024) -> Fetched:
    """A local file as a body to extract, typed by its extension (sniffed when it has none)."""
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise CallerError(f"{path} is larger than {max_bytes:,} bytes")
        body = path.read_bytes()
    except OSError as exc:
        raise CallerError(f"cannot read {path}: {exc.strerror or exc}") from None
    kind = FILE_TYPES.get(path.suffix.lower()) or (sniff(body) if not path.suffix else None)
    if kind is None:
        raise Unsupported(f"unsupported file type {path.suffix} (the reader reads HTML, PDF and plain text)")
    return Fetched(url=path.resolve().as_uri(), status=200, content_type=kind, charset=None, body=body)


def cache_for(settings: Settings) -> ResultCache | None:
    """The deployment's page cache, the result cache's store (None when the cache is off). Raises ConfigError
    when the settings' cache cannot be used."""
    from serpfuse.settings import ConfigError
    from serpfuse.state import UnusableStore, open_stores

    try:
        return open_stores(settings).pages
    except UnusableStore as exc:
        raise ConfigError(str(exc)) from None


def is_url(target: str) -> bool:
    return "://" in target.split("?", 1)[0][:16]
