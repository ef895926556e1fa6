"""Every runtime setting in one place: TOML file < environment (``SERPFUSE_*``) < command-line flags.

The file is ``--config PATH`` or ``$SERPFUSE_CONFIG`` when given (it must then exist), else ``serpfuse.toml`` in
the working directory, else ``serpfuse.toml`` in the user's config directory (platformdirs), else none. Its
``[ranking]`` table overrides ``RankingConfig`` knobs (``[ranking.rrf] rrf_constant = 30``); its ``[ranking.weights]``
(engine = weight, what ``serpfuse calibrate`` writes) are learned engine weights, and so reach the HTTP API and
the MCP server too. A key the model does not know, in the file or in ``[ranking]``, is a one-line error: a typo
must never be silently ignored.
Environment variables name fields after the prefix (``SERPFUSE_CACHE_TTL_S``); nested ranking knobs use ``__``
(``SERPFUSE_RANKING__RRF__RRF_CONSTANT=30``). A ``SERPFUSE_*`` variable serpfuse does not read is an error too,
naming the nearest one it does; so is an engine in ``engines`` the source does not have (``check_engines``).

Each engine may have a table of its own: ``[engines.ddg] base_url = "http://127.0.0.1:8080"`` in the file,
``SERPFUSE_ENGINES__DDG__BASE_URL`` in the environment (the name upper case, ``-`` as ``_``). An engine name the
registry does not know is an error. ``engines`` also names the default engine set (a list), so the tables are
kept apart, in ``engine_options``: a TOML file holds either the list or tables (TOML cannot give one key both).
"""

from __future__ import annotations

import ipaddress
import os
import tomllib
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

