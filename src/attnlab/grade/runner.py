"""Grade one submission: execute it in a sandbox, then run every test case against it.

Execution first goes in one request, each cell compiled whole from its text and run to its first
error, as Jupyter runs it. When that request fails in any way, it leaves no trace and a fresh sandbox
executes the submission one top-level statement at a time, so that a statement which crashes the
process (``os._exit``, a segfault, a hang at import) behaves like one that raised: the rest of its
cell is skipped, everything defined before it still counts, and a fresh sandbox re-executes the
submission without it. A test call that times out or crashes fails its case; the next case gets a fresh sandbox.
``grader.check(q)`` in a notebook checks q against the definitions at that point, and the last such
check counts, as in otter's grading mode; questions never checked are checked after the last cell.

Order: the submission runs to its end (a check inside it runs public cases only), then every public
case, then every hidden case. So nothing a submission could learn from a hidden input (it sees its
arguments) can reach a public row, an execution error or a check made while it runs. Questions go
in call-graph order (``calls``: callees first), so that each function's own cases have all run
before any case of a function that calls it.

Dependency isolation: a case of a function whose callee (direct or further down) has failed any of
its own cases runs with the *reference* callee lent in its place for each call (``Lent``; the
sandbox swaps the submission's global for a handle and back, and the handle is refused once the call
returns), so that a function's points depend on its own code only. A callee is lent only once all
of its own cases have run and one failed: whatever the submission learns from calling the reference
cannot raise the callee's own score. Cases that lend run after the hidden cases that do not, and a
case that would lend less than its sandbox has already seen gets a fresh sandbox, so remembered
answers never reach a case that is not lent the same. Public cases run before any hidden case and
therefore lend nothing at first; a public case that failed while a callee was failing runs again,
lent, in a fresh sandbox that has seen no hidden case: the questions whose lent references are
settled go in rounds (``run_lending``), all of a round's public reruns first, then its hidden cases,
so that one fresh sandbox serves a round instead of one per question.
"""

from __future__ import annotations

import inspect
import sys
import time
from pathlib import Path
from typing import Any

from .. import testfiles
from . import calls as call_graph
from . import preloads, source
from .limits import Limits
from .report import CaseResult, QuestionResult, Report
from .messages import failure_message, misconception
from .session import Output, Sandbox, StudentError, StudentFunction, StudentTimeout, Zygote


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


class Grader:
    """Grades submissions one after another with sandboxes forked from one zygote."""

    def __init__(
        self,
        zygote: Zygote,
        tests_dir: Path,
        support_dir: Path | None,
        limits: Limits,
        *,
        calls: dict[str, list[str]] | None = None,
        isolate: bool = True,
    ):
        self.zygote, self.tests_dir, self.support_dir, self.limits = zygote, tests_dir, support_dir, limits
        # loaded once per worker: the test files only ever meet plain data from the sandboxes, so
        # one submission cannot leave anything in them for the next
        tests = load_tests(tests_dir, support_dir)
        self.calls, self.isolate = calls or {}, isolate
        self.tests, self.callees, self.uses = self.graph(tests, self.calls)
        self.references = {tf.name: tf.reference for tf in tests if tf.reference is not None}

    def graph(
        self, tests: list[testfiles.TestFile], calls: dict[str, list[str]]
    ) -> tuple[list[testfiles.TestFile], dict[str, list[str]], dict[str, list[str]]]:
        """``tests`` in grading order (callees first), by ``calls``; for each question, the references
        its cases may be lent (those of the graded functions it calls, directly or further down,
        that have one), and every graded function it calls, in grading order."""
        by_name = {tf.name: tf for tf in tests}
        # only what the graph says between graded functions matters here, so the rest is walked
        # once, however large the graph a submission sent
        calls = call_graph.among(by_name, calls)
        order = call_graph.order(by_name, calls)
        reach = {name: set(callees) for name, callees in calls.items()}
        # lent only where the solution's own graph puts the callee (the submission's calls can add
        # cycles, which lend less, but no edge: a reference lent sideways could stand in for the
        # formula of the function it is lent to)
        lendable = call_graph.lendable(calls)
        solution = call_graph.among(by_name, self.calls)
        callees = {
            name: sorted(
                c for c in lendable.get(name, ()) if c in solution[name] and c in by_name and by_name[c].reference
            )
            if self.isolate
            else []
            for name in reach
        }
        uses = {name: [n for n in order if n in reached] for name, reached in reach.items()}
        return [by_name[name] for name in order], callees, uses

    def grade(self, path: Path) -> Report:
        return _Run(self, Path(path)).run()

    def ungraded(self, path: Path, why: str) -> Report:
        """The report of a submission whose grading stopped before any result: every case failed
        with ``why``."""
        questions = [
            QuestionResult(
                tf.name,
                tf.points,
                tf.all_or_nothing,
                [CaseResult(tf.name, c.name, c.points, c.hidden, False, why) for c in tf.cases],
            )
            for tf in sorted(self.tests, key=lambda tf: tf.path)
        ]
        return Report(Path(path).stem, str(path), questions, notes=[why])


