"""Questions about per-student numbers (attnlab.quiz.variants)."""

import numpy as np

from attnlab.quiz.check import RIGHT, check, numeric_key
from attnlab.quiz.variants import illustration


def test_notes_numbers_by_default():
    """Without a student, is Score(1, 2) the notes' 21.97?"""
    assert abs(illustration().value("score", 1, 2) - 21.97) < 1e-9


def test_same_student_same_numbers_other_student_other_numbers():
    """Are a student's numbers reproducible, and different from another student's?"""
    a, b = illustration(student="s123"), illustration(student="s123")
    c = illustration(student="s124")
    assert np.array_equal(a.X, b.X) and np.array_equal(a.W_Q, b.W_Q)
    assert not np.array_equal(a.X, c.X)


def test_key_is_recomputed_for_the_student(items):
    """Is a student's right answer their own Score(1, 2), and the notes' value wrong for them?"""
    item = items["score-12"]
    own = numeric_key(item, student="s123")
    assert check(item, f"{own:.4f}", student="s123").status == RIGHT
    if abs(own - 21.97) > item.tolerance:
        assert check(item, "21.97", student="s123").status != RIGHT


def test_prompt_shows_the_students_numbers(items):
    """Does the rendered prompt show the student's X1?"""
    ill = illustration(student="s123")
    assert f"{ill.X[0, 0]:.2f}" in ill.render(items["score-12"].prompt)
