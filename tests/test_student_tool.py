"""The student tool: the wheel a student installs (one README line) to check their work.

Nothing is installed here: the wheel is unpacked and run from its own files on PYTHONPATH, in a
folder unzipped from the student zip, as a student's fresh environment would run it.
"""

import base64
import hashlib
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from attnlab import paths, release, student_tool
from attnlab.quiz import bank

PACKAGE = Path(student_tool.__file__).resolve().parent


@pytest.fixture(scope="module")
def wheel(dist):
    return dist / student_tool.wheel_name()


@pytest.fixture(scope="module")
def unpacked(wheel, tmp_path_factory):
    site = tmp_path_factory.mktemp("site")
    zipfile.ZipFile(wheel).extractall(site)
    return site


def _student(site, cwd, *args):
    """The student's `attnlab ...` (the entry point the wheel declares), run from the unpacked wheel only."""
    env = dict(os.environ, PYTHONPATH=str(site))
    return subprocess.run(
        [sys.executable, "-c", "from attnlab.cli import student_program; student_program()", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_is_the_wheel_a_valid_wheel_with_the_attnlab_command(wheel):
    name = f"{student_tool.NAME}-{student_tool.__version__}.dist-info"
    with zipfile.ZipFile(wheel) as zf:
        record = zf.read(f"{name}/RECORD").decode().splitlines()
        assert f"{name}/RECORD,," in record
        for line in record:
            path, digest, size = line.rsplit(",", 2)
            if path.endswith("RECORD"):
                continue
            data = zf.read(path)
            expected = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            assert digest == f"sha256={expected}" and int(size) == len(data), path
        assert len(record) == len(zf.namelist())
        assert "attnlab = attnlab.cli:student_program" in zf.read(f"{name}/entry_points.txt").decode()
        assert "Name: attnlab-student" in zf.read(f"{name}/METADATA").decode()


def test_is_the_wheels_code_the_tools_own_code_and_its_only_content_the_quiz_bank(wheel):
    """No course file rides along as code: every .py is byte for byte a file of the tool."""
    with zipfile.ZipFile(wheel) as zf:
        for entry in zf.namelist():
            if entry.endswith(".py"):
                assert zf.read(entry) == (PACKAGE.parent / entry).read_bytes(), entry
            else:
                assert entry.startswith(("attnlab/quiz/quiz/", f"{student_tool.NAME}-")), entry
        assert not any(n.startswith("attnlab/kit/") for n in zf.namelist())


def test_does_the_wheel_come_out_the_same_twice(tmp_path):
    built = []
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        built.append(student_tool.build_wheel(out=tmp_path / name, bank_dir=paths.quiz_dir()).read_bytes())
    assert built[0] == built[1]


def test_does_the_student_command_offer_only_check_and_quiz(unpacked, tmp_path):
    shown = _student(unpacked, tmp_path, "--help")
    assert shown.returncode == 0
    commands = shown.stdout.split("Commands:")[1].split()
    assert "check" in commands and "quiz" in commands
    assert not {"build", "grade", "release", "demo", "new", "upload"} & set(commands)
    where = subprocess.run(
        [sys.executable, "-c", "import attnlab; print(attnlab.__file__)"],
        cwd=tmp_path,
        env=dict(os.environ, PYTHONPATH=str(unpacked)),
        capture_output=True,
        text=True,
    )
    assert where.stdout.startswith(str(unpacked)), "the test must run the wheel's code, not the checkout's"


@pytest.mark.slow
def test_does_a_student_check_their_work_in_the_unzipped_folder(dist, unpacked, tmp_path):
    zipfile.ZipFile(dist / "student.zip").extractall(tmp_path)
    folder = tmp_path / paths.ASSIGNMENT
    untouched = _student(unpacked, folder, "check", "-q", "softmax")
    assert untouched.returncode == 1 and "FAIL softmax" in untouched.stdout
    (folder / f"{paths.ASSIGNMENT}.py").write_text(release.solution.reference_source(paths.solution_file()))
    done = _student(unpacked, folder, "check")
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"checking {paths.ASSIGNMENT}.py" in done.stdout and "All public tests passed" in done.stdout


def test_does_the_student_quiz_say_graded_by_your_instructor_and_check_practice_items(unpacked, tmp_path):
    """The session's wheel, built from the course's bank (a wheel of its own would cost a build)."""
    site = unpacked
    items = bank.load(paths.quiz_dir())
    assert items["pe-dim1"].practice and not items["wavelength"].practice
    graded = _student(site, tmp_path, "quiz", "check", "wavelength", "2*pi")
    assert "graded by your instructor" in graded.stdout and "Traceback" not in graded.stderr
    right = _student(site, tmp_path, "quiz", "check", "pe-dim1", "cos(pos)")
    wrong = _student(site, tmp_path, "quiz", "check", "pe-dim1", "sin(pos)")
    assert (right.returncode, wrong.returncode) == (0, 1), right.stdout + wrong.stdout


def test_does_the_readme_tell_students_the_one_line_that_installs_this_wheel():
    readme = (paths.kit_root() / "README.md").read_text()
    students = readme.split("## Students", 1)[1].split("\n## ", 1)[0]
    assert f"pip install {student_tool.wheel_name()}" in students


def test_does_check_outside_an_assignment_folder_tell_the_student_where_to_run_it(unpacked, tmp_path):
    lost = _student(unpacked, tmp_path, "check")
    assert lost.returncode == 2 and "the assignment folder you unzipped" in lost.stderr
    assert "Traceback" not in lost.stderr


@pytest.mark.parametrize("folder_name", ["hw3", "pe_attention (1)"])
def test_does_check_find_the_assignment_in_a_folder_named_otherwise(dist, tmp_path, monkeypatch, folder_name):
    """Students unzip into folders of their own naming; the files inside say which assignment it is,
    and a scratch file of theirs beside it does not."""
    from attnlab import check

    zipfile.ZipFile(dist / "student.zip").extractall(tmp_path)
    folder = (tmp_path / paths.ASSIGNMENT).rename(tmp_path / folder_name)
    (folder / "scratch.py").write_text("import numpy as np\nprint(np.eye(2))\n")
    monkeypatch.chdir(folder)
    found, tests = check.locate(submission=None, assignment=None)
    assert found.parent == folder and found.stem == paths.ASSIGNMENT and tests == folder / "tests"


def test_does_the_wheel_bring_a_kernel_for_the_notebook(wheel, dist):
    """A fresh environment with only the wheel must run the notebook (`jupyter nbconvert --execute`):
    the wheel requires ipykernel, which provides the kernel the notebook names."""
    import json

    name = f"{student_tool.NAME}-{student_tool.__version__}.dist-info"
    meta = zipfile.ZipFile(wheel).read(f"{name}/METADATA").decode()
    required = {
        line.split(":", 1)[1].strip().split(">")[0].split("<")[0].split("=")[0]
        for line in meta.splitlines()
        if line.startswith("Requires-Dist:")
    }
    assert "ipykernel" in required
    notebook = json.loads(zipfile.ZipFile(dist / "student.zip").read(f"{paths.ASSIGNMENT}/{paths.ASSIGNMENT}.ipynb"))
    assert notebook["metadata"]["kernelspec"]["name"] == "python3"  # the name ipykernel registers


def _requires(wheel: Path) -> dict[str, str | None]:
    """{dependency: the extra that asks for it, or None for the base install} from the wheel's METADATA."""
    name = f"{student_tool.NAME}-{student_tool.__version__}.dist-info"
    meta = zipfile.ZipFile(wheel).read(f"{name}/METADATA").decode()
    found: dict[str, str | None] = {}
    for line in meta.splitlines():
        if line.startswith("Requires-Dist:"):
            spec, _, marker = line.split(":", 1)[1].partition(";")
            extra = marker.split("extra ==", 1)[1].strip().strip("'\"") if "extra ==" in marker else None
            found[re.match(r"\s*([A-Za-z0-9_.-]+)", spec).group(1).lower()] = extra
    return found


def test_does_the_base_install_leave_otter_to_the_otter_extra(wheel):
    """The notebook's grader.check needs no otter (the kit's checker stands in): otter-grader's ~50
    packages come only with `attnlab_student[otter]`, for those who want otter's own check."""
    requires = _requires(wheel)
    assert requires["otter-grader"] == "otter"
    base = {name for name, extra in requires.items() if extra is None}
    assert {"ipykernel", "numpy", "matplotlib", "sympy"} <= base
    name = f"{student_tool.NAME}-{student_tool.__version__}.dist-info"
    assert "Provides-Extra: otter" in zipfile.ZipFile(wheel).read(f"{name}/METADATA").decode()
