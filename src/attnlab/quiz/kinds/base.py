"""The interface every question type implements, with the defaults most share."""

from __future__ import annotations

from typing import Any, Callable

from ..bank import Item
from ..verdict import GRADED, Verdict

# How an export writes the bank's text (Markdown with $math$): text2qti wants one escaped line,
# Moodle an XML element, element(tag, text, attrs="").
Writer = Callable[[str], str]
Element = Callable[..., str]


class Kind:
    """A question type. Subclasses set ``fields`` and implement ``read`` and ``check``."""

    fields: tuple[str, ...] = ()  # bank fields besides the common ones
    syntax = ""  # how the notebook asks for an answer
    moodle_type = ""  # the Moodle question type, when the LMS exports carry this type
    has_key = True  # False: graded by hand, there is no key to check against
    per_student = False  # True: each student's key comes from their own numbers

    def read(self, item: Item, answer: str) -> Any:
        """The answer read (parsed); raises ``parse.Unreadable`` when it cannot be read."""
        raise NotImplementedError

    def check(self, item: Item, answer: str, student: str | None) -> Verdict:
        """The verdict on ``answer``; ``student`` picks per-student numbers where there are any."""
        raise NotImplementedError

    def check_without_key(self, item: Item, answer: str) -> Verdict:
        """A student's copy holds no key for a graded item: say whether the answer reads, nothing more."""
        self.read(item, answer)
        return Verdict(
            GRADED, "This question is graded by your instructor: your answer can be read, and it is not checked here."
        )

    def key_text(self, item: Item, student: str | None = None) -> str:
        """The key as a student would type it."""
        return "" if item.key is None else str(item.key)

    def answer_syntax(self, item: Item) -> str:
        return self.syntax

    def symbols(self, item: Item) -> str:
        """What the answer may name, for the notebook (empty: nothing to say)."""
        return ""

    def canvas(self, item: Item, text: Writer) -> list[str] | None:
        """text2qti lines for the answer part, or None when an LMS cannot grade this type."""
        return None

    def moodle(self, item: Item, element: Element) -> list[str] | None:
        """Moodle XML elements for the answer part, or None when an LMS cannot grade this type."""
        return None

    def verify(self, item: Item, defs: Any) -> str | None:
        """What is wrong with the item's key given the definitions, or None."""
        return None