# names and callees together: an honest submission's graph has dozens (a wildcard import of numpy
# and math adds some 60); past this, walking it would cost more than grading the file
MAX_GRAPH_ITEMS = 20_000
NO_GRAPH = "which of your functions call which could not be read: no reference was lent to any function"


def _student_graph(reply: Any) -> dict[str, list[str]] | None:
    """The sandbox's reply to "calls" as a graph, or None when it is not one (or too large to walk)."""
    if not isinstance(reply, dict) or len(reply) > MAX_GRAPH_ITEMS:
        return None
    graph: dict[str, list[str]] = {}
    items = 0
    for name, callees in reply.items():
        if type(name) is not str or not isinstance(callees, list):
            return None
        items += 1 + len(callees)
        if items > MAX_GRAPH_ITEMS or any(type(c) is not str for c in callees):
            return None
        graph[name] = callees
    return graph


class SandboxUnavailable(RuntimeError):
    """The worker's zygote gives no more sandboxes: the grading machinery failed, not the
    submission (a submission may even have killed the zygote), so no grade is given from this
    worker; ``attnlab grade`` retries the submission on a fresh worker, once."""


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
        self.strikes: dict[tuple[str, frozenset[str]], int] = {}  # timeouts of a function, by what it was lent
        self.sandbox: Sandbox | None = None
        self.first: Sandbox | None = None  # the sandbox that ran the submission's checks
        self.checked: dict[str, int | None] = {}  # question -> snapshot of its last grader.check
        self.env: dict[str, Any] = {}
        self.names: Any = None
        self.stopped = ""  # why no sandbox can be had any more
        self.lending: dict[str, Lent] = {}  # what the case running now lends
        self.seen_lent: set[str] = set()  # what the current sandbox has been lent
        self.seen_hidden = False  # whether the current sandbox has run a hidden case
        self.whole_failed = False  # whether the submission failed to run in one request

    # ---- the whole run
    def run(self) -> Report:
        self.tests, self.callees, self.uses = self.g.tests, self.g.callees, self.g.uses
        self.by_stem = {tf.path.stem: tf for tf in self.tests}
        try:
            self.cells = source.cells(self.path)
        except Exception as e:  # noqa: BLE001 - an unreadable notebook scores zero, with a reason
            self.cells = []
            self.stopped = f"the submission could not be read ({type(e).__name__}: {str(e)[:200]})"
        self.wants = preloads.wanted(self.g.zygote.optional, self.cells)
        try:
            if not self.stopped and self.boot(first=True):
                self.add_student_calls()
            for tf in self.tests:
                if tf.name not in self.results:
                    self.results[tf.name] = [
                        self.run_case(tf, c, self.checked.get(tf.name)) for c in tf.cases if not c.hidden
                    ]
            lending = []
            for tf in self.tests:
                # first with the student's own functions throughout: a case that passes so is theirs
                self.results[tf.name] += self.run_cases(tf, hidden=True, lend=False)
                if self.failed_callees(tf) and any(not r.passed for r in self.results[tf.name]):
                    lending.append(tf)  # its failed cases again, lent, after every case that lends nothing
            self.run_lending(lending)
            self.blame_callees()
        except SandboxUnavailable:
            raise
        except Exception as e:  # noqa: BLE001 - whatever a submission's replies do costs that submission alone
            self.stopped = f"grading stopped: the submission's process made the grader fail ({type(e).__name__})"
            self.notes.append(self.stopped)
            self.fail_the_rest(self.stopped)
        finally:
            if self.sandbox is not None:
                self.sandbox.kill()
        # reported in the test files' order (otter's), whatever order they were graded in
        questions = [
            QuestionResult(tf.name, tf.points, tf.all_or_nothing, self.in_file_order(tf))
            for tf in sorted(self.tests, key=lambda tf: tf.path)
        ]
        if self.restarts:
            self.notes.append(f"the submission's process was restarted {self.restarts} time(s)")
        return Report(
            self.path.stem,
            str(self.path),
            questions,
            [self.errors[i] for i in sorted(self.errors)],
            self.output.text(),
            self.notes,
            time.monotonic() - self.start,
        )

    def fail_the_rest(self, why: str) -> None:
        """Every case without a result fails, saying ``why``; what has run keeps its result."""
        for tf in self.tests:
            done = {r.name for r in self.results.setdefault(tf.name, [])}
            self.results[tf.name] += [
                CaseResult(tf.name, c.name, c.points, c.hidden, False, why) for c in tf.cases if c.name not in done
            ]

    def add_student_calls(self) -> None:
        """The solution's call graph, and the submission's own besides. References are lent only
        along the solution's edges; the submission's own calls can only take lending away (a claim
        against the solution's direction, ``softmax`` through ``scaled_dot_product_attention``, makes
        a cycle, and nothing is lent along a cycle: ``calls.lendable``), and they say which callee a
        failing row points at (``blame_callees``: a ``multi_head_attention`` built on the student's
        own ``self_attention``, which the solution's is not, is graded with that ``self_attention``
        and, where it fails, sent to fix it first). The graph comes from the sandbox, so the student
        may claim any call: a claim lends nothing and moves no points, only a message."""
        assert self.sandbox is not None
        try:
            reply = self.sandbox.request("calls", None, self.limits.call, "reading which functions call which")
        except StudentError:
            reply = None
        student = _student_graph(reply)
        if student is None:
            # its own calls unknown, a cycle it made could not be seen: lending along the solution's
            # graph could then grade a function with the reference of one it computes
            self.callees = {name: [] for name in self.callees}
            self.notes.append(NO_GRAPH)
            return
        calls = {name: list(callees) for name, callees in self.g.calls.items()}
        for name, callees in student.items():
            calls[name] = sorted(set(calls.get(name, [])) | set(callees))
        graded = [tf.name for tf in self.tests]
        if call_graph.among(graded, calls) != call_graph.among(graded, self.g.calls):
            self.tests, self.callees, self.uses = self.g.graph(self.tests, calls)

    def failed_callees(self, tf: testfiles.TestFile) -> list[str]:
        """The callees of ``tf``'s function whose own cases have all run and one failed."""
        return [c for c in self.callees[tf.name] if any(not r.passed for r in self.results.get(c, []))]

    def run_cases(
        self, tf: testfiles.TestFile, *, hidden: bool, only: set[str] | None = None, lend: bool = True
    ) -> list[CaseResult]:
        """``tf``'s hidden (or public) cases (those named in ``only``), each lent the references of
        its failed callees (with ``lend``)."""
        lent = tuple(self.failed_callees(tf)) if lend else ()
        snapshot = self.checked.get(tf.name)
        cases = [c for c in tf.cases if c.hidden == hidden and (only is None or c.name in only)]
        return [self.run_case(tf, c, snapshot, lent=lent) for c in cases]

    def run_lending(self, lending: list[testfiles.TestFile]) -> None:
        """The questions whose cases failed with the student's own functions while a callee fails
        its own tests: those cases again, with the callees' references lent. A case passes when it
        passes either way (the student's own callee may do what this function needs of it, under a
        signature of its own, say), and a case that fails both ways keeps the lent run's message,
        which is about this function alone. In rounds: a round is every pending question none of
        whose callees with a reference is still pending (what it is lent can no longer change). A
        round's failed public cases all run again first, in one sandbox that has run no hidden
        case, then its failed hidden cases: one fresh sandbox per round rather than one per question."""
        pending = list(lending)
        while pending:
            names = {tf.name for tf in pending}
            # (the first pending question when they call each other: call-graph order, as before)
            ready = [tf for tf in pending if not names & set(self.callees[tf.name])] or pending[:1]
            for tf in ready:
                self.rerun_failed(tf, hidden=False)
            for tf in ready:
                self.rerun_failed(tf, hidden=True)
            pending = [tf for tf in pending if tf not in ready]

    def rerun_failed(self, tf: testfiles.TestFile, *, hidden: bool) -> None:
        """``tf``'s hidden (or public) cases that failed with nothing lent, again with the references
        of its failed callees; public ones in a sandbox that has never run a hidden case (public rows
        are shown before grades are published)."""
        redo = {r.name for r in self.results[tf.name] if r.hidden == hidden and not r.passed}
        if not redo or not self.failed_callees(tf):  # (a callee that failed may pass once lent)
            return
        if not hidden and self.seen_hidden and self.sandbox is not None:
            self.sandbox.kill()
        again = {r.name: r for r in self.run_cases(tf, hidden=hidden, only=redo)}
        self.results[tf.name] = [again.get(r.name, r) for r in self.results[tf.name]]

    def blame_callees(self) -> None:
        """A row that failed with the student's own callee in it (nothing lent: ``attnlab check``,
        a callee without a reference, isolation turned off) while that callee fails its own tests
        points at the callee instead of guessing a cause of its own."""
        for tf in self.tests:
            failing = [c for c in self.uses[tf.name] if any(not r.passed for r in self.results.get(c, []))]
            if not failing:
                continue
            callee = failing[0]  # the deepest: fixing it may fix the others
            public = any(not r.passed and not r.hidden for r in self.results[callee])
            which = "its own public test" if public else "its own tests"
            said = f"`{tf.name}` uses your `{callee}`, which fails {which}: fix `{callee}` first"
            for r in self.in_file_order(tf):
                # a function that is missing says so, whatever its callees do
                if not r.passed and not r.note and not r.message.startswith("the submission does not define"):
                    # every row says it whole: on Gradescope each is a box of its own, and
                    # there is no "above" to point to
                    r.message = said
                    r.misconception = None

    def in_file_order(self, tf: testfiles.TestFile) -> list[CaseResult]:
        order = {c.name: i for i, c in enumerate(tf.cases)}
        return sorted(self.results[tf.name], key=lambda r: order.get(r.name, len(order)))

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
        try:
            sb = self.sandbox = self.g.zygote.spawn(self.output, wants=self.wants)
        except (RuntimeError, OSError) as e:
            raise SandboxUnavailable(f"no sandbox could be started ({e})") from None
        if first:
            self.first = sb
        self.seen_lent, self.seen_hidden = set(), False
        try:
            if self.path.stat().st_size < 16 * 1024 * 1024:
                sb.request(
                    "file", (self.path.name, self.path.read_bytes()), self.limits.statement, "copying the submission"
                )
            if not self.deaths and not self.whole_failed:
                if self.run_whole(sb, first):
                    return self.name_what_it_defined(sb)
                return self.execute(first)  # the same, statement by statement, in a fresh sandbox
            if self.path.suffix == ".ipynb":
                self.prelude(sb)
            counts = sb.request("load", self.cells, self.limits.statement, "compiling the submission")
            if not isinstance(counts, list) or len(counts) != len(self.cells):
                raise StudentError("the submission's process answered nonsense")
        except StudentError as e:
            if first:
                self.errors[0] = f"the submission could not be compiled ({e})"
            self.restarts += 1
            return False
        # errors are reported as the first run met them; a re-run after a crash runs the same code
        errors = self.errors if first else {}
        sb.on_check = self.checkpoint if first else None
        for i, count in enumerate(counts):
            if isinstance(count, tuple) and len(count) == 3:
                errors[i] = f"{self.where(i, count[2])}: {count[0]}: {count[1]}"
                continue
            if not isinstance(count, list):
                continue
            lines = [n if isinstance(n, int) else None for n in count]
            for j, line in enumerate(lines):
                if (i, j) in self.deaths:
                    errors[i] = self.deaths[(i, j)]
                    break
                budget = min(self.limits.statement, max(self.deadline - time.monotonic(), 0.01))
                try:
                    err = sb.request("exec", (i, j), budget, "executing this statement")
                except StudentError as e:
                    self.deaths[(i, j)] = self.errors[i] = f"{self.where(i, line)}: {e}"
                    self.restarts += 1
                    return False
                if err is not None:
                    errors[i] = self.exec_error(i, err)
                    break
        sb.on_check = None
        return self.name_what_it_defined(sb)

    def run_whole(self, sb: Sandbox, first: bool) -> bool:
        """The fast path: the whole submission in one request, each cell compiled whole from its
        text. Whatever goes wrong there (a crash, a timeout, a cell's death or a reply that is
        not one) leaves no trace: the sandbox goes, and with ``first``, what its checks recorded
        and printed, so that the statement-by-statement run after it starts as if this one had
        never been."""
        sb.on_check = self.checkpoint if first else None
        budget = min(self.limits.statement, max(self.deadline - time.monotonic(), 0.01))
        prelude = source.NOTEBOOK_PRELUDE if self.path.suffix == ".ipynb" else None
        try:
            reply = sb.request("run", (prelude, self.cells), budget, "executing the submission")
        except StudentError:
            reply = None
        sb.on_check = None
        if isinstance(reply, list) and len(reply) == len(self.cells) and all(map(_an_error_or_none, reply)):
            if first:
                for i, err in enumerate(reply):
                    if err is not None:
                        self.errors[i] = self.exec_error(i, err)
            return True
        self.whole_failed = True
        sb.kill()
        if first:
            self.errors.clear()
            self.results.clear()
            self.checked.clear()
            self.strikes.clear()
            self.checks = 0
            self.output = Output(self.limits.output)
        return False

    def name_what_it_defined(self, sb: Sandbox) -> bool:
        try:
            _, self.names = self.list_names(sb, snapshot=False)
        except StudentError as e:
            self.notes.append(str(e))
            self.restarts += 1
            return False
        self.env = self.make_env(sb, self.names, None)
        return True

    def prelude(self, sb: Sandbox) -> None:
        """What a notebook finds defined in Jupyter (``source.NOTEBOOK_PRELUDE``), before its cells."""
        counts = sb.request("load", [source.NOTEBOOK_PRELUDE], self.limits.statement, "preparing the notebook")
        if not (isinstance(counts, list) and len(counts) == 1 and isinstance(counts[0], list)):
            raise StudentError("the submission's process answered nonsense")
        for j in range(len(counts[0])):
            if sb.request("exec", (0, j), self.limits.statement, "preparing the notebook") is not None:
                raise StudentError("the notebook could not be prepared")

    def list_names(self, sb: Sandbox, snapshot: bool) -> tuple[int | None, Any]:
        reply = sb.request("names", snapshot, self.limits.call, "listing names")
        if not (isinstance(reply, tuple) and len(reply) == 2):
            raise StudentError("the submission's process answered nonsense")
        number, names = reply
        return (number if type(number) is int else None), names

    def exec_error(self, cell: int, err: Any) -> str:
        if isinstance(err, tuple) and len(err) == 3 and isinstance(err[0], str):
            return f"{self.where(cell, err[2])}: {err[0]}: {str(err[1])[:300]}"
        return f"{self.where(cell, None)}: an error"

    def make_env(self, sb: Sandbox, names: Any, snapshot: int | None) -> dict[str, Any]:
        env: dict[str, Any] = {}
        if not isinstance(names, dict):
            return env
        for name, info in names.items():
            if not (isinstance(name, str) and isinstance(info, tuple) and len(info) == 2):
                continue
            if info[0] == "function":
                env[name] = StudentFunction(sb, name, info[1], self.limits.call, self, snapshot)
            elif info[0] == "value":
                env[name] = info[1]
        return env

    def reaches_student(self, case: testfiles.Case) -> bool:
        """Whether a case can call anything of the submission's: it takes ``env``, or a name the
        submission defines."""
        return any(p == "env" or p in self.env for p in case.params)

    def timed_out(self, name: str) -> None:
        # struck with what it was lent: a function that hangs in the student's own callee may still
        # be graded with that callee's reference lent
        key = (name, frozenset(self.lending))
        self.strikes[key] = self.strikes.get(key, 0) + 1

    def before_call(self, name: str) -> dict[str, Lent]:
        """Whether the student's ``name`` may be called now; what the call is to be lent."""
        if self.strikes.get((name, frozenset(self.lending)), 0) >= self.limits.strikes:
            raise StudentTimeout(f"{name}(...) timed out in earlier tests, so it was not called again")
        if time.monotonic() > self.deadline:
            raise StudentTimeout(f"the submission used up its {self.limits.wall:g} s")
        return self.lending

    # ---- checking
    def checkpoint(self, question: str) -> None:
        """``grader.check(question)`` while the submission runs: keep the definitions as they are
        now for this question's cases, and run its public cases against them."""
        if self.checks >= self.MAX_CHECKS:
            return
        self.checks += 1
        files = self.tests if question == "*" else [self.by_stem[question]] if question in self.by_stem else []
        sb = self.sandbox
        assert sb is not None  # a check is called by the running submission
        try:
            number, names = self.list_names(sb, snapshot=True)
        except StudentError:
            return
        env = self.make_env(sb, names, number)
        for tf in files:
            self.checked[tf.name] = number
            self.results[tf.name] = [self.run_case(tf, c, number, env) for c in tf.cases if not c.hidden]

    def run_case(
        self,
        tf: testfiles.TestFile,
        case: testfiles.Case,
        snapshot: int | None,
        env: dict[str, Any] | None = None,
        lent: tuple[str, ...] = (),
    ) -> CaseResult:
        result = CaseResult(tf.name, case.name, case.points, case.hidden, False)
        idle = env is None and self.names is not None and not self.reaches_student(case)
        if idle:
            # every function it takes is missing: it fails as otter's would with nothing of the
            # submission's to run, so in no sandbox (a fresh one, lent a reference, would run nothing)
            env, sb = self.env, None
        else:
            if env is None and self.sandbox is not None and not self.seen_lent <= set(lent):
                # answers remembered from a reference must not reach a case that is not lent it
                self.sandbox.kill()
            sb = self.sandbox
        if env is None:
            if sb is None or not sb.alive:
                if not self.stopped and self.boot(first=False):
                    sb = self.sandbox
                    assert sb is not None  # boot succeeded
                else:
                    result.message = self.stopped or "the submission's process could not be started"
                    return result
            # a check's snapshot lives in the sandbox that ran the submission's checks
            env = self.make_env(sb, self.names, snapshot) if snapshot is not None and sb is self.first else self.env
        missing = [p for p in case.params if p != "env" and p not in env]
        if not idle:
            self.seen_lent |= set(lent)
            self.seen_hidden |= case.hidden
        self.lending = {name: Lent(self.g.references[name], self.limits.call) for name in lent}
        try:
            testfiles.call_case(case, env)
            result.passed = True
        except Exception as e:  # noqa: BLE001 - any failure of a case is its result
            result.message = failure_message(e, missing)
            if isinstance(e, AssertionError) and not getattr(e, "from_student", False):
                # only a test's own words name a misconception, never the student's text
                result.misconception = misconception(result.message)
        finally:
            self.lending = {}
        if lent:
            result.note = lent_note(lent)
        if sb is not None and not sb.alive and sb.death and result.passed:
            result.passed, result.message = False, sb.death
        if not result.passed and case.failure_message:
            result.message = f"{result.message}\n{case.failure_message}".strip()
        return result


