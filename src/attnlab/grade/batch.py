"""``attnlab grade``: find the submissions, grade each in its own sandbox, write what spans them.

1. The roster, if any, is read and checked (``canvas.load``) before anything else.
2. The submissions are found in the layouts LMSs hand over (``discover``) and each one's file is
   copied to ``RESULTS/submissions/<folder>/`` (``report.folder_name``: no submission's name can
   reach the batch's own files or another submission's folder). What is graded is that copy, so
   the content hash stored with its results is the hash of what was graded.
3. A submission whose results hold the same content hash and tests fingerprint is skipped; a
   changed one is regraded; one whose grading failed last time is retried. An unreadable one (not
   a notebook, a zip renamed ``.py``, not UTF-8) scores 0 with the reason, without a worker.
4. The rest go to worker processes (one per core). A worker that dies or hangs is replaced and the
   submission it held is retried once in a fresh worker; a second failure makes it a problem with
   status "not graded" and no total, never a grade. No other submission is affected.
   A submission that cannot be what was asked (``asked``: does not compile, defines none of the
   assignment's functions, the quiz notebook) is a problem like an unreadable one, not a 0.
5. ``grades.csv`` (a row appended as each submission finishes, sorted once at the end),
   ``found.csv``, the Moodle import, the item analysis, the Canvas import, and a closing summary.
   Only graded submissions reach the import files and the class statistics: anything else is blank
   there, for a human. An import file that cannot be filled is not written, and the summary says why.

Linear at any class size: the batch's work per finished submission does not grow with the class
(an appended row, a progress tick; the worker writes the results and replies with the scores), and
its memory is a small record per submission (its name, identities, scores: under 2 KB each)
plus one results.json at a time for the item analysis.

Interrupting a run (Ctrl-C, SIGTERM, the terminal closing) stops its workers and keeps every
finished result: a worker writes a submission's results.json in one go, with the content hash that
the next run compares, so the same command resumes where the run stopped. Even a SIGKILL leaves
whole rows in grades.csv and complete results or none.

``Run.exit_code``: 0 when every submission was graded and nothing needs a human; 3 when grading
finished but something does (an unreadable submission, one that could not be graded, a submission
no roster student matches, two submissions claiming one student). Errors before grading (bad
roster, nothing to grade) raise, and the CLI exits 1 with the message.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import signal
import subprocess
import sys
import threading
import time
from collections import Counter, deque
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator

from .. import __version__, atomic, importpath, paths, testfiles
from . import calls, report, runrecord
from .limits import Limits
from .report import GRADED, NOT_GRADED, UNREADABLE

# what only comes into use once the workers run (the roster's and the LMS files' modules, discovery,
# hashing, statistics: some 25 ms of imports) is imported where it is used, so that a worker, on the
# critical path of a run, starts that much sooner
if TYPE_CHECKING:
    from ..lms import canvas, imports
    from ..lms.identity import Student
    from . import asked
    from .discover import Found, Submission

# isolated mode, from the file-system root: nothing a student names is on a worker's import path
WORKER = importpath.python_command("attnlab.grade.worker", "main")
NEEDS_HUMAN = 3
# said once per run, after the mode statement, where the sandbox has neither namespaces nor Landlock (macOS)
WEAK_ISOLATION = (
    "Warning: this machine gives the sandbox neither namespaces nor Landlock (ABI 3 or newer), so each "
    "submission runs with only process limits and (as root) a user id of its own: it can read what that user can. "
    "Grade for real on Linux (6.2 or newer, or as root), or on Gradescope."
)
MAX_FAILED_STARTS = 3  # workers in a row that die before they are ready: the machine is the problem
NO_WORKER = "no grading worker could start"


@dataclass
class Graded:
    submission: str  # the submission's key (file stem, folder name, ...)
    score: float | None  # None when it could not be graded
    questions: dict[str, float]
    results: Path | None
    skipped: bool = False  # unchanged since an earlier run graded it
    status: str = GRADED
    problem: str = ""
    students: tuple[Student, ...] = ()
    origin: str = ""
    notes: list[str] = field(default_factory=list)
    action: str = ""  # graded, skipped, regraded, retried ("" when not run)
    worker_failures: int = 0  # in this run: its worker died or hung while grading it

    def who(self) -> str:
        return "; ".join(s.label() for s in self.students) or self.submission


@dataclass
class Run:
    graded: list[Graded]
    found: Found
    out: Path
    written: list[Path]
    roster: canvas.Roster | None = None
    matching: canvas.Matching | None = None
    claims: imports.Claims | None = None  # students claimed by several submissions (no import row)
    earlier: int = 0  # results in RESULTS/submissions from other runs' submissions
    not_written: dict[str, str] = field(default_factory=dict)  # an import file -> why it could not be filled
    isolation_warning: str = ""  # a worker's sandboxes isolated more weakly than this machine offers

    def count(self, action: str) -> int:
        return sum(g.action == action for g in self.graded)

    @property
    def problems(self) -> list[Graded]:
        return [g for g in self.graded if g.status != GRADED]

    @property
    def unmatched(self) -> list[str]:
        return self.matching.unmatched if self.matching else []

    @property
    def exit_code(self) -> int:
        clashes = self.claims.twice if self.claims else {}
        return NEEDS_HUMAN if self.problems or self.unmatched or clashes else 0


@dataclass
class _Job:
    key: str
    folder: str
    path: Path
    fields: dict[str, Any]
    who: str
    failures: int = 0  # infrastructure failures while grading it
    fresh_only: bool = False  # a retry: only a worker that has graded nothing yet


def main(
    *,
    submissions: list[Path],
    out: Path,
    tests_dir: Path | None = None,
    support_dir: Path | None = None,
    jobs: int | None = None,
    force: bool = False,
    roster: Path | None = None,
    column: str | None = None,
    scale: bool = False,
    timeout: float = 10.0,
    memory_mb: int = 2048,
    progress: bool = True,
) -> Run:
    """Grade every submission found in ``submissions`` into ``out``; see the module docstring.

    ``timeout`` bounds one call of a student function; executing the submission gets 3x that per
    statement and the whole submission 30x. ``force`` regrades unchanged submissions too.
    ``column`` picks the roster's assignment column (default: the assignment's name); ``scale``
    scales the Canvas import's totals to the column's Points Possible when they differ.
    """
    if column is not None and roster is None:
        raise ValueError("--column chooses a column of the roster: give --roster too")
    if scale and roster is None:
        raise ValueError("--scale scales the totals to the roster's points: give --roster too")
    the_roster = None
    if roster:
        from ..lms import canvas

        the_roster = canvas.load(Path(roster), column=column, assignment=paths.current_assignment(), scale=scale)
    out = Path(out).resolve()
    tests_dir = Path(tests_dir or paths.tests_dir()).resolve()
    if support_dir is None and (paths.autograder_dir() / "support").is_dir():
        support_dir = paths.autograder_dir() / "support"
    support_dir = Path(support_dir).resolve() if support_dir else None
    limits = Limits.from_timeout(timeout, memory_mb)
    store = out / "submissions"
    config = dict(
        tests_dir=str(tests_dir),
        support_dir=str(support_dir) if support_dir else None,
        out=str(store),
        limits=limits.__dict__,
        isolate=True,
        parent=os.getpid(),
    )
    jobs = jobs or os.cpu_count() or 1
    with _interruptible():
        # the workers start now (each starts its zygote first, then imports the engine and loads
        # the tests) and get ready while this process loads the tests and looks through the
        # submissions; no more of them than there are submissions when those are named one by one
        # (one file: one worker)
        named = all(Path(s).suffix in (".py", ".ipynb") for s in submissions)
        # (before the call graph and sandbox.yaml are read: those follow on the workers' input, read
        # meanwhile, and a worker needs them only once its zygote has started)
        early = _start_workers(dict(config, follows=True), min(jobs, len(submissions)) if named else jobs)
        try:
            config.update(dependencies=calls.for_tests(tests_dir), sandbox=_sandbox_settings(tests_dir))
            for w in early:
                w.follow({key: config[key] for key in ("dependencies", "sandbox")})
            return _grade(
                submissions, out, tests_dir, support_dir, limits, config, jobs, early, force, the_roster, progress
            )
        except Interrupted as e:
            e.out = out
            raise
        finally:
            for w in early:
                if w.proc.poll() is None and not w.handed:
                    w.kill()


def _load_tests(tests_dir: Path, support_dir: Path | None) -> list:
    from .runner import load_tests  # (numpy)

    return load_tests(tests_dir, support_dir)


def _sandbox_settings(tests_dir: Path) -> dict[str, tuple[str, ...]] | None:
    """The assignment's sandbox.yaml, read here once for every worker (each would import a YAML
    parser for it); None when it cannot be read: each worker then reads it and fails as before."""
    from . import launch

    try:
        return launch.sandbox_config(tests_dir)
    except Exception:  # noqa: BLE001 - whatever it is, the workers meet it and say so as they always did
        return None


class Interrupted(KeyboardInterrupt):
    """The run was stopped by a signal; everything graded before it is kept (``out``)."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum
        self.out: Path | None = None


