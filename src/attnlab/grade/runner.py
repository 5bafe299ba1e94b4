"""Grade one submission: execute it in a sandbox, then run every test case against it.

Execution goes one top-level statement at a time, so that a statement which crashes the process
(``os._exit``, a segfault, a hang at import) behaves like one that raised: the rest of its cell is
skipped, everything defined before it still counts, and a fresh sandbox re-executes the submission
without it. A test call that times out or crashes fails its case; the next case gets a fresh sandbox.
``grader.check(q)`` in a notebook checks q at that point, and the last such check counts, as in
otter's grading mode; questions never checked are checked after the last cell.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import testfiles
from . import source
from .messages import failure_message, misconception
from .session import Output, Sandbox, StudentError, StudentFunction, StudentTimeout, Zygote


@dataclass(frozen=True)
class Limits:
    call: float = 10.0       # one call of a student function
    statement: float = 30.0  # one top-level statement while executing the submission
    wall: float = 300.0      # the whole submission
    memory_mb: int = 2048
    restarts: int = 5        # fresh sandboxes after crashes and timeouts
    strikes: int = 2         # timeouts after which a function is not called again
    output: int = 64 * 1024  # bytes of stdout/stderr kept

    @classmethod
    def from_timeout(cls, timeout: float, memory_mb: int) -> "Limits":
        return cls(call=timeout, statement=3 * timeout, wall=30 * timeout, memory_mb=memory_mb)


@dataclass
class CaseResult:
    question: str
    name: str
    points: float
    hidden: bool
    passed: bool
    message: str = ""
    misconception: str | None = None


@dataclass
class QuestionResult:
    name: str
    possible: float
    all_or_nothing: bool
    cases: list[CaseResult]

    @property
    def score(self) -> float:
        if self.all_or_nothing:
            return self.possible if all(c.passed for c in self.cases) else 0.0
        return sum(c.points for c in self.cases if c.passed)


@dataclass
class Report:
    submission: str
    path: str
    questions: list[QuestionResult]
    errors: list[str] = field(default_factory=list)   # execution errors, in cell order
    log: str = ""                                      # everything it printed (instructor only)
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def score(self) -> float:
        return sum(q.score for q in self.questions)

    @property
    def possible(self) -> float:
        return sum(q.possible for q in self.questions)


def load_tests(tests_dir: Path, support_dir: Path | None) -> list[testfiles.TestFile]:
    """Fresh test files (and a fresh oracle)."""
    if support_dir is not None:
        root = str(Path(support_dir).resolve())
        for name, module in list(sys.modules.items()):
            if (getattr(module, "__file__", None) or "").startswith(root + "/"):
                del sys.modules[name]
        if root not in sys.path:
            sys.path.insert(0, root)
    return testfiles.load_dir(tests_dir)


def probe_module(support_dir: Path | None) -> Any:
    """The tests' probe module (``<package>.probes`` in the support folder), once the tests imported it."""
    if support_dir is None:
        return None
    root = str(Path(support_dir).resolve()) + "/"
    return next((m for name, m in list(sys.modules.items())
                 if name.rsplit(".", 1)[-1] == "probes" and (getattr(m, "__file__", None) or "").startswith(root)),
                None)


class Grader:
    """Grades submissions one after another with sandboxes forked from one zygote."""

    def __init__(self, zygote: Zygote, tests_dir: Path, support_dir: Path | None, limits: Limits):
        self.zygote, self.tests_dir, self.support_dir, self.limits = zygote, tests_dir, support_dir, limits
        # loaded once per worker: the test files only ever meet plain data from the sandboxes, so
        # one submission cannot leave anything in them for the next
        self.tests = load_tests(tests_dir, support_dir)
        self.probes = probe_module(support_dir)

    def grade(self, path: Path) -> Report:
        return _Run(self, Path(path)).run()