def lent_note(lent: tuple[str, ...]) -> str:
    """The line a row graded with lent references carries."""
    names = ", ".join(f"`{n}`" for n in lent)
    yours = "yours fails its own tests" if len(lent) == 1 else "yours fail their own tests"
    return f"graded with the reference {names}, because {yours}"


class Lent:
    """A reference function lent for one case. It runs here, in the worker, on what the student's
    code passes it, so it refuses inputs that would keep the worker busy: more than ``MAX_ITEMS``
    numbers in one call, or more than ``seconds`` of calls in all. It is lent unwrapped (what a
    decorator made with ``functools.wraps`` wraps): a cache around it (the oracle keeps the values
    its tests compute, for every student the worker grades) would answer the inputs the tests or an
    earlier sandbox asked for hundreds of times sooner, so the student's code could time which
    inputs those were, and leave marks in it for a later sandbox or student to time."""

    MAX_ITEMS = 100_000

    def __init__(self, fn: Any, seconds: float):
        self.fn, self.left = inspect.unwrap(fn), seconds

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        import numpy as np

        size = sum(np.size(a) for a in (*args, *kwargs.values()) if isinstance(a, (np.ndarray, list, tuple)))
        if size > self.MAX_ITEMS:
            raise ValueError(f"the reference lent for this test takes at most {self.MAX_ITEMS} numbers per call")
        if self.left <= 0:
            raise RuntimeError("the reference lent for this test has used up its time")
        start = time.monotonic()
        try:
            return self.fn(*args, **kwargs)
        finally:
            self.left -= time.monotonic() - start


def _an_error_or_none(value: Any) -> bool:
    return value is None or (isinstance(value, tuple) and len(value) == 3 and isinstance(value[0], str))
