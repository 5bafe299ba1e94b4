"""Questions about grading a quiz submission statically (attnlab.quiz.grading)."""

import pytest

from attnlab.quiz.check import key_text
from attnlab.quiz.grading import HIDDEN, grade


def _auto(items):
    return [i for i in items.values() if i.type != "free"]


@pytest.fixture(scope="module")
def full(items):
    return sum(i.points for i in _auto(items))


def test_key_notebook_gets_full_marks(tmp_path, write_quiz, key_answers, items, full):
    """Does the key-filled notebook score every auto-graded point, each item right?"""
    results = grade(submission=write_quiz(tmp_path / "quiz.ipynb", key_answers))
    assert results["score"] == full
    assert results["extra_data"]["items"] == {i.id: i.points for i in _auto(items)}


def test_blank_notebook_gets_zero(tmp_path, write_quiz):
    """Does the notebook as handed out score 0, every item "not answered"?"""
    results = grade(submission=write_quiz(tmp_path / "quiz.ipynb"))
    assert results["score"] == 0
    assert all("Not answered" in t["output"] for t in results["tests"])


def test_rows_follow_gradescopes_schema(tmp_path, write_quiz, key_answers, items):
    """Is each item a visible 0-point "answered" row and a row worth its points shown after publishing?"""
    results = grade(submission=write_quiz(tmp_path / "quiz.ipynb", key_answers))
    tests = results["tests"]
    assert len(tests) == 2 * len(_auto(items))
    for item, (shown, hidden) in zip(_auto(items), zip(tests[::2], tests[1::2])):
        assert shown == {
            "name": f"{item.variable} (answered)",
            "score": 0,
            "max_score": 0,
            "status": "passed",
            "visibility": "visible",
            "output": "Answered.",
        }
        assert hidden["name"] == item.variable and hidden["visibility"] == HIDDEN
        assert hidden["score"] == hidden["max_score"] == item.points
    n = len(_auto(items))
    assert f"{n} of {n} auto-graded questions answered" in results["output"]
    assert "Right" not in results["output"]  # the visible summary says nothing about correctness


def test_hostile_notebook_scores_what_its_honest_answers_deserve(
    tmp_path, write_quiz, key_answers, attack_cells, items, full
):
    """Does a notebook that replaces the checker, runs a payload and assigns answers through
    globals() and exec score exactly as its honest twin, with nothing run?"""
    marker = tmp_path / "pwned"
    honest = {**key_answers, "pe-dim0": "cos(pos)", "proof-z": "P*A*V"}
    twin = grade(submission=write_quiz(tmp_path / "honest.ipynb", honest))
    attack = grade(submission=write_quiz(tmp_path / "hostile.ipynb", honest, attack_cells(marker)))
    assert attack["score"] == twin["score"] == full - items["pe-dim0"].points - items["proof-z"].points
    assert attack["extra_data"]["items"] == twin["extra_data"]["items"]
    assert not marker.exists()


def test_wrong_answers_get_feedback_but_never_the_key(tmp_path, write_quiz, items):
    """Does a notebook of wrong answers get the checker's feedback in each row, and no key anywhere?"""
    results = grade(submission=write_quiz(tmp_path / "quiz.ipynb", {i.id: "0" for i in items.values()}))
    assert results["score"] == 0
    text = str(results)
    for item in _auto(items):
        if item.type in ("symbolic", "matrix", "proof", "chain", "numeric"):
            assert key_text(item) not in text, item.id
    row = next(t for t in results["tests"] if t["name"] == "pe_dim0")
    assert row["output"].startswith("Not right")


def test_non_literal_answer_is_reported_in_the_visible_row(tmp_path):
    """Does `wavelength = f"..."` score 0 with the "not a plain string answer" message shown to the student?"""
    path = tmp_path / "quiz.py"
    path.write_text('x = "i"\nwavelength = f"2*pi*10000**(2*{x}/d_model)"\nrel_rotation = "s*cos(k*w) + c*sin(k*w)"\n')
    rows = {t["name"]: t for t in grade(submission=path)["tests"]}
    assert rows["wavelength (answered)"]["status"] == "failed"
    assert "not a plain string answer" in rows["wavelength (answered)"]["output"]
    assert rows["wavelength"]["score"] == 0 and rows["rel_rotation"]["score"] == 1


def test_unreadable_file_scores_zero_with_a_reason(tmp_path):
    """Does a broken notebook file score 0 with the reason in the output, not a traceback?"""
    path = tmp_path / "quiz.ipynb"
    path.write_text("{broken")
    results = grade(submission=path)
    assert results["score"] == 0 and "Nothing could be read" in results["output"]


def test_hostile_answer_text_is_unreadable_and_runs_nothing(tmp_path, write_quiz):
    """Is an answer that is Python code read as an unreadable formula, with nothing executed?"""
    marker = tmp_path / "pwned"
    path = write_quiz(tmp_path / "quiz.ipynb", {"score-12": f"__import__('os').system('touch {marker}')"})
    row = next(t for t in grade(submission=path)["tests"] if t["name"] == "score_12")
    assert row["score"] == 0 and row["output"].startswith("Cannot read this answer")
    assert not marker.exists()


def test_is_an_answer_the_checker_cannot_settle_left_to_a_human_not_scored_zero(
    tmp_path, write_quiz, key_answers, monkeypatch
):
    """When the checker runs out of its work budget on an answer (or fails on it), is that item
    left blank and listed for a human, rather than scored 0 like a wrong answer?"""
    from attnlab.quiz import grading
    from attnlab.quiz.verdict import MANUAL, Verdict

    real = grading.check_variable

    def out_of_budget(item_id, text, **kw):
        if item_id == "wavelength":
            return Verdict(MANUAL, "This answer needs a human.")
        return real(item_id, text, **kw)

    monkeypatch.setattr(grading, "check_variable", out_of_budget)
    results = grade(submission=write_quiz(tmp_path / "quiz.ipynb", key_answers))
    assert results["extra_data"]["needs_human"] == ["wavelength"]
    assert "wavelength" not in results["extra_data"]["items"]
    assert "pe-dim0" in results["extra_data"]["items"]