class _Run:
    MAX_CHECKS = 20

    def __init__(self, grader: Grader, path: Path):
        self.g, self.limits, self.path = grader, grader.limits, path
        self.output = Output(self.limits.output)
        self.start = time.monotonic()
        self.deadline = self.start + self.limits.wall
        self.results: dict[str, list[CaseResult]] = {}
        self.errors: dict[int, str] = {}
        self.deaths: dict[tuple[int, int], str] = {}
        self.notes: list[str] = []
        self.restarts = 0
        self.checks = 0
        self.strikes: dict[str, int] = {}
        self.sandbox: Sandbox | None = None
        self.env: dict[str, Any] = {}
        self.stopped = ""   # why no sandbox can be had any more

    # ---- the whole run
    def run(self) -> Report:
        self.tests, self.probes = self.g.tests, self.g.probes
        self.by_stem = {tf.path.stem: tf for tf in self.tests}
        try:
            self.cells = source.cells(self.path)
        except Exception as e:  # noqa: BLE001 - an unreadable notebook scores zero, with a reason
            self.cells = []
            self.stopped = f"the submission could not be read ({type(e).__name__}: {str(e)[:200]})"
        try:
            if not self.stopped:
                self.boot(first=True)
            for tf in self.tests:
                if tf.name not in self.results:
                    self.results[tf.name] = self.run_file(tf)
        finally:
            if self.sandbox is not None:
                self.sandbox.kill()
        questions = [QuestionResult(tf.name, tf.points, tf.all_or_nothing, self.results[tf.name])
                     for tf in self.tests]
        if self.restarts:
            self.notes.append(f"the submission's process was restarted {self.restarts} time(s)")
        return Report(self.path.stem, str(self.path), questions,
                      [self.errors[i] for i in sorted(self.errors)], self.output.text(),
                      self.notes, time.monotonic() - self.start)

    def where(self, cell: int, line: Any) -> str:
        at = f"line {line}" if isinstance(line, int) else "a line"
        return at if self.path.suffix == ".py" else f"code cell {cell + 1}, {at}"

    # ---- executing the submission
    def boot(self, first: bool) -> bool:
        """Start a sandbox and execute the submission in it; False when no sandbox can be had."""
        while not self.stopped:
            if self.restarts > self.limits.restarts:
                self.stopped = "the submission crashed or timed out too many times"
                break
            if time.monotonic() > self.deadline:
                self.stopped = f"the submission used up its {self.limits.wall:g} s"
                break
            if self.execute(first):
                return True
            first = False
        return False

    def execute(self, first: bool) -> bool:
        sb = self.sandbox = self.g.zygote.spawn(self.output)
        try:
            if self.probes is not None:
                sb.ship_probes(self.probes, self.limits.statement)
            if self.path.stat().st_size < 16 * 1024 * 1024:
                sb.request("file", (self.path.name, self.path.read_bytes()), self.limits.statement,
                           "copying the submission")
            counts = sb.request("load", self.cells, self.limits.statement, "compiling the submission")
            if not isinstance(counts, list) or len(counts) != len(self.cells):
                raise StudentError("the submission's process answered nonsense")
        except StudentError as e:
            self.stopped = f"the submission could not be started ({e})"
            return False
        sb.on_check = self.checkpoint if first else None
        for i, count in enumerate(counts):
            if isinstance(count, tuple) and len(count) == 3:
                self.errors[i] = f"{self.where(i, count[2])}: {count[0]}: {count[1]}"
                continue
            if not isinstance(count, list):
                continue
            lines = [n if isinstance(n, int) else None for n in count]
            for j, line in enumerate(lines):
                if (i, j) in self.deaths:
                    self.errors[i] = self.deaths[(i, j)]
                    break
                budget = min(self.limits.statement, max(self.deadline - time.monotonic(), 0.01))
                try:
                    err = sb.request("exec", (i, j), budget, "executing this statement")
                except StudentError as e:
                    self.deaths[(i, j)] = self.errors[i] = f"{self.where(i, line)}: {e}"
                    self.restarts += 1
                    return False
                if err is not None:
                    self.errors[i] = self.exec_error(i, err)
                    break
        sb.on_check = None
        try:
            self.env = self.make_env(sb, sb.request("names", None, self.limits.call, "listing names"))
        except StudentError as e:
            self.notes.append(str(e))
            self.restarts += 1
            return False
        return True

    def exec_error(self, cell: int, err: Any) -> str:
        if isinstance(err, tuple) and len(err) == 3 and isinstance(err[0], str):
            return f"{self.where(cell, err[2])}: {err[0]}: {str(err[1])[:300]}"
        return f"{self.where(cell, None)}: an error"

    def make_env(self, sb: Sandbox, names: Any) -> dict[str, Any]:
        env: dict[str, Any] = {}
        if not isinstance(names, dict):
            return env
        for name, info in names.items():
            if not (isinstance(name, str) and isinstance(info, tuple) and len(info) == 2):
                continue
            if info[0] == "function":
                env[name] = StudentFunction(sb, name, info[1], self.limits.call, self)
            elif info[0] == "value":
                env[name] = info[1]
        return env

    def timed_out(self, name: str) -> None:
        self.strikes[name] = self.strikes.get(name, 0) + 1

    def before_call(self, name: str) -> None:
        if self.strikes.get(name, 0) >= self.limits.strikes:
            raise StudentTimeout(f"{name}(...) timed out in earlier tests, so it was not called again")
        if time.monotonic() > self.deadline:
            raise StudentTimeout(f"the submission used up its {self.limits.wall:g} s")

    # ---- checking
    def checkpoint(self, question: str) -> None:
        """``grader.check(question)`` while the notebook runs: check it now, against the names as
        they are at this point."""
        if self.checks >= self.MAX_CHECKS:
            return
        self.checks += 1
        files = self.tests if question == "*" else [self.by_stem[question]] if question in self.by_stem else []
        sb = self.sandbox
        try:
            self.env = self.make_env(sb, sb.request("names", None, self.limits.call, "listing names"))
        except StudentError:
            return
        for tf in files:
            self.results[tf.name] = self.run_file(testfiles.load(tf.path), during_exec=True)

    def run_file(self, tf: testfiles.TestFile, during_exec: bool = False) -> list[CaseResult]:
        return [self.run_case(tf, case, during_exec) for case in tf.cases]

    def run_case(self, tf: testfiles.TestFile, case: testfiles.Case, during_exec: bool) -> CaseResult:
        result = CaseResult(tf.name, case.name, case.points, case.hidden, False)
        sb = self.sandbox
        if not during_exec and (sb is None or not sb.alive):
            if not self.stopped and self.boot(first=False):
                sb = self.sandbox
            else:
                result.message = self.stopped or "the submission's process could not be started"
                return result
        missing = [p for p in case.params if p != "env" and p not in self.env]
        try:
            testfiles.call_case(case, self.env)
            result.passed = True
        except Exception as e:  # noqa: BLE001 - any failure of a case is its result
            result.message = failure_message(e, missing)
        if sb is not None and not sb.alive and sb.death and result.passed:
            result.passed, result.message = False, sb.death
        if not result.passed:
            if case.failure_message:
                result.message = f"{result.message}\n{case.failure_message}".strip()
            result.misconception = misconception(result.message)
        return result
