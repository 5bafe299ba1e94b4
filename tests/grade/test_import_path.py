"""Does the trusted side import nothing from the folders it grades?

A flat folder of submissions holds, next to honest ones, a file named like every module the trusted
side imports (``planted.py``). Grading from inside that folder with the ``attnlab`` command, or
grading quizzes there, must import none of them outside the sandbox, and the honest submissions
must still score full marks. The hostile suite plants the packages among them too and grades from
inside its folder as root, as nobody, and as nobody without user namespaces
(``test_hostile.py``); the Gradescope entry is checked in ``test_gradescope_sim.py``."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from attnlab import build, importpath, paths
from planted import marks_left, plant, trusted_module_names

HONEST = ["loops_score_full.py", "vectorised_notebook_score_full.ipynb"]


@pytest.fixture(scope="module")
def names():
    return trusted_module_names()


def _flat_folder(folder: Path, names: list[str]) -> tuple[Path, Path]:
    """(the submissions folder, the folder where marks land: anyone may write there)."""
    subs, marks = folder / "submissions", folder / "marks"
    subs.mkdir()
    marks.mkdir()
    os.chmod(marks, 0o1777)
    for name in HONEST:
        shutil.copy(paths.sample_submissions_dir() / name, subs / name)
    plant(subs, names, marks=marks)
    return subs, marks


def test_are_the_planted_modules_what_the_trusted_side_imports(names):
    assert {"numpy", "yaml", "rich", "click", "otter", "matplotlib", "sympy", "nbformat", "IPython"} <= set(names)
    assert {"attnlab", "attnlab_oracle", "json", "subprocess"} <= set(names)


@pytest.mark.slow
def test_does_the_attnlab_command_import_nothing_from_the_folder_it_grades(tmp_path, names):
    subs, marks = _flat_folder(tmp_path, names)
    attnlab = Path(sys.executable).with_name("attnlab")
    done = subprocess.run(
        [str(attnlab), "grade", ".", "--out", "../results", "--course", str(paths.kit_root()), "--timeout", "5"],
        cwd=subs,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert marks_left(marks) == []
    assert done.returncode in (0, 3), done.stderr[-3000:]
    grades = (tmp_path / "results" / "grades.csv").read_text().splitlines()
    for name in HONEST:
        row = next(line for line in grades if line.startswith(Path(name).stem + ","))
        assert f",{build.points_possible():g}," in row or row.endswith(f",{build.points_possible()}"), row


@pytest.mark.slow
def test_does_the_quiz_grader_import_nothing_from_the_folder_it_grades(tmp_path, names):
    import nbformat

    from attnlab.quiz import bank, notebook

    subs, marks = _flat_folder(tmp_path, names)
    (subs / "student.ipynb").write_text(nbformat.writes(notebook.notebook(list(bank.load().values()))))
    attnlab = Path(sys.executable).with_name("attnlab")
    done = subprocess.run(
        [str(attnlab), "quiz", "grade", ".", "--out", "../quiz-results"],
        cwd=subs,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert marks_left(marks) == []
    assert (tmp_path / "quiz-results").is_dir(), done.stderr[-3000:]


@pytest.mark.parametrize(
    "entry,bad",
    [
        (["", "/usr/lib/python3"], [""]),
        (["/usr/lib/python3", "."], ["."]),
        (["rel/dir", "/usr/lib/python3"], ["rel/dir"]),
        (["/srv/grading/submissions"], ["/srv/grading/submissions"]),
        (["/srv/grading/other"], []),
    ],
)
def test_which_import_path_entries_name_the_working_folder(entry, bad):
    assert importpath.unsafe_entries(entry, cwd="/srv/grading/submissions") == bad


def test_does_a_worker_start_isolated_from_the_file_system_root():
    from attnlab.grade import batch

    assert batch.WORKER[:3] == [sys.executable, "-I", "-c"]
    assert importpath.PACKAGE_ROOT in batch.WORKER[3]