import platformdirs
from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator
from pydantic_settings import (
    BaseSettings,
    InitSettingsSource,
    NoDecode,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from serpfuse.config import RankingConfig
from serpfuse.data import derived
from serpfuse.engines import ENGINE_NAMES, engine_registry, env_name, name_from_env
from serpfuse.errors import ConfigError
from serpfuse.models import DEFAULT_LIMIT, MAX_LIMIT, MAX_QUERY_CHARS
from serpfuse.ranking.rankers import available
from serpfuse.secrets import KEYS_FILE_ENV, SECRET_URL_SETTINGS, url_secrets
from serpfuse.sources.fanout import DEFAULT_DEADLINE_S
from serpfuse.sources.transport_limits import (
    DEFAULT_CONNECTIONS,
    DEFAULT_IDLE_CONNECTIONS,
    DEFAULT_KEEPALIVE_S,
    DEFAULT_MAX_BYTES,
)
from serpfuse.urls import check_base_url

APP_NAME = "serpfuse"
ENV_PREFIX = "SERPFUSE_"
CONFIG_ENV = "SERPFUSE_CONFIG"
CONFIG_FILE_NAME = "serpfuse.toml"
MASK = "***"
# An MCP answer's length bound (``max_chars``): the deployment's default and what a tool call may ask.
MCP_MIN_CHARS, MCP_MAX_CHARS = 500, 100_000

CacheBackend = Literal["sqlite", "redis", "off"]
ENGINE_TABLES = "engine_options"  # the field holding the [engines.NAME] tables
ENGINES_ENV_PREFIX = "SERPFUSE_ENGINES__"
MAX_CONTACT_CHARS = 200


# The TOML table being loaded: read by the settings source below, set only inside ``load_settings``.
_toml_data: ContextVar[dict[str, Any] | None] = ContextVar("serpfuse_toml_data", default=None)


def split_list(value: Any) -> Any:
    """``brave,ddg`` or ``["brave", "ddg"]`` (env var, flag or tool argument) -> a list; anything else passes."""
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            import json

            return json.loads(text)
        return [part.strip() for part in text.split(",") if part.strip()]
    return value


class EngineOptions(BaseModel):
    """One engine's table, ``[engines.NAME]``."""

    model_config = ConfigDict(extra="forbid")

    # Scheme, host and port replace those of every request the engine sends (a path goes in front of the
    # engine's own); the engine's paths, parameters and headers stay.
    base_url: str | None = Field(None, repr=False)

    # The operator's contact (an email address or a URL), for an engine whose usage policy asks for it in the
    # User-Agent (Wikimedia's): ``serpfuse/<version> (<contact>; <project page>)``.
    contact: str | None = None

    @field_validator("base_url")
    @classmethod
    def _base_url_ok(cls, value: str | None) -> str | None:
        return None if value is None else check_base_url(value)

    @field_validator("contact")
    @classmethod
    def _contact_ok(cls, value: str | None) -> str | None:
        if value is None:
            return None
        text = value.strip()
        # It goes inside the User-Agent's parentheses: no line breaks (a header injection), no parentheses.
        if (
            not text
            or len(text) > MAX_CONTACT_CHARS
            or not text.isprintable()
            or any(c in text for c in "()")
        ):
            raise ValueError(
                f"must be an email address or a URL (up to {MAX_CONTACT_CHARS} printable characters, no parentheses)"
            )
        return text


def engine_tables_from_env(env: Mapping[str, str]) -> dict[str, Any]:
    """``SERPFUSE_ENGINES__NAME__KEY`` variables as ``{NAME: {key: value}}``, and the older variables an engine
    names (``SERPFUSE_SEARXNG_URL``) as its ``base_url`` where the new one is not set."""
    tables: dict[str, Any] = {}
    for variable, value in env.items():
        upper = variable.upper()
        if upper.startswith(ENGINES_ENV_PREFIX):
            name, has_key, key = upper.removeprefix(ENGINES_ENV_PREFIX).partition("__")
            if has_key:
                table = tables.setdefault(name.lower(), {})
                if isinstance(table, dict):
                    table[key.lower()] = value
            else:  # SERPFUSE_ENGINES__DDG=...: a value where a table belongs, which validation says
                tables[name.lower()] = value
    # The older variables all end in _URL: without one set, no engine module need be imported to look for them.
    engines = engine_registry() if any(v.upper().endswith("_URL") for v in env) else {}
    for name, module in engines.items():
        older = next((env[v].strip() for v in module.INFO.base_url_envs if env.get(v, "").strip()), None)
        table = tables.setdefault(env_name(name).lower(), {}) if older else None
        if isinstance(table, dict):
            table.setdefault("base_url", older)
    return tables


class _EngineTables(PydanticBaseSettingsSource):
    """A source whose ``engines`` may be per-engine tables rather than the default set: the tables move to
    ``engine_options``. From the environment, the tables are read from ``SERPFUSE_ENGINES__*`` here, since
    pydantic-settings drops them when ``SERPFUSE_ENGINES`` is set too."""

    def __init__(self, inner: PydanticBaseSettingsSource, env: Mapping[str, str] | None = None) -> None:
        super().__init__(inner.settings_cls)
        self._inner = inner
        self._env = env

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False  # unused: __call__ delegates

    def __call__(self) -> dict[str, Any]:
        data = dict(self._inner())
        data.pop(ENGINE_TABLES, None)  # only [engines.NAME] leads there
        if isinstance(data.get("engines"), Mapping):
            tables = data.pop("engines")
            if self._env is None:
                data[ENGINE_TABLES] = tables
        if self._env is not None and (tables := engine_tables_from_env(self._env)):
            data[ENGINE_TABLES] = tables
        return data


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX,
        env_nested_delimiter="__",
        extra="forbid",
        validate_default=True,
        hide_input_in_errors=True,  # settings hold keys, tokens and passwords in URLs: no error quotes them
    )

    # What a search asks for when the caller does not say.
    engines: Annotated[list[str] | None, NoDecode] = None
    limit: int = Field(DEFAULT_LIMIT, ge=1, le=MAX_LIMIT)
    strategy: str | None = None
    deadline_s: float = Field(DEFAULT_DEADLINE_S, gt=0)
    timeout_s: float = Field(15.0, gt=0, description="per-engine HTTP timeout")
    engine_connections: int = Field(
        DEFAULT_CONNECTIONS, ge=1, description="engine transfers at once, per client of one process"
    )
    engine_idle_connections: int = Field(
        DEFAULT_IDLE_CONNECTIONS, ge=0, description="idle engine connections kept open for reuse"
    )
    engine_keepalive_s: float = Field(
        DEFAULT_KEEPALIVE_S, gt=0, description="how long an idle engine connection is kept for reuse"
    )
    engine_max_bytes: int = Field(
        DEFAULT_MAX_BYTES, ge=64 * 1024, description="largest engine answer read, after decompression"
    )
    replay: Path | None = None

    # Live transport.
    proxy: str | None = Field(None, repr=False)
    # HTML engines go through curl_cffi as a browser, APIs through libcurl un-impersonated;
    # SERPFUSE_IMPERSONATE=0 sends them all through httpx2.
    impersonate: bool = True

    # Result cache and shared state.
    cache: CacheBackend | None = Field(None, description="default: redis when redis_url is set, else sqlite")
    cache_ttl_s: float = Field(3600.0, ge=0)
    cache_dir: Path | None = None
    redis_url: str | None = Field(None, repr=False)

    # The HTTP API and the MCP server.
    host: str = "127.0.0.1"
    port: int = Field(8765, ge=1, le=65535)
    api_token: SecretStr | None = None
    rate_limit_per_min: float = Field(60.0, gt=0, description="requests per minute per client")
    rate_limit_burst: int = Field(20, ge=1)
    # Whether callers on this machine are rate limited too. None: only when serving beyond loopback or with a
    # token (a proxy in front forwards everyone from loopback); a local agent is never refused by default.
    rate_limit_loopback: bool | None = None
    max_query_chars: int = Field(MAX_QUERY_CHARS, ge=1, le=MAX_QUERY_CHARS)
    max_body_bytes: int = Field(64 * 1024, ge=256)
    header_timeout_s: float = Field(
        10.0, gt=0, description="how long a client may take to send a request's headers"
    )
    body_timeout_s: float = Field(
        30.0, gt=0, description="how long a request's body may take to arrive after its headers"
    )
    max_connections: int = Field(
        1000, ge=1, description="connections one server process holds; past that a request is answered 503"
    )
    mcp_max_chars: int = Field(6000, ge=MCP_MIN_CHARS, le=MCP_MAX_CHARS)
    # MCP over HTTP keeps a session per client that initialized: each holds ~40 KB until it ends.
    mcp_max_sessions: int = Field(
        1000, ge=1, description="MCP-over-HTTP sessions open at once; past that a new one is answered 503"
    )
    mcp_session_idle_s: float = Field(
        900.0, gt=0, description="an MCP-over-HTTP session with no request for this long is closed"
    )
    worker_processes: int | None = Field(
        None,
        ge=1,
        description="processes a server parses and ranks in (default: the cores, shared by --workers)",
    )
    engine_budget_per_min: float | None = Field(
        None, gt=0, description="requests per engine per minute, shared by every process on redis_url"
    )

    # The page reader (serpfuse read, the read_url tool, /v1/read). Loopback is for tests and local-only setups;
    # an HTTP request can never turn it on.
    read_allow_loopback: bool = False
    read_ports: Annotated[list[int], NoDecode] = Field(default_factory=lambda: [80, 443])
    read_robots: bool = True
    read_max_bytes: int = Field(5 * 1024 * 1024, ge=1024)
    read_timeout_s: float = Field(15.0, gt=0)
    read_cache_ttl_s: float = Field(3600.0, ge=0)
    # A search with passages reads its shown rows' pages for this long at most; unset: until the search's
    # deadline plus PASSAGES_GRACE_S (2 s), so it answers within the usual deadline + 2 s.
    passages_deadline_s: float | None = Field(None, gt=0)

    ranking: RankingConfig = Field(default_factory=RankingConfig)
    # [engines.NAME] tables (SERPFUSE_ENGINES__NAME__KEY), by engine name.
    engine_options: dict[str, EngineOptions] = Field(default_factory=dict)

    @field_validator("redis_url")
    @classmethod
    def _redis_url_readable(cls, value: str | None) -> str | None:
        """A URL every face can read (``config show`` masks its password, the stores connect to it): refused
        here, once, in one line that never quotes it (it may hold a password)."""
        if value is None or not value.strip():
            return None
        try:
            parts = urlsplit(value.strip())
            parts.port  # noqa: B018 - raises ValueError for a port that is no number or out of range
        except ValueError:
            parts = None
        if parts is None or parts.scheme not in ("redis", "rediss", "unix"):
            raise ValueError("not a Redis URL (redis://host:6379/0, rediss://... or unix:///path)")
        return value.strip()

    @field_validator("engine_options", mode="before")
    @classmethod
    def _engines_known(cls, value: Any) -> Any:
        if not isinstance(value, Mapping):
            return value
        tables: dict[str, Any] = {}
        for spelled, table in value.items():
            name = name_from_env(str(spelled))
            if name not in ENGINE_NAMES:
                raise ValueError(
                    f"unknown engine {spelled!r}; valid engines: {', '.join(sorted(ENGINE_NAMES))}"
                )
            tables[name] = table
        return tables

    @field_validator("engine_options")
    @classmethod
    def _contact_where_asked(cls, value: dict[str, EngineOptions]) -> dict[str, EngineOptions]:
        for name, table in value.items():
            if table.contact is not None and not engine_registry()[name].INFO.user_agent_contact:
                asking = ", ".join(
                    n for n, m in sorted(engine_registry().items()) if m.INFO.user_agent_contact
                )
                raise ValueError(f"{name} sends no contact (only {asking} does)")
        return value

    @field_validator("read_ports", mode="before")
    @classmethod
    def _ports_list(cls, value: Any) -> Any:
        return split_list(str(value)) if isinstance(value, int) else split_list(value)

    @field_validator("engines", mode="before")
    @classmethod
    def _engines_list(cls, value: Any) -> Any:
        value = split_list(value)
        if isinstance(value, list):
            names = [str(v).strip().lower() for v in value if str(v).strip()]
            return names or None
        return value

    @field_validator("host")
    @classmethod
    def _host_ok(cls, value: str) -> str:
        # "[::1]" is how an IPv6 address is written in a URL, not a name a socket binds: drop the brackets.
        host = value.strip()
        if host.startswith("[") and host.endswith("]"):
            host = host[1:-1]
        if not host or any(c.isspace() or c in "/[]@" for c in host):
            raise ValueError("must be a host name or an IP address, e.g. 127.0.0.1 or ::1")
        return host

    @property
    def url_host(self) -> str:
        """The host as a URL writes it: an IPv6 address in brackets."""
        return f"[{self.host}]" if ":" in self.host else self.host

    @field_validator("strategy")
    @classmethod
    def _strategy_known(cls, value: str | None) -> str | None:
        if value is not None and value not in available():
            raise ValueError(f"unknown strategy {value!r}; choose one of: {', '.join(available())}")
        return value

    @field_validator("ranking")
    @classmethod
    def _ranking_strategy_known(cls, value: RankingConfig) -> RankingConfig:
        if value.strategy not in available():
            raise ValueError(f"unknown strategy {value.strategy!r}; choose one of: {', '.join(available())}")
        return value

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # First wins: flags, then the environment, then the TOML file.
        toml = InitSettingsSource(settings_cls, _toml_data.get() or {})
        return init_settings, _EngineTables(env_settings, os.environ), _EngineTables(toml)

    # Derived values: every consumer asks these, so the defaults live in one place.

    @property
    def cache_backend(self) -> CacheBackend:
        if self.cache is not None:
            return self.cache
        return "redis" if self.redis_url else "sqlite"

    @property
    def cache_path(self) -> Path:
        return (self.cache_dir or platformdirs.user_cache_path(APP_NAME)) / "results.sqlite3"

    @property
    def engine_base_urls(self) -> dict[str, str]:
        """Each engine's base URL, for the engines that have one."""
        return {name: table.base_url for name, table in self.engine_options.items() if table.base_url}

    @property
    def engine_contacts(self) -> dict[str, str]:
        """The operator's contact per engine, for the engines that have one."""
        return {name: table.contact for name, table in self.engine_options.items() if table.contact}

    @property
    def ranking_config(self) -> RankingConfig:
        """The ranking configuration with the default strategy applied."""
        return self.ranking.with_strategy(self.strategy)

    def token(self) -> str | None:
        return self.api_token.get_secret_value() if self.api_token else None

    def secret_urls(self) -> list[str]:
        """Every URL setting whose password is a secret (``secrets.SECRET_URL_SETTINGS``, engine base URLs)."""
        named = [getattr(self, name) for name in SECRET_URL_SETTINGS]
        return [url for url in (*named, *self.engine_base_urls.values()) if url]

    def secrets(self) -> set[str]:
        """The secrets these settings hold beyond the environment: the API token, passwords in URLs."""
        return url_secrets(self.secret_urls()) | ({token} if (token := self.token()) else set())