@contextlib.contextmanager
def _interruptible() -> Iterator[None]:
    """Ctrl-C, SIGTERM and SIGHUP (the terminal closed) stop the run through the finally blocks
    that end its workers and sort grades.csv. A signal ignored when the run starts (``nohup``)
    stays ignored; off the main thread, Python allows no handlers and the defaults hold."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: Any) -> None:
        raise Interrupted(signum)

    old = {
        sig: signal.signal(sig, stop)
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
        if signal.getsignal(sig) is not signal.SIG_IGN
    }
    try:
        yield
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)


def _grade(
    submissions: list[Path],
    out: Path,
    tests_dir: Path,
    support_dir: Path | None,
    limits: Limits,
    config: dict,
    jobs: int,
    early: list["_Worker"],
    force: bool,
    the_roster: canvas.Roster | None,
    progress: bool,
) -> Run:
    # the item analysis (its SVG writer: urllib) loads here, while the workers start
    import tempfile

    from ..lms import canvas, imports, moodle
    from . import analysis, asked
    from .discover import discover

    # the questions' names and points as the files declare them: running the files (numpy, the
    # oracle: a third of a second) is the workers' to do; here only when a file must run to tell
    outlined = testfiles.outline_dir(tests_dir)
    tests = outlined if outlined is not None else _load_tests(tests_dir, support_dir)
    questions = [(tf.name, tf.points) for tf in tests]
    if the_roster is not None:
        canvas.check_points(the_roster, sum(p for _, p in questions))
    fingerprint = _tests_fingerprint(tests_dir, support_dir, limits, config["dependencies"])
    store = out / "submissions"

    with tempfile.TemporaryDirectory(prefix="attnlab-unpack-") as scratch:
        found = discover(
            [Path(s) for s in submissions],
            unpack=Path(scratch),
            release=paths.release_dir() if paths.current_course() else None,
            exclude=out,
        )
        folders = folders_of(found.submissions)
        matching = canvas.match(the_roster, found.submissions) if the_roster else None
        if the_roster and matching:
            canvas.fill_identities(found.submissions, the_roster, matching)
        claims = imports.claims(found.submissions, roster=the_roster, matching=matching)
        report.make_dirs(store)
        graded: dict[str, Graded] = {}
        todo: list[_Job] = []
        # what the assignment defines, from the solution's call graph (none known: nothing checked)
        asks = asked.Asked(functions=config["dependencies"].get("calls", {}), quiz_variables=_quiz_variables)
        for sub in found.submissions:
            try:
                g, job = _prepare(sub, store / folders[sub.key], tests, fingerprint, force, asks)
            except Exception as e:  # noqa: BLE001 - whatever one submission's intake meets is its own problem
                why = f"could not be prepared for grading ({type(e).__name__}: {str(e)[:120]}): a human must look"
                g, job = _failed_intake(sub, store / folders[sub.key], tests, why), None
            graded[sub.key] = g
            if job is not None:
                todo.append(job)
    ours = set(folders.values())
    earlier = sum(1 for p in store.iterdir() if p.is_dir() and p.name not in ours)

    imports.remove_earlier(out)  # grades.csv is this run's from here on; so must the import files be
    rows = _GradesFile(out / "grades.csv", questions, graded.values())

    def done(job: _Job, score: float | None, scores: dict[str, float], problem: str = "") -> None:
        g = graded[job.key]
        g.status = GRADED if score is not None else NOT_GRADED
        g.results, g.worker_failures = store / job.folder / "results.json", job.failures
        g.score, g.questions, g.problem = score, scores, problem or g.problem
        rows.append(g)

    # workers told that no work is left end meanwhile; waited for once the reports are written
    finishing: list[_Worker] = []
    isolation: list[runrecord.Isolation] = []  # as each worker reports it
    try:
        try:
            if todo:
                _schedule(
                    todo, config, jobs, limits, questions, store, done, progress, tuple(early), finishing, isolation
                )
        finally:
            rows.close(graded.values())  # sorted, and whole even when the run was interrupted
            record = runrecord.write(out, workers=isolation, limits=limits.__dict__)
        if outlined is not None and any(NO_WORKER in g.problem for g in graded.values()):
            _load_tests(tests_dir, support_dir)  # test files that cannot run: say why, as before

        written = [out / "grades.csv", record, out / "found.csv"]
        report.write_atomic(out / "found.csv", found_csv(found, graded, folders))
        counted = [g for g in graded.values() if g.status == GRADED and g.score is not None]
        # (the assignment is the folder holding the tests: autograder/<assignment>/tests)
        not_written: dict[str, str] = {}
        path, why = moodle.write(
            out,
            [(g.students, g.score) for g in counted if g.score is not None],
            tests_dir.parent.name,
            single=claims.single,
        )
        if path is not None:
            written.append(path)
        else:
            not_written[moodle.NAME] = why
        # one results.json in memory at a time, whatever the class size
        results = (report.read(g.results) for g in graded.values() if g.status == GRADED and g.results)
        items, variants = analysis.write(out, (r for r in results if r is not None))
        written += [out / "item_analysis.csv", out / "misconceptions.csv"]
        if items:
            written.append(out / "item_analysis.svg")
        if the_roster is not None and matching is not None:
            keys = {g.submission for g in counted}
            totals = {g.submission: g.score if g.submission in keys else None for g in graded.values()}
            possible = sum(p for _, p in questions)
            written.append(canvas.write(out, the_roster, matching, totals, possible, claimed=claims.rows))
        written.append(store)
        run = Run(list(graded.values()), found, out, written, the_roster, matching, claims, earlier, not_written)
        run.isolation_warning = runrecord.warning(isolation)
        if progress:
            from rich.console import Console

            console = Console(stderr=True)
            for t in analysis.table(items, variants):
                console.print(t)
            for line in summary(run, questions):
                console.print(line, highlight=False)
        return run
    finally:
        for w in finishing:
            w.close()


def folders_of(subs: list[Submission]) -> dict[str, str]:
    """Each submission's results folder. A key that is itself a hashed folder name of another
    (``bob-<hash>`` beside ``Bob``) gets a hashed folder of its own, as any other odd key does."""
    import hashlib

    folders: dict[str, str] = {}
    taken: set[str] = set()
    plain = sorted(subs, key=lambda sub: report.folder_name(sub.key) == sub.key)  # hashed names first
    for sub in plain:
        name = report.folder_name(sub.key)
        if name in taken:
            name = f"{name}-{hashlib.sha256(sub.key.encode('utf-8', 'surrogatepass')).hexdigest()[:12]}"
        if name in taken:  # (two keys whose hashes collide: no run has met one)
            raise ValueError(f"two submissions would share the results folder {name}; rename one")
        taken.add(name)
        folders[sub.key] = name
    return folders


def _quiz_variables() -> set[str]:
    """The names the course's quiz notebook sets, to recognise it handed in as the assignment."""
    try:
        from ..quiz import bank  # (yaml: absent where only the engine's own needs are installed)

        return {item.variable for item in bank.load().values()}
    except Exception:  # noqa: BLE001 - no quiz bank that can be read here: nothing to recognise
        return set()


