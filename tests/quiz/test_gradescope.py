"""Questions about the quiz zip's Gradescope entry (attnlab.quiz.gradescope, shipped as attnlab_quiz)."""

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from attnlab.quiz import notebook as quiz_notebook
from attnlab.quiz.gradescope import main


@pytest.mark.parametrize(
    "files, says",
    [
        ([], "no notebook (.ipynb) or Python file (.py) was submitted"),
        (["a.ipynb", "b.ipynb"], "more than one .ipynb file was submitted (a.ipynb, b.ipynb)"),
    ],
)
def test_no_or_several_submissions_score_zero_with_a_clear_message(tmp_path, files, says):
    """Do an empty upload and two notebooks write a 0-point results.json that says why?"""
    (tmp_path / "submission").mkdir()
    for name in files:
        (tmp_path / "submission" / name).write_text("{}")
    results = main(root=tmp_path)
    assert results["score"] == 0 and says in results["output"]
    assert json.loads((tmp_path / "results" / "results.json").read_text()) == results


@pytest.fixture(scope="module")
def autograder_source(tmp_path_factory) -> Path:
    """The built quiz_autograder.zip, unzipped as Gradescope does into /autograder/source."""
    out = tmp_path_factory.mktemp("dist")
    quiz_notebook.main(out=out)
    source = tmp_path_factory.mktemp("autograder_source")
    with zipfile.ZipFile(out / "quiz_autograder.zip") as z:
        z.extractall(source)
        mode = z.getinfo("run_autograder").external_attr >> 16
    (source / "run_autograder").chmod(mode)
    return source


def _gradescope(root: Path, source: Path, submission: Path) -> dict:
    """Run the zip's own run_autograder, rooted at ``root``, with a stand-in for mamba."""
    (root / "submission").mkdir(parents=True)
    (root / "results").mkdir()
    (root / "submission" / submission.name).write_bytes(submission.read_bytes())
    (root / "source").symlink_to(source)
    stub = root / "bin"
    stub.mkdir()
    (stub / "mamba").write_text("#!/bin/sh\necho 'mamba() { :; }'\n")
    (stub / "mamba").chmod(0o755)
    # a wrapper, not a symlink: a symlinked venv python outside its venv loses the venv's packages
    (stub / "python").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    (stub / "python").chmod(0o755)
    script = (source / "run_autograder").read_text().replace("/autograder", str(root))
    env = {"PATH": f"{stub}:/usr/bin:/bin", "HOME": str(root)}
    run = subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    return json.loads((root / "results" / "results.json").read_text())


def test_run_autograder_calls_the_shipped_entry(autograder_source):
    """Does the zip's run_autograder grade with attnlab_quiz.gradescope from files/, not otter's runner?"""
    script = (autograder_source / "run_autograder").read_text()
    assert "PYTHONPATH=/autograder/source/files exec python -m attnlab_quiz.gradescope --root /autograder" in script
    assert "run_otter" not in script and (autograder_source / "run_autograder").stat().st_mode & 0o111
    assert (autograder_source / "files" / "attnlab_quiz" / "gradescope.py").is_file()
    assert (autograder_source / "tests" / "pe_dim0.py").is_file()  # otter run -a still has its tests


@pytest.mark.slow
def test_gradescope_layout_grades_key_blank_and_hostile(
    tmp_path, autograder_source, write_quiz, key_answers, attack_cells, items
):
    """In Gradescope's layout, does the key score full marks, the blank 0, and a notebook that
    replaces the checker exactly what its honest answers deserve, with its payload never run?"""
    full = sum(i.points for i in items.values() if i.type != "free")
    marker = tmp_path / "pwned"
    honest = {**key_answers, "pe-dim0": "cos(pos)", "proof-z": "P*A*V"}
    notebooks = {
        "key": write_quiz(tmp_path / "key.ipynb", key_answers),
        "blank": write_quiz(tmp_path / "blank.ipynb"),
        "hostile": write_quiz(tmp_path / "hostile.ipynb", honest, attack_cells(marker)),
    }
    results = {name: _gradescope(tmp_path / name, autograder_source, path) for name, path in notebooks.items()}
    assert results["key"]["score"] == full
    assert results["blank"]["score"] == 0
    assert results["hostile"]["score"] == full - items["pe-dim0"].points - items["proof-z"].points
    assert not marker.exists()
    hidden = [t for t in results["key"]["tests"] if t["max_score"]]
    assert hidden and all(t["visibility"] == "after_published" for t in hidden)


