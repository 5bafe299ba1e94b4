"""Otter exception-based test files: load them without importing otter, run their cases, derive
their public view.

A test file defines ``name`` and functions decorated with ``@test_case(points=..., hidden=...)``
whose parameters name what they need from the graded environment (otter passes
``env.get(param)``, or the whole environment for a parameter called ``env``). Importing otter costs
about a second, so the kit loads test files through a stand-in for ``otter.test_files`` with the
same behaviour for what the kit's files use; otter itself still runs the very same files.
"""

from __future__ import annotations

import ast
import builtins
import inspect
import math
import numbers
import sys
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

from .paths import CourseError


class test_case:  # lower case: the name test files import
    """Stand-in for ``otter.test_files.test_case``: records a case's metadata and function."""

    def __init__(self, name=None, points=None, hidden=False, success_message=None, failure_message=None):
        self.name = name
        self.points = points
        self.hidden = hidden
        self.success_message = success_message
        self.failure_message = failure_message
        self.test_func: Callable[..., None] = lambda: None

    def __call__(self, test_func: Callable[..., None]) -> "test_case":
        self.test_func = test_func
        return self


_SHIM = types.ModuleType("otter.test_files")
_SHIM.test_case = test_case  # type: ignore[attr-defined]  # a module made at run time


def _import(name, globals=None, locals=None, fromlist=(), level=0):
    if name == "otter.test_files" and level == 0:
        return _SHIM
    return builtins.__import__(name, globals, locals, fromlist, level)


def points_sum(points: Iterable[float]) -> float:
    """A sum of points, for a question, a submission or an assignment. Points are decimals an
    instructor wrote (0.1, 0.2), which floats hold only nearly: the sum is rounded to 9 decimals,
    so that 0.1 + 0.2 is 0.3 in results.json and otter's points_possible, not 0.30000000000000004."""
    return round(sum(points), 9)


@dataclass(frozen=True)
class Case:
    name: str
    points: float
    hidden: bool
    func: Callable[..., None]
    params: tuple[str, ...]
    failure_message: str | None = None


@dataclass(frozen=True)
class TestFile:
    """One question: its cases in file order."""

    name: str
    path: Path
    cases: tuple[Case, ...]
    all_or_nothing: bool = False
    # the trusted version of the graded function (``reference = ...`` in the file): the grading
    # engine lends it to the function's callers when the student's own version fails its cases
    reference: Callable[..., Any] | None = None

    @property
    def points(self) -> float:
        return points_sum(c.points for c in self.cases)

    def needs(self) -> set[str]:
        """The names the cases take from the graded environment."""
        return {p for c in self.cases for p in c.params if p != "env"}


class BadTestFile(CourseError):
    """A test file the kit cannot grade with: the instructor's to fix, said in one line naming it."""


def _checked(value: Any, *, where: str) -> float:
    """``value`` as a number of points: finite and at least 0. A case worth 0 is legitimate (otter
    runs it and shows its result without scoring it); a negative one would let a wrong submission
    outscore a right one. ``True`` is an int to Python but, as points, a slip (for ``hidden=True``?)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value) or value < 0:
        raise BadTestFile(f"{where} has points={value!r}: points must be a number >= 0, such as 2, 0.5 or 0")
    return float(value)


def _resolve_points(total, cases: list[test_case], *, names: list[str], path: Path) -> list[float]:
    """Otter's rule: explicit case points win; a file total is shared among cases without one.
    Every number is checked first, so that no sum meets a string or a negative."""
    explicit = [
        None if c.points is None else _checked(c.points, where=f"{path}: case {n!r}") for c, n in zip(cases, names)
    ]
    if isinstance(total, list):
        if len(total) != len(cases):
            raise BadTestFile(f"{path}: the file's points list and its cases differ in length")
        return [_checked(p, where=f"{path}: case {n!r} (from the file's points list)") for p, n in zip(total, names)]
    if total is not None:
        total = _checked(total, where=f"{path}: the file's total")
    given = sum(p for p in explicit if p is not None)
    missing = sum(p is None for p in explicit)
    if total is not None:
        if given > total:
            raise BadTestFile(f"{path}: the cases declare more points ({given:g}) than the file's total ({total:g})")
        share = (total - given) / missing if missing else 0.0
    elif given == 0 and all(p in (0, None) for p in explicit):
        share = 1 / missing if missing else 0.0
    else:
        share = 0.0
    return [p if p is not None else share for p in explicit]


def _case_name(tc: test_case, question: str, index: int) -> str:
    """A case's own name, or otter's default: the question's name and the case's place in the file."""
    return tc.name or f"{question} - {index + 1}"


def load(path: Path) -> TestFile:
    """Execute a test file's definitions (not its cases) and collect its cases."""
    path = Path(path)
    source = path.read_text(encoding="utf-8")
    namespace: dict[str, Any] = {
        "__builtins__": {**vars(builtins), "__import__": _import},
        "__name__": f"attnlab_tests_{path.stem}",
        "__file__": str(path),
    }
    try:
        exec(compile(source, str(path), "exec"), namespace)
    except Exception as e:  # noqa: BLE001 - the instructor's file: which one and why, in one line
        where = f" (line {e.lineno})" if isinstance(e, SyntaxError) and e.lineno else ""
        raise BadTestFile(f"{path} cannot be loaded as a test file{where}: {type(e).__name__}: {e}") from None
    if "name" not in namespace:
        raise BadTestFile(
            f"{path} does not define 'name': every .py file in the tests folder is the test file of one graded function"
        )
    name = namespace["name"]
    found = [v for v in namespace.values() if isinstance(v, test_case)]
    names = [_case_name(tc, name, i) for i, tc in enumerate(found)]
    points = _resolve_points(namespace.get("points"), found, names=names, path=path)
    cases = tuple(
        Case(
            name=case_name,
            points=pts,
            hidden=bool(tc.hidden),
            func=tc.test_func,
            params=tuple(inspect.signature(tc.test_func).parameters),
            failure_message=tc.failure_message,
        )
        for tc, case_name, pts in zip(found, names, points)
    )
    reference = namespace.get("reference")
    if reference is not None and not callable(reference):
        raise BadTestFile(f"{path}: 'reference' must be a function (the trusted version of {name})")
    return TestFile(name, path, cases, bool(namespace.get("all_or_nothing", False)), reference)


