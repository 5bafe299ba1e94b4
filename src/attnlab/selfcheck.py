"""What ``attnlab build`` checks before it ships a course: the quiz keys (``attnlab quiz verify``) and
each assignment's reference solution graded by the assignment's own tests (every function, full marks).

A key that its derivation rejects, or a reference that its own tests fail, would grade every student
against a mistake. The reference runs here, in this process, as otter runs a notebook: it is the
instructor's own code, and the whole check takes about a second where the sandboxed engine would
take several.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import io
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from . import paths, release, testfiles


class Refused(ValueError):
    """The course fails its own checks: the build ships nothing."""


@dataclass
class Checks:
    """What was checked (one line each) and what failed (one line each, naming the culprit)."""

    passed: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    def refusal(self) -> str:
        return (
            "the course fails its own checks, so nothing was built:\n"
            + "\n".join(f"  - {line}" for line in self.failures)
            + "\nFix them (the reference in solutions/, the keys in quiz/), or build anyway with --unchecked."
        )

    def summary(self) -> str:
        if not self.failures:
            return "checked: " + "; ".join(self.passed)
        return "SHIPPED UNCHECKED (--unchecked): the course fails its own checks:\n" + "\n".join(
            f"  - {line}" for line in self.failures
        )


def run(*, assignments: list[str]) -> Checks:
    """The quiz keys and the reference of each of ``assignments``."""
    checks = Checks()
    _remembered(checks, "quiz", [paths.quiz_dir()], _quiz)
    for name in assignments:
        sources = [paths.solution_file(name), paths.tests_dir(name), paths.support_dir(name)]
        _remembered(checks, f"reference {name}", sources, functools.partial(_reference, assignment=name))
    return checks


# What a check found, by the content it checked: a process that builds the same course again (the
# demo, a test suite) checks it once. The key covers every file a check reads from the course.
_FOUND: dict[str, Checks] = {}


def _remembered(checks: Checks, label: str, sources: list[Path], check: Callable[[Checks], None]) -> None:
    digest = hashlib.sha256(label.encode())
    for source in sources:
        files = sorted(p for p in source.rglob("*") if p.is_file()) if source.is_dir() else [source]
        for path in files:
            if "__pycache__" in path.parts or not path.is_file():
                continue
            digest.update(str(path.relative_to(source.parent)).encode() + b"\0" + path.read_bytes() + b"\0")
    key = digest.hexdigest()
    if key not in _FOUND:
        found = Checks()
        check(found)  # remembered only once it is whole: a check that raised is run again next time
        _FOUND[key] = found
    checks.passed += _FOUND[key].passed
    checks.failures += _FOUND[key].failures


def _quiz(checks: Checks) -> None:
    from .quiz import bank, verify

    try:
        results = verify.verify(folder=paths.quiz_dir())
    except bank.BankError as err:
        checks.failures.append(f"quiz bank: {err}")
        return
    failed = [r for r in results if not r.ok]
    checks.failures += [f"quiz verify: {r.name}: {r.detail}" for r in failed]
    if not failed:
        checks.passed.append(f"the quiz keys (attnlab quiz verify, {len(results)} of {len(results)})")


def _reference(checks: Checks, *, assignment: str) -> None:
    import numpy as np

    from .grade import calls

    solution = paths.solution_file(assignment)
    env: dict = {}
    # what the reference or a test prints is not the build's output
    with contextlib.redirect_stdout(io.StringIO()), np.errstate(all="ignore"):
        try:
            exec(compile(release.solution.reference_source(solution), str(solution), "exec"), env)
        except Exception as err:  # noqa: BLE001 - any error of the instructor's code is reported, not raised
            checks.failures.append(f"{assignment}: the reference {solution.name} does not run: {_said(err)}")
            return
        test_files = {tf.name: tf for tf in testfiles.load_dir(paths.tests_dir(assignment))}
        failed = {
            name: [(case, why) for case in tf.cases if (why := _failure(case, env)) is not None]
            for name, tf in test_files.items()
        }
    graph = calls.for_course(assignment)["calls"]
    broken = {name for name, cases in failed.items() if cases}
    # callees first, so the line that names the mistake comes before those of the functions it breaks
    for name in calls.order(broken, graph):
        tf, cases = test_files[name], failed[name]
        score = tf.points - sum(case.points for case, _ in cases)
        culprits = sorted(calls.reach(name, graph) & broken)
        first, why = cases[0]
        line = (
            f"{assignment}: the reference `{name}` scores {score:g} of {tf.points:g} on its own tests; "
            f"{len(cases)} failing, first {first.name!r}: {_short(why)}"
        )
        if culprits:
            line += f" (it calls {', '.join(f'`{c}`' for c in culprits)}, failing too)"
        checks.failures.append(line)
    if not broken:
        total = sum(tf.points for tf in test_files.values())
        checks.passed.append(f"the reference of {assignment} ({total:g} of {total:g} points on its own tests)")


def _failure(case: testfiles.Case, env: dict) -> str | None:
    """Why the reference fails ``case``, or None when it passes."""
    try:
        testfiles.call_case(case, env)
    except Exception as err:  # noqa: BLE001 - a failing case, whatever it raised
        return _said(err)
    return None


def _short(text: str, limit: int = 160) -> str:
    return text if len(text) <= limit else text[: limit - 3].rstrip() + "..."


def _said(err: BaseException) -> str:
    first = str(err).strip().splitlines()
    return f"{type(err).__name__}: {first[0]}" if first else type(err).__name__
