"""Questions about `attnlab quiz` (attnlab.quiz.commands)."""

import pytest
from click.testing import CliRunner

from attnlab.quiz.commands import quiz


@pytest.mark.parametrize(
    "args, code",
    [
        (["check", "pe-dim0", "sin(pos)"], 0),
        (["check", "proof-kt", "P^T*K^T"], 2),
        (["check", "proof-kt", "K^T*P"], 1),
        (["check", "pe-dim0", "__import__('os').system('echo hi')"], 2),
        (["check", "pe-dim0", "9**9**9**9"], 2),
        (["check", "no-such-id", "1"], 2),
        (["check", "score-12", "21.97"], 0),
        (["check", "pe-dim0", "-sin(-pos)"], 0),
        (["check", "score-12", "-21.97"], 1),
        (["check", "proof-a", "P", "A", "P^T"], 0),
        (["check", "proof-kt", "K^T P^T"], 0),
        (["check", "pe-dim0", "-cos(pos)"], 1),
        (["check", "pe-dim0", "exp(exp(exp(exp(5))))"], 2),
        (["check", "score-12", "21.97", "--student", "s123"], 1),
    ],
)
def test_check_exit_codes(args, code):
    """Does `quiz check` exit 0 right, 1 wrong, 2 unreadable, with feedback and no traceback?"""
    result = CliRunner().invoke(quiz, args)
    assert result.exit_code == code
    assert "Traceback" not in result.output and result.output.strip()
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit)


def test_list_shows_required_ids():
    """Does `quiz list` list the SPEC's ids?"""
    output = CliRunner().invoke(quiz, ["list"]).output
    assert "score-12" in output and "proof-a" in output


def test_does_list_mark_practice_items_and_total_the_points_graded_by_hand():
    """Are practice items marked (and worth 0), free response counted in the total?"""
    from attnlab.quiz.bank import load
    from attnlab.quiz.kinds import KINDS

    items = load()
    lines = CliRunner().invoke(quiz, ["list"]).output.splitlines()
    marked = {line.split()[0] for line in lines if "  practice  " in line}
    assert marked == {i.id for i in items.values() if i.practice} and marked
    assert all(items[i].points == 0 for i in marked)
    by_hand = sum(i.points for i in items.values() if not KINDS[i.type].has_key and not i.practice)
    assert by_hand > 0 and f"{by_hand:g} graded by hand" in lines[-1]
    assert lines[-1].startswith(f"total {sum(i.points for i in items.values()):g} points")


def test_interactive_quiz_stops_cleanly_without_stdin():
    """Does `attnlab quiz` with no input exit 0 instead of crashing?"""
    result = CliRunner().invoke(quiz, [], input="")
    assert result.exit_code == 0 and "Stopped" in result.output


def test_interactive_quiz_scores_a_right_answer():
    """Does a right first answer count, though the practice item it answers is worth no points?"""
    result = CliRunner().invoke(quiz, [], input="sin(pos)\n")
    assert "Right." in result.output and "Right: 1 of " in result.output


@pytest.mark.slow
def test_verify_passes():
    """Does `quiz verify` prove everything and exit 0?"""
    result = CliRunner().invoke(quiz, ["verify"])
    assert result.exit_code == 0, result.output


def test_grade_writes_the_csv_and_each_results_json(tmp_path, write_quiz, key_answers, items):
    """Does `quiz grade FOLDER FILE --out` write quiz_grades.csv (submission, one column per item, total)
    and RESULTS/<submission>/results.json?"""
    import csv
    import json

    folder = tmp_path / "in"
    folder.mkdir()
    from attnlab.quiz.check import key_text

    # a submission is named by the student's roster id: alice's numeric items use alice's numbers
    alices = {**key_answers, **{i.id: key_text(i, student="alice") for i in items.values() if i.type == "numeric"}}
    write_quiz(folder / "alice.ipynb", alices)
    write_quiz(folder / "bob.ipynb")
    # a graded item (a practice item scores nothing)
    (tmp_path / "carol.py").write_text('wavelength = "2*pi*10000**(2*i/d_model)"\n')
    result = CliRunner().invoke(
        quiz, ["grade", str(folder), str(tmp_path / "carol.py"), "--out", str(tmp_path / "out")]
    )
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader((tmp_path / "out" / "quiz_grades.csv").open()))
    auto = [i for i in items.values() if i.type != "free"]
    # the id columns and the closing columns of `attnlab grade`'s grades.csv; free response is blank
    # until graded by hand
    by_hand = [i for i in items.values() if i.type == "free" and not i.practice]
    assert list(rows[0]) == [
        "submission",
        "student",
        "student_id",
        "email",
        *(i.id for i in auto),
        *(i.id for i in by_hand),
        "total",
        "status",
        "problem",
        "notes",
    ]
    totals = {r["submission"]: float(r["total"]) for r in rows}
    assert totals == {"alice": sum(i.points for i in auto), "bob": 0, "carol": 1}
    assert rows[2]["wavelength"] == "1" and rows[2]["shift-block"] == "0"
    results = json.loads((tmp_path / "out" / "carol" / "results.json").read_text())
    assert results["score"] == 1 and results["tests"]


