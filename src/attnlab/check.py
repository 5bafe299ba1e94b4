"""``attnlab check``: the student's local check of a submission against the PUBLIC tests.

It runs the submission as the grader does, one statement at a time in a process of its own under
the grader's limits (a top-level loop or a hang ends with a message, never a stuck terminal), but
without the allow-list view: the only person a submission could fool here is its author, and the
student's own packages stay importable. No otter or Jupyter kernel is involved. The messages are the
grading engine's, so what a student sees here is what the autograder says about the same cases.
"""

from __future__ import annotations

import sys
from pathlib import Path

from . import paths

CALL_TIMEOUT = 10.0  # as `attnlab grade`'s default --timeout
MEMORY_MB = 2048  # as `attnlab grade`'s default --memory-mb
# Half of checking a notebook that plots is importing pyplot: when the submission imports it, the
# zygote imports it while this process loads the tests, instead of the sandbox after them.
PLOTTING = "matplotlib.pyplot"
MAX_SCANNED = 50 * 2**20  # a file larger than this is no student's notebook: not read to find the assignment


def find_submission(folder: Path, name: str) -> Path:
    """The student's file in ``folder``: ``name.ipynb`` or ``name.py``, whichever was changed last
    (the release ships both, and a student works in one)."""
    found = [p for p in (folder / f"{name}.ipynb", folder / f"{name}.py") if p.is_file()]
    if not found:
        raise FileNotFoundError(f"found neither {name}.ipynb nor {name}.py in {folder}; name the submission to check")
    return max(found, key=lambda p: p.stat().st_mtime)


def assignment_in(folder: Path, *, tests: Path) -> str:
    """The assignment whose files ``folder`` holds, found by their content, not the folder's name
    (students unzip into ``hw3/`` or ``pe_attention (1)/``): the notebook or ``.py`` file that defines
    the most of the functions the tests check (a test file is named after its function)."""
    if any((folder / f"{folder.name}{ext}").is_file() for ext in (".ipynb", ".py")):
        return folder.name
    wanted = [p.stem for p in tests.glob("*.py")]
    defines: dict[str, int] = {}
    for path in sorted(folder.iterdir()):
        if path.suffix not in (".ipynb", ".py") or not path.is_file() or path.stat().st_size > MAX_SCANNED:
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        defines[path.stem] = max(defines.get(path.stem, 0), sum(f"def {name}(" in text for name in wanted))
    most = max(defines.values(), default=0)
    best = [stem for stem, count in defines.items() if count == most]
    if not most:
        raise FileNotFoundError(
            f"no notebook or .py file in {folder} defines a function that its tests/ check; name the file to check"
        )
    if len(best) > 1:
        raise FileNotFoundError(f"{' and '.join(best)} in {folder} define the same functions; name the file to check")
    return best[0]


def locate(*, submission: Path | None, assignment: str | None) -> tuple[Path, Path]:
    """The submission and the public tests to check it against.

    An assignment folder as students unzip it (or ``assignments/<name>/`` in a course) holds the
    notebook, its ``.py`` twin and ``tests/``, whatever the folder is called: its own tests are
    used. Elsewhere (or with ``assignment`` named), the course's release of the assignment is.
    """
    folder = Path(submission).parent if submission else Path.cwd()
    if assignment is None and (folder / "tests").is_dir():
        tests = folder / "tests"
    elif assignment is None and paths.current_course() is None:
        raise FileNotFoundError(
            f"no public tests in {folder}: run `attnlab check` in the assignment "
            "folder you unzipped (the one holding tests/), or name your file there"
        )
    else:
        assignment = paths.current_assignment(assignment)
        tests = paths.public_tests_dir(assignment)
    if not any(tests.glob("*.py")):
        raise FileNotFoundError(f"no public tests in {tests}")
    if submission:
        return Path(submission), tests
    return find_submission(folder, assignment or assignment_in(folder, tests=tests)), tests


def main(*, submission: Path | None = None, question: str | None = None, assignment: str | None = None) -> int:
    """Check a submission; 0 when every public case passes, 1 when one fails, 2 when it cannot run."""
    try:
        path, tests_dir = locate(submission=submission, assignment=assignment)
        if not submission:
            print(f"checking {path.name} (name another file to check that one)")
    except (OSError, ValueError) as e:  # paths.CourseError is a ValueError
        print(f"attnlab check: {e}", file=sys.stderr)
        return 2
    return run(path=path, tests_dir=tests_dir, question=question)


def run(*, path: Path, tests_dir: Path, question: str | None = None, show_errors: bool = True) -> int:
    """Check ``path`` against the public tests in ``tests_dir`` and print the results (``main``'s
    exit codes). ``show_errors=False`` leaves out the errors met while executing the submission
    (the notebook's own check: its cells showed them when they ran)."""
    from . import userfiles
    from .grade import launch, preloads, source
    from .grade.limits import Limits

    limits = Limits.from_timeout(CALL_TIMEOUT, MEMORY_MB)
    try:
        cells = source.cells(path)
    except userfiles.NotAFile as e:  # a pipe, a device, a folder, too large: nothing to check
        print(f"attnlab check: {e}", file=sys.stderr)
        return 2
    except Exception:  # noqa: BLE001 - an unreadable notebook (of any kind): the grader says why
        cells = []
    # the student's own code on the student's own machine: the grader's process model and limits,
    # with the student's own packages (no allow-list view: there is nothing here to hide). Started
    # first: it imports numpy (and pyplot) while this process imports the engine and loads the tests
    launched = launch.zygote(
        uid=None,
        gid=None,
        memory_mb=MEMORY_MB,
        cpu_seconds=int(limits.wall) + 5,
        preload=(PLOTTING,),
        isolate=False,
    )
    from .grade import calls
    from .grade.runner import Grader, SandboxUnavailable
    from .grade.session import Zygote

    zygote = Zygote.of(launched)
    zygote.expect(preloads.wanted(zygote.optional, cells))
    try:
        # the call graph (the release's calls.json) orders the questions and points a failure at
        # the callee that causes it; the public tests lend no reference
        try:
            graph = calls.for_tests(tests_dir)["calls"]
        except paths.CourseError as e:  # a course marker that cannot be read
            print(f"attnlab check: {e}", file=sys.stderr)
            return 2
        grader = Grader(zygote, tests_dir, None, limits, calls=graph)
        asked = {tf.name for tf in grader.tests if question in (tf.name, tf.path.stem)} if question else None
        if asked is not None:
            if not asked:
                print(f"attnlab check: no public test for question {question!r}", file=sys.stderr)
                return 2
            # the functions it calls are checked too (not shown): a failure they cause points at them
            needed = asked | {c for name in asked for c in grader.uses[name]}
            grader.tests = [tf for tf in grader.tests if tf.name in needed]
        try:
            report = grader.grade(path)
        except SandboxUnavailable as e:
            print(f"attnlab check: {e}; try again", file=sys.stderr)
            return 2
    finally:
        zygote.close()
    for err in report.errors if show_errors else ():
        print(f"error while running {path.name}: {err}")
    failed = 0
    for q in report.questions:
        if asked is not None and q.name not in asked:
            continue
        lines = [f"    {c.name}: {c.message}".replace("\n", "\n      ") for c in q.cases if not c.passed]
        failed += len(lines)
        mark = "ok  " if not lines else "FAIL"
        print(f"{mark} {q.name}: {q.score:g} / {q.possible:g} (public tests)")
        if lines:
            print("\n".join(lines))
    print(
        "All public tests passed. Hidden tests decide the grade."
        if not failed
        else f"{failed} public test case(s) failed."
    )
    return 1 if failed else 0
