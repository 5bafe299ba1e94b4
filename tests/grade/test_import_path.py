"""Does the trusted side import nothing from the folders it grades?

A flat folder of submissions holds, next to honest ones, a file named like every module the trusted
side imports (``planted.py``). Grading from inside that folder, as root and as user nobody, through
the ``attnlab`` command and through the Python API, must import none of them outside the sandbox,
and the honest submissions must still score full marks."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from attnlab import build, importpath, paths
from planted import marks_left, plant, trusted_module_names
from other_user import (
    NOBODY,
    WHY_NOT_AS_NOBODY,
    can_run_as_nobody,
    json_from,
    kit_for_nobody,
    readable_folder,
)

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


GRADE_FROM_HERE = """
import json, sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from attnlab.grade import main
run = main(submissions=[Path(".")], out=Path(sys.argv[2]), tests_dir=Path(sys.argv[3]),
           support_dir=Path(sys.argv[4]), timeout=5, progress=False)
print(json.dumps({g.submission: [g.score, g.status, g.problem] for g in run.graded}))
"""


@pytest.mark.slow
def test_does_an_unprivileged_grader_import_nothing_from_the_folder_it_grades(names):
    if not can_run_as_nobody():
        pytest.skip(WHY_NOT_AS_NOBODY)
    folder = readable_folder("attnlab-planted-")
    try:
        subs, marks = _flat_folder(folder, names)
        kit_for_nobody(folder, packages=("numpy", "matplotlib", "pyyaml", "nbformat", "ipython"))
        os.chmod(marks, 0o1777)
        # -I: the driver itself stands for the `attnlab` command, which never has the working folder on
        # its path; what is tested is everything it starts from there
        scores = json_from(
            [str(folder / "kit" / "venv" / "bin" / "python"), "-I", "-c", GRADE_FROM_HERE]
            + [str(p) for p in (folder / "kit" / "src", folder / "out", folder / "tests", folder / "support")],
            cwd=subs,
            timeout=900,
            user=NOBODY,
            home=folder / "out",
        )
        assert marks_left(marks) == []
        for name in HONEST:
            assert scores[Path(name).stem][0] == build.points_possible(), scores[Path(name).stem]
    finally:
        shutil.rmtree(folder, ignore_errors=True)


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