def load_dir(folder: Path) -> list[TestFile]:
    """Every test file of a folder, in name order (otter's order too).

    The modules in the folder's sibling ``support/`` (shipped next to the tests in the autograder
    zip, where otter puts them on the import path) become importable.
    """
    folder = Path(folder)
    support = str((folder.parent / "support").resolve())
    if (folder.parent / "support").is_dir() and support not in sys.path:
        sys.path.insert(0, support)
    return [load(p) for p in sorted(folder.glob("*.py"))]


# ---- the outline: names and points without running the files ---------------------------------


@dataclass(frozen=True)
class CaseOutline:
    name: str
    points: float
    hidden: bool


@dataclass(frozen=True)
class Outline:
    """A question as ``load`` gives its name, cases and points, read without running its file."""

    name: str
    cases: tuple[CaseOutline, ...]
    all_or_nothing: bool = False

    @property
    def points(self) -> float:
        return points_sum(c.points for c in self.cases)


class _NotPlain(Exception):
    """The file may make, remove or rename cases or points when it runs: it must be run to know."""


_DECLARED = ("name", "points", "all_or_nothing")
_CASE_OPTIONS = {"name", "points", "hidden", "success_message", "failure_message"}


def outline_dir(folder: Path) -> list[Outline] | None:
    """What ``load_dir`` gives for each question's name, cases and points, read from the files'
    text: running them imports numpy and the oracle (a third of a second that ``attnlab grade``
    spends before its first submission). None unless every file declares its question plainly (only
    imports, assignments without calls and functions, each case a ``@test_case`` of literals), so
    that reading a file and running it cannot disagree; the caller then loads them."""
    try:
        return [_outline(path) for path in sorted(Path(folder).glob("*.py"))]
    except (_NotPlain, OSError, SyntaxError, ValueError, TypeError, RecursionError, MemoryError):
        return None


