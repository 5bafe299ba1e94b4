"""A course with two assignments: a new folder is a new assignment, with no code change.

The second assignment (`warmup`, one tiny function) lives in tests/fixtures/course_two_assignments/
and is added to a copy of the bundled course; its samples are named by what they must score.
"""

import csv
import json
import shutil
import zipfile

import pytest
from click.testing import CliRunner

from attnlab import check, cli, course, paths

pytestmark = pytest.mark.slow
FIXTURE = paths.kit_root() / "tests" / "fixtures" / "course_two_assignments"


def _run(*args):
    result = CliRunner().invoke(cli.main, [str(a) for a in args])
    return result.exit_code, result.output


@pytest.fixture(scope="module")
def two(tmp_path_factory):
    """A course with pe_attention and warmup, released and built (once for the module)."""
    root = course.new(dest=tmp_path_factory.mktemp("course") / "two")
    for part in ("solutions", "autograder"):
        shutil.copytree(FIXTURE / part, root / part, dirs_exist_ok=True)
    code, output = _run("release", "--course", root)
    assert code == 0, output
    dist = root / "dist"
    code, output = _run("build", "--course", root, "--out", dist)
    assert code == 0, output
    return root


def test_does_the_course_find_both_assignments(two):
    assert paths.assignments(two) == ["pe_attention", "warmup"]
    assert (two / "assignments" / "warmup" / "warmup.ipynb").is_file()
    assert (two / "assignments" / "warmup" / "tests" / "scale.py").is_file()


def test_does_build_name_each_zip_after_its_assignment(two):
    dist = two / "dist"
    for name in ("pe_attention", "warmup"):
        assert (dist / f"{name}_student.zip").is_file() and (dist / f"{name}_autograder.zip").is_file()
    with zipfile.ZipFile(dist / "warmup_autograder.zip") as zf:
        assert json.loads(zf.read("otter_config.json"))["points_possible"] == 3
        assert "tests/scale.py" in zf.namelist() and not any("causal_mask" in n for n in zf.namelist())
    with zipfile.ZipFile(dist / "warmup_student.zip") as zf:
        names = zf.namelist()
        assert "warmup/warmup.py" in names and not any(n.startswith("pe_attention/") for n in names)
        assert "hidden=True" not in zf.read("warmup/tests/scale.py").decode()


def test_does_check_run_each_assignments_public_tests_in_its_unzipped_folder(two, tmp_path, monkeypatch, capsys):
    zipfile.ZipFile(two / "dist" / "warmup_student.zip").extractall(tmp_path)
    folder = tmp_path / "warmup"
    monkeypatch.chdir(folder)
    assert check.main() == 1  # the untouched stub
    assert "FAIL scale" in capsys.readouterr().out
    shutil.copy(FIXTURE / "submissions" / "scale_right_score_full.py", folder / "warmup.py")
    assert check.main() == 0
    assert "ok   scale: 1 / 1" in capsys.readouterr().out


def test_does_a_command_that_needs_one_assignment_ask_which(two, tmp_path, monkeypatch):
    monkeypatch.chdir(two)
    code, output = _run("grade", FIXTURE / "submissions", "--out", tmp_path / "results")
    assert code == 1 and "several assignments (pe_attention, warmup)" in output and "--assignment" in output
    assert not (tmp_path / "results").exists()


def test_does_grade_score_the_chosen_assignment_and_name_the_canvas_column_after_it(two, tmp_path, monkeypatch):
    roster = tmp_path / "roster.csv"
    roster.write_text("Student,ID,SIS User ID,SIS Login ID,Section\nAda,101,s1,scale_right_score_full,A\n")
    monkeypatch.chdir(two / "assignments")
    code, output = _run(
        "grade", FIXTURE / "submissions", "--out", tmp_path / "results", "--assignment", "warmup", "--roster", roster
    )
    # one submission has no roster row: graded, and flagged for a human (exit status 3)
    assert code == 3 and "scale_positive_only_score_partial" in output, output
    with open(tmp_path / "results" / "grades.csv", newline="") as f:
        rows = {row["submission"]: row for row in csv.DictReader(f)}
    assert rows["scale_right_score_full"]["total"] == "3" and rows["scale_right_score_full"]["scale"] == "3"
    assert rows["scale_positive_only_score_partial"]["total"] == "1"
    header = next(csv.reader(open(tmp_path / "results" / "canvas_import.csv")))
    assert "warmup" in header and "pe_attention" not in header


def test_does_check_take_the_assignment_from_the_course_when_named(two, tmp_path, monkeypatch):
    """An instructor checks a file anywhere against the course's public tests of that assignment."""
    sub = tmp_path / "anything.py"
    shutil.copy(FIXTURE / "submissions" / "scale_right_score_full.py", sub)
    monkeypatch.chdir(tmp_path)
    code, output = _run("check", sub, "--course", two, "--assignment", "warmup")
    assert code == 0 and "ok   scale: 1 / 1" in output
    monkeypatch.chdir(two)
    code, output = _run("check", sub)
    assert code == 2 and "several assignments" in output