def _prepare(
    sub: Submission, folder: Path, tests: list, fingerprint: str, force: bool, asks: asked.Asked
) -> tuple[Graded, _Job | None]:
    """The submission's row as it stands, and its job when it must be (re)graded."""
    import hashlib

    from .discover import read_regular, reason, unreadable

    g = Graded(
        sub.key, None, {}, folder / "results.json", students=sub.students, origin=sub.origin, notes=list(sub.notes)
    )
    previous = report.read(folder / "results.json")
    fields: dict[str, Any] = {
        "submission": sub.key,
        "students": [asdict(s) for s in sub.students],
        "origin": sub.origin,
        "notes": sub.notes,
        "tests_sha256": fingerprint,
    }
    if sub.file is None:
        return _unreadable(g, folder, sub.key, sub.problem, tests, fields, staged=None), None
    try:  # (found readable; a regular file only, even if it changed since)
        data = read_regular(sub.file)
    except OSError as e:
        return _unreadable(g, folder, sub.key, f"{sub.file.name}: {reason(e)}", tests, fields, staged=None), None
    digest = hashlib.sha256(sub.file.suffix.encode() + b"\0" + data).hexdigest()
    fields["sha256"] = digest
    # ``data`` is what gets graded (the copy staged below): checked once, here
    why = unreadable(sub.file, data=data)
    suspect = "" if why else asks.problem(sub.file)
    if suspect:
        return _unreadable(g, folder, sub.key, f"{sub.file.name}: {suspect}", tests, fields, staged=None), None
    before = previous["extra_data"] if previous else {}
    if (
        not force
        and before.get("status") == GRADED
        and before.get("sha256") == digest
        and before.get("tests_sha256") == fingerprint
    ):
        assert previous is not None  # before is not empty
        g.skipped, g.action, g.score = True, "skipped", float(previous["score"])
        g.questions = dict(before["questions"])
        if any(before.get(k) != v for k, v in fields.items()):  # e.g. the roster now names them
            report.stamp(folder / "results.json", fields, sub.who())
        return g, None
    g.action = "graded" if previous is None else "retried" if before.get("status") == NOT_GRADED else "regraded"
    staged = folder / f"{folder.name}{sub.file.suffix}"
    for old in folder.glob(f"{folder.name}.*"):
        if old != staged and old.suffix in (".py", ".ipynb"):
            old.unlink()
    report.make_dirs(folder)
    (folder / "results.json").unlink(missing_ok=True)  # from here on, its presence means this run graded it
    atomic.write_atomic(staged, data, mode=report.FILE_MODE)
    if why:
        g.action = ""
        return _unreadable(g, folder, sub.key, f"{sub.file.name}: {why}", tests, fields, staged), None
    return g, _Job(sub.key, folder.name, staged, fields, sub.who())


