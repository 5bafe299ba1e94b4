"""Questions about numeric items a student can round as the prompt tells them to."""

import math

import numpy as np

from attnlab.quiz.check import RIGHT, WRONG, check
from attnlab.quiz.variants import illustration

STUDENTS = [f"s{k:04d}" for k in range(40)]


def _scores(student: str) -> tuple[float, float]:
    """Score(2, 1) and Score(2, 2) from the student's own inputs, computed here with numpy."""
    given = illustration(student=student).inputs
    x1, x2, w_q, w_k = (np.array(given[name], dtype=float) for name in ("X1", "X2", "W_Q", "W_K"))
    q2 = x2 @ w_q
    return float((q2 @ (x1 @ w_k).T).item()), float((q2 @ (x2 @ w_k).T).item())


def _weight(s21: float, s22: float) -> float:
    return 1.0 / (1.0 + math.exp(s22 - s21))


def test_the_prompt_says_which_rounding(items):
    """Does weight-21's prompt tell the student to round the scores to 2 decimals and the weight to 5?"""
    prompt = items["weight-21"].prompt
    assert "Round each score to 2 decimals" in " ".join(prompt.split())
    assert "to 5 decimals" in prompt


def test_a_student_who_rounds_as_told_is_right(items):
    """For each of 40 students, is the weight from scores rounded to 2 decimals, itself rounded to
    5 decimals, right; and is the weight from unrounded scores right too?"""
    wrong = []
    for student in STUDENTS:
        s21, s22 = _scores(student)
        for answer in (f"{_weight(round(s21, 2), round(s22, 2)):.5f}", f"{_weight(s21, s22):.5f}"):
            if check(items["weight-21"], answer, student=student).status != RIGHT:
                wrong.append((student, answer))
    assert not wrong


def test_an_answer_off_by_two_units_is_wrong(items):
    """For each of 40 students, is a weight two units of the 5th decimal beyond both ways of
    computing it wrong?"""
    right = []
    for student in STUDENTS:
        s21, s22 = _scores(student)
        values = [_weight(round(s21, 2), round(s22, 2)), _weight(s21, s22)]
        for answer in (f"{max(values) + 2e-5:.6f}", f"{min(values) - 2e-5:.6f}"):
            if check(items["weight-21"], answer, student=student).status != WRONG:
                right.append((student, answer))
    assert not right
