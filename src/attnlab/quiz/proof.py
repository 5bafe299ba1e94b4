"""Matrix identities of the permutation proof: typed non-commuting symbols, their definitions, softmax.

Every matrix of the proof has its shape from the definitions (P is n x n, X is n x d, W_Q is
d x d_k, ...), with one symbolic size per dimension, so an answer whose product or sum does not fit
(``P*Q*P^T*P``, ``P^T*K^T``) cannot be read, exactly as it cannot be written on paper; ``I`` is the
n x n identity (``P^T P``). P is the permutation, orthogonal: ``P^T P = P P^T = I``. A step is
decided by sympy's matrix-expression algebra when the definitions and ``P^T P = I`` settle it, and
otherwise by evaluating both sides on random matrices with a random permutation (row-wise
softmax), which also covers ``softmax(P S P^T) = P softmax(S) P^T``.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

import mpmath
import numpy as np
import sympy as sp
from sympy.matrices.expressions.matexpr import MatrixExpr

from .definitions import Definitions
from .definitions import load as load_definitions
from .equivalence import Comparison
from .equivalence import value as number_value
from .parse import Namespace, Softmax, Unreadable, parse
from .steps import MAX_RULES, rules_between

# The proof's symbols, built from the active course's definitions by `bind` (again whenever they
# change: `--course`, or verify of another bank folder), never frozen at import.
_DEFS = Definitions(source=Path())
SCALARS: dict[str, sp.Symbol] = {}
NAMES: tuple[str, ...] = ()
DIMS: dict[str, sp.Symbol] = {}  # one size per named dimension, apart from a scalar of that name (d_k)
M: dict[str, sp.MatrixSymbol] = {}
PERMUTATION = ""
IDENTITY: Any = None
DEFINITIONS: dict[str, tuple[Any, str]] = {}  # name -> (its definition, in the notes' words), in order
FOLDS: dict[tuple, sp.MatrixSymbol] = {}
RULES_TEXT = ""


def bind() -> None:
    """Build the proof's symbols from the active definitions, unless they are built from them already."""
    global _DEFS, SCALARS, NAMES, DIMS, M, PERMUTATION, IDENTITY, DEFINITIONS, FOLDS, RULES_TEXT
    defs = load_definitions()
    if defs is _DEFS:
        return
    SCALARS = {name: sp.Symbol(name, positive=True) for name in defs.matrix_scalars}
    NAMES = tuple(defs.shapes)
    DIMS = {d: sp.Symbol(f"dim_{d}", integer=True, positive=True) for shape in defs.shapes.values() for d in shape}
    M = {name: sp.MatrixSymbol(name, *(DIMS[d] for d in shape)) for name, shape in defs.shapes.items()}
    PERMUTATION = defs.permutation
    IDENTITY = sp.Identity(M[PERMUTATION].rows)
    ns = Namespace(scalars=dict(SCALARS), matrices={**M, "I": IDENTITY}, softmax=True)
    DEFINITIONS = {name: (parse(text, ns), f"{name} = {text.replace('*', ' ')}") for name, text in defs.define.items()}
    FOLDS = _folds()
    p = PERMUTATION
    RULES_TEXT = f"{p}^T {p} = I, a definition, softmax({p} M {p}^T) = {p} softmax(M) {p}^T"
    _DEFS = defs


# Each world draws its own sizes, all different, so that a misplaced factor cannot hide; a scalar
# such as d_k is drawn apart from the width of the same name (the identities hold for any value
# > 0), over small, medium and large ranges in turn.
SCALES = ((0.5, 3.0), (3.0, 100.0), (100.0, 10_000.0))
MAX_PROOF_DIGITS = 10**6  # a written constant with more digits than this could hide in round-off
MAX_PROOF_SCALAR = 10**8  # a scalar part beyond this (or below its inverse) in some world, likewise
RTOL = 1e-10  # far above float64 round-off for these sizes, far below any scalar part allowed
MAX_EXPANDED_TERMS = 256  # beyond this, expanding products of sums is left to the numbers
WORLDS = 4


def namespace() -> Namespace:
    """What a proof answer may name: the matrices, ``I``, the scalars and ``softmax``."""
    bind()
    return Namespace(scalars=dict(SCALARS), matrices={**M, "I": IDENTITY}, softmax=True)


class StepError(ValueError):
    """A side of a step is not defined (mismatched shapes, an unknown construct)."""


# ---- sympy's algebra -------------------------------------------------------------------------


def _plain_definitions() -> dict:
    return {M[k]: d for k, (d, _) in DEFINITIONS.items() if not isinstance(d, Softmax)}


def _substituted(expr):
    """Every definition that is not a softmax written out, until nothing changes."""
    plain = _plain_definitions()
    for _ in range(len(plain) + 1):
        new = expr.xreplace(plain)
        if new == expr:
            break
        expr = new
    return expr


