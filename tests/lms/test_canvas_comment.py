"""The comment `attnlab upload canvas` adds: plain text for Canvas, the student named as Canvas names
them, and a marker that finds it again without a machine tag a student would see as one."""

from attnlab.lms.canvas_rest import Submission
from attnlab.lms.canvas_upload import Change, Plan, _fill_plan, comment_text

FEEDBACK = """# Feedback for doejane_4001 (4001)

**Score: 58 / 63**

| question | score | out of |
|---|---|---|
| softmax | 6 | 6 |
| rope | 3 | 5 |

## What failed

- **rope 2** (hidden test, 1 pt): rotated clockwise
```
ValueError: odd d
```
"""


def test_is_the_comment_plain_text_naming_the_student_as_canvas_does():
    text = comment_text(FEEDBACK, name="Jane Doe")
    assert text.splitlines()[0] == "Feedback for Jane Doe" and "doejane" not in text
    assert not any(mark in text for mark in ("|", "**", "#", "```", "[attnlab"))
    for kept in ("Score: 58 / 63", "softmax", "rope 2 (hidden test, 1 pt): rotated clockwise", "ValueError: odd d"):
        assert kept in text


def test_is_a_comment_an_earlier_version_sent_not_sent_again():
    """Comments sent before the plain text ended in ``[attnlab feedback <hash>]``: the same feedback
    must still count as there."""
    import hashlib

    digest = hashlib.sha256(FEEDBACK.encode()).hexdigest()[:16]
    plan = Plan(changes=[Change(4001, "Doe, Jane", "doejane_4001", None, 58.0, True, comment_text(FEEDBACK, name="x"))])
    _fill_plan(plan, {4001: Submission(4001, 58.0, False, [f"old text\n\n[attnlab feedback {digest}]"])}, False, {})
    assert plan.changes[0].comment == ""
    plan.changes[0].comment = comment_text(FEEDBACK + "changed", name="x")
    _fill_plan(plan, {4001: Submission(4001, 58.0, False, [f"old text\n\n[attnlab feedback {digest}]"])}, False, {})
    assert plan.changes[0].comment != ""
