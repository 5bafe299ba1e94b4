"""Whether a submission can be what was asked, read statically before any sandbox runs it.

A file that cannot be the assignment would otherwise be "graded 0" without a word: a ``.py`` that
does not compile (nothing in it can run), a notebook of which no cell compiles, an empty file, the
quiz notebook handed in as the assignment, an unrelated file defining none of the assignment's
functions. Each is a problem for a human, never a silent 0 (``batch`` makes it one). A submission
defining even one of the functions is graded as usual, so a notebook with one broken cell keeps what
its other cells earn.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable
from pathlib import Path

from .source import cells

_IPYTHON = re.compile(r"^\s*[%!]")  # a magic or shell line: the sandbox rewrites it, ast cannot read it


class Asked:
    """What the assignment is: the functions it defines (none known: only compiling is checked),
    and the answer variables of the course's quiz notebook. Those are read (``quiz_variables``) the
    first time a file defines none of the functions, and only then: the quiz bank takes a third of a
    second to load (sympy), and a run of honest submissions never needs it."""

    def __init__(self, *, functions: Iterable[str], quiz_variables: Callable[[], Iterable[str]] = tuple):
        self.functions = frozenset(functions)
        self._read_quiz = quiz_variables
        self._quiz: frozenset[str] | None = None

    def quiz_variables(self) -> frozenset[str]:
        if self._quiz is None:
            self._quiz = frozenset(self._read_quiz())
        return self._quiz

    def problem(self, path: Path) -> str:
        return problem(path, functions=self.functions, quiz_variables=self.quiz_variables)


def problem(path: Path, *, functions: Iterable[str], quiz_variables: Callable[[], Iterable[str]] = tuple) -> str:
    """Why ``path`` cannot be the assignment that defines ``functions``, or ""; ``quiz_variables``
    is asked only when it defines none of them."""
    try:
        code = cells(path)
    except Exception:  # noqa: BLE001 - unreadable files are ``discover.unreadable``'s to explain
        return ""
    if not any(c.strip() for c in code):
        return "is empty: it holds no code"
    wanted = set(functions)
    trees, errors = [], []
    for text in code:
        if text.lstrip().startswith("%%"):
            continue  # a cell magic: not Python
        try:
            tree = ast.parse("\n".join("" if _IPYTHON.match(line) else line for line in text.splitlines()))
        except (SyntaxError, ValueError, RecursionError, MemoryError) as error:
            errors.append(error)
            continue
        if _defined_at_top(tree) & wanted:
            return ""  # (the usual submission: what the walk below would find, without walking it all)
        trees.append(tree)
    if errors and not trees:
        first = errors[0]
        where = f" on line {first.lineno}" if isinstance(first, SyntaxError) and first.lineno else ""
        what = f"{type(first).__name__}{where}: {getattr(first, 'msg', '') or str(first)[:120]}"
        return f"does not compile ({what}): nothing in it can run"
    named = set().union(*(_names(t) for t in trees)) if trees else set()
    if not wanted or named & wanted:
        return ""
    answers = named & set(quiz_variables())
    if len(answers) >= 2:
        return (
            "looks like the quiz notebook (it sets quiz answers such as "
            + ", ".join(sorted(answers)[:3])
            + "), not this assignment"
        )
    return (
        "defines none of the assignment's functions ("
        + ", ".join(sorted(wanted)[:4])
        + ", ...): is it this assignment's code?"
    )


def _defined_at_top(tree: ast.Module) -> set[str]:
    """The functions and classes the code defines at its top level (a part of ``_names``)."""
    kinds = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    return {node.name for node in tree.body if isinstance(node, kinds)}


def _names(tree: ast.AST) -> set[str]:
    """Every name the code binds anywhere (generous: a function defined under an ``if`` counts)."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            out.add(node.id)
        elif isinstance(node, ast.alias):
            out.add((node.asname or node.name).split(".")[0])
    return out
