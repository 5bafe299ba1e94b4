"""Questions about the checker against an audit's hand-derived verdicts.

``audit_answers.tsv`` holds right, wrong and unreadable answers to every auto-graded item, one per
line: ``id<TAB>verdict<TAB>answer``. Each verdict was derived by hand from the mathematics (numeric
items with the notes' numbers), never by running the checker.
"""

from pathlib import Path

import pytest

from attnlab.quiz.check import check

AUDIT = Path(__file__).with_name("audit_answers.tsv")
ROWS = [line.split("\t", 2) for line in AUDIT.read_text(encoding="utf-8").splitlines() if line.strip()]

# Where the checker is allowed to say "cannot read" for a documented limit rather than judge.
LIMITS = {
    ("pe-dim0", "sin(pos)*(d_model/2)^1000"): "a symbolic exponent beyond parse.MAX_SYMBOLIC_EXPONENT",
}


def test_the_audit_covers_every_auto_graded_item_both_ways(items):
    """Does the audit hold right and wrong answers to every item with a key, 600 or more in all?"""
    graded = {i.id for i in items.values() if i.type != "free"}
    verdicts = {(item_id, verdict) for item_id, verdict, _ in ROWS}
    assert len(ROWS) >= 600
    assert all((i, "right") in verdicts and (i, "wrong") in verdicts for i in graded)


def test_every_audit_answer_gets_its_hand_derived_verdict(items):
    """Does the checker agree with the hand-derived verdict on every answer of the audit?"""
    disagree = []
    for item_id, expected, answer in ROWS:
        got = check(items[item_id], answer).status
        if got != expected and not ((item_id, answer) in LIMITS and got == "unreadable"):
            disagree.append(f"{item_id}: {answer!r} is {got}, not {expected}")
    assert not disagree, "\n".join(disagree)


@pytest.mark.parametrize(("item_id", "answer"), sorted(LIMITS))
def test_a_limit_is_still_one(items, item_id, answer):
    """Is each documented limit still refused as unreadable (else it belongs with the others)?"""
    assert check(items[item_id], answer).status == "unreadable"