@pytest.mark.parametrize(
    "metadata, student, says",
    [
        ({"users": [{"name": "A", "sid": "s123", "email": "a@x.edu"}]}, "s123", "Student ID"),
        ({"users": [{"name": "A", "sid": "", "email": "a@x.edu"}]}, None, "no Student ID"),
        ({"users": [{"name": "A"}]}, None, "no Student ID"),
        ({"users": [{"name": "A", "sid": "s1"}, {"name": "B", "sid": "s2"}]}, None, "2 students hand in one quiz"),
        ({"id": 1}, None, "no student"),
        ("not json", None, "no student"),
    ],
)
def test_the_student_comes_from_gradescopes_metadata(tmp_path, metadata, student, says):
    """Is the variant the roster's Student ID, and only that (an email seeds nobody's numbers), and
    is where it came from said?"""
    text = metadata if isinstance(metadata, str) else json.dumps(metadata)
    (tmp_path / "submission_metadata.json").write_text(text)
    from attnlab.quiz.gradescope import student_id

    found, whose = student_id(tmp_path)
    assert found == student and says in whose


def test_numeric_items_are_graded_with_the_submitters_numbers(tmp_path, write_quiz, key_answers, items):
    """With Student ID s123 in the metadata, does s123's key score the numeric items, the notes' key
    not, and does the report say whose numbers were used?"""
    from attnlab.quiz.check import key_text

    numeric = [i for i in items.values() if i.type == "numeric"]
    own = {**key_answers, **{i.id: key_text(i, student="s123") for i in numeric}}
    scores = {}
    for name, answers in (("own", own), ("notes", key_answers)):
        root = tmp_path / name
        (root / "submission").mkdir(parents=True)
        (root / "submission_metadata.json").write_text(json.dumps({"users": [{"sid": "s123"}]}))
        write_quiz(root / "submission" / "quiz.ipynb", answers)
        scores[name] = main(root=root)
    full = sum(i.points for i in items.values() if i.type != "free")
    assert scores["own"]["score"] == full
    assert scores["notes"]["score"] == full - sum(i.points for i in numeric)
    assert "student 's123' (the Student ID in Gradescope's submission metadata)" in scores["own"]["output"]
    assert scores["own"]["extra_data"]["variant"] == "s123"


def test_are_numeric_items_left_to_a_human_when_gradescope_has_no_student_id(tmp_path, write_quiz, key_answers):
    """With only an email in the metadata, are the numeric items given no verdict (a human's), rather
    than graded with the numbers of an id the student was never told to use?"""
    from attnlab.quiz.gradescope import main

    (tmp_path / "submission").mkdir()
    write_quiz(tmp_path / "submission" / "quiz.ipynb", key_answers)
    (tmp_path / "submission_metadata.json").write_text(json.dumps({"users": [{"name": "A", "email": "a@x.edu"}]}))
    results = main(root=tmp_path)
    assert set(results["extra_data"]["needs_human"]) == {"score-12", "weight-21", "weight-21-scaled"}


def test_is_a_group_submission_graded_with_nobodys_numbers(tmp_path, write_quiz, key_answers):
    """Two submitters, the first one's numbers answered right: are the numeric items left to a human
    (as ``attnlab quiz grade`` leaves a group's), rather than the group scored with one member's
    numbers, which are not the other's?"""
    from attnlab.quiz.check import bank_items, key_text
    from attnlab.quiz.gradescope import main

    numeric = [i for i in bank_items().values() if i.type == "numeric"]
    answers = {**key_answers, **{i.id: key_text(i, student="s1") for i in numeric}}
    (tmp_path / "submission").mkdir()
    write_quiz(tmp_path / "submission" / "quiz.ipynb", answers)
    users = [{"name": "A", "sid": "s1"}, {"name": "B", "sid": "s2"}]
    (tmp_path / "submission_metadata.json").write_text(json.dumps({"users": users}))
    results = main(root=tmp_path)
    assert set(results["extra_data"]["needs_human"]) == {i.id for i in numeric}
    assert results["extra_data"]["variant"] is None
    assert "notes' own numbers" not in results["output"], "nothing was graded with the notes' numbers either"
