"""Shared fixtures: the reference implementation and the untouched stubs as graded environments."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from attnlab import paths, release, testfiles


def _exec(source: str) -> dict:
    env: dict = {}
    exec(compile(source, "<submission>", "exec"), env)
    return env


@pytest.fixture(scope="session")
def test_files() -> list[testfiles.TestFile]:
    """The hand-written hidden test files (public and hidden cases)."""
    return testfiles.load_dir(paths.tests_dir())


@pytest.fixture(scope="session")
def reference_env() -> dict:
    """The solution's functions by name, as otter hands them to test functions."""
    return _exec(release.solution.reference_source(paths.solution_file()))


@pytest.fixture(scope="session")
def stub_env() -> dict:
    """The student's untouched ``.py`` twin, executed."""
    return _exec(release.files()[f"{paths.ASSIGNMENT}.py"])


@pytest.fixture(scope="session")
def dist(tmp_path_factory):
    """One `attnlab build` for the whole session."""
    from attnlab import build

    out = tmp_path_factory.mktemp("dist")
    build.main(out=out)
    return out


def once_per_run(tmp_path_factory, name: str, make: Callable[[Path], None]) -> Path:
    """The folder ``name`` as ``make`` fills it, made once per test run however many xdist workers
    ask: a session fixture runs once in each worker, and the costly ones (a whole class graded, otter
    run on the course) would otherwise run twice, once for each worker whose tests use them. The
    first worker to ask makes it; the others wait on its lock and reuse it. Readers must not change it."""
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # the run's own folder, above each worker's
    folder = root / name
    with open(root / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, even if make fails
        if not (root / f"{name}.done").exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            make(folder)
            (root / f"{name}.done").touch()
    return folder


@pytest.fixture(scope="session")
def otter_on_course(dist, tmp_path_factory) -> dict:
    """Real ``otter run`` with the built autograder zip, two at a time, on the bundled samples and on
    the course's own files (the reference as a .py, the solved notebook, the untouched notebook):
    {path: otter's results.json}. Run together, the course's three files keep both cores busy
    instead of running one after another."""
    import nbformat

    from attnlab import samples
    from otter_runs import otter_results_of

    def run_otter(folder: Path) -> None:
        own = folder / "course-files"
        own.mkdir()
        reference = own / "reference.py"
        reference.write_text(release.solution.reference_source(paths.solution_file()))
        solved = own / "solved.ipynb"
        nbformat.write(release.notebook(solved=True), solved)
        stub = Path(shutil.copy(paths.release_dir() / f"{paths.ASSIGNMENT}.ipynb", own / "stub.ipynb"))
        files = [*samples.bundled(), reference, solved, stub]
        found = otter_results_of(dist / "autograder.zip", files, folder / "otter-runs")
        (folder / "found.json").write_text(json.dumps({str(path): results for path, results in found.items()}))

    folder = once_per_run(tmp_path_factory, "otter-on-course", run_otter)
    return {Path(path): results for path, results in json.loads((folder / "found.json").read_text()).items()}


@pytest.fixture(scope="session")
def otter_on_samples(otter_on_course) -> dict:
    """The bundled samples' part of ``otter_on_course``: {sample path: otter's results.json}. Both
    the outcome check (test_otter_parity) and the per-question parity with the engine
    (grade/test_parity) read these."""
    from attnlab import samples

    return {p: otter_on_course[p] for p in samples.bundled()}


@pytest.fixture(scope="session")
def graded_by_default(tmp_path_factory) -> Path:
    """One ``attnlab grade`` with the default options of every bundled sample, every bug of the
    corpus on its correct base (``bug_<overlay>``), every bug of a function that the submission's
    own functions call (``own_<overlay>``, on ``OWN_BASE``, itself graded as ``own_base``) and the twin that tries to print every test file
    (``a_reads_tests``: first in name order, so that its statements, which run into their time limit,
    are graded beside the rest rather than after it). Returns the results folder. grade/
    test_dependencies reads the scores, test_no_leaks what students receive: the same files graded
    with the same options twice would cost the time and test nothing more (nor twice in one run:
    ``once_per_run``)."""
    return once_per_run(tmp_path_factory, "graded-by-default", _grade_by_default) / "results"


def _grade_by_default(folder: Path) -> None:
    from attnlab import grade, samples

    import bug_corpus

    subs = folder / "submissions"
    subs.mkdir()
    samples.copy_all(into=subs)
    corpus = bug_corpus.load()
    for overlay in corpus.BUGS:
        (subs / f"bug_{overlay.stem}.py").write_text(corpus.compose(overlay), encoding="utf-8")
    for overlay in corpus.OWN_CALLS:
        (subs / f"own_{overlay.stem}.py").write_text(corpus.compose_own(overlay), encoding="utf-8")
    (subs / "own_base.py").write_text(corpus.compose_own(), encoding="utf-8")
    fixtures = paths.kit_root() / "tests" / "fixtures" / "grade"
    twin = (fixtures / "twin.py").read_text()
    (subs / "a_reads_tests.py").write_text(
        twin + "\n\n" + (fixtures / "hostile" / "read_and_print_tests.py").read_text()
    )
    grade.main(submissions=[subs], out=folder / "results", progress=False)
