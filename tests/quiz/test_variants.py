"""Questions about per-student numbers (attnlab.quiz.variants)."""

import pytest

from attnlab.quiz.check import RIGHT, WRONG, check, numeric_key
from attnlab.quiz.variants import illustration, nontrivial


def test_notes_numbers_by_default():
    """Without a student, is Score(1, 2) the notes' 21.97?"""
    assert abs(illustration().value("score12") - 21.97) < 1e-9


def test_same_student_same_numbers_other_student_other_numbers():
    """Are a student's numbers reproducible, and different from another student's?"""
    a, b = illustration(student="s123"), illustration(student="s123")
    c = illustration(student="s124")
    assert a.inputs == b.inputs and a.inputs != c.inputs


def test_key_is_recomputed_for_the_student(items):
    """Is a student's right answer their own Score(1, 2), and the notes' value wrong for them?"""
    item = items["score-12"]
    own = numeric_key(item, student="s123")
    assert check(item, f"{own:.2f}", student="s123").status == RIGHT
    assert abs(own - 21.97) > item.tolerance  # this student's numbers differ from the notes'
    assert check(item, "21.97", student="s123").status == WRONG


def test_prompt_shows_the_students_numbers(items):
    """Does the rendered prompt show the student's X1?"""
    ill = illustration(student="s123")
    assert f"{ill.inputs['X1'][0][0]:.2f}" in ill.render(items["score-12"].prompt)


@pytest.mark.parametrize("item_id", ["score-12", "weight-21"])
def test_no_variant_makes_an_item_trivial(items, item_id):
    """Does no student's numbers make a numeric key 0 or 1 at the decimals the prompt asks for?"""
    item = items[item_id]
    for k in range(300):
        key = numeric_key(item, student=f"student-{k}")
        assert nontrivial(key, item.decimals), (k, key)
        assert round(key, item.decimals) not in (0.0, 1.0)


def test_nontrivial_means_two_digits_away_from_0_and_1():
    """Are 0.00004 and 0.99996 trivial at 5 decimals, and 0.00028 not?"""
    assert not nontrivial(0.00004, 5) and not nontrivial(0.99996, 5) and nontrivial(0.00028, 5)


def test_are_an_ids_numbers_the_same_whatever_its_case_and_the_spaces_around_it():
    """The roster matches a student number ignoring case and the spaces around it: does the quiz
    give ``S1``, ``s1``, ``" S1 "`` and ``"S1\\t"`` one student's numbers, other than ``S2``'s?"""
    numbers = [illustration(student=typed).inputs for typed in ("S1", "s1", " S1 ", "S1\t")]
    assert all(n == numbers[0] for n in numbers)
    assert numbers[0] != illustration(student="S2").inputs and numbers[0] != illustration().inputs
