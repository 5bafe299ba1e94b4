"""`attnlab quiz grade` identifies students as `attnlab grade` does: a Canvas bulk download of quiz
notebooks with a gradebook roster, a Gradescope export, no roster at all; the id that seeds the
numbers is the student number the quiz documents, and only its numbers are accepted."""

import csv

import pytest
from click.testing import CliRunner

from attnlab.lms.identity import QUIZ_ID
from attnlab.quiz.batch import COLUMN, main
from attnlab.quiz.check import key_text
from attnlab.quiz.commands import quiz
from attnlab.quiz import handgrading
from attnlab.quiz.grading import graded_items

NUMERIC = [i for i in graded_items() if i.type == "numeric"]
# what the quiz is worth: the auto-graded points and the free-response points graded by hand
POSSIBLE = sum(i.points for i in graded_items() + handgrading.items())


def roster(points, *, test_student=True):
    """A Canvas gradebook export: its Points Possible row, three students, and Canvas's Test Student."""
    rows = [
        f"Student,ID,SIS User ID,SIS Login ID,Section,Lab 1 (111),{COLUMN} (555),Current Score",
        f"    Points Possible,,,,,10,{points:g},",
        '"Chen, John",10001,S10001,jchen,A,9,,90',
        '"Li, Anna",10002,S10002,ali,A,8,,80',
        '"Okafor, Uche",10003,S10003,uokafor,B,7,,70',
    ]
    if test_student:
        rows.append('"Student, Test",10099,,a1b2c3d4e5f6a1b2c3d4e5f6a1b2c3d4e5f6a1b2,A,,,')
    return "\n".join(rows) + "\n"


def answered_with(key_answers, student):
    """Every item right, the numeric ones computed with ``student``'s numbers."""
    return {**key_answers, **{i.id: key_text(i, student=student) for i in NUMERIC}}


@pytest.fixture
def download(tmp_path, write_quiz, key_answers):
    """A Canvas bulk download of quiz notebooks: John used his student number, Anna her Canvas user id
    (a number the quiz never asked for), Uche handed in something that is not a notebook."""
    folder = tmp_path / "canvas"
    folder.mkdir()
    write_quiz(folder / "chenjohn_10001_8001_quiz.ipynb", answered_with(key_answers, "S10001"))
    write_quiz(folder / "lianna_10002_8002_quiz.ipynb", answered_with(key_answers, "10002"))
    (folder / "okaforuche_10003_8003_quiz.ipynb").write_text("not a notebook")
    return folder


def totals(out):
    with open(out / "quiz_grades.csv", newline="", encoding="utf-8") as f:
        return {r["submission"]: r for r in csv.DictReader(f)}


def imported(out):
    with open(out / "canvas_import.csv", newline="", encoding="utf-8") as f:
        return {r[0]: r[-1] for r in list(csv.reader(f))[1:]}


def test_does_a_canvas_download_get_its_students_numbers_from_the_rosters_student_number(tmp_path, download):
    full = sum(i.points for i in graded_items())
    path = tmp_path / "roster.csv"
    path.write_text(roster(POSSIBLE))
    run = main(submissions=[download], out=tmp_path / "out", roster=path, progress=False)
    rows = totals(tmp_path / "out")
    assert float(rows["chenjohn_10001"]["total"]) == full
    assert (rows["chenjohn_10001"]["student"], rows["chenjohn_10001"]["student_id"]) == ("Chen, John", "10001")
    # Anna's numeric answers are those of another id: each numeric item lost, the rest kept
    assert float(rows["lianna_10002"]["total"]) == full - sum(i.points for i in NUMERIC)
    assert rows["okaforuche_10003"]["total"] == "" and "not a notebook" in rows["okaforuche_10003"]["problem"]
    grades = imported(tmp_path / "out")
    assert grades["Points Possible"] == f"{POSSIBLE:g}" and grades["Chen, John"] == f"{full:g}"
    assert grades["Okafor, Uche"] == "" and grades["Student, Test"] == ""  # never a made-up 0
    with open(tmp_path / "out" / "moodle_import.csv", newline="", encoding="utf-8") as f:
        moodle = {r["ID number"]: r[COLUMN] for r in csv.DictReader(f)}
    assert moodle["S10001"] == f"{full:g}" and "S10003" not in moodle
    assert run.exit_code == 3  # Uche's file needs a human


def test_is_a_canvas_download_without_a_roster_never_graded_with_the_canvas_user_id(tmp_path, download):
    result = CliRunner().invoke(quiz, ["grade", str(download), "--out", str(tmp_path / "out")])
    rows = totals(tmp_path / "out")
    assert result.exit_code == 3
    assert rows["chenjohn_10001"]["total"] == "" and "--roster" in rows["chenjohn_10001"]["problem"]
    assert "not written moodle_import.csv" in result.output


def test_is_a_roster_worth_other_points_refused_or_scaled(tmp_path, download):
    full = sum(i.points for i in graded_items())
    path = tmp_path / "roster.csv"
    path.write_text(roster(100))
    refused = CliRunner().invoke(quiz, ["grade", str(download), "--out", str(tmp_path / "a"), "--roster", str(path)])
    text = " ".join(refused.output.split())
    assert refused.exit_code == 1 and "is worth 100 points in Canvas but the autograder's total is" in text
    assert not (tmp_path / "a").exists()
    main(submissions=[download], out=tmp_path / "b", roster=path, scale=True, progress=False)
    grades = imported(tmp_path / "b")
    # nothing graded by hand yet: every auto-graded point, of the quiz's points by hand and auto
    assert grades["Points Possible"] == "100" and float(grades["Chen, John"]) == round(100 * full / POSSIBLE, 2)
    assert float(grades["Li, Anna"]) == round(100 * (full - sum(i.points for i in NUMERIC)) / POSSIBLE, 2)


