"""``attnlab quiz verify``: every key derived from the definitions, and the facts they rest on proved.

The facts (softmax commutes with permutations, self-attention is equivariant, P^T P = I, PE breaks
equivariance) are proved exactly with symbolic matrices. Each item's key is then derived from
``quiz/definitions.yaml``: its ``holds`` equations (over ANSWER, the key) must hold on the
symbols' domains, with the symbols' domains those of the definitions; a proof key must hold in
random worlds (sizes, inputs, permutation, d_k) built from the matrix definitions; a numeric key
must hold for the notes' numbers and for many students' variants, match the value the notes
print at the decimals the prompt asks for, and stay nontrivial in every variant. Every key must
also grade right, and every known wrong answer wrong.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import sympy as sp

from . import bank, check, definitions
from .kinds import KINDS


@dataclass(frozen=True)
class Result:
    name: str
    ok: bool
    detail: str = ""


def softmax_rows(S: sp.Matrix) -> sp.Matrix:
    rows = []
    for i in range(S.rows):
        e = [sp.exp(S[i, j]) for j in range(S.cols)]
        total = sp.Add(*e)
        rows.append([x / total for x in e])
    return sp.Matrix(rows)


def permutation(perm: tuple[int, ...]) -> sp.Matrix:
    """``P`` with ``(P X)[i] = X[perm[i]]``."""
    return sp.Matrix(len(perm), len(perm), lambda i, j: 1 if perm[i] == j else 0)


def _symbolic(name: str, rows: int, cols: int) -> sp.Matrix:
    return sp.Matrix(rows, cols, lambda i, j: sp.Symbol(f"{name}_{i}{j}", real=True))


def softmax_commutes_with_permutations() -> Result:
    """softmax(P S P^T) = P softmax(S) P^T for every permutation at n = 3 and 4, S symbolic."""
    count = 0
    for n in (3, 4):
        S = _symbolic("s", n, n)
        for perm in itertools.permutations(range(n)):
            P = permutation(perm)
            if softmax_rows(P * S * P.T) != P * softmax_rows(S) * P.T:
                return Result("softmax(P S P^T) = P softmax(S) P^T", False, f"fails for {perm}")
            count += 1
    return Result("softmax(P S P^T) = P softmax(S) P^T", True, f"all {count} permutations, n = 3, 4")


def self_attention(X: sp.Matrix, W_Q: sp.Matrix, W_K: sp.Matrix, W_V: sp.Matrix) -> sp.Matrix:
    d_k = W_K.cols
    return softmax_rows((X * W_Q) * (X * W_K).T / sp.sqrt(d_k)) * (X * W_V)


def self_attention_is_equivariant() -> Result:
    """Z(P X) = P Z(X) with symbolic X (3x2) and weights, for every permutation of 3 rows."""
    X = _symbolic("x", 3, 2)
    W = [_symbolic(w, 2, 2) for w in ("q", "k", "v")]
    Z = self_attention(X, *W)
    for perm in itertools.permutations(range(3)):
        P = permutation(perm)
        if sp.expand(self_attention(P * X, *W) - P * Z) != sp.zeros(3, 2):
            return Result("Z(P X) = P Z(X)", False, f"fails for {perm}")
    return Result("Z(P X) = P Z(X)", True, "symbolic X, W_Q, W_K, W_V; all 6 permutations")


def permutations_are_orthogonal() -> Result:
    for n in (3, 4):
        for perm in itertools.permutations(range(n)):
            P = permutation(perm)
            if P.T * P != sp.eye(n):
                return Result("P^T P = I", False, f"fails for {perm}")
    return Result("P^T P = I", True, "every permutation, n = 3, 4")


def pe_breaks_equivariance() -> Result:
    """A counterexample: with X = E + PE, permuting the tokens does not permute the output."""
    E = sp.Matrix([[1, 0], [0, 1], [1, 1]])
    PE = sp.Matrix([[0, 1], [sp.sin(1), sp.cos(1)], [sp.sin(2), sp.cos(2)]])
    I2 = sp.eye(2)
    P = permutation((1, 0, 2))
    gap = self_attention(P * E + PE, I2, I2, I2) - P * self_attention(E + PE, I2, I2, I2)
    size = max(abs(float(g.evalf())) for g in gap)
    return Result(
        "adding PE breaks equivariance",
        size > 1e-6,
        f"swap tokens 1 and 2, W = I: max |Z(P E + PE) - P Z(E + PE)| = {size:.3f}",
    )


def _item_sound(item: bank.Item, defs: definitions.Definitions) -> Result:
    name = f"item {item.id} ({item.where_defined})"
    try:
        problem = _problem(item, defs)
    except Exception as exc:  # noqa: BLE001 - report a broken item, keep verifying the others
        problem = f"{type(exc).__name__}: {exc}"
    return Result(name, problem is None, problem or "")


def _problem(item: bank.Item, defs: definitions.Definitions) -> str | None:
    """What is wrong with the item, or None: its type derives the key, then the key must grade right."""
    kind = KINDS[item.type]
    if not kind.has_key:
        return kind.verify(item, defs)
    if item.key is None:
        return "no key"
    if "holds" in kind.fields and not item.holds:
        return "states no derivation ('holds'): its key would only be graded against itself"
    if "simplest" in kind.fields and bool(item.simplest) != ("simplest" in item.prompt.lower()):
        return "'simplest' must be set exactly when the prompt asks for the simplest form"
    return kind.verify(item, defs) or _grades_its_key(item)


def _grades_its_key(item: bank.Item) -> str | None:
    if check.check(item, check.key_text(item)).status != check.RIGHT:
        return "its own key is not graded right"
    for known in item.feedback:
        if not KINDS[item.type].per_student and check.check(item, known.answer).status != check.WRONG:
            return f"the known wrong answer {known.answer!r} is not graded wrong"
    return None


def required_ids(items: dict[str, bank.Item], defs: definitions.Definitions) -> Result:
    missing = [i for i in defs.required if i not in items]
    return Result("required ids", not missing, f"missing {missing}" if missing else f"{len(defs.required)} present")


PROOFS: tuple[Callable[[], Result], ...] = (
    softmax_commutes_with_permutations,
    self_attention_is_equivariant,
    permutations_are_orthogonal,
    pe_breaks_equivariance,
)


def verify(*, folder: Path | None = None) -> list[Result]:
    """Every proof and every item's derivation; the bank from ``folder`` (default: the active
    course's quiz/), its definitions and numbers from that folder alone."""
    with bank.using(folder or bank.default_folder()):
        items = bank.load()
        defs = definitions.load()
        results = [p() for p in PROOFS]
        results.append(required_ids(items, defs))
        return results + [_item_sound(item, defs) for item in items.values()]