def test_grade_keeps_a_submission_named_like_a_formula_as_text(tmp_path):
    """Does a submission whose name a spreadsheet would run as a formula stay text in quiz_grades.csv?"""
    import csv

    (tmp_path / "=HYPERLINK(1).py").write_text('pe_dim0 = "sin(pos)"\n')
    (tmp_path / "plain.py").write_text('pe_dim0 = "sin(pos)"\n')
    result = CliRunner().invoke(quiz, ["grade", str(tmp_path), "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    names = {r["submission"] for r in csv.DictReader((tmp_path / "out" / "quiz_grades.csv").open())}
    assert names == {"'=HYPERLINK(1)", "plain"}


@pytest.mark.parametrize(
    "make, says",
    [
        (lambda d: (d / "notes.txt").write_text("x") and [d / "notes.txt"], "is not a .ipynb, .py or .zip file"),
        (lambda d: [d], "no .ipynb or .py submissions"),
    ],
)
def test_grade_reports_a_users_mistake_without_a_traceback(tmp_path, make, says):
    """Do a wrong file type and an empty folder exit 1 with a message?"""
    result = CliRunner().invoke(quiz, ["grade", *map(str, make(tmp_path)), "--out", str(tmp_path / "out")])
    assert result.exit_code == 1 and says in result.output
    assert "Traceback" not in result.output and isinstance(result.exception, SystemExit)


def test_are_two_quizzes_with_one_name_each_a_problem_as_in_attnlab_grade(tmp_path):
    for sub in ("a", "b"):
        (tmp_path / sub).mkdir()
        (tmp_path / sub / "quiz.py").write_text('pe_dim0 = "sin(pos)"\n')
    result = CliRunner().invoke(
        quiz, ["grade", str(tmp_path / "a"), str(tmp_path / "b"), "--out", str(tmp_path / "out")]
    )
    assert result.exit_code == 3 and "2 submissions are named 'quiz'" in " ".join(result.output.split())


def test_a_leading_minus_is_the_answer_not_an_option():
    """Is `-sin(-pos)` read as the answer and quoted back, not refused as an unknown option?"""
    result = CliRunner().invoke(quiz, ["check", "pe-dim0", "-cos(pos)"])
    assert result.exit_code == 1 and "No such option" not in result.output


def test_show_prints_the_students_own_numbers():
    """Does `quiz show score-12 --student s123` print s123's numbers, not the notes'?"""
    from attnlab.quiz.variants import illustration

    own = illustration(student="s123").inputs["X1"][0][0]
    result = CliRunner().invoke(quiz, ["show", "score-12", "--student", "s123"])
    assert result.exit_code == 0 and f"{own:.2f}" in result.output and "0.10, 1.30" not in result.output


def test_verify_fails_a_corrupted_copy_with_exit_1(tmp_path):
    """Does `quiz verify --bank COPY` exit 1 and name the item when a key is corrupted?"""
    import shutil

    from attnlab.quiz.bank import default_folder

    shutil.copytree(default_folder(), tmp_path / "quiz")
    path = tmp_path / "quiz" / "2_permutation_proof.yaml"
    path.write_text(path.read_text().replace("key: P*A*P^T", "key: P^T*A*P"))
    result = CliRunner().invoke(quiz, ["verify", "--bank", str(tmp_path / "quiz")])
    assert result.exit_code == 1 and "FAIL item proof-a" in result.output


def test_does_show_call_the_notes_numbers_the_notes_for_an_id_of_spaces():
    """An id of spaces (a blank roster cell pasted) draws no numbers of its own: does `quiz show`
    say it shows the notes' numbers, not "student    's numbers"?"""
    result = CliRunner().invoke(quiz, ["--student", "   ", "show", "score-12"])
    assert result.exit_code == 0 and "0.10, 1.30" in result.output
    assert "the notes' numbers" in result.output and "student    's" not in result.output


def test_does_quiz_grade_say_what_it_ignored_as_grade_does(tmp_path, write_quiz):
    """jdoe.py beside jdoe.ipynb: the notebook is graded, as `attnlab grade` grades it; is the .py
    said to be ignored, and why, as `attnlab grade` says it, rather than dropped without a word?"""
    folder = tmp_path / "quizzes"
    folder.mkdir()
    write_quiz(folder / "jdoe.ipynb")
    (folder / "jdoe.py").write_text('wavelength = "2*pi*10000**(2*i/d_model)"\n')
    result = CliRunner().invoke(quiz, ["grade", str(folder), "--out", str(tmp_path / "out")])
    said = " ".join(result.output.split())
    assert "Found 1 submission(s)" in said and "ignored 1 file(s)" in said
    assert "the notebook beside it is graded" in said and "jdoe.py" in said
