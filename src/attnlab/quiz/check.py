"""One verdict for one answer to one item: right, wrong, unreadable, graded by hand or by the instructor.

The item's type (``kinds``) reads and checks the answer. Every verdict is the same on every run:
sample points come from the item id and the answer text, never from the clock. A fault of the
checker itself is its own verdict (``fault``, exit code 3), never a traceback and never "wrong".
"""

from __future__ import annotations

from functools import lru_cache

from .bank import Item, load
from .deadline import OutOfTime, can_interrupt, cap
from .kinds import KINDS
from .kinds.choice import labels
from .kinds.common import namespace, size
from .kinds.numeric import numeric_key
from .parse import Unreadable
from .verdict import EXIT_CODES, FAULT, GRADED, MANUAL, RIGHT, UNREADABLE, WRONG, Verdict

__all__ = [
    "EXIT_CODES",
    "FAULT",
    "GRADED",
    "MANUAL",
    "RIGHT",
    "UNREADABLE",
    "WRONG",
    "Verdict",
    "bank_items",
    "check",
    "check_variable",
    "key_text",
    "labels",
    "namespace",
    "numeric_key",
    "size",
]
# CPU seconds of the checking thread (deadline.cpu_seconds), not wall-clock seconds: a loaded
# machine slows a check down but never changes its verdict. The promise is one second on a quiet
# machine; keep a margin.
VERDICT_CPU_SECONDS = 0.9


def check(item: Item, answer: str, *, student: str | None = None) -> Verdict:
    """Grade ``answer`` to ``item``; never raises for anything a student can type."""
    kind = KINDS[item.type]
    if not kind.has_key:
        return kind.check(item, answer, student)
    if not isinstance(answer, str) or len(answer) > 10_000:
        return Verdict(UNREADABLE, "Cannot read this answer: it is not short text.")
    try:
        if can_interrupt():
            with cap(VERDICT_CPU_SECONDS):
                return _check(item, answer, student)
        return _check(item, answer, student)
    except Unreadable as exc:
        return Verdict(UNREADABLE, f"Cannot read this answer: {exc}.")
    except OutOfTime as exc:
        # the stage's own reason where it gave one ("cannot decide whether a constant is 0"), the
        # budget where the CPU time ran out
        why = str(exc) if str(exc).startswith("cannot ") else "could not settle it within its work budget"
        return Verdict(
            MANUAL, f"This answer needs a human: the checker {why}, so your instructor will grade it by hand."
        )
    except RecursionError:
        return Verdict(UNREADABLE, "Cannot read this answer: it is nested too deeply to check.")
    except Exception as exc:  # noqa: BLE001 - a checker bug must never look like a verdict on the answer
        return Verdict(
            FAULT,
            f"The checker failed on this answer ({type(exc).__name__}). This is a fault "
            "in the quiz, not in your answer: please tell your instructor.",
        )


def _check(item: Item, answer: str, student: str | None) -> Verdict:
    kind = KINDS[item.type]
    if item.key is None:
        return kind.check_without_key(item, answer)
    return kind.check(item, answer, student)


@lru_cache(maxsize=1)
def bank_items() -> dict[str, Item]:
    """The default bank, loaded once: the items the notebook's answer variables belong to."""
    return load()


def check_variable(item_id: str, value: object, *, student: str | None = None) -> Verdict:
    """The verdict on a quiz notebook's answer variable; ``value`` is what it holds (None if unset);
    numeric items use ``student``'s numbers (the notes' without one)."""
    item = bank_items()[item_id]
    if type(value) is not str:  # exactly str: a subclass could redefine what the parser calls
        return Verdict(
            UNREADABLE,
            f"Cannot read this answer: {item.variable} must hold your answer "
            f'as text in quotes, e.g. {item.variable} = "...".',
        )
    return check(item, value, student=student)


def key_text(item: Item, *, student: str | None = None) -> str:
    """The key as a student would type it (a numeric key for the student's or the notes' numbers)."""
    return KINDS[item.type].key_text(item, student)
