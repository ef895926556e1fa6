"""Every exception serpfuse raises, as one tree under ``SerpfuseError``.

Each class says what a face does with it: ``http_status`` is what the HTTP API (and the web page) answers,
``exit_code`` what a command exits with. A face catches ``SerpfuseError`` once and reads both from the class, so
a new error is placed by choosing its parent here, not by adding it to a list in each face. The message is one
line, safe to show the caller: never a key, never a response body.

The hierarchy (``tests/test_errors.py`` checks that every exception class in ``serpfuse`` is drawn here, derives
from ``SerpfuseError`` and has a name no other class has)::

    SerpfuseError                          500 / exit 1: not expected to reach a face
    ├── InputError (ValueError)            400 / exit 2: the caller's request or file cannot be served as given
    │   ├── QueryTooLong                   service
    │   ├── UnknownStrategy                ranking.rankers
    │   ├── UnknownEngine                  engines
    │   │   └── NoEngineInCategory         sources.fanout
    │   ├── BadPage                        serve.page: a page number the web page cannot show
    │   ├── BadGrade                       judge.app
    │   ├── QueryFileError                 cli.record: the queries file of record and doctor
    │   ├── TrecFormatError                bench.trec: a run or qrels line
    │   ├── JudgmentsError                 bench.judged_recording
    │   ├── CalibrationError               bench.calibrate
    │   └── BenchError                     bench.modes
    ├── ConfigError                        500 / exit 2: the settings file, the environment, the keys file
    │   ├── KeysFileError                  secrets
    │   ├── UnusableStore (ValueError)     state: settings no cache or cooldown store can work with
    │   └── ImpersonationUnavailable       sources.transport_errors (also a RuntimeError)
    ├── Unavailable                        503 / exit 1: nothing can answer this now
    │   └── SourceError                    sources.base: the source cannot serve the request at all
    │       └── ReplayError                404 / exit 2, sources.replay: the recording has no such query or file
    ├── EngineError                        engines.base: one engine's failure, kept in its answer, never raised
    │   │                                  to a face (``status`` is the engine's status word, not HTTP)
    │   ├── ChallengeDetected
    │   ├── RateLimited
    │   ├── AccessDenied
    │   ├── ParseFailure
    │   │   └── ResponseTooLarge           sources.transport_errors
    │   ├── EngineTimeout
    │   ├── InvalidRequest
    │   └── ParseOverrun
    ├── QueryNotServed                     engines.base: the engine cannot take this query; it is skipped
    ├── ReadError                          502 / exit 1, reader.models: the page could not be read
    │   ├── PageOverBudget                 too large or too slow to read
    │   ├── FetchTooLarge                  reader.fetch
    │   ├── HttpStatusError                reader.fetch
    │   ├── Challenge                      a bot check answered instead of the page
    │   ├── NotReadInTime                  reader.evidence: the page was not read before the deadline
    │   └── CallerError                    422 / exit 2: the caller asked for what cannot be read
    │       ├── Unsupported
    │       ├── RobotsDisallowed
    │       ├── JsShell                    an empty page its scripts would fill
    │       ├── Refused                    reader.guard
    │       │   └── InvalidURL
    │       ├── ExtractionError            reader.extract
    │       └── BadRequest                 400, serve.read_shapes
    ├── ApiError                           serve.errors: the HTTP API's own refusals, status given per instance
    └── the signals one module sends another, caught where they are raised; a face never sees them:
        ├── NothingToSend                  sources.live: the engine cannot express this query
        ├── NoWorker                       workers.pool: no worker process is up; run in a thread
        ├── QueueTooLong                   state.ratelimit: the engine's next slot is past the deadline
        ├── OverBudget                     sources.content_coding: the decoded body would pass its cap
        ├── UndecodableBody                sources.content_coding
        └── BodyTooLarge                   sources.curl_client: the transfer passed its cap

Only the bases live here (this module imports nothing of serpfuse, so any layer can raise them); each leaf is
defined beside the code that raises it.
"""

from __future__ import annotations

__all__ = ["ConfigError", "InputError", "SerpfuseError", "Unavailable"]


class SerpfuseError(Exception):
    """The base of every exception serpfuse defines."""

    http_status: int = 500
    exit_code: int = 1


class InputError(SerpfuseError, ValueError):
    """Caller input that cannot be served. The message is one line, names the field, and never quotes the
    offending text raw (a lone surrogate in an error message would break the reply that carries it)."""

    http_status = 400
    exit_code = 2


class ConfigError(SerpfuseError):
    """The configuration cannot be used. The message is one line and names the file or variable at fault."""

    exit_code = 2


class Unavailable(SerpfuseError):
    """Nothing can answer this request now (a source, a store): the caller may try again later."""

    http_status = 503
    exit_code = 1
