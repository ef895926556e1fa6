"""robots.txt for the reader: fetched through the same guard, parsed by protego, cached per origin.

protego reads robots.txt as RFC 9309 says (the standard library's parser does not): ``*`` matches any run of
characters and ``$`` ends a pattern, and of the rules in the matching group the longest match decides (Allow
wins a tie), whatever their order in the file. RFC 9309's reading of failures: a robots.txt that is missing or
forbidden (4xx) allows everything; a server error (5xx) disallows everything for that origin until the entry
expires. When robots.txt cannot be fetched at all (refused, unresolvable, unreachable) the read fails with
that cause, as the page itself would. Pages of one origin read at once (a search's passages) wait for one
download of its robots.txt, not one each."""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable

from protego import Protego

from serpfuse.reader.fetch import ROBOTS_AGENT, Fetched, HttpStatusError, Limits, decode
from serpfuse.reader.guard import Target
from serpfuse.reader.models import RobotsDisallowed, Unsupported

ROBOTS_TTL_S = 3600.0
ROBOTS_LIMITS = Limits(max_bytes=512 * 1024, timeout_s=5.0)  # RFC 9309: at least 500 KiB are parsed
MAX_ORIGINS = 1024
ROBOTS_TYPES = frozenset({"text/plain", ""})
RobotsGet = Callable[[str], Awaitable[Fetched]]  # the reader's own guarded GET, with ROBOTS_LIMITS
# An origin's rules: the parsed file, or True (no rules: allow all) or False (unavailable: disallow all).
Rules = Protego | bool


def allows(rules: Rules, url: str) -> bool:
    return rules if isinstance(rules, bool) else rules.can_fetch(url, ROBOTS_AGENT)


class RobotsCache:
    def __init__(self, *, ttl_s: float = ROBOTS_TTL_S, clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl_s = ttl_s
        self._clock = clock
        self._rules: OrderedDict[str, tuple[float, Rules]] = OrderedDict()
        self._loading: dict[str, asyncio.Task[Rules]] = {}  # origin -> its robots.txt on its way
        self.fetches = 0  # robots.txt downloads (tests check the cache is used)

    async def check(self, target: Target, get: RobotsGet) -> None:
        """Raise ``RobotsDisallowed`` when the origin's robots.txt disallows ``path_url`` for serpfuse."""
        origin = f"{target.scheme}://{target.host}:{target.port}"
        entry = self._rules.get(origin)
        if entry is None or entry[0] <= self._clock():
            entry = (self._clock() + self.ttl_s, await self._shared_load(origin, target, get))
            self._rules[origin] = entry
            self._rules.move_to_end(origin)
            while len(self._rules) > MAX_ORIGINS:
                self._rules.popitem(last=False)
        if not allows(entry[1], target.url):
            raise RobotsDisallowed(f"robots.txt of {target.host} disallows this page for {ROBOTS_AGENT}")

    async def _shared_load(self, origin: str, target: Target, get: RobotsGet) -> Rules:
        """The origin's rules, from the download already on its way when there is one. The download is a task of
        its own: a reader that gives up waiting (its deadline) does not cancel it for the others."""
        task = self._loading.get(origin)
        if task is None:
            task = self._loading[origin] = asyncio.ensure_future(self._load(target, get))
            task.add_done_callback(lambda done: self._landed(origin, done))
        return await asyncio.shield(task)

    def _landed(self, origin: str, task: asyncio.Task[Rules]) -> None:
        if self._loading.get(origin) is task:
            del self._loading[origin]
        if not task.cancelled():
            task.exception()  # retrieved: every waiter may have gone; theirs to raise, not the loop's to log

    async def _load(self, target: Target, get: RobotsGet) -> Rules:
        self.fetches += 1
        host = f"[{target.host}]" if ":" in target.host else target.host
        default_port = 443 if target.scheme == "https" else 80
        netloc = host if target.port == default_port else f"{host}:{target.port}"
        try:
            fetched = await get(f"{target.scheme}://{netloc}/robots.txt")
        except (HttpStatusError, Unsupported) as exc:
            # missing, forbidden or not a robots file: no rules; a server error: the site says it is
            # unavailable, so no crawler now
            return isinstance(exc, Unsupported) or exc.page_status < 500
        # Anything else (refused, unresolvable, unreachable, too slow) is the page's own failure too: it
        # propagates with its cause rather than as a robots.txt refusal.
        return Protego.parse(decode(fetched))
