"""A verdict on one answer, and the few phrases every question type shares."""

from __future__ import annotations

from dataclasses import dataclass

from .bank import Item
from .equivalence import Comparison

RIGHT, WRONG, UNREADABLE, MANUAL, GRADED, FAULT = ("right", "wrong", "unreadable", "manual", "graded", "fault")
# MANUAL (graded by hand) and GRADED (no key here: graded by the instructor) give no verdict on the
# answer, so they exit 0 like every run that went as it should; FAULT is the checker's own failure.
EXIT_CODES = {RIGHT: 0, WRONG: 1, UNREADABLE: 2, MANUAL: 0, GRADED: 0, FAULT: 3}


@dataclass(frozen=True)
class Verdict:
    status: str
    message: str

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.status]


def right(item: Item) -> Verdict:
    extra = f"\n{item.explanation}" if item.explanation else ""
    return Verdict(RIGHT, f"Right.{extra}")


def wrong(hint: str) -> Verdict:
    return Verdict(WRONG, f"Not right: {hint}")


def quote(answer: str) -> str:
    """The student's answer as they typed it, on one line and short enough to read in a message."""
    text = " ".join(answer.split())
    return text if len(text) <= 60 else text[:57] + "..."


def reason(result: Comparison) -> str:
    return {"differs at sampled values": "it differs from the expected expression for some values of its symbols."}.get(
        result.how, result.how + "."
    )