def test_does_a_gradescope_export_seed_each_quiz_with_its_sid(tmp_path, write_quiz, key_answers):
    folder = tmp_path / "export"
    (folder / "submission_1").mkdir(parents=True)
    (folder / "submission_metadata.yml").write_text(
        "submission_1:\n  :submitters:\n  - :name: Jane Doe\n    :sid: '4001'\n    :email: jane@example.edu\n"
    )
    write_quiz(folder / "submission_1" / "quiz.ipynb", answered_with(key_answers, "4001"))
    run = main(submissions=[folder], out=tmp_path / "out", progress=False)
    assert run.exit_code == 0 and float(totals(tmp_path / "out")["submission_1"]["total"]) == sum(
        i.points for i in graded_items()
    )


def test_do_the_notebook_and_quiz_show_name_the_documented_id(items):
    from attnlab.quiz.notebook import question

    [numeric] = NUMERIC[:1]
    assert QUIZ_ID in " ".join(question(numeric).split())
    shown = CliRunner().invoke(quiz, ["show", numeric.id, "--student", "S10001"])
    assert shown.exit_code == 0 and QUIZ_ID in " ".join(shown.output.split())


def test_does_a_quiz_whose_grading_fails_cost_only_that_student(tmp_path, write_quiz, key_answers, monkeypatch):
    from attnlab.quiz import batch

    real = batch.grade

    def failing(*, submission, **kw):
        if submission.stem == "carol":
            raise MemoryError("planted")
        return real(submission=submission, **kw)

    monkeypatch.setattr(batch, "grade", failing)
    write_quiz(tmp_path / "carol.ipynb", key_answers)
    write_quiz(tmp_path / "dave.ipynb", key_answers)
    run = main(submissions=[tmp_path / "carol.ipynb", tmp_path / "dave.ipynb"], out=tmp_path / "out", progress=False)
    rows = totals(tmp_path / "out")
    assert rows["dave"]["status"] == "graded" and "MemoryError: planted" in rows["carol"]["problem"]
    assert run.exit_code == 3


def test_does_quiz_grade_name_a_student_claimed_twice_and_the_students_without_a_quiz(tmp_path):
    """(numbers5 finding 4) jchen.py and 10001.py are both John: as `attnlab grade` does, the
    summary names him and the students with no quiz, and no import file has a total of his."""
    folder = tmp_path / "quizzes"
    folder.mkdir()
    (folder / "jchen.py").write_text('th_alibi = "a"\n')
    (folder / "10001.py").write_text('th_alibi = "c"\n')
    path = tmp_path / "roster.csv"
    path.write_text(roster(POSSIBLE))
    out = tmp_path / "out"
    result = CliRunner().invoke(quiz, ["grade", str(folder), "--out", str(out), "--roster", str(path)])
    text = " ".join(result.output.split())
    assert result.exit_code == 3
    assert "Chen, John (S10001) is claimed by several submissions: 10001, jchen" in text
    assert "2 student(s) with no submission: Li, Anna (S10002); Okafor, Uche (S10003)" in text
    assert imported(out)["Chen, John"] == ""
    assert not (out / "moodle_import.csv").exists() or "S10001" not in (out / "moodle_import.csv").read_text()


def test_is_an_earlier_runs_canvas_import_gone_after_a_quiz_run_without_a_roster(tmp_path):
    """(numbers5 finding 3) canvas_import.csv holds the totals of the run that wrote it, or is gone."""
    folder = tmp_path / "quizzes"
    folder.mkdir()
    (folder / "jchen.py").write_text('th_alibi = "a"\n')
    path = tmp_path / "roster.csv"
    path.write_text(roster(POSSIBLE))
    out = tmp_path / "out"
    main(submissions=[folder], out=out, roster=path, progress=False)
    assert (out / "canvas_import.csv").exists()
    main(submissions=[folder], out=out, progress=False)
    assert not (out / "canvas_import.csv").exists()


@pytest.mark.parametrize("typed", ["s10001", "S10001 ", " s10001\t"])
def test_does_an_id_typed_in_another_case_or_with_spaces_get_the_numbers_the_roster_grades_with(
    tmp_path, write_quiz, key_answers, typed
):
    """The roster takes ``s10001`` for John's S10001: does ``quiz show --student`` show him, typing
    it so, the numbers his quiz is graded with, so that his answers from them get every point?"""
    [numeric] = NUMERIC[:1]
    shown = [CliRunner().invoke(quiz, ["show", numeric.id, "--student", s]).output for s in ("S10001", typed)]
    prompt = [text.split("(student ")[0] for text in shown]  # (the last line repeats the id as typed)
    assert prompt[0] == prompt[1] and prompt[0] != CliRunner().invoke(quiz, ["show", numeric.id]).output
    folder = tmp_path / "canvas"
    folder.mkdir()
    write_quiz(folder / "chenjohn_10001_8001_quiz.ipynb", answered_with(key_answers, typed))
    path = tmp_path / "roster.csv"
    path.write_text(roster(POSSIBLE))
    main(submissions=[folder], out=tmp_path / "out", roster=path, progress=False)
    assert float(totals(tmp_path / "out")["chenjohn_10001"]["total"]) == sum(i.points for i in graded_items())
