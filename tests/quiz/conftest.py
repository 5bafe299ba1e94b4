import ast
import builtins
import os
import sys
import types
from contextlib import contextmanager
from unittest import mock

import numpy.random  # noqa: F401 - numpy imports it lazily with eval; load it before the guard
import sympy.physics.units  # noqa: F401 - simplify imports it lazily, and it sympifies strings
import pytest

from attnlab.quiz import bank


@pytest.fixture(scope="session")
def items() -> dict[str, bank.Item]:
    return bank.load()


def _from_a_module(code) -> bool:
    """Code compiled from a module file (sympy's lazy imports run these through exec)."""
    return isinstance(code, types.CodeType) and code.co_filename.endswith(".py")


def _sympy_codegen(frame) -> bool:
    """sympy's polynomial rings build their monomial arithmetic with exec, from code it writes
    from the number of variables alone (sympy/polys/monomials.py): never from an answer's text."""
    return frame.f_code.co_filename.endswith(os.path.join("sympy", "polys", "monomials.py"))


@contextmanager
def _no_execution():
    """eval and exec refuse anything but module code, and compile only builds syntax trees."""
    real_compile, real_exec = builtins.compile, builtins.exec

    def refuse_eval(*args, **kwargs):
        raise AssertionError("an answer reached eval")

    def guarded_exec(code, *args, **kwargs):
        if not (_from_a_module(code) or _sympy_codegen(sys._getframe(1))):
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


@pytest.fixture(scope="session")
def key_answers(items) -> dict[str, str]:
    """Every item answered with its key (free response with a sentence)."""
    from attnlab.quiz.check import key_text

    return {i.id: key_text(i) or "An answer in words." for i in items.values()}


@pytest.fixture
def write_quiz(items):
    """Write the quiz notebook with ``answers`` (by id) and ``extra`` code cells appended."""
    import nbformat

    from attnlab.quiz import notebook

    def write(path, answers=None, extra=()):
        nb = notebook.notebook(list(items.values()), answers=answers or {})
        nb.cells += [nbformat.v4.new_code_cell(source) for source in extra]
        nbformat.write(nb, path)
        return path

    return write


@pytest.fixture(scope="session")
def attack_cells():
    """Cells a student might add: replace the checker, run a payload, assign answers indirectly."""
    return lambda marker: [
        "import attnlab_quiz.check as _c\n"
        "class _V:\n    status, message = 'right', 'Right.'\n"
        "_c.check_variable = lambda *args, **kwargs: _V()",
        f"open({str(marker)!r}, 'w').write('pwned')",
        "globals()['pe_dim0'] = 'sin(pos)'",
        "exec(\"proof_z = 'P*Z'\")",
    ]
