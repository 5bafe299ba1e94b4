"""Order items: the steps of an argument, in the one order their dependencies allow."""

from __future__ import annotations

import itertools
from typing import Any

from ..bank import Item
from ..verdict import Verdict, WRONG, right
from .base import Kind
from .choice import labels


class Order(Kind):
    fields = ("key", "steps", "needs", "option_feedback")
    syntax = "the letters of the steps in order, e.g. `c a b`."

    def read(self, item: Item, answer: str) -> Any:
        return labels(answer, item)

    def key_text(self, item: Item, student: str | None = None) -> str:
        return "" if item.key is None else " ".join(item.key)

    def check(self, item: Item, answer: str, student: str | None) -> Verdict:
        chosen = self.read(item, answer)
        key = list(item.key)
        if sorted(chosen) != sorted(key):
            # readable, and not an order of the steps; the labels sorted, never in the key's order
            return Verdict(WRONG, f"Not right: put every step in, each once: {', '.join(sorted(key))}.")
        if chosen == key:
            return right(item)
        first = next(i for i, (c, k) in enumerate(zip(chosen, key)) if c != k)
        why = item.option_feedback.get(chosen[first], "")
        return Verdict(WRONG, f"Not right: step {first + 1} should not be ({chosen[first]}). {why}".strip())

    def verify(self, item: Item, defs: Any) -> str | None:
        """The steps' ``needs`` allow exactly one order, and it is the key."""
        keys = list(item.key)
        bad = [k for k in keys if k not in item.options]
        if bad:
            return f"keys not among the steps: {bad}"
        unknown = sorted({s for k, v in item.needs.items() for s in (k, *v)} - set(item.options))
        if unknown:
            return f"'needs' names steps that do not exist: {unknown}"
        orders = [
            o
            for o in itertools.permutations(item.options)
            if all(o.index(x) < o.index(step) for step, before in item.needs.items() for x in before)
        ]
        if len(orders) != 1:
            return f"'needs' allows {len(orders)} orders; it must allow exactly one"
        if list(orders[0]) != keys:
            return f"'needs' gives the order {' '.join(orders[0])}, not the key {' '.join(keys)}"
        return None
