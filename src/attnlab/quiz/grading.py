"""Grade a quiz submission statically: read its answers as text, ask the checker, report for Gradescope.

Nothing in the submission runs, so nothing in it can replace the checker or write a result: a
notebook scores what its top-level string answers deserve. The rows follow Gradescope's schema:
per auto-graded item a visible 0-point row (was it answered as text?) and a row with the item's
points and the checker's feedback, shown once grades are published (``after_published``). The
top-level output says what was read, never whether an answer is right; no row ever holds a key.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .answers import Answer, Answers, UnreadableFile, read
from .bank import Item
from .check import RIGHT, bank_items, check_variable
from .verdict import FAULT, MANUAL
from .kinds import KINDS

ENGINE = "attnlab-quiz"
HIDDEN = "after_published"


def total(points: Iterable[float]) -> float:
    """A sum of item points, rounded to 9 decimals as ``attnlab grade``'s are: points are decimals
    written by hand (0.1, 0.2), so their float sum is not 0.30000000000000004 in results.json."""
    return round(sum(points), 9)


def graded_items() -> list[Item]:
    """The items the autograder scores, in bank order (free response is graded by hand)."""
    return [i for i in bank_items().values() if KINDS[i.type].has_key]


def grade(
    *, submission: Path, student: str | None = None, whose: str = "", numbers_known: bool = True
) -> dict[str, Any]:
    """Gradescope results for one quiz notebook or ``.py`` file, read without running it.

    Numeric items are graded with ``student``'s numbers (the notes' without one); ``whose`` says
    where the id came from, for the report. Without ``numbers_known`` (the student's number is not
    known) numeric items get no verdict: a human grades them, never with someone else's numbers."""
    submission = Path(submission)
    try:
        answers = read(submission)
    except UnreadableFile as err:
        answers = Answers(notes=[f"Nothing could be read: {err}."])
    tests, scores, possible, unsettled = [], {}, {}, []
    for item in graded_items():
        answer = answers.variables.get(item.variable, Answer(None))
        answered, says = _answered(item, answer)
        tests.append(
            {
                "name": f"{item.variable} (answered)",
                "score": 0,
                "max_score": 0,
                "status": "passed" if answered else "failed",
                "visibility": "visible",
                "output": says,
            }
        )
        if answered and item.type == "numeric" and not numbers_known:
            earned, feedback = None, "Your student number is not known here: your instructor will grade this."
        else:
            earned, feedback = _verdict(item, answer, student) if answered else (0.0, says)
        possible[item.id] = item.points
        if earned is None:  # no verdict (the checker's budget, or its fault): a human's, never a 0
            unsettled.append(item.id)
            earned = 0.0
        else:
            scores[item.id] = earned
        tests.append(
            {
                "name": item.variable,
                "score": earned,
                "max_score": item.points,
                "status": "passed" if earned else "failed",
                "visibility": HIDDEN,
                "output": feedback,
            }
        )
    answered_count = sum(t["status"] == "passed" for t in tests[::2])
    lines = [
        f"Read {submission.name} as text (nothing in it was run): {answered_count} of "
        f"{len(scores)} auto-graded questions answered. Feedback per question appears once "
        "grades are published; free-response questions are graded by hand."
    ]
    if student:
        lines.append(f"Numeric questions are graded with the numbers of student {student!r}{whose}.")
    elif not numbers_known:
        lines.append(f"Numeric questions are not graded automatically{whose}.")
    else:
        lines.append(f"Numeric questions are graded with the notes' own numbers{whose}.")
    lines += answers.notes
    return {
        "score": total(scores.values()),
        "output": "\n".join(lines),
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": tests,
        "extra_data": {
            "engine": ENGINE,
            "submission": submission.stem,
            "variant": student,
            "items": scores,
            "possible": possible,
            "needs_human": unsettled,
            "notes": answers.notes,
        },
    }


def _answered(item: Item, answer: Answer) -> tuple[bool, str]:
    if answer.problem:
        return False, answer.problem
    if answer.text is None or not answer.text.strip():
        return False, f'Not answered: type your answer as text in quotes: {item.variable} = "...".'
    return True, "Answered."


def _verdict(item: Item, answer: Answer, student: str | None) -> tuple[float | None, str]:
    """The item's points and the checker's feedback; no points (None) where the checker gave no
    verdict on the answer (out of its work budget, or its own fault): a human grades those."""
    try:
        verdict = check_variable(item.id, answer.text, student=student)
    except Exception:  # noqa: BLE001 - a checker bug must cost one item, not the whole submission
        return None, "This answer could not be checked; your instructor will look at it."
    if verdict.status in (MANUAL, FAULT):
        return None, verdict.message
    return (item.points if verdict.status == RIGHT else 0.0), verdict.message