def canonical(expr):
    """Definitions substituted (softmax results such as A stay atomic), products expanded,
    ``P^T P`` and ``P P^T`` removed."""
    expr = _substituted(expr)
    for name, (definition, _) in DEFINITIONS.items():
        if isinstance(definition, Softmax):
            inner = canonical_plain(_substituted(definition.args[0]))
            expr = expr.replace(
                lambda e: isinstance(e, Softmax),
                lambda e, inner=inner, name=name: M[name] if canonical_plain(e.args[0]) == inner else e,
            )
    return canonical_plain(expr)


def canonical_plain(expr):
    expr = sp.expand(expr.doit(), multinomial=False)
    return expr.replace(lambda e: isinstance(e, sp.MatMul), _cancel_permutation).doit()


def _factors(product: sp.MatMul) -> list:
    """The product's factors with whole powers written out (``P**2`` as ``P, P``)."""
    out: list = []
    for factor in product.args:
        if isinstance(factor, sp.MatPow) and factor.exp.is_Integer and factor.exp > 0:
            out += [factor.base] * int(factor.exp)
        else:
            out.append(factor)
    return out


def _cancel_permutation(product: sp.MatMul):
    """Drop adjacent ``P^T P`` / ``P P^T`` pairs: a permutation matrix is orthogonal."""
    P, PT = M[PERMUTATION], M[PERMUTATION].T
    out: list = []
    for factor in _factors(product):
        if out and {out[-1], factor} == {P, PT} and out[-1] != factor:
            out.pop()
        else:
            out.append(factor)
    if not out:
        return IDENTITY
    return sp.MatMul(*out) if len(out) > 1 else out[0]


# ---- numbers ---------------------------------------------------------------------------------


def world(seed: int) -> dict:
    """Random sizes, inputs and a permutation that moves every row; the defined matrices computed
    from their definitions; each scalar drawn at its own scale. Scalars sit under "scalars"."""
    bind()
    rng = np.random.default_rng(seed)
    dims = sorted({d for shape in _DEFS.shapes.values() for d in shape})
    drawn = rng.choice(np.arange(3, 3 + 2 * len(dims)), size=len(dims), replace=False)
    sizes = {name: int(v) for name, v in zip(dims, drawn)}
    low, high = SCALES[seed % len(SCALES)]
    w: dict = {"sizes": sizes, "scalars": {name: float(rng.uniform(low, high)) for name in SCALARS}}
    for name, shape in _DEFS.shapes.items():
        if name in DEFINITIONS:
            continue
        rows, cols = (sizes[d] for d in shape)
        if name == PERMUTATION:
            perm = rng.permutation(rows)
            while np.any(perm == np.arange(rows)):
                perm = rng.permutation(rows)
            w[name] = np.eye(rows)[perm]
        else:
            w[name] = rng.normal(size=(rows, cols))
    for name, (definition, _) in DEFINITIONS.items():
        w[name] = evaluate(definition, w)
    return w


def softmax_rows(s: np.ndarray) -> np.ndarray:
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def evaluate(expr, w: dict[str, Any]):
    """The numeric value of a proof expression in world ``w``; :class:`StepError` if undefined."""
    side = w[PERMUTATION].shape[0]  # I (and 0) are as large as the permutation
    if isinstance(expr, sp.MatrixSymbol):
        if expr.name not in w:
            raise StepError(f"'{expr.name}' is not part of this proof")
        return w[expr.name]
    if isinstance(expr, sp.Identity):
        return np.eye(side)
    if isinstance(expr, sp.ZeroMatrix):
        return np.zeros((side, side))
    if isinstance(expr, sp.MatPow):
        return _multiply(_factors(sp.MatMul(expr, evaluate=False)), w)
    if isinstance(expr, sp.Transpose):
        return evaluate(expr.arg, w).T
    if isinstance(expr, Softmax):
        inner = evaluate(expr.args[0], w)
        if np.ndim(inner) != 2:
            raise StepError("softmax applies to a matrix")
        return softmax_rows(inner)
    if isinstance(expr, sp.MatMul):
        return _multiply(_factors(expr), w)
    if isinstance(expr, sp.MatAdd):
        terms = [evaluate(t, w) for t in expr.args]
        shapes = {np.shape(t) for t in terms}
        if len(shapes) > 1:
            raise StepError(
                "the sum adds matrices of different shapes ("
                + ", ".join(f"{_tex(t)} is {_shape_name(np.asarray(v), w)}" for t, v in zip(expr.args, terms))
                + ")"
            )
        return sum(terms)
    if isinstance(expr, MatrixExpr):
        raise StepError(f"'{_tex(expr)}' is not part of this proof")
    value = expr.xreplace({SCALARS[k]: sp.Float(v, 30) for k, v in w["scalars"].items()})
    if not value.is_number:
        raise StepError("a symbol in it is not part of this proof")
    with mpmath.workdps(30):
        number = number_value(value, {})
    if number is None or mpmath.im(number) != 0:
        raise StepError("a number in it has no finite real value")
    return float(number)


