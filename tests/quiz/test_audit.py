"""Questions about the checker against five audits' hand-derived verdicts.

``audit_answers.tsv`` to ``audit5_answers.tsv`` (independent auditors', see ``audit2_README.md`` to
``audit5_README.md``; audit3 to audit5 were unseen when first run, see their ``RESULTS.md``) hold right, wrong and unreadable answers to every auto-graded item, one per
line: ``id<TAB>verdict<TAB>answer`` (an id ``ITEM@STUDENT`` uses that student's numbers). Each
verdict was derived by hand from the mathematics, never by running the checker. Answers are taken
as written: a leading or trailing space is part of the answer.
"""

from pathlib import Path

import pytest

from attnlab.quiz.check import check

AUDITS = [
    Path(__file__).with_name(name)
    for name in (
        "audit_answers.tsv",
        "audit2_answers.tsv",
        "audit3_answers.tsv",
        "audit4_answers.tsv",
        "audit5_answers.tsv",
    )
]


def _rows(audit: Path) -> list[list[str]]:
    return [line.split("\t", 2) for line in audit.read_text(encoding="utf-8").split("\n") if line.strip()]


ROWS = [row for audit in AUDITS for row in _rows(audit)]

# Where the checker is allowed to say "cannot read" for a documented limit rather than judge.
LIMITS = {
    ("pe-dim0", "sin(pos)*(d_model/2)^1000"): "a symbolic exponent beyond parse.MAX_SYMBOLIC_EXPONENT",
}

# Where the checker reads more than SPEC's syntax, by decision: the auditor's "unreadable" stands for
# the documented syntax, the checker reads these as what they can only mean (quiz/README.md says so).
LENIENT = {
    ("proof-q", "P@Q"): "`@`, Python's matrix product, read as a product",
    ("proof-order", "b;d;c;e;a"): "`;` between the labels of an order, read as `,`",
}


def test_the_audit_covers_every_auto_graded_item_both_ways(items):
    """Does the audit hold right and wrong answers to every item with a key, 600 or more in all?"""
    graded = {i.id for i in items.values() if i.type != "free"}
    verdicts = {(row_id.partition("@")[0], verdict) for row_id, verdict, _ in ROWS}
    assert len(ROWS) >= 600 + 998 + 828 + 775 + 784
    assert all((i, "right") in verdicts and (i, "wrong") in verdicts for i in graded)


@pytest.mark.parametrize("audit", AUDITS, ids=[a.stem for a in AUDITS])
def test_every_audit_answer_gets_its_hand_derived_verdict(items, audit):
    """Does the checker agree with the hand-derived verdict on every answer of each audit? (One test
    per audit, so that the test workers share them out.)"""
    disagree = []
    for row_id, expected, answer in _rows(audit):
        item_id, _, student = row_id.partition("@")
        got = check(items[item_id], answer, student=student or None).status
        limit = (item_id, answer) in LIMITS and got == "unreadable"
        lenient = (item_id, answer) in LENIENT and expected == "unreadable" and got == "right"
        if got != expected and not (limit or lenient):
            disagree.append(f"{item_id}: {answer!r} is {got}, not {expected}")
    assert not disagree, "\n".join(disagree)


@pytest.mark.parametrize(("item_id", "answer"), sorted(LIMITS))
def test_a_limit_is_still_one(items, item_id, answer):
    """Is each documented limit still refused as unreadable (else it belongs with the others)?"""
    assert check(items[item_id], answer).status == "unreadable"
