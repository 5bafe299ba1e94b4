"""Choice items: one option, or every right option (select all that apply)."""

from __future__ import annotations

import re
from typing import Any

from ..bank import Item
from ..parse import Unreadable
from ..verdict import Verdict, WRONG, right
from .base import Element, Kind, Writer


def labels(answer: str, item: Item) -> list[str]:
    """The option labels in an answer such as ``b``, ``a, c``, ``c a d b``, ``(b)`` or ``[a, c]``."""
    text = answer.strip().lower()
    if text.startswith("[") and text.endswith("]"):  # a list of labels, as Python would write it
        text = text[1:-1].strip()
    found = re.findall(r"[a-z]", text) if re.fullmatch(r"[a-z]+", text) else re.split(r"[\s,;]+", text)
    found = [f.strip("()") for f in found if f]
    unknown = [f for f in found if f not in item.options]
    if not found or unknown:
        raise Unreadable(f"answer with the option letters {', '.join(item.options)}")
    return found


def keys(item: Item) -> list[str]:
    return item.key if item.multiple else [item.key]


class Choice(Kind):
    fields = ("key", "options", "option_feedback")
    syntax = "the letter of one option, e.g. `b`."
    moodle_type = "multichoice"

    def read(self, item: Item, answer: str) -> Any:
        return labels(answer, item)

    def key_text(self, item: Item, student: str | None = None) -> str:
        return "" if item.key is None else ", ".join(keys(item))

    def answer_syntax(self, item: Item) -> str:
        return "the letters of every right option, e.g. `a, c`." if item.multiple else self.syntax

    def check(self, item: Item, answer: str, student: str | None) -> Verdict:
        chosen = self.read(item, answer)
        key = keys(item)
        if not item.multiple and len(chosen) != 1:
            # readable, and not the answer: SPEC keeps "cannot read" for syntax and unknown names
            return Verdict(WRONG, "Not right: this question has exactly one right option; choose one.")
        if sorted(set(chosen)) == sorted(key):
            return right(item)
        notes = [f"({c}) {item.option_feedback[c]}" for c in chosen if c not in key and c in item.option_feedback]
        missed = [k for k in key if k not in chosen]
        if item.multiple and missed:
            notes.append(f"{len(missed)} right option(s) not chosen.")
        return Verdict(WRONG, "Not right. " + " ".join(notes) if notes else "Not right.")

    def canvas(self, item: Item, text: Writer) -> list[str] | None:
        lines = []
        for label, option in item.options.items():
            if item.multiple:
                lines.append(f"[{'*' if label in keys(item) else ' '}] {text(option)}")
            else:
                lines.append(f"{'*' if label in keys(item) else ''}{label}) {text(option)}")
            if label in item.option_feedback:
                lines.append(f"... {text(item.option_feedback[label])}")
        return lines

    def moodle(self, item: Item, element: Element) -> list[str] | None:
        right_ones = keys(item)
        wrong_ones = [label for label in item.options if label not in right_ones]
        lines = [
            f"<single>{'false' if item.multiple else 'true'}</single>",
            "<shuffleanswers>0</shuffleanswers>",
            "<answernumbering>abc</answernumbering>",
        ]
        for label, option in item.options.items():
            if label in right_ones:
                fraction = f"{100 / len(right_ones):.5f}"
            else:
                fraction = f"-{100 / max(len(wrong_ones), 1):.5f}" if item.multiple else "0"
            feedback = element("feedback", item.option_feedback.get(label, ""))
            lines.append(
                element("answer", option, attrs=f' fraction="{fraction}"').replace("</answer>", feedback + "</answer>")
            )
        return lines

    def verify(self, item: Item, defs: Any) -> str | None:
        """The bank says why each wrong option is wrong: exactly the options without a reason are keys."""
        bad = [k for k in keys(item) if k not in item.options]
        if bad:
            return f"keys not among the options: {bad}"
        explained = [k for k in keys(item) if k in item.option_feedback]
        if explained:
            return f"option(s) {explained} are keys, yet 'option_feedback' explains why they are wrong"
        unexplained = [o for o in item.options if o not in keys(item) and o not in item.option_feedback]
        if unexplained:
            return f"wrong option(s) {unexplained} need 'option_feedback' saying why they are wrong"
        return None
