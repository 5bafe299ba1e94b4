"""``attnlab check``: the student's local check of a submission against the PUBLIC tests.

It runs in-process and without otter or a Jupyter kernel, so it answers in a fraction of a second;
no sandbox is needed, since the only person a submission could fool here is its author. The
messages are the grading engine's (``attnlab.grade.messages``), so what a student sees here is what
the autograder says about the same public cases.
"""

from __future__ import annotations

import ast
import builtins
import signal
import sys
import types
from pathlib import Path

from . import paths, testfiles
from .grade import source
from .grade.messages import failure_message

CASE_TIMEOUT = 10


class _Timeout(Exception):
    pass


def find_submission(folder: Path, name: str) -> Path:
    """The student's file in ``folder``: ``name.ipynb`` or ``name.py``, whichever was changed last
    (the release ships both, and a student works in one)."""
    found = [p for p in (folder / f"{name}.ipynb", folder / f"{name}.py") if p.is_file()]
    if not found:
        raise FileNotFoundError(
            f"found neither {name}.ipynb nor {name}.py in {folder}; name the submission to check")
    return max(found, key=lambda p: p.stat().st_mtime)


def locate(*, submission: Path | None, assignment: str | None) -> tuple[Path, Path]:
    """The submission and the public tests to check it against.

    An assignment folder as students unzip it (or ``assignments/<name>/`` in a course) holds the
    notebook, its ``.py`` twin and ``tests/``, and is named after the assignment: its own tests are
    used. Elsewhere (or with ``assignment`` named), the course's release of the assignment is.
    """
    folder = Path(submission).parent if submission else Path.cwd()
    if assignment is None and (folder / "tests").is_dir():
        name, tests = folder.name, folder / "tests"
    elif assignment is None and paths.current_course() is None:
        raise FileNotFoundError(f"no public tests in {folder}: run `attnlab check` in the assignment "
                                "folder you unzipped (the one holding tests/), or name your file there")
    else:
        name = paths.current_assignment(assignment)
        tests = paths.public_tests_dir(name)
    if not any(tests.glob("*.py")):
        raise FileNotFoundError(f"no public tests in {tests}")
    return (Path(submission) if submission else find_submission(folder, name)), tests


def execute(cells: list[str], label) -> tuple[dict, list[str]]:
    """Run the cells as the grader does: statement by statement, an error stops only its cell."""
    from .grade.sandbox import Shell

    ns: dict = {"__name__": "__main__", "__builtins__": builtins}
    shell = Shell(ns)
    ns["get_ipython"] = lambda: shell
    otter = types.ModuleType("otter")
    otter.Notebook = type("Notebook", (), {"__init__": lambda self, *a, **k: None,
                                            "__getattr__": lambda self, n: (lambda *a, **k: None)})
    saved = sys.modules.get("otter")
    sys.modules["otter"] = otter
    errors = []
    try:
        for i, cell in enumerate(cells):
            filename = f"<cell {i + 1}>"
            try:
                tree = ast.parse(cell, filename)
            except (SyntaxError, ValueError) as e:
                errors.append(f"{label(i, getattr(e, 'lineno', None))}: {type(e).__name__}: {getattr(e, 'msg', e)}")
                continue
            for node in tree.body:
                try:
                    exec(compile(ast.Module([node], []), filename, "exec"), ns)
                except BaseException as e:  # noqa: BLE001 - as the grader: the cell stops, the run goes on
                    errors.append(f"{label(i, node.lineno)}: {type(e).__name__}: {str(e)[:300]}")
                    break
    finally:
        if saved is None:
            sys.modules.pop("otter", None)
        else:
            sys.modules["otter"] = saved
    return ns, errors


def _alarm(signum, frame):
    raise _Timeout()


def main(*, submission: Path | None = None, question: str | None = None, assignment: str | None = None) -> int:
    """Check a submission; 0 when every public case passes, 1 when one fails, 2 when it cannot run."""
    try:
        path, tests_dir = locate(submission=submission, assignment=assignment)
        if not submission:
            print(f"checking {path.name} (name another file to check that one)")
        cells = source.cells(path)
    except (OSError, ValueError) as e:  # paths.CourseError is a ValueError
        print(f"attnlab check: {e}", file=sys.stderr)
        return 2
    tests = testfiles.load_dir(tests_dir)
    if question is not None:
        tests = [tf for tf in tests if question in (tf.name, tf.path.stem)]
        if not tests:
            print(f"attnlab check: no public test for question {question!r}", file=sys.stderr)
            return 2
    label = (lambda i, line: f"line {line}") if path.suffix == ".py" else \
        (lambda i, line: f"code cell {i + 1}, line {line}")
    env, errors = execute(cells, label)
    for e in errors:
        print(f"error while running {path.name}: {e}")
    failed = 0
    previous = signal.signal(signal.SIGALRM, _alarm)
    try:
        for tf in tests:
            lines, score = [], 0.0
            for case in tf.cases:
                missing = [p for p in case.params if p != "env" and p not in env]
                signal.alarm(CASE_TIMEOUT)
                try:
                    testfiles.call_case(case, env)
                    score += case.points
                    continue
                except _Timeout:
                    message = f"timed out after {CASE_TIMEOUT} s"
                except Exception as e:  # noqa: BLE001 - a failing case is reported, not raised
                    message = failure_message(e, missing)
                finally:
                    signal.alarm(0)
                failed += 1
                lines.append(f"    {case.name}: {message}".replace("\n", "\n      "))
            mark = "ok  " if not lines else "FAIL"
            print(f"{mark} {tf.name}: {score:g} / {tf.points:g} (public tests)")
            if lines:
                print("\n".join(lines))
    finally:
        signal.signal(signal.SIGALRM, previous)
    print("All public tests passed. Hidden tests decide the grade." if not failed else
          f"{failed} public test case(s) failed.")
    return 1 if failed else 0
