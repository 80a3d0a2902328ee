"""`format_exception`: the traceback text of a violation, cached per code position chain, must be
exactly what the traceback module writes, whatever the exception, with each file named from where code
lives (the checkout, the Python's libraries): no folder of this machine reaches an agent or a record."""

from __future__ import annotations

import sys
import traceback
from pathlib import Path

import pytest
from pydantic import BaseModel

from envs.contract import Violation
from envs.tracebacks import CODE_ROOTS, format_exception


class Model(BaseModel):
    x: int


def _validate(value: object) -> None:
    Model.model_validate({"x": value})


def _nested(value: object) -> None:
    _validate(value)


def _recurse(n: int) -> float:
    return _recurse(n - 1) if n else 1 / 0


def _chained() -> None:
    try:
        dict[str, int]()["missing"]
    except KeyError as exc:
        raise ValueError("while looking it up") from exc


def _in_handler() -> None:
    try:
        _ = 1 / 0
    except ZeroDivisionError:
        # implicit chaining on purpose: the traceback under test has a __context__, not a __cause__
        raise RuntimeError("during handling")  # noqa: B904


class QuietError(Exception):
    """An exception of a module other than builtins, with an empty message."""


class BrokenStr(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no text")


def _noted() -> None:
    exc = KeyError("k")
    exc.add_note("a note the traceback module prints")
    raise exc


def _syntax() -> None:
    compile("def (:", "<model>", "exec")


def _group() -> None:
    raise ExceptionGroup("two", [ValueError("a"), TypeError("b")])


def _raise(exc: BaseException) -> None:
    raise exc


CASES = {
    "validation": lambda: _validate("q"),
    "empty message, own module": lambda: _raise(QuietError()),
    "str() fails": lambda: _raise(BrokenStr("x")),
    "notes": _noted,
    "syntax error": _syntax,
    "group": _group,
    "multi-line message": lambda: _raise(ValueError("a\nb")),
    "another input, same place": lambda: _validate([1]),
    "one frame deeper": lambda: _nested("q"),
    "recursion": lambda: _recurse(30),
    "repeated frames": lambda: _recurse(500),
    "cause": _chained,
    "context": _in_handler,
}


@pytest.mark.parametrize("name", list(CASES))
def test_the_text_is_the_traceback_modules_the_first_time_and_from_the_cache(name):
    try:
        CASES[name]()
    except Exception as exc:
        # the traceback module's text, each file named from where code lives (no folder of this machine)
        expected = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        for root in CODE_ROOTS:
            expected = expected.replace(f'File "{root}', 'File "')
        assert format_exception(exc) == expected
        assert format_exception(exc) == expected  # the cached frames
        assert Violation.from_exception(exc, code="c", message="m").raw == expected
    else:
        pytest.fail("the case raised nothing")


def test_a_traceback_names_no_folder_of_this_machine():
    try:
        _validate("x")
    except Exception as exc:
        text = format_exception(exc)
    root = str(Path(__file__).resolve().parents[2])
    assert 'File "tests/envs/test_contract.py"' in text and 'File "pydantic/' in text
    assert root not in text and sys.prefix not in text


def test_an_exception_never_raised_has_no_traceback_lines():
    exc = ValueError("made, not raised")
    assert format_exception(exc) == "ValueError: made, not raised\n"
