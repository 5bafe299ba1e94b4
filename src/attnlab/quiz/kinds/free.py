"""Free-response items: graded by hand against a rubric (an essay in the LMS exports)."""

from __future__ import annotations

from typing import Any

from ..bank import Item
from ..verdict import MANUAL, Verdict
from .base import Element, Kind, Writer


class Free(Kind):
    fields = ("rubric",)
    syntax = "a few sentences of text."
    moodle_type = "essay"
    has_key = False

    def read(self, item: Item, answer: str) -> Any:
        return answer

    def check(self, item: Item, answer: str, student: str | None) -> Verdict:
        if not item.rubric:
            return Verdict(MANUAL, "This question is graded by hand by your instructor.")
        rubric = "\n".join(f"  - {line}" for line in item.rubric)
        return Verdict(MANUAL, f"This question is graded by hand against this rubric:\n{rubric}")

    def canvas(self, item: Item, text: Writer) -> list[str] | None:
        return ["___"]

    def moodle(self, item: Item, element: Element) -> list[str] | None:
        rubric = "\n".join(f"- {line}" for line in item.rubric)
        return ["<responseformat>editor</responseformat>", element("graderinfo", rubric)]

    def verify(self, item: Item, defs: Any) -> str | None:
        return None if item.rubric else "no rubric"
