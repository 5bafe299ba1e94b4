"""Questions about classes of answers the second audit (issue 37) found misjudged: each class is
asked with answers of our own, not the audit's rows."""

import dataclasses
import math
import re

import pytest

from attnlab.quiz import definitions
from attnlab.quiz.check import check
from attnlab.quiz.kinds import KINDS
from attnlab.quiz.variants import illustration

R, W, U = "right", "wrong", "unreadable"


@pytest.mark.parametrize(
    ("item_id", "answer"),
    [
        ("pe-dim0", "sin(pos) + sqrt(7 + 4*sqrt(3)) - 2 - sqrt(3)"),  # (2 + sqrt(3))^2 = 7 + 4 sqrt(3)
        ("pe-dim0", "sin(pos) + (sqrt(5) - 1)**2 + 2*sqrt(5) - 6"),
        ("pe-dim1", "cos(pos) + log(5) + log(7) - log(35)"),
        ("pe-dim1", "cos(pos)*log(27)/log(3) - 2*cos(pos)"),
        ("pe-dim0", "sin(pos) + log(1000) - 3*log(10)"),
        ("pe-dim0", "sin(pos) + log(2)**2 + log(5)**2 - log(10)**2 + 2*log(2)*log(5)"),  # (log 2 + log 5)^2
        ("pe-dim1", "cos(pos) + tan(pi/8) - sqrt(2) + 1"),
    ],
)
def test_a_constant_that_is_exactly_zero_leaves_a_right_answer_right(items, item_id, answer):
    """Is an answer whose extra constant is 0 by mathematics (radicals, logs) right?"""
    assert check(items[item_id], answer).status == R


@pytest.mark.parametrize(
    ("item_id", "answer"),
    [
        ("pe-dim0", "sin(pos) + sqrt(7 + 4*sqrt(3)) - 2 - sqrt(3) + 10**-400"),
        ("pe-dim1", "cos(pos) + log(5) + log(7) - log(36)"),
        ("pe-dim0", "sin(pos) + 2*pi - 6.283185307179586"),
    ],
)
def test_a_constant_that_is_not_zero_still_makes_an_answer_wrong(items, item_id, answer):
    """Is an answer off by a tiny but nonzero exact constant still wrong?"""
    assert check(items[item_id], answer).status == W


@pytest.mark.parametrize(
    ("item_id", "answer", "expected"),
    [
        ("shift-block", "[[cos(sqrt(k**2)*w), sin(k*w)], [-sin(k*w), cos(k*w)]]", R),
        ("rel-rotation", "s*cos(w*sqrt(k*k)) + c*sin(k*w)", R),
        ("rope-relative", "(q1*k1 + q2*k2)*cos(sqrt((m - n)**2)*theta) + (q2*k1 - q1*k2)*sin((n - m)*theta)", R),
        ("rel-rotation", "s*cos(k*w) + c*sin(sqrt(k^2)*w)", W),  # sine is odd: wrong for k < 0
    ],
)
def test_the_absolute_value_of_an_integer_symbol_is_evaluated(items, item_id, answer, expected):
    """Is sqrt(k^2) = |k| of an integer symbol read as a finite value, so cos(|k| w) = cos(k w)?"""
    assert check(items[item_id], answer).status == expected


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("s*cos(k*w) + c*sin(k*w)/(s^2 + c^2)", R),  # s^2 + c^2 = 1: s and c are sin and cos of one angle
        ("(s^2 + c^2)*s*cos(k*w) + c*sin(k*w)", R),
        ("s*cos(k*w) + c*sin(k*w)*(s^2 + c^2 + 1)", W),
        ("s*cos(k*w) - c*sin(k*w)", W),
    ],
)
def test_rel_rotation_knows_s_and_c_are_a_sine_and_cosine(items, answer, expected):
    """Does rel-rotation judge with s^2 + c^2 = 1, as its prompt's s and c imply?"""
    assert check(items["rel-rotation"], answer).status == expected


@pytest.mark.parametrize("answer", ["P*Z*(d_k/d_k)", "1*P*Z", "P*Z*(d_k - d_k + 1)"])
def test_proof_z_sees_the_scalars_as_written(items, answer):
    """Is an equal answer to proof-z that writes extra scalars not its simplest form?"""
    assert check(items["proof-z"], answer).status == W


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("softmax(P*S*P^T)*(P*V) = P*softmax(S)*P^T*P*V = P*A*(P^T*P)*V = P*A*V = P*Z", R),
        ("softmax(P*S*P^T)*(P*V) = P*softmax(S)*P^T*P*V = P*A*I*V = P*A*V = P*Z", R),
        ("softmax(P*S*P^T)*(P*V) = P*softmax(S)*(P^T*P)*V = P*A*V = P*Z", W),  # fold, pair, drop I
        ("softmax(P*S*P^T)*(P*V) = P*softmax(S)*V = P*A*V = P*Z", W),  # softmax rule, pair, drop I
    ],
)
def test_a_chain_step_counts_the_pair_and_its_identity_as_two_rules(items, answer, expected):
    """Does a chain step that cancels P^T P and drops the I count two rules, as the prompt lists them?"""
    assert check(items["proof-chain"], answer).status == expected


