"""Proof items: one step of the permutation proof, a matrix expression over non-commuting symbols."""

from __future__ import annotations

from typing import Any

from .. import proof
from ..bank import Item
from ..domains import seed_of
from ..parse import Namespace, Softmax, parse
from ..steps import written
from ..verdict import Verdict, reason, right, wrong
from .base import Kind
from .common import known_wrong, namespace, not_simplest, parsed_key, sides

PROOF_SEEDS = 3  # sets of random worlds verify derives a proof key in
# `not_in_answer` entries: softmax written out, or a product transposed as a whole ((P K)^T restates
# a question that asks for the transpose worked out)
TRANSPOSED_PRODUCT = "(...)^T"


def matrices_text() -> str:
    proof.bind()
    scalars = " ".join(f"`{s}`" for s in proof.SCALARS)
    return (
        f"the matrices `{' '.join(proof.NAMES)}`, the identity `I`, the scalar(s) {scalars} "
        "and `softmax(...)` (row by row)"
    )


def derive(item: Item, extra: dict[str, Any]) -> str | None:
    """``holds`` in random worlds built from the matrix definitions, with ANSWER (and START) the
    item's own expressions."""
    ns = proof.namespace()
    ns = Namespace(scalars=ns.scalars, matrices={**ns.matrices, **extra}, softmax=True)
    for equation in item.holds:
        left, right_side = (parse(side, ns) for side in sides(equation))
        for k in range(PROOF_SEEDS):
            result = proof.compare(left, right_side, seed=seed_of("verify", item.id, equation, str(k)))
            if not result.equal:
                return f"the key does not satisfy {equation} ({result.how})"
    return None


class ProofStep(Kind):
    fields = ("key", "feedback", "not_in_answer", "simplest", "holds", "where")
    syntax = (
        "a matrix expression with `*` or a space between matrices (they do not commute), `^T` or `.T` to transpose."
    )

    def read(self, item: Item, answer: str) -> Any:
        return parse(answer, namespace(item))

    def check(self, item: Item, answer: str, student: str | None) -> Verdict:
        proof.bind()
        got = self.read(item, answer)
        shape = written(answer, namespace(item), permutation=proof.PERMUTATION)
        for name, why in item.not_in_answer.items():
            # what is written counts, not what sympy keeps of it: 0*softmax(S) still writes softmax
            softmax = got.has(Softmax) or "softmax" in shape.calls
            if name == "softmax" and softmax or name == TRANSPOSED_PRODUCT and shape.transposed_product:
                return wrong(why)
        key = parsed_key(item)
        seed = seed_of(item.id, answer)
        result = proof.compare(got, key, seed=seed)
        if result.equal:
            found = proof.shortcuts(got)
            hint = "use " + " and ".join(found) if found else "write it with fewer factors"
            # sympy tidies I P Z into P Z: what the student wrote out counts too
            longer = shape.size > written(str(item.key), namespace(item), permutation=proof.PERMUTATION).size
            return not_simplest(item, got, hint, longer=longer) or right(item)
        return wrong(
            known_wrong(item, got, lambda a, b: proof.compare(a, b, seed=seed))
            or proof.explain(got, key)
            or reason(result)
        )

    def symbols(self, item: Item) -> str:
        return matrices_text()

    def verify(self, item: Item, defs: Any) -> str | None:
        return derive(item, {"ANSWER": parsed_key(item)})