def _failed_intake(sub: Submission, folder: Path, tests: list, why: str) -> Graded:
    """The row of a submission whose intake failed: a problem, with results that say so."""
    g = Graded(sub.key, None, {}, folder / "results.json", students=sub.students, origin=sub.origin)
    fields = {"submission": sub.key, "students": [asdict(s) for s in sub.students], "origin": sub.origin}
    return _unreadable(g, folder, sub.key, why, tests, fields, staged=None)


def _unreadable(
    g: Graded, folder: Path, key: str, why: str, tests: list, fields: dict[str, Any], staged: Path | None
) -> Graded:
    """Score 0 with the reason, through the same writer as a graded submission."""
    questions = [
        report.QuestionResult(
            tf.name,
            tf.points,
            tf.all_or_nothing,
            [
                report.CaseResult(tf.name, c.name, c.points, c.hidden, False, f"not graded: the submission {why}")
                for c in tf.cases
            ],
        )
        for tf in tests
    ]
    rep = report.Report(folder.name, str(staged or folder), questions, [f"the submission {why}"])
    report.write(folder.parent, rep, dict(fields, status=UNREADABLE, problem=why), g.who())
    g.status, g.problem, g.score = UNREADABLE, why, 0.0
    g.questions = {q.name: 0.0 for q in questions}
    return g