def _multiply(factors, w):
    out = None
    shown: list = []
    for factor in factors:
        value = evaluate(factor, w)
        if np.ndim(value) == 0:
            out = value if out is None else out * value
            continue
        if out is not None and np.ndim(out) == 2 and out.shape[1] != value.shape[0]:
            left = " ".join(_tex(f) for f in shown)
            raise StepError(
                f"the product {left} {_tex(factor)} is not defined: {left} is "
                f"{_shape_name(out, w)} and {_tex(factor)} is {_shape_name(value, w)}"
            )
        out = value if out is None else out @ value if np.ndim(out) == 2 else out * value
        shown.append(factor)
    return out


def _shape_name(a: np.ndarray, w: dict) -> str:
    names = {size: name for name, size in w["sizes"].items()}
    return " x ".join(names.get(s, str(s)) for s in a.shape)


def _tex(expr) -> str:
    """A factor as the notes write it (``K^T``); products of named factors separated by spaces."""
    if isinstance(expr, sp.MatMul):
        return " ".join(_tex(f) for f in _factors(expr))
    if isinstance(expr, sp.Transpose) and isinstance(expr.arg, sp.MatrixSymbol):
        return f"{expr.arg.name}^T"
    if isinstance(expr, sp.MatrixSymbol):
        return expr.name
    return str(expr).replace(".T", "^T")


# ---- verdicts --------------------------------------------------------------------------------


def expandable(expr) -> bool:
    """Whether expanding ``expr`` (definitions written out) stays small: a bound, counted not timed."""
    return _terms(_substituted(expr)) <= MAX_EXPANDED_TERMS


def _terms(expr) -> int:
    if isinstance(expr, (sp.MatAdd, sp.Add)):
        return sum(_terms(a) for a in expr.args)
    if isinstance(expr, (sp.MatMul, sp.Mul)):
        out = 1
        for a in expr.args:
            out *= _terms(a)
            if out > MAX_EXPANDED_TERMS:
                return out
        return out
    if isinstance(expr, (sp.Transpose, Softmax)):
        return _terms(expr.args[0])
    if isinstance(expr, sp.MatPow):
        return _terms(expr.base) ** min(int(expr.exp), 16) if expr.exp.is_Integer else 1
    return 1


def compare(answer, key, *, seed: int = 0) -> Comparison:
    """Is ``answer`` equal to ``key`` under the definitions, for every permutation and every scalar?"""
    bind()
    if expandable(answer) and expandable(key) and canonical(answer) == canonical(key):
        return Comparison(True, "equal by matrix algebra and the definitions")
    worlds = [world(seed * WORLDS + k) for k in range(WORLDS)]
    if _hides_in_round_off(answer, worlds):
        return Comparison(
            False,
            "it is not exactly the expected expression, and a number in it is "
            "too large or too small to compare by value",
        )
    try:
        values = [(evaluate(answer, w), evaluate(key, w), w) for w in worlds]
    except StepError as exc:
        return Comparison(False, str(exc))
    for got, want, w in values:
        if np.shape(got) != np.shape(want):
            return Comparison(
                False, f"the result should be {_shape_name(np.asarray(want), w)}, not {_shape_name(np.asarray(got), w)}"
            )
        if not np.all(np.isfinite(got)) or not np.allclose(got, want, rtol=RTOL, atol=RTOL * _scale(want)):
            return Comparison(False, "differs on random matrices and permutations")
    return Comparison(True, "equal on random matrices and permutations")


def _scale(a) -> float:
    return max(1.0, float(np.max(np.abs(a)))) if np.size(a) else 1.0


def _hides_in_round_off(expr, worlds: list[dict]) -> bool:
    """A scalar part (a constant, or a function of d_k in some world) so large or small that
    round-off could hide a term it multiplies: 1 + 10**-12, (d_k + 1000)**-20."""
    scalars = set(SCALARS.values())
    for part in sp.preorder_traversal(expr):
        if not isinstance(part, sp.Expr) or isinstance(part, MatrixExpr) or not part.free_symbols <= scalars:
            continue
        if part.is_Rational and max(abs(part.p), abs(part.q)) > MAX_PROOF_DIGITS:
            return True  # 1 + 10**-12 is as dangerous as 10**-12
        for w in worlds if part.free_symbols else worlds[:1]:
            point = {SCALARS[k]: Fraction(v) for k, v in w["scalars"].items()}
            with mpmath.workdps(30):
                size = number_value(part, point)
            if size is None and not part.has(sp.zoo, sp.nan):
                raise Unreadable("a number in it is too large to evaluate")
            if size is None or (size != 0 and not 1 / MAX_PROOF_SCALAR <= abs(size) <= MAX_PROOF_SCALAR):
                return True
    return False