def _outline(path: Path) -> Outline:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    bound: list[str] = []  # every name the module binds at its top level, as often as it does
    declared: dict[str, Any] = {}
    cases: list[tuple[str, test_case]] = []
    for node in tree.body:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # a docstring
        if isinstance(node, ast.Import):
            bound += [(a.asname or a.name).split(".")[0] for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            bound += _imported(node)
        elif isinstance(node, ast.Assign):
            if not all(isinstance(t, ast.Name) for t in node.targets) or _runs_or_binds(node.value):
                raise _NotPlain
            for target in node.targets:
                assert isinstance(target, ast.Name)
                bound.append(target.id)
                if target.id in _DECLARED:
                    declared[target.id] = _literal(node.value)
        elif isinstance(node, ast.FunctionDef):
            bound.append(node.name)
            if node.decorator_list:
                cases.append((node.name, _case(node.decorator_list)))
        else:
            raise _NotPlain
    case_names = {name for name, _ in cases}
    once = {*_DECLARED, "test_case", *case_names}
    if any(bound.count(name) > 1 for name in once) or not isinstance(declared.get("name"), str):
        raise _NotPlain
    # a name that reads a case (an alias of it) would put the case in the module twice
    read = {
        n.id
        for node in tree.body
        if not isinstance(node, ast.FunctionDef)
        for n in ast.walk(node)
        if isinstance(n, ast.Name)
    }
    if read & case_names:
        raise _NotPlain
    name = declared["name"]
    found = [case for _, case in cases]
    names = [_case_name(tc, name, i) for i, tc in enumerate(found)]
    points = _resolve_points(declared.get("points"), found, names=names, path=path)
    return Outline(
        name,
        tuple(CaseOutline(case_name, pts, bool(tc.hidden)) for tc, case_name, pts in zip(found, names, points)),
        bool(declared.get("all_or_nothing", False)),
    )


def _imported(node: ast.ImportFrom) -> list[str]:
    """The names a ``from`` import binds, if it cannot bind a case: otter's ``test_case`` itself,
    or names from the standard library."""
    names = [a.asname or a.name for a in node.names]
    if node.level or "*" in names:
        raise _NotPlain
    if node.module == "otter.test_files" and names == ["test_case"] and node.names[0].asname is None:
        return names
    if (node.module or "").split(".")[0] not in sys.stdlib_module_names or "test_case" in names:
        raise _NotPlain
    return names


def _runs_or_binds(value: ast.expr) -> bool:
    """Could evaluating ``value`` run code (a call) or bind a name (``:=``)?"""
    return any(isinstance(n, (ast.Call, ast.NamedExpr, ast.Lambda, ast.Await)) for n in ast.walk(value))


def _literal(value: ast.expr) -> Any:
    try:
        return ast.literal_eval(value)
    except ValueError:
        raise _NotPlain from None


def _case(decorators: list[ast.expr]) -> test_case:
    """The ``@test_case(...)`` of a function, if it is its only decorator and its options are literals."""
    if len(decorators) != 1:
        raise _NotPlain
    (dec,) = decorators
    if not (isinstance(dec, ast.Call) and isinstance(dec.func, ast.Name) and dec.func.id == "test_case"):
        raise _NotPlain
    if dec.args or any(kw.arg not in _CASE_OPTIONS for kw in dec.keywords):
        raise _NotPlain
    options = {kw.arg: _literal(kw.value) for kw in dec.keywords if kw.arg is not None}
    if not isinstance(options.get("points", 0), (int, float, type(None))) or isinstance(options.get("points"), bool):
        raise _NotPlain
    return test_case(**options)


def call_case(case: Case, env: dict[str, Any]) -> None:
    """Call a case as otter does: each parameter gets ``env.get(param)``; ``env`` gets ``env``."""
    case.func(**{p: (env if p == "env" else env.get(p)) for p in case.params})


# ---- the public view -------------------------------------------------------------------------


def _is_hidden_case(node: ast.stmt) -> bool:
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    for dec in node.decorator_list:
        if isinstance(dec, ast.Call) and getattr(dec.func, "id", None) == "test_case":
            for kw in dec.keywords:
                if kw.arg == "hidden" and isinstance(kw.value, ast.Constant) and kw.value.value:
                    return True
    return False


def _is_case(node: ast.stmt) -> bool:
    return isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
        isinstance(d, ast.Call) and getattr(d.func, "id", None) == "test_case" for d in node.decorator_list
    )


def _defined(node: ast.stmt) -> set[str]:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name}
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return {(a.asname or a.name).split(".")[0] for a in node.names}
    if isinstance(node, (ast.Assign, ast.AnnAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return set()


def _used(node: ast.stmt) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


_KEEP = {"name", "points", "all_or_nothing", "OK_FORMAT", "test_case"}


def public_source(source: str) -> str:
    """The test file without its hidden cases and without anything only they used.

    Removal works on line ranges of the original text, so comments and layout survive.
    """
    tree = ast.parse(source)
    body = [n for n in tree.body if not _is_hidden_case(n)]
    while True:
        used = set().union(*(_used(n) for n in body)) | _KEEP
        kept = [n for n in body if _is_case(n) or not _defined(n) or _defined(n) & used]
        if len(kept) == len(body):
            break
        body = kept
    keep_lines: set[int] = set()
    kept_ids = {id(n) for n in body}
    drop_lines: set[int] = set()
    for node in tree.body:
        first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        span = set(range(first, (node.end_lineno or node.lineno) + 1))
        (keep_lines if id(node) in kept_ids else drop_lines).update(span)
    lines = source.splitlines(keepends=True)
    out = [line for i, line in enumerate(lines, 1) if i not in drop_lines or i in keep_lines]
    text = "".join(out)
    while "\n\n\n\n" in text:
        text = text.replace("\n\n\n\n", "\n\n\n")
    return text