def _tests_fingerprint(tests_dir: Path, support_dir: Path | None, limits: Limits, dependencies: dict) -> str:
    """Changes when anything that decides a grade changes: tests, oracle, limits, the call graph and
    its isolation setting, engine version."""
    import hashlib

    h = hashlib.sha256(json.dumps([__version__, limits.__dict__, dependencies], sort_keys=True).encode())
    for root in filter(None, (tests_dir, support_dir)):
        for p in sorted(root.rglob("*")):
            if p.is_file() and "__pycache__" not in p.parts:
                h.update(str(p.relative_to(root)).encode() + b"\0" + p.read_bytes())
    return h.hexdigest()


# ---- outputs that span submissions


def grades_csv(graded: Iterable[Graded], questions: list[tuple[str, float]]) -> str:
    header = ["submission", "student", "student_id", "email", *(q for q, _ in questions), "total", "status"]
    header += ["problem", "notes"]
    rows = [g for g in graded if g.score is not None or g.status != GRADED]  # (the rest: not graded yet)
    return report.csv_text([header] + [_grades_row(g, questions) for g in sorted(rows, key=lambda g: g.submission)])


def _grades_row(g: Graded, questions: list[tuple[str, float]]) -> list[Any]:
    scores = [f"{g.questions.get(q, 0.0):g}" if g.score is not None else "" for q, _ in questions]
    return [
        g.submission,
        "; ".join(s.name or s.login for s in g.students),
        "; ".join(s.id for s in g.students if s.id),
        "; ".join(s.email for s in g.students if s.email),
        *scores,
        "" if g.score is None else f"{g.score:g}",
        g.status,
        g.problem,
        "; ".join(g.notes),
    ]


