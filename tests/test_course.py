"""Course folders: the instructor's content lives in a folder of their own, never in the tool.

Nothing here installs anything: the tool is pointed at copies of the bundled course, as a
`pip install .` user's tool would be, and must read and write only there.
"""

import json
import re
import zipfile

import pytest
from click.testing import CliRunner

from attnlab import cli, course, paths

CAUSAL = "autograder/pe_attention/tests/causal_mask.py"


def _run(*args, cwd=None, monkeypatch=None):
    if cwd is not None:
        monkeypatch.chdir(cwd)
    result = CliRunner().invoke(cli.main, [str(a) for a in args])
    return result.exit_code, result.output


@pytest.fixture
def mine(tmp_path):
    """A course folder of the instructor's own, made by `attnlab new`."""
    return course.new(dest=tmp_path / "my-course")


def _checkout_snapshot():
    """Every file of the bundled course (the tool's copy): no command may change one."""
    root = paths.kit_root()
    return {
        p: p.read_bytes()
        for part in (*paths.COURSE_PARTS, "README.md")
        for p in ([root / part] if (root / part).is_file() else (root / part).rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


def test_does_new_copy_the_bundled_course_and_mark_it(mine):
    assert paths.find_course(mine / "solutions" / "pe_attention") == mine
    assert paths.assignments(mine) == [paths.ASSIGNMENT]
    for part in paths.COURSE_PARTS:
        assert (mine / part).exists(), part
    assert not list(mine.rglob("__pycache__")) and not (mine / "src").exists()
    assert "<!-- points table of pe_attention" in (mine / "README.md").read_text()


def test_does_new_refuse_a_folder_with_something_in_it(tmp_path, monkeypatch):
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "notes.txt").write_text("mine")
    code, output = _run("new", tmp_path / "taken", cwd=tmp_path, monkeypatch=monkeypatch)
    assert code == 1 and "not an empty folder" in output and "Traceback" not in output
    assert [p.name for p in (tmp_path / "taken").iterdir()] == ["notes.txt"]
    assert not list(tmp_path.glob(".*partial"))


@pytest.mark.parametrize(
    "command",
    [("build", "--out", "dist"), ("release",), ("grade", ".", "--out", "results"), ("check", "--assignment", "x")],
)
def test_does_every_instructor_command_outside_a_course_say_so(tmp_path, monkeypatch, command):
    code, output = _run(*command, cwd=tmp_path, monkeypatch=monkeypatch)
    assert code != 0 and "no course folder here" in output and "Traceback" not in output
    assert list(tmp_path.iterdir()) == []


def test_is_a_folder_without_the_marker_refused_as_a_course(tmp_path, monkeypatch):
    code, output = _run(
        "build", "--course", tmp_path, "--out", tmp_path / "dist", cwd=tmp_path, monkeypatch=monkeypatch
    )
    assert code == 1 and "is not a course folder" in output and not (tmp_path / "dist").exists()


def test_is_an_unknown_assignment_named_in_the_error(mine, monkeypatch):
    code, output = _run("build", "--assignment", "nope", cwd=mine, monkeypatch=monkeypatch)
    assert code == 1 and "no assignment 'nope'" in output and "pe_attention" in output


@pytest.mark.slow
def test_do_edited_points_a_test_and_a_quiz_item_in_a_course_show_in_its_build(mine, tmp_path, monkeypatch):
    """The README's complaint: after `pip install .`, editing points changed nothing."""
    before = _checkout_snapshot()
    test_file = mine / CAUSAL
    text = test_file.read_text()
    assert "@test_case(points=2, hidden=True)" in text and "for n in (7, 5, 2, 1):" in text
    test_file.write_text(
        text.replace("@test_case(points=2, hidden=True)", "@test_case(points=9, hidden=True)").replace(
            "for n in (7, 5, 2, 1):", "for n in (11, 7, 5, 2, 1):"
        )
    )
    quiz = mine / "quiz" / "1_positional_encoding.yaml"
    assert 'title: "PE at dimension 0"' in quiz.read_text()
    quiz.write_text(quiz.read_text().replace('title: "PE at dimension 0"', 'title: "PE at dimension zero (edited)"'))

    code, output = _run("release", cwd=mine / "assignments", monkeypatch=monkeypatch)
    assert code == 0, output
    assert "`causal_mask`: 10" in (mine / "README.md").read_text() and "**70**" in (mine / "README.md").read_text()
    code, output = _run("build", "--out", tmp_path / "dist", cwd=mine, monkeypatch=monkeypatch)
    assert code == 0, output
    with zipfile.ZipFile(tmp_path / "dist" / "autograder.zip") as zf:
        assert json.loads(zf.read("otter_config.json"))["points_possible"] == 70
        assert "for n in (11, 7, 5, 2, 1):" in zf.read("tests/causal_mask.py").decode()
    notebook = (tmp_path / "dist" / "quiz.ipynb").read_text()
    assert "PE at dimension zero (edited)" in notebook
    assert _checkout_snapshot() == before, "a command wrote outside the course folder"


def test_does_a_second_course_stay_apart_from_the_first(tmp_path, monkeypatch):
    """Two course folders: each command reads the one it runs in (or --course)."""
    first, second = course.new(dest=tmp_path / "a"), course.new(dest=tmp_path / "b")
    (second / CAUSAL).write_text(
        (second / CAUSAL).read_text().replace("points=2, hidden=True", "points=5, hidden=True")
    )
    from attnlab import build

    with paths.use(course=first):
        assert build.points_possible() == 63
    with paths.use(course=second):
        assert build.points_possible() == 66
    monkeypatch.chdir(second / "quiz")
    assert paths.course_root() == second and build.points_possible() == 66


def test_does_the_course_marker_say_what_the_folder_is():
    marker = (paths.kit_root() / paths.MARKER).read_text()
    assert re.search(r"solutions/<assignment>", marker) and "--course" in marker


def test_is_an_assignment_without_test_files_a_message_not_an_empty_release(mine, monkeypatch):
    (mine / "solutions" / "extra").mkdir()
    (mine / "solutions" / "extra" / "extra.py").write_text("# %%\ndef f():\n    return 1\n")
    code, output = _run("release", "--assignment", "extra", cwd=mine, monkeypatch=monkeypatch)
    assert code == 1 and "holds no test files" in output and not (mine / "assignments" / "extra").exists()


@pytest.mark.parametrize("name", ["quiz", "week-2"])
def test_is_an_assignment_name_that_would_clash_or_break_refused(mine, monkeypatch, name):
    (mine / "solutions" / name).mkdir()
    (mine / "solutions" / name / f"{name}.py").write_text("")
    code, output = _run("build", "--out", mine / "dist", cwd=mine, monkeypatch=monkeypatch)
    assert code == 1 and f"solutions/{name}/" in output and "rename the folder" in output


def test_does_new_refuse_a_folder_inside_the_bundled_course(monkeypatch, tmp_path):
    target = paths.kit_root() / "examples" / "nested-course"
    code, output = _run("new", target, cwd=tmp_path, monkeypatch=monkeypatch)
    assert code == 1 and "inside the bundled course" in output and not target.exists()


def test_do_quiz_commands_read_the_bank_of_the_course_they_are_pointed_at(mine, tmp_path, monkeypatch):
    quiz = mine / "quiz" / "1_positional_encoding.yaml"
    quiz.write_text(quiz.read_text().replace('title: "PE at dimension 0"', 'title: "Edited in my course"'))
    code, output = _run("quiz", "--course", mine, "list", cwd=tmp_path, monkeypatch=monkeypatch)
    assert code == 0 and "Edited in my course" in output
    code, output = _run("quiz", "list", cwd=mine / "quiz", monkeypatch=monkeypatch)
    assert code == 0 and "Edited in my course" in output
