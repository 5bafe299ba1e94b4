"""How many stated rules one step of a proof chain applies, and what an answer writes out.

A chain is right only when each step follows from the one before by at most ``MAX_RULES`` of
these rules (regrouping a product is free):

- ``P^T P = I`` or ``P P^T = I``: a pair of P and its transpose side by side becomes ``I``;
- ``M I = M``: an identity goes away (so cancelling a pair and dropping its I are two rules, as
  the prompt lists them);
- a definition folded back into its name: ``X W_Q`` is ``Q``, ``A V`` is ``Z``, ``softmax(S)`` is
  ``A``;
- ``softmax(P M P^T) = P softmax(M) P^T`` (a row-wise softmax commutes with permuting rows and
  columns).

The count is the fewest rules that take both sides to one common form, each side only by applying
the rules above (never by writing a definition out, which is the same rule read backwards). So
``P A (P^T P) V = P A V`` is two rules, while ``P A P^T P V = P Z`` takes three (the pair, its I,
the fold of ``A V``): a leap, refused.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Iterator

import sympy as sp

from .parse import Namespace, Softmax, rewrite

MAX_RULES = 2  # per step: enough for "fold softmax(S) into A" beside the rule that exposed it


State = tuple[sp.Expr, tuple]  # a product: its scalar coefficient and its matrix factors


def _state(expr) -> State | None:
    """``expr`` as a coefficient and a tuple of factors; None for a sum (not counted)."""
    if isinstance(expr, sp.MatMul):
        coeff, factors = expr.as_coeff_matrices()
        return coeff, tuple(factors)
    if isinstance(expr, (sp.MatAdd, sp.Add)):
        return None
    return sp.Integer(1), (expr,)


def _factors(expr) -> tuple:
    state = _state(expr)
    return state[1] if state else (expr,)


def _reductions(state: State, *, permutation, identity, folds: dict, vanish: int) -> Iterator[tuple[State, int]]:
    """Every form one rule takes ``state`` to, with the rules it costs (1; ``vanish`` for a pair
    that goes away with its I)."""
    for reduced in _one_rule(state, permutation=permutation, identity=identity, folds=folds):
        yield reduced, 1
    coeff, fs = state
    p, pt = permutation, permutation.T
    for k in range(len(fs) - 1):
        if {fs[k], fs[k + 1]} == {p, pt}:
            yield (coeff, fs[:k] + fs[k + 2 :] if len(fs) > 2 else (identity,)), vanish


def _one_rule(state: State, *, permutation, identity, folds: dict) -> Iterator[State]:
    coeff, fs = state
    p, pt = permutation, permutation.T
    for k, factor in enumerate(fs):
        if factor == identity and len(fs) > 1:
            yield coeff, fs[:k] + fs[k + 1 :]
        if k + 1 < len(fs) and {factor, fs[k + 1]} == {p, pt}:
            # P^T P becomes I; dropping that I is a second rule, as the prompt lists them
            yield coeff, fs[:k] + (identity,) + fs[k + 2 :]
        if fs[k : k + 2] in folds:
            yield coeff, fs[:k] + (folds[fs[k : k + 2]],) + fs[k + 2 :]
        if isinstance(factor, Softmax):
            if (factor,) in folds:
                yield coeff, fs[:k] + (folds[(factor,)],) + fs[k + 1 :]
            inner = _factors(factor.args[0])
            if len(inner) >= 3 and inner[0] == p and inner[-1] == pt:
                middle = sp.MatMul(*inner[1:-1]).doit() if len(inner) > 3 else inner[1]
                yield coeff, fs[:k] + (p, Softmax(middle), pt) + fs[k + 1 :]


def _reachable(expr, limit: int, **rules) -> dict[State, int]:
    """Each form within ``limit`` rules of ``expr``, with the fewest rules that reach it."""
    start = _state(expr)
    if start is None:
        return {}
    seen = {start: 0}
    frontier = [start]
    while frontier:
        nxt = []
        for state in frontier:
            for reduced, cost in _reductions(state, **rules):
                depth = seen[state] + cost
                if depth <= limit and depth < seen.get(reduced, limit + 1):
                    seen[reduced] = depth
                    nxt.append(reduced)
        frontier = nxt
    return seen


def rules_between(
    a, b, *, permutation, identity, folds: dict, limit: int = MAX_RULES, writes_identity: bool = False
) -> int | None:
    """The fewest rules joining ``a`` and ``b`` when at most ``limit``; ``limit + 1`` when more;
    None when a side is a sum (then only equality is checked).

    sympy drops an I as it reads a product, so a pair that goes away costs two rules (the pair
    becomes I, the I is dropped), or one when ``writes_identity``: the step wrote that I out."""
    if _state(a) is None or _state(b) is None:
        return None
    rules = {"permutation": permutation, "identity": identity, "folds": folds, "vanish": 1 if writes_identity else 2}
    left, right = _reachable(a, limit, **rules), _reachable(b, limit, **rules)
    joins = [left[s] + right[s] for s in left.keys() & right.keys()]
    best = min(joins, default=limit + 1)
    return best if best <= limit else limit + 1


@dataclass(frozen=True)
class Written:
    """What an answer writes out, before sympy tidies it (``I P Z`` becomes ``P Z``)."""

    factors: int  # matrix names written, I included
    transposes: int
    transposed_product: bool  # a product holding the permutation transposed as a whole: (P K)^T
    scalars: int = 0  # scalar names and numbers written (d_k/d_k is 1 to sympy, two names to a reader)
    calls: frozenset[str] = frozenset()  # functions written (0*softmax(S) is 0 to sympy, softmax to a reader)

    @property
    def size(self) -> int:
        return self.factors + self.transposes + self.scalars


def written(text: str, ns: Namespace, *, permutation: str = "P") -> Written:
    """Count what ``text`` (already readable by :func:`parse.parse`) writes out."""
    tree = ast.parse(rewrite(text, (), ns.known()).text.strip(), mode="eval")
    factors = transposes = scalars = 0
    transposed_product = False
    calls = frozenset(n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name))
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in ns.matrices:
            factors += 1
        elif isinstance(node, ast.Constant) or isinstance(node, ast.Name) and node.id in ns.scalars:
            scalars += 1
        if isinstance(node, ast.Attribute) and node.attr == "T":
            transposes += 1
            transposed_product |= isinstance(node.value, ast.BinOp) and any(
                isinstance(n, ast.Name) and n.id == permutation for n in ast.walk(node.value)
            )
    return Written(factors, transposes, transposed_product, scalars, calls)