def default_config_paths(cwd: Path | None = None) -> list[Path]:
    return [
        (cwd or Path.cwd()) / CONFIG_FILE_NAME,
        platformdirs.user_config_path(APP_NAME) / CONFIG_FILE_NAME,
    ]


def find_config_file(explicit: str | Path | None = None, env: Mapping[str, str] | None = None) -> Path | None:
    """The TOML file to read: the explicit one (must exist), else the first default that exists, else None."""
    env = os.environ if env is None else env
    chosen = explicit or env.get(CONFIG_ENV) or None
    if chosen:
        path = Path(chosen).expanduser()
        if not path.is_file():
            raise ConfigError(f"config file not found: {path}")
        return path
    return next((p for p in default_config_paths() if p.is_file()), None)


def read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as handle:
            data = tomllib.load(handle)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    except RecursionError:
        raise ConfigError(f"{path}: nests too deeply to read as TOML") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 (byte {exc.start}); a TOML file is UTF-8 text") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None
    keys = set(Settings.model_fields) - {ENGINE_TABLES}  # the file writes those as [engines.NAME]
    unknown = sorted(set(data) - keys)
    if unknown:
        raise ConfigError(f"{path}: unknown key {unknown[0]!r}; valid keys: {', '.join(sorted(keys))}")
    return data