class _GradesFile:
    """grades.csv while a run goes: the rows known before grading (skipped, unreadable), then one
    row appended per finished submission in a single write (so that even a killed run leaves whole
    rows), then sorted once at the end."""

    def __init__(self, path: Path, questions: list[tuple[str, float]], graded: Iterable[Graded]):
        self.path, self.questions = path, questions
        report.write_atomic(path, grades_csv(graded, questions))
        self.fd: int | None = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC)

    def append(self, g: Graded) -> None:
        assert self.fd is not None  # (not closed)
        row = report.csv_text([_grades_row(g, self.questions)]).encode("utf-8")
        while row:
            row = row[os.write(self.fd, row) :]

    def close(self, graded: Iterable[Graded]) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
        report.write_atomic(self.path, grades_csv(graded, self.questions))


def found_csv(found: Found, graded: dict[str, Graded], folders: dict[str, str]) -> str:
    rows: list[list[Any]] = [["path", "submission", "student", "outcome"]]
    for sub in found.submissions:
        g = graded[sub.key]
        outcome = g.status + (f" ({g.action})" if g.action else "") + (f": {g.problem}" if g.problem else "")
        rows.append([sub.origin, sub.key, g.who(), f"{outcome} (submissions/{folders[sub.key]})"])
    rows += [[i.path, "", "", f"ignored: {i.why}"] for i in found.ignored]
    return report.csv_text(rows)


def found_lines(found: Found) -> list[str]:
    """What was found and what was ignored, and why (rich markup; every name escaped): the same
    lines for ``attnlab grade`` and ``attnlab quiz grade``."""
    s = report.shown
    layouts = ", ".join(f"{n} {kind}" for kind, n in sorted(found.layouts().items()))
    lines = [
        f"[bold]Found[/] {len(found.submissions)} submission(s) ({layouts}); "
        f"ignored {len(found.ignored)} file(s)" + (":" if found.ignored else ".")
    ]
    reasons = Counter(i.why for i in found.ignored)
    for why, n in reasons.most_common(8):
        example = next(i.path for i in found.ignored if i.why == why)
        lines.append(f"  {n} x {s(why)}, e.g. {s(example)}")
    return lines


def summary(run: Run, questions: list[tuple[str, float]]) -> list[str]:
    """The closing lines (rich markup; every name escaped)."""
    import statistics

    from ..lms import imports

    s = report.shown
    lines = found_lines(run.found)
    again = sum(g.worker_failures > 0 and g.status == GRADED for g in run.graded)
    lines.append(
        f"[bold]Graded[/] {run.count('graded')}, skipped {run.count('skipped')} (unchanged since "
        f"graded), regraded {run.count('regraded')}, retried {run.count('retried')} (not graded "
        "last time)"
        + (f", {again} graded in a fresh worker after theirs failed" if again else "")
        + f"; problems {len(run.problems)}"
        + (":" if run.problems else ".")
    )
    for g in run.problems:
        verdict = "blank in the import files" if g.status == UNREADABLE else "not graded; a re-run retries it"
        lines.append(f"  [red]{s(g.who())}[/] ({s(g.origin)}): {s(g.problem)} ({verdict})")
    totals = [g.score for g in run.graded if g.status == GRADED and g.score is not None]
    possible = sum(p for _, p in questions)
    if totals:
        lines.append(
            f"[bold]Class[/] mean {statistics.mean(totals):.2f}, median {statistics.median(totals):g} "
            f"out of {possible:g} ({len(totals)} with a total)"
        )
    if run.claims is not None:
        lines += imports.summary(run.claims, run.roster, run.matching)
    if run.earlier:
        lines.append(
            f"{run.earlier} earlier result folder(s) in {s(run.out / 'submissions')} belong to "
            "submissions not given this time; grades.csv lists this run's only."
        )
    if run.isolation_warning:
        lines.append(f"[bold red]WARNING: {s(run.isolation_warning)}[/]")
    lines.append("[bold]Wrote[/] " + ", ".join(s(p) for p in run.written))
    for name, why in run.not_written.items():
        lines.append(f"[bold]Not written[/] {s(name)}: {s(why)}")
    if run.exit_code:
        lines.append(f"[red]Needs a human[/]: see the lines above (exit status {run.exit_code}).")
    return lines