@pytest.mark.parametrize(
    ("item_id", "answer", "expected"),
    [
        ("mha-merge", "[b]", R),
        ("mha-merge", " [ B ] ", R),
        ("th-relative", "[c, a, b]", R),
        ("proof-order", "[b d c e a]", R),
        ("mha-merge", "b d", W),
        ("mha-merge", "[a, b]", W),
        ("proof-order", "b d c e e", W),
        ("proof-order", "a", W),
        ("mha-merge", "[z]", U),
    ],
)
def test_choice_and_order_answers_read_alike(items, item_id, answer, expected):
    """Is a bracketed list read like the plain one, and a readable wrong one wrong, not unreadable?"""
    assert check(items[item_id], answer).status == expected


def test_an_incomplete_order_is_told_the_labels_sorted_not_the_key(items):
    """Does proof-order's message for a missing step list the labels in order a, b, c, ..., not the key's?"""
    item = items["proof-order"]
    message = check(item, "c").message
    assert ", ".join(sorted(item.key)) in message and ", ".join(item.key) not in message


@pytest.mark.parametrize(("answer", "expected"), [("P^2*Q", W), ("P^1*Q", R), ("P**1*Q", R), ("Q^2", U), ("P^0*Q", U)])
def test_a_whole_power_of_a_square_matrix_is_read(items, answer, expected):
    """Is P^2 read as P*P (SPEC: ^ raises to a power), and a power of a non-square matrix refused?"""
    assert check(items["proof-q"], answer).status == expected


def test_no_student_earns_score_12_with_a_known_mistake(items):
    """For many students, are Score(1,1), Score(2,1) and Score(2,2) kept apart from the key?"""
    item = items["score-12"]
    earned = []
    for number in range(400):
        student = f"s{number}"
        values = illustration(student=student).values
        for mistake in ("score11", "score21", "score22"):
            typed = f"{float(values[mistake]):.2f}"
            if check(item, typed, student=student).status == R:
                earned.append((student, mistake))
    assert not earned


@pytest.mark.parametrize("method", ["ALiBi", "RoPE", "T5"])
def test_no_graded_title_or_prompt_names_a_method_the_theory_items_ask_for(items, method):
    """Is no method a choice item asks to identify named in a graded item's title or prompt?"""
    graded = [i for i in items.values() if not i.practice and i.key is not None]
    assert not [i.id for i in graded if method.lower() in f"{i.title}\n{i.prompt}".lower()]


def test_proof_chain_title_does_not_state_proof_z(items):
    """Does proof-chain's title keep proof-z's answer (P Z) to itself?"""
    title = items["proof-chain"].title
    assert "P Z" not in title and "PZ" not in title.replace(" ", "")


def test_no_graded_item_but_equivariance_calls_the_layer_equivariant(items):
    """Does only the equivariance item itself say that the layer is (permutation-)equivariant?"""
    said = []
    for item in items.values():
        if item.practice or item.key is None or item.id == "equivariance":
            continue
        texts = [item.title, item.prompt, item.explanation, *item.option_feedback.values()]
        texts += [f.says for f in item.feedback]
        said += [item.id for text in texts if "equivarian" in text.lower()]
    assert not said


def test_weight_21_scaled_says_what_its_tolerance_does_with_a_mix(items):
    """Does the prompt say a mix of rounded and kept steps is not accepted, and is such a mix wrong?"""
    item = items["weight-21-scaled"]
    values = illustration(student="20260001").values
    raw = [round(float(values[q]), 2) for q in ("score21", "score22")]  # rounded raw scores, scaled kept
    scaled = [r / 2**0.5 for r in raw]
    mixed = 1 / (1 + math.exp(scaled[1] - scaled[0]))
    assert "a mix is not" in " ".join(item.prompt.split())
    assert check(item, f"{mixed:.5f}", student="20260001").status == W


def test_verify_refuses_a_stand_in_for_a_symbol_the_item_lacks(items):
    """Does verify fail an item whose stands_for replaces a symbol it does not have?"""
    bad = dataclasses.replace(items["rel-rotation"], stands_for={"x": "sin(t)"})
    assert "stands_for" in (KINDS["symbolic"].verify(bad, definitions.load()) or "")


def test_only_th_relative_says_which_methods_are_relative(items):
    """Does no other item's text (practice ones included) call ALiBi, RoPE or T5 relative?"""
    said = []
    for item in items.values():
        if item.id == "th-relative":
            continue
        texts = [item.title, item.prompt, item.explanation, *item.options.values(), *item.option_feedback.values()]
        texts += [f.says for f in item.feedback]
        for sentence in re.split(r"[.;:\n]", "\n".join(texts)):
            lowered = sentence.lower()
            if ("relative" in lowered or "offset" in lowered) and re.search(r"alibi|rope|t5", lowered):
                said.append(f"{item.id}: {sentence.strip()}")
    assert not said
