import ast
import builtins
import types
from contextlib import contextmanager
from unittest import mock

import numpy.random  # noqa: F401 - numpy imports it lazily with eval; load it before the guard
import pytest

from attnlab.quiz import bank


@pytest.fixture(scope="session")
def items() -> dict[str, bank.Item]:
    return bank.load()


def _from_a_module(code) -> bool:
    """Code compiled from a module file (sympy's lazy imports run these through exec)."""
    return isinstance(code, types.CodeType) and code.co_filename.endswith(".py")


@contextmanager
def _no_execution():
    """eval and exec refuse anything but module code, and compile only builds syntax trees."""
    real_compile, real_exec = builtins.compile, builtins.exec

    def refuse_eval(*args, **kwargs):
        raise AssertionError("an answer reached eval")

    def guarded_exec(code, *args, **kwargs):
        if not _from_a_module(code):
            raise AssertionError("an answer reached exec")
        return real_exec(code, *args, **kwargs)

    def ast_only(source, filename, mode, flags=0, *args, **kwargs):
        if not (flags & ast.PyCF_ONLY_AST or str(filename).endswith(".py")):
            raise AssertionError("an answer reached compile")
        return real_compile(source, filename, mode, flags, *args, **kwargs)

    with mock.patch.multiple(builtins, eval=refuse_eval, exec=guarded_exec, compile=ast_only):
        yield


@pytest.fixture
def nothing_executes():
    """A context manager: inside it, nothing may be evaluated, executed or compiled to code."""
    return _no_execution
