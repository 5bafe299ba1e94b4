"""``attnlab quiz verify``: sympy proves the facts the keys rest on, and every item is checked.

Each proof is exact (symbolic matrices, exact arithmetic); nothing here samples or rounds except
the numeric keys, which are compared with the notes' corrected values.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import sympy as sp

from . import bank, check
from .parse import parse


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


def shift_is_a_rotation(items: dict[str, bank.Item]) -> Result:
    """PE(pos+k) = M(k) PE(pos) for one pair, with M(k) the bank's key of ``shift-block``."""
    item = items["shift-block"]
    M = parse(str(item.key), check.namespace(item))
    pos, k, w = sp.symbols("pos k w", real=True)
    pe = lambda p: sp.Matrix([sp.sin(w * p), sp.cos(w * p)])  # noqa: E731 - one pair
    M = M.xreplace({s: {"k": k, "w": w}[s.name] for s in M.free_symbols})
    residual = (pe(pos + k) - M * pe(pos)).applyfunc(lambda e: sp.simplify(sp.expand_trig(e)))
    ok = residual == sp.zeros(2, 1)
    return Result("PE(pos+k) = M(k) PE(pos)", ok, "the shift-block key, symbolic pos, k, w")


def rope_is_relative(items: dict[str, bank.Item]) -> Result:
    """<R(m) q, R(n) k> depends on n - m only, and equals the bank's key of ``rope-relative``."""
    q1, q2, k1, k2, m, n, theta, r = sp.symbols("q1 q2 k1 k2 m n theta r", real=True)

    def R(t):
        return sp.Matrix([[sp.cos(t * theta), -sp.sin(t * theta)], [sp.sin(t * theta), sp.cos(t * theta)]])

    score = ((R(m) * sp.Matrix([q1, q2])).T * (R(n) * sp.Matrix([k1, k2])))[0]
    shifted = sp.simplify(sp.expand_trig(score.subs(n, m + r)))
    if shifted.has(m):
        return Result("RoPE: <R(m)q, R(n)k> depends on n - m only", False, str(shifted))
    item = items["rope-relative"]
    key = parse(str(item.key), check.namespace(item))
    key = key.xreplace({s: {"q1": q1, "q2": q2, "k1": k1, "k2": k2, "m": m, "n": n,
                            "theta": theta}[s.name] for s in key.free_symbols})
    ok = sp.simplify(sp.expand_trig(score - key)) == 0
    return Result("RoPE: <R(m)q, R(n)k> depends on n - m only", ok,
                  "and equals the rope-relative key" if ok else "the rope-relative key differs")


def pe_breaks_equivariance() -> Result:
    """A counterexample: with X = E + PE, permuting the tokens does not permute the output."""
    E = sp.Matrix([[1, 0], [0, 1], [1, 1]])
    PE = sp.Matrix([[0, 1], [sp.sin(1), sp.cos(1)], [sp.sin(2), sp.cos(2)]])
    I2 = sp.eye(2)
    P = permutation((1, 0, 2))
    gap = self_attention(P * E + PE, I2, I2, I2) - P * self_attention(E + PE, I2, I2, I2)
    size = max(abs(float(g.evalf())) for g in gap)
    return Result("adding PE breaks equivariance", size > 1e-6,
                  f"swap tokens 1 and 2, W = I: max |Z(P E + PE) - P Z(E + PE)| = {size:.3f}")


def bank_is_sound(items: dict[str, bank.Item]) -> list[Result]:
    """Required ids present; every key is read and right; every known wrong answer is wrong."""
    out = [Result("required ids", not (missing := [i for i in bank.REQUIRED_IDS if i not in items]),
                  f"missing {missing}" if missing else f"{len(bank.REQUIRED_IDS)} present")]
    for item in items.values():
        out.append(_item_sound(item))
    notes_score = check.numeric_key(items["score-12"])
    out.append(Result("score-12 = 21.97 for the notes' numbers", abs(notes_score - 21.97) < 1e-9,
                      f"{notes_score:.6f}"))
    notes_weight = check.numeric_key(items["weight-21"])
    out.append(Result("weight-21 rounds to 0.00028", round(notes_weight, 5) == 0.00028,
                      f"{notes_weight:.7f}"))
    return out


def _item_sound(item: bank.Item) -> Result:
    name = f"item {item.id}"
    try:
        if item.type == "free":
            return Result(name, bool(item.rubric), "has a rubric" if item.rubric else "no rubric")
        if item.type in ("choice", "order"):
            keys = item.key if isinstance(item.key, list) else [item.key]
            bad = [k for k in keys if k not in item.options]
            return Result(name, not bad, f"keys not among the options: {bad}" if bad else "")
        if check.check(item, check.key_text(item)).status != check.RIGHT:
            return Result(name, False, "its own key is not graded right")
        for known in item.feedback:
            if item.type != "numeric" and check.check(item, known.answer).status != check.WRONG:
                return Result(name, False, f"the known wrong answer {known.answer!r} is not wrong")
    except Exception as exc:  # report a broken item, keep verifying the others
        return Result(name, False, f"{type(exc).__name__}: {exc}")
    return Result(name, True)


PROOFS: tuple[Callable[[], Result], ...] = (
    softmax_commutes_with_permutations, self_attention_is_equivariant,
    permutations_are_orthogonal, pe_breaks_equivariance)


def verify(*, folder: Path | None = None) -> list[Result]:
    """Every proof and every item check; the bank from ``folder`` (default: the kit's quiz/)."""
    items = bank.load(folder)
    results = [p() for p in PROOFS]
    results += [shift_is_a_rotation(items), rope_is_relative(items)]
    return results + bank_is_sound(items)
