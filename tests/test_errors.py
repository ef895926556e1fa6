"""One error tree: every exception class serpfuse defines derives from ``SerpfuseError``, no two share a name,
and each is drawn in ``serpfuse.errors``' docstring, where a reader looks for it."""

from __future__ import annotations

import collections
import importlib
import inspect
import pkgutil
import re

import pytest

import serpfuse
from serpfuse import errors
from serpfuse.errors import ConfigError, InputError, SerpfuseError, Unavailable


def _classes_in(namespace: object, module: str) -> list[type]:
    """The classes defined in ``module``, nested ones included."""
    found = []
    for value in vars(namespace).values():
        if inspect.isclass(value) and value.__module__ == module:
            found.append(value)
            found.extend(c for c in _classes_in(value, module) if c is not value)
    return found


def every_exception_class() -> list[type[BaseException]]:
    out: dict[str, type[BaseException]] = {}
    for info in pkgutil.walk_packages(serpfuse.__path__, "serpfuse."):
        module = importlib.import_module(info.name)
        for cls in _classes_in(module, info.name):
            if issubclass(cls, BaseException):
                out[f"{cls.__module__}.{cls.__qualname__}"] = cls
    return list(out.values())


EXCEPTIONS = every_exception_class()


def test_the_walk_finds_the_tree():
    names = {c.__name__ for c in EXCEPTIONS}
    assert {"SerpfuseError", "InputError", "EngineError", "ReadError", "ReplayError", "ApiError"} <= names
    assert len(EXCEPTIONS) > 40


@pytest.mark.parametrize("cls", EXCEPTIONS, ids=lambda c: f"{c.__module__}.{c.__qualname__}")
def test_every_exception_derives_from_the_base(cls):
    assert issubclass(cls, SerpfuseError)


def test_no_two_exception_classes_share_a_name():
    counts = collections.Counter(c.__name__ for c in EXCEPTIONS)
    assert [name for name, n in counts.items() if n > 1] == []


def test_no_two_classes_in_src_share_a_name():
    """Not an exception's name, nor any other class's (a reader greps for it)."""
    counts: collections.Counter[str] = collections.Counter()
    for info in pkgutil.walk_packages(serpfuse.__path__, "serpfuse."):
        module = importlib.import_module(info.name)
        counts.update(cls.__name__ for cls in _classes_in(module, info.name))
    assert [name for name, n in counts.items() if n > 1] == []


def test_every_exception_is_drawn_in_the_tree():
    drawn = set(drawn_parents()) - {"the"} | {"SerpfuseError"}
    assert {c.__name__ for c in EXCEPTIONS} - drawn == set()
    assert drawn - {c.__name__ for c in EXCEPTIONS} == set()  # nothing drawn that is gone


def drawn_parents() -> dict[str, str]:
    """Each class in the drawing -> the class it hangs under (the signals' heading stands for the base)."""
    parents: dict[str, str] = {}
    stack: list[tuple[int, str]] = [(-1, "SerpfuseError")]
    for line in (errors.__doc__ or "").splitlines():
        m = re.search(r"[─└├]── (\w+)", line)
        if not m:
            continue
        depth = line.index("──")
        while stack[-1][0] >= depth:
            stack.pop()
        name = m.group(1)
        parents[name] = stack[-1][1]
        stack.append((depth, "SerpfuseError" if name == "the" else name))
    return parents


@pytest.mark.parametrize("cls", EXCEPTIONS, ids=lambda c: f"{c.__module__}.{c.__qualname__}")
def test_the_drawing_names_the_real_parent(cls):
    """Each class hangs under its nearest serpfuse base in the drawing, as it does in the code."""
    if cls is SerpfuseError:
        return
    nearest = next(b for b in cls.__mro__[1:] if issubclass(b, SerpfuseError))
    assert drawn_parents()[cls.__name__] == nearest.__name__


@pytest.mark.parametrize(
    ("cls", "status", "code"),
    [(InputError, 400, 2), (ConfigError, 500, 2), (Unavailable, 503, 1), (SerpfuseError, 500, 1)],
)
def test_each_branch_says_its_status_and_exit_code(cls, status, code):
    assert (cls.http_status, cls.exit_code) == (status, code)


def test_leaves_keep_what_the_faces_answered():
    from serpfuse.reader.models import CallerError, ReadError
    from serpfuse.serve.read_shapes import BadRequest
    from serpfuse.sources.replay import ReplayError

    assert (ReplayError.http_status, ReplayError.exit_code) == (404, 2)
    assert (ReadError.http_status, CallerError.http_status, BadRequest.http_status) == (502, 422, 400)
    assert issubclass(InputError, ValueError)  # code that catches ValueError still catches bad input


def test_a_page_status_is_not_the_answer_status():
    """The reader's HttpStatusError carries the page's status apart: the API answers 502 for a page's 404."""
    from serpfuse.reader.fetch import HttpStatusError

    error = HttpStatusError("example.com", 404)
    assert (error.page_status, error.http_status, error.exit_code) == (404, 502, 1)
