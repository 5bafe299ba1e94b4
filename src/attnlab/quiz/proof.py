"""Matrix identities of the permutation proof: non-commuting symbols, their definitions, softmax.

Answers are parsed with every matrix square and symbolic (so any product can be written down);
the true shapes only appear when a step is evaluated, which is where an undefined product is
reported. A step is decided by sympy's matrix-expression algebra when the definitions and
``P^T P = I`` settle it, and otherwise by evaluating both sides on random matrices with a random
permutation (row-wise softmax), which also covers ``softmax(P S P^T) = P softmax(S) P^T``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import sympy as sp
from sympy.matrices.expressions.matexpr import MatrixExpr

from .equivalence import Comparison
from .parse import Namespace, Softmax

n = sp.Symbol("n", integer=True, positive=True)
d_k = sp.Symbol("d_k", positive=True)
NAMES = ("P", "X", "W_Q", "W_K", "W_V", "Q", "K", "V", "S", "A", "Z")
M = {name: sp.MatrixSymbol(name, n, n) for name in NAMES}
IDENTITY = sp.Identity(n)

# The true shapes, with every dimension different so that a misplaced factor cannot hide.
SIZES = {"n": 4, "d": 3, "d_k": 2, "d_v": 5}
SHAPES = {"P": ("n", "n"), "X": ("n", "d"), "W_Q": ("d", "d_k"), "W_K": ("d", "d_k"),
          "W_V": ("d", "d_v"), "Q": ("n", "d_k"), "K": ("n", "d_k"), "V": ("n", "d_v"),
          "S": ("n", "n"), "A": ("n", "n"), "Z": ("n", "d_v")}
DEFINITIONS = {  # name -> (its definition, in the notes' words)
    "Q": (M["X"] * M["W_Q"], "Q = X W_Q"),
    "K": (M["X"] * M["W_K"], "K = X W_K"),
    "V": (M["X"] * M["W_V"], "V = X W_V"),
    "S": (M["Q"] * M["K"].T / sp.sqrt(d_k), "S = Q K^T / sqrt(d_k)"),
    "A": (Softmax(M["S"]), "A = softmax(S), row by row"),
    "Z": (M["A"] * M["V"], "Z = A V"),
}
WORLDS = 3


class StepError(ValueError):
    """A side of a step is not defined (mismatched shapes, an unknown construct)."""


def namespace() -> Namespace:
    """What a proof answer may name: the matrices, ``I``, ``d_k`` and ``softmax``."""
    return Namespace(scalars={"d_k": d_k}, matrices={**M, "I": IDENTITY}, softmax=True)


# ---- sympy's algebra -------------------------------------------------------------------------

def canonical(expr):
    """Definitions substituted (A stays atomic), products expanded, ``P^T P`` and ``P P^T`` removed."""
    expr = expr.xreplace({M["S"]: DEFINITIONS["S"][0], M["Z"]: DEFINITIONS["Z"][0]})
    expr = expr.xreplace({M[k]: DEFINITIONS[k][0] for k in ("Q", "K", "V")})
    s_def = canonical_plain(DEFINITIONS["S"][0].xreplace(
        {M[k]: DEFINITIONS[k][0] for k in ("Q", "K")}))
    expr = expr.replace(lambda e: isinstance(e, Softmax),
                        lambda e: M["A"] if canonical_plain(e.args[0]) == s_def else e)
    return canonical_plain(expr)


def canonical_plain(expr):
    expr = sp.expand(expr.doit())
    return expr.replace(lambda e: isinstance(e, sp.MatMul), _cancel_permutation).doit()


def _cancel_permutation(product: sp.MatMul):
    """Drop adjacent ``P^T P`` / ``P P^T`` pairs: a permutation matrix is orthogonal."""
    P, PT = M["P"], M["P"].T
    out: list = []
    for factor in product.args:
        if out and {out[-1], factor} == {P, PT} and out[-1] != factor:
            out.pop()
        else:
            out.append(factor)
    if not out:
        return IDENTITY
    return sp.MatMul(*out) if len(out) > 1 else out[0]


# ---- numbers ---------------------------------------------------------------------------------

def world(seed: int) -> dict[str, np.ndarray]:
    """Random X and weights, a permutation that moves every row, and Q…Z by their definitions."""
    rng = np.random.default_rng(seed)
    size = SIZES["n"]
    perm = np.roll(rng.permutation(size), 1)
    while np.any(perm == np.arange(size)):
        perm = rng.permutation(size)
    w = {"P": np.eye(size)[perm], "X": rng.normal(size=(size, SIZES["d"]))}
    for name in ("W_Q", "W_K", "W_V"):
        w[name] = rng.normal(size=tuple(SIZES[d] for d in SHAPES[name]))
    w["Q"], w["K"], w["V"] = w["X"] @ w["W_Q"], w["X"] @ w["W_K"], w["X"] @ w["W_V"]
    w["S"] = w["Q"] @ w["K"].T / np.sqrt(SIZES["d_k"])
    w["A"] = softmax_rows(w["S"])
    w["Z"] = w["A"] @ w["V"]
    return w


def softmax_rows(s: np.ndarray) -> np.ndarray:
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def evaluate(expr, w: dict[str, np.ndarray]):
    """The numeric value of a proof expression in world ``w``; :class:`StepError` if undefined."""
    if isinstance(expr, sp.MatrixSymbol):
        return w[expr.name]
    if isinstance(expr, sp.Identity):
        return np.eye(SIZES["n"])
    if isinstance(expr, sp.ZeroMatrix):
        return np.zeros((SIZES["n"], SIZES["n"]))
    if isinstance(expr, sp.Transpose):
        return evaluate(expr.arg, w).T
    if isinstance(expr, Softmax):
        inner = evaluate(expr.args[0], w)
        if np.ndim(inner) != 2:
            raise StepError("softmax applies to a matrix")
        return softmax_rows(inner)
    if isinstance(expr, sp.MatMul):
        return _multiply(expr.args, w)
    if isinstance(expr, sp.MatAdd):
        terms = [evaluate(t, w) for t in expr.args]
        shapes = {np.shape(t) for t in terms}
        if len(shapes) > 1:
            raise StepError(f"the sum adds matrices of different shapes ({_shape_list(expr.args)})")
        return sum(terms)
    if isinstance(expr, MatrixExpr):
        raise StepError(f"'{expr}' is not part of this proof")
    value = expr.xreplace({d_k: sp.Integer(SIZES["d_k"])})
    if not value.is_number:
        raise StepError(f"'{expr}' is not part of this proof")
    return float(value)


def _multiply(factors, w):
    out = None
    shown = None
    for factor in factors:
        value = evaluate(factor, w)
        if np.ndim(value) == 0:
            out = value if out is None else out * value
            continue
        if out is not None and np.ndim(out) == 2 and out.shape[1] != value.shape[0]:
            raise StepError(
                f"the product {_tex(shown)} {_tex(factor)} is not defined: {_tex(shown)} is "
                f"{_shape_name(out)} and {_tex(factor)} is {_shape_name(value)}")
        out = value if out is None else out @ value if np.ndim(out) == 2 else out * value
        shown = factor if shown is None else sp.MatMul(shown, factor)
    return out


_NAME_OF = {v: k for k, v in SIZES.items()}


def _shape_name(a: np.ndarray) -> str:
    return " x ".join(_NAME_OF.get(s, str(s)) for s in a.shape)


def _shape_list(terms) -> str:
    return ", ".join(_tex(t) for t in terms)


def _tex(expr) -> str:
    return str(expr).replace(".T", "^T")


# ---- verdicts --------------------------------------------------------------------------------

def compare(answer, key) -> Comparison:
    """Is ``answer`` equal to ``key`` under the definitions, for every permutation P?"""
    if canonical(answer) == canonical(key):
        return Comparison(True, "equal by matrix algebra and the definitions")
    try:
        values = [(evaluate(answer, w), evaluate(key, w)) for w in map(world, range(WORLDS))]
    except StepError as exc:
        return Comparison(False, str(exc))
    for got, want in values:
        if np.shape(got) != np.shape(want):
            return Comparison(False, f"the result should be {_shape_name(np.asarray(want))}, "
                                     f"not {_shape_name(np.asarray(got))}")
        if not np.allclose(got, want, rtol=1e-9, atol=1e-9):
            return Comparison(False, "differs on random matrices and permutations")
    return Comparison(True, "equal on random matrices and permutations")


def explain(wrong, right) -> str | None:
    """Why ``wrong`` is not ``right``, when it is a known slip: a reordered product."""
    target = sp.expand(wrong.doit())
    for product in sp.preorder_traversal(right):
        if not isinstance(product, sp.MatMul):
            continue
        coeff, factors = product.as_coeff_matrices()
        reordered = [factors[::-1]] + [
            factors[:i] + [factors[i + 1], factors[i]] + factors[i + 2:]
            for i in range(len(factors) - 1)]
        for order in reordered:
            candidate = sp.expand(right.xreplace({product: coeff * sp.MatMul(*order)}).doit())
            if candidate == target:
                if all(isinstance(f, sp.Transpose) for f in factors):
                    plain = sp.MatMul(*[f.arg for f in factors[::-1]])
                    return (f"transposing a product reverses its order: "
                            f"({_tex(plain)})^T = {_tex(product)}")
                return (f"matrix products do not commute: the order in {_tex(product)} matters "
                        "(P acts on rows from the left; P^T on columns from the right)")
    return None


def shortcuts(expr) -> list[str]:
    """The identities that would shorten ``expr``: a definition's product or ``P^T P`` written out."""
    found: list[str] = []
    for form in (expr, canonical_plain(expr)):  # P^T P cancelled may reveal a definition
        products = [e for e in sp.preorder_traversal(form) if isinstance(e, sp.MatMul)]
        adjacent = {pair for e in products
                    for factors in [[f for f in e.args if isinstance(f, MatrixExpr)]]
                    for pair in zip(factors, factors[1:])}
        if {(M["P"].T, M["P"]), (M["P"], M["P"].T)} & adjacent:
            found.append("P^T P = I")
        for definition, text in DEFINITIONS.values():
            factors = tuple(f for f in definition.args if isinstance(f, MatrixExpr))
            if (isinstance(definition, sp.MatMul) and len(factors) == 2 and factors in adjacent
                    or isinstance(definition, Softmax) and form.has(definition)):
                found.append(text)
    return list(dict.fromkeys(found))


@dataclass(frozen=True)
class StepVerdict:
    index: int  # 1-based position of the step's right-hand side in the chain
    ok: bool
    reason: str


def check_chain(steps: list, *, start, target) -> list[StepVerdict]:
    """Check ``start = steps[0] = steps[1] = …`` step by step, and that it ends at ``target``."""
    verdicts = []
    previous = start
    for index, step in enumerate(steps, 1):
        result = compare(step, previous)
        reason = result.how if result.equal else (explain(step, previous) or result.how)
        verdicts.append(StepVerdict(index, result.equal, reason))
        previous = step
    return verdicts
