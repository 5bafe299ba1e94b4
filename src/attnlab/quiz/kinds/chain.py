"""Chain items: steps from a given start to a target, each following from the one before."""

from __future__ import annotations

import re
from typing import Any

from .. import proof
from ..bank import Item
from ..domains import seed_of
from ..parse import Unreadable, parse
from ..verdict import Verdict, WRONG, quote, right
from .base import Kind
from .common import namespace, parsed_key
from .proof_step import derive, matrices_text


class Chain(Kind):
    fields = ("key", "start", "solution", "holds", "where")
    syntax = "the steps separated by `=`, each a matrix expression with `*` between matrices."

    def read(self, item: Item, answer: str) -> tuple[list[str], list]:
        """The chain's parts as typed and as parsed."""
        parts = answer.replace("==", "=").split("=")
        if any(not p.strip() for p in parts):
            raise Unreadable("separate the steps with single '=' signs")
        ns = namespace(item)
        return [p.strip() for p in parts], [parse(p, ns) for p in parts]

    def key_text(self, item: Item, student: str | None = None) -> str:
        return "" if item.key is None else item.solution

    def check(self, item: Item, answer: str, student: str | None) -> Verdict:
        """Right when every step follows from the one before and the last step is the target as written.

        No message names the target: it is another item's answer (proof-z)."""
        parts, steps = self.read(item, answer)
        start, target = parse(item.start, namespace(item)), parsed_key(item)
        if steps[0] == start:  # the student wrote the given start out: the steps come after it
            parts, steps = parts[1:], steps[1:]
        if not steps:
            return Verdict(WRONG, "Not finished: that is only the start; write the steps from it to the end.")
        identities = tuple(re.search(r"(?<![A-Za-z0-9_])I(?![A-Za-z0-9_])", p) is not None for p in parts)
        for verdict in proof.check_chain(steps, start=start, seed=seed_of(item.id, answer), writes_identity=identities):
            if not verdict.ok:
                return Verdict(
                    WRONG,
                    f"Step {verdict.index} ('{quote(parts[verdict.index - 1])}') does not follow: {verdict.reason}",
                )
        if steps[-1] != target:
            return Verdict(
                WRONG,
                f"Not finished: every step holds, but the chain stops at "
                f"'{quote(parts[-1])}', which is not the simplest form the question asks for.",
            )
        if not any(step not in (start, target) for step in steps[:-1]):
            return Verdict(WRONG, "Not finished: show the steps between the start and the end, not only the end.")
        return right(item)

    def symbols(self, item: Item) -> str:
        return matrices_text()

    def verify(self, item: Item, defs: Any) -> str | None:
        return derive(item, {"ANSWER": parsed_key(item), "START": parse(item.start, namespace(item))})