def read_weights_file(path: str | Path) -> dict[str, float]:
    """Engine -> weight from a weights file: a TOML file holding only ``[ranking.weights]`` (what ``serpfuse
    calibrate`` writes; a settings file may carry the same table). An engine it does not name weighs 1."""
    path = Path(path).expanduser()
    try:
        with path.open("rb") as handle:
            data = tomllib.load(handle)
    except FileNotFoundError:
        raise ConfigError(f"weights file not found: {path}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    except RecursionError:
        raise ConfigError(f"{path}: nests too deeply to read as TOML") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None
    ranking = data.get("ranking")
    weights = ranking.get("weights") if isinstance(ranking, dict) else None
    if set(data) != {"ranking"} or not isinstance(ranking, dict) or set(ranking) != {"weights"}:
        raise ConfigError(f"{path}: a weights file holds one table, [ranking.weights] (engine = weight)")
    if not isinstance(weights, dict):
        raise ConfigError(f"{path}: a weights file holds one table, [ranking.weights] (engine = weight)")
    try:
        return RankingConfig(weights=weights).weights
    except ValidationError as exc:
        loc = exc.errors()[0].get("loc", ())
        line = _line_of_key(path, str(loc[1])) if len(loc) > 1 else 0
        raise ConfigError(f"{path}:{line or '?'}: ranking.{validation_message(exc)}") from None


def _line_of_key(path: Path, key: str) -> int:
    """The line a TOML key is set on (bare or quoted), 0 when not found: an error can point at it."""
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        name = line.split("=", 1)[0].strip() if "=" in line else ""
        if name.strip("\"'") == key:
            return number
    return 0


def validation_message(exc: ValidationError) -> str:
    """pydantic's first error as one line, ``field: message``: what every interface shows for bad input."""
    err = exc.errors()[0]
    loc = [str(p) for p in err.get("loc", ()) if p != "__root__"]
    if loc[:1] == [ENGINE_TABLES]:
        loc[0] = "engines"  # as the file and the environment write it
    where = ".".join(loc)
    msg = str(err.get("msg", "invalid value")).removeprefix("Value error, ")
    if err.get("type") == "extra_forbidden":
        msg = "unknown key"
    return f"{where}: {msg}" if where and not msg.startswith(f"{where}: ") else msg  # said once


# SERPFUSE_* variables serpfuse reads that are no setting: the settings file, the keys file, the benchmark
# corpora (SERPFUSE_DATA, read by benchmarks/ and the tests); an engine's API key (SERPFUSE_<ENGINE>_API_KEY) and an engine's
# own base URL (INFO.base_url_envs, e.g. SERPFUSE_SEARXNG_URL) are recognised by their form and their engine.
OTHER_ENV = frozenset({CONFIG_ENV, KEYS_FILE_ENV, "SERPFUSE_DATA"})


def check_environment(env: Mapping[str, str]) -> None:
    """``ConfigError`` for a ``SERPFUSE_*`` variable serpfuse does not read, with the nearest name it does:
    the settings model only looks up the names it knows, so a misspelt one would be ignored without a word.
    (A nested ``SERPFUSE_RANKING__...`` name is checked by the model itself.)"""
    unknown = sorted(
        name
        for name in env
        if name.upper().startswith(ENV_PREFIX)
        and "__" not in name
        and not name.upper().endswith("_API_KEY")
        and name.upper() not in _known_env()
    )
    if unknown:
        base_url_envs = {name for m in engine_registry().values() for name in m.INFO.base_url_envs}
        unknown = [name for name in unknown if name.upper() not in base_url_envs]
    if unknown:
        import difflib

        name = unknown[0]
        # Compared after the prefix, which every name shares and would make any two look alike.
        known = sorted(k.removeprefix(ENV_PREFIX) for k in _known_env())
        near = difflib.get_close_matches(name.upper().removeprefix(ENV_PREFIX), known, n=1, cutoff=0.6)
        hint = f"did you mean {ENV_PREFIX}{near[0]}?" if near else "`serpfuse config show` lists the settings"
        raise ConfigError(f"environment: {name} is no serpfuse setting; {hint}")


def _known_env() -> frozenset[str]:
    return OTHER_ENV | {ENV_PREFIX + field.upper() for field in Settings.model_fields}


@contextmanager
def _toml_scope(data: dict[str, Any]) -> Iterator[None]:
    token = _toml_data.set(data)
    try:
        yield
    finally:
        _toml_data.reset(token)


def load_settings(config: str | Path | None = None, **flags: Any) -> Settings:
    """Settings from the TOML file, the environment and ``flags`` (None values are "flag not given")."""
    check_environment(os.environ)
    path = find_config_file(config)
    data = read_toml(path) if path else {}
    given = {k: v for k, v in flags.items() if v is not None}
    origin = (
        f"settings (file {path}, environment SERPFUSE_*, flags)" if path else "settings (SERPFUSE_*, flags)"
    )
    with _toml_scope(data):
        try:
            settings = Settings(**given)
        except ValidationError as exc:
            raise ConfigError(f"{origin}: {validation_message(exc)}") from None
    derived.keep_under(settings.cache_dir)  # the word tables follow the results cache
    return settings


# Secrets never leave the process unmasked: ``config show`` and every log line go through these.


def is_loopback(host: str) -> bool:
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_bind(host: str, token: str | None) -> None:
    """Refuse to listen beyond this machine without a bearer token (``SERPFUSE_API_TOKEN``)."""
    if not is_loopback(host) and not token:
        raise ConfigError(
            f"refusing to listen on {host} without a token: set SERPFUSE_API_TOKEN (clients then send "
            "'Authorization: Bearer <token>'), or listen on 127.0.0.1"
        )