def explain(wrong, right) -> str | None:
    """Why ``wrong`` is not ``right``, when it is a known slip: a reordered product."""
    if not (expandable(wrong) and expandable(right)):
        return None
    target = sp.expand(wrong.doit(), multinomial=False)
    for product in sp.preorder_traversal(right):
        if not isinstance(product, sp.MatMul):
            continue
        coeff, factors = product.as_coeff_matrices()
        reordered = [factors[::-1]] + [
            factors[:i] + [factors[i + 1], factors[i]] + factors[i + 2 :] for i in range(len(factors) - 1)
        ]
        for order in reordered:
            candidate = sp.expand(right.xreplace({product: coeff * sp.MatMul(*order)}).doit(), multinomial=False)
            if candidate == target:
                if all(isinstance(f, sp.Transpose) for f in factors):
                    plain = sp.MatMul(*[f.arg for f in factors[::-1]])
                    return f"transposing a product reverses its order: ({_tex(plain)})^T = {_tex(product)}"
                return (
                    f"matrix products do not commute: the order in {_tex(product)} matters "
                    "(P acts on rows from the left; P^T on columns from the right)"
                )
    return None


def shortcuts(expr) -> list[str]:
    """The identities that would shorten ``expr``: a definition's product or ``P^T P`` written out."""
    found: list[str] = []
    for form in (
        (expr, canonical_plain(expr)) if expandable(expr) else (expr,)
    ):  # P^T P cancelled may reveal a definition
        products = [e for e in sp.preorder_traversal(form) if isinstance(e, sp.MatMul)]
        adjacent = {
            pair
            for e in products
            for factors in [[f for f in e.args if isinstance(f, MatrixExpr)]]
            for pair in zip(factors, factors[1:])
        }
        P = M[PERMUTATION]
        if {(P.T, P), (P, P.T)} & adjacent:
            found.append(f"{PERMUTATION}^T {PERMUTATION} = I")
        for definition, text in DEFINITIONS.values():
            factors = tuple(f for f in definition.args if isinstance(f, MatrixExpr))
            if (
                isinstance(definition, sp.MatMul)
                and len(factors) == 2
                and factors in adjacent
                or isinstance(definition, Softmax)
                and form.has(definition)
            ):
                found.append(text)
    return list(dict.fromkeys(found))


@dataclass(frozen=True)
class StepVerdict:
    index: int  # 1-based position of the step's right-hand side in the chain
    ok: bool
    reason: str


def _folds() -> dict[tuple, sp.MatrixSymbol]:
    """What folds back into a defined name: a product of two factors (``A V`` is ``Z``) or a
    softmax (``softmax(S)`` is ``A``); a definition with a scalar factor (S) is not folded."""
    out: dict[tuple, sp.MatrixSymbol] = {}
    for name, (definition, _) in DEFINITIONS.items():
        if isinstance(definition, Softmax):
            out[(definition,)] = M[name]
        elif isinstance(definition, sp.MatMul):
            coeff, factors = definition.as_coeff_matrices()
            if coeff == 1 and len(factors) == 2:
                out[tuple(factors)] = M[name]
    return out


def check_chain(steps: list, *, start, seed: int = 0, writes_identity: tuple[bool, ...] = ()) -> list[StepVerdict]:
    """Check ``start = steps[0] = steps[1] = …`` step by step: each step equal to the one before
    and reached from it by at most ``steps.MAX_RULES`` stated rules; ``writes_identity`` says which
    steps write an I out (sympy drops it as it reads them)."""
    bind()
    verdicts = []
    previous = start
    for index, step in enumerate(steps, 1):
        result = compare(step, previous, seed=seed + index)
        reason = result.how if result.equal else (explain(step, previous) or result.how)
        ok = result.equal
        if ok:
            rules = rules_between(
                previous,
                step,
                permutation=M[PERMUTATION],
                identity=IDENTITY,
                folds=FOLDS,
                writes_identity=index <= len(writes_identity) and writes_identity[index - 1],
            )
            if rules is not None and rules > MAX_RULES:
                ok, reason = (
                    False,
                    (
                        f"it is equal, but it is more than {MAX_RULES} rules away from the step before; "
                        f"write the steps in between, one or two rules each ({RULES_TEXT})"
                    ),
                )
        verdicts.append(StepVerdict(index, ok, reason))
        previous = step
    return verdicts