# ---- the worker pool


class _Worker:
    def __init__(self, config: dict):
        self.proc = subprocess.Popen(
            [*WORKER, json.dumps(config)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            cwd="/",
            text=True,
            bufsize=1,
            start_new_session=True,
        )
        assert self.proc.stdout is not None
        self.out = self.proc.stdout  # the worker's replies, one JSON line each
        self.cpu = config.get("cpu")
        self.job: _Job | None = None
        self.since = 0.0
        self.ready = False
        self.served = 0
        self.handed = False  # to the scheduler, which ends it

    def follow(self, rest: dict) -> None:
        """The rest of the config of a worker started with ``follows`` (``worker.launch_zygote``)."""
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.write(json.dumps(rest) + "\n")
            self.proc.stdin.flush()
        except OSError:  # it died already: the scheduler meets that and replaces it
            pass

    def send(self, job: _Job) -> None:
        self.job, self.since = job, time.monotonic()
        self.served += 1
        assert self.proc.stdin is not None
        line = {"path": str(Path(job.path).resolve()), "name": job.folder, "fields": job.fields, "who": job.who}
        self.proc.stdin.write(json.dumps(line) + "\n")
        self.proc.stdin.flush()

    def kill(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except OSError:
            pass
        self.proc.wait()

    def end_input(self) -> None:
        """No more jobs: the worker finishes and exits (``close`` waits for that)."""
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
        except OSError:
            pass

    def close(self) -> None:
        self.end_input()
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.kill()


def _start_workers(config: dict, jobs: int, running: list[_Worker] | None = None) -> list[_Worker]:
    """Start workers until ``jobs`` run, each pinned to the CPU that the fewest use (when there
    are as many CPUs as workers): a worker and its sandboxes then share one core's caches."""
    running = list(running or [])
    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    started = []
    while len(running) < jobs:
        used = [w.cpu for w in running]
        cpu = min(cpus, key=used.count) if jobs <= len(cpus) else None
        w = _Worker(dict(config, cpu=cpu))
        running.append(w)
        started.append(w)
    return started


def _schedule(
    todo: list[_Job],
    config: dict,
    jobs: int,
    limits: Limits,
    questions: list[tuple[str, float]],
    store: Path,
    done: Callable[..., None],
    progress: bool,
    early: tuple[_Worker, ...],
    finishing: list[_Worker],
    isolation: list[runrecord.Isolation],
) -> None:
    """Grade ``todo`` with up to ``jobs`` workers (``early``: started already). A worker left with
    nothing to do is told to end and goes into ``finishing``, for the caller to wait for. How each
    worker's sandboxes are isolated goes into ``isolation`` as it says so."""
    queue = deque(todo)
    sel = selectors.DefaultSelector()
    workers: list[_Worker] = []
    failed_starts = 0
    warned: list[bool] = []
    watchdog = limits.wall + 60

    def add(w: _Worker) -> None:
        w.handed = True
        workers.append(w)
        sel.register(w.out, selectors.EVENT_READ, w)

    def start() -> None:
        add(_start_workers(config, len(workers) + 1, workers)[0])

    def finish(job: _Job, score: float | None, scores: dict[str, float], problem: str = "") -> None:
        """A submission is done: ``score`` None when its grading failed, else its total and ``scores``
        per question, as the worker's reply or the failure's results.json says."""
        done(job, score, scores, problem)
        bar.advance(job.key)

    def failed(job: _Job, why: str, retry: bool = True) -> None:
        """An infrastructure failure: retried once in a fresh worker, then a problem, not a grade."""
        job.failures += 1
        if retry and job.failures < 2:
            job.fresh_only = True
            queue.appendleft(job)
            return
        data = report.failed_results(job.folder, questions, why if job.failures < 2 else f"{why} (twice)")
        data["extra_data"].update(job.fields)
        report.write_atomic(
            store / job.folder / "feedback.md",
            f"# Feedback for {' '.join(job.who.split())}\n\nNot graded yet: {why}. It will be graded again.\n",
        )
        report.write_atomic(store / job.folder / "results.json", report.dumps(data))
        finish(job, None, {}, "; ".join(data["extra_data"]["errors"]))

    def retire(w: _Worker, why: str) -> None:
        nonlocal failed_starts
        sel.unregister(w.out)
        workers.remove(w)
        w.kill()
        failed_starts = 0 if w.ready else failed_starts + 1
        if w.job is not None:
            failed(w.job, why)
        if queue and failed_starts < MAX_FAILED_STARTS and len(workers) < jobs:
            start()

    bar = _Progress(len(todo), progress)
    try:
        for w in early[: len(queue)]:
            add(w)
        for _ in range(min(jobs, len(queue)) - len(workers)):
            start()
        while workers:
            for w in list(workers):
                if w.ready and w.job is None:
                    job = next((j for j in queue if not j.fresh_only or w.served == 0), None)
                    if job is not None:
                        queue.remove(job)
                        w.send(job)
                        if not queue:
                            # its last job (a retry would go to a fresh worker): told now, it ends
                            # as soon as it has answered, while this process writes the reports
                            w.end_input()
                    else:
                        sel.unregister(w.out)
                        workers.remove(w)
                        w.end_input()  # it exits while the others finish; waited for below
                        finishing.append(w)
                        if queue:  # only retries are left, and this worker has graded before
                            start()
                elif w.job is not None and time.monotonic() - w.since > watchdog:
                    retire(w, f"grading took longer than {watchdog:g} s")
            # (none left: the select would only wait out its timeout)
            for key, _ in sel.select(timeout=0.5) if workers else ():
                w = key.data
                if w not in workers:
                    continue
                line = w.out.readline()
                if not line:
                    retire(w, "the grading worker died")
                    continue
                try:
                    msg = json.loads(line)
                except ValueError:
                    retire(w, "the grading worker answered nonsense")
                    continue
                if isinstance(msg, dict) and "ready" in msg:  # (again after a restart into another mode)
                    isolation.append(runrecord.reported(msg, w.proc.pid))
                    if w.ready:
                        continue
                    w.ready = True
                    if progress and not warned:  # the first worker says how its sandboxes are isolated
                        warned.append(True)
                        print(f"Isolation: {msg.get('isolation', msg['ready'])}", file=sys.stderr)
                        if msg["ready"] == "none":
                            print(WEAK_ISOLATION, file=sys.stderr)
                    continue
                job = w.job
                if job is None or not isinstance(msg, dict) or msg.get("name") != job.folder:
                    retire(w, "the grading worker answered nonsense")
                    continue
                w.job = None
                # the worker answers once the results (with job.fields) are written
                try:
                    score, scores = float(msg["score"]), {str(q): float(v) for q, v in msg["questions"].items()}
                except (KeyError, TypeError, ValueError, AttributeError):
                    failed(job, "the grading worker answered nonsense")
                    continue
                finish(job, score, scores)
            if not workers and queue:
                while queue:
                    failed(queue.popleft(), NO_WORKER, retry=False)
                break
    finally:
        for w in workers:
            w.kill()
        bar.close()


class _Progress:
    def __init__(self, total: int, enabled: bool):
        self.progress = None
        if enabled:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self.progress = Progress(
                TextColumn("grading"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                TextColumn("{task.description}"),
                console=Console(stderr=True),
                transient=False,
            )
            self.progress.start()
            self.task = self.progress.add_task("", total=total)

    def advance(self, name: str) -> None:
        if self.progress is not None:
            self.progress.update(self.task, advance=1, description=report.shown(name))

    def close(self) -> None:
        if self.progress is not None:
            try:
                self.progress.stop()
            except OSError:  # the terminal has gone (SIGHUP): nothing left to show it on
                pass
