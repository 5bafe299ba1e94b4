"""Are two scalar expressions or explicit matrices equal on the symbols' domains?

A proof first, numbers second, nothing timed by the wall clock (so a verdict is the same on every
run and machine, loaded or not):

1. the difference is 0 as sympy builds it: equal; a constant: equal if proved 0, different if shown
   nonzero (``constants``; numbers are read exactly, so an offset of 1e-400 is an offset), and
   "needs a human" if neither;
2. the difference is a rational function (a polynomial, say): evaluated exactly at integer points
   (a nonzero one is nonzero at almost every point, and these are drawn fresh per answer);
3. sympy simplifies the difference with the symbols' domains as assumptions (d_model even and
   positive, i an integer >= 0, ...), within a CPU-time budget: 0 proves the two equal, a nonzero
   constant proves them different;
4. both sides are evaluated at 50 significant digits at points drawn from each symbol's whole
   domain (small, medium and large values, so d_model takes many values, never only 2), seeded by
   the texts compared. A point where the answer has no finite value but the expected expression has
   one is a disagreement, so an answer that overflows on most of the domain is wrong. Unless step 3
   proved them equal, they differ where they differ by more than 1e-30 of their size; where they
   agree that closely, their difference is evaluated again at 80 digits: round-off changes with the
   precision, a real difference (a term such as exp(pos - 1000) or (d_model + 1000)**-20, however
   small) does not. A constant beyond 25 digits cannot be trusted to sampling, so such an answer
   must match exactly;
5. where sampling found them equal but the difference holds a non-analytic piece (Abs, or a
   sqrt, log or power whose argument may change sign), every region those pieces cut the domain
   into is decided (``branches``: a threshold such as x - 10^4 + sqrt((x - 10^4)^2) is crossed
   however large it is); what that cannot settle needs a human;
6. equal by 3, 4 or 5, the answer as written must also have a value wherever the expected
   expression has one: the zeros of what it divides by (tan(k w) cos(k w) at cos(k w) = 0, a set
   that sampling never meets) are solved for and tried exactly (``poles``).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from fractions import Fraction

import mpmath
import sympy as sp

from . import branches, poles
from .constants import constant_is_zero
from .deadline import OutOfTime, cap
from .domains import edge_points, sample, seed_of

POINTS = 24
QUICK_POINTS = 8  # for matching known wrong answers
MIN_AGREEING = 6
DIGITS = 50
CHECK_DIGITS = 80  # a difference that stays put at this precision is real, not round-off
RTOL = mpmath.mpf(10) ** -30
MAX_CONSTANT_DIGITS = 25
MAX_POLY_DEGREE = 400
MAX_EXP_ARGUMENT = 10**6  # exp beyond this is not a number anyone means
MAX_TRIG_ARGUMENT = 10**15  # mpmath reduces sin's argument exactly; beyond this nobody means one
MAX_PROOF_OPS = 60  # sympy's simplify is tried on differences with at most this many operations
PROOF_CPU_SECONDS = 0.3  # its CPU budget; when it runs out, sampling decides alone

_FUNCS = {
    sp.Abs: abs,
    sp.sign: mpmath.sign,
    sp.sin: mpmath.sin,
    sp.cos: mpmath.cos,
    sp.tan: mpmath.tan,
    sp.exp: mpmath.exp,
    sp.log: mpmath.log,
}
# the functions whose argument is bounded: exp beyond MAX_EXP_ARGUMENT is a number nobody means, and
# so is the angle of a sin, cos or tan beyond MAX_TRIG_ARGUMENT. log, abs and sign take any argument:
# their value is never larger than it (log(10^8) and log(10000^d_model) are ordinary numbers)
_MAX_ARGUMENT = {
    sp.exp: MAX_EXP_ARGUMENT,
    sp.sin: MAX_TRIG_ARGUMENT,
    sp.cos: MAX_TRIG_ARGUMENT,
    sp.tan: MAX_TRIG_ARGUMENT,
}


@dataclass(frozen=True)
class Comparison:
    equal: bool
    how: str  # which stage decided, or why they differ
    evaluable: bool = True  # False when the answer has no value anywhere (too large or undefined)


def compare(a, b, *, domains: dict[str, str], thorough: bool = True, seed: int | None = None) -> Comparison:
    """Compare two scalars or two explicit matrices; ``domains`` maps symbol names to domains.

    ``seed`` fixes the sample points (default: the two expressions); ``thorough=False`` uses fewer
    points, enough to match known wrong answers.
    """
    a_mat, b_mat = isinstance(a, sp.MatrixBase), isinstance(b, sp.MatrixBase)
    if a_mat != b_mat:
        return Comparison(False, "a matrix was expected" if b_mat else "a single expression was expected")
    if seed is None:
        seed = seed_of(*sorted([sp.srepr(a), sp.srepr(b)]))
    if a_mat:
        if a.shape != b.shape:
            return Comparison(False, f"the matrix should be {b.shape[0]}x{b.shape[1]}, not {a.shape[0]}x{a.shape[1]}")
        for idx, (x, y) in enumerate(zip(a, b)):
            entry = compare(x, y, domains=domains, thorough=thorough, seed=seed + idx)
            if not entry.equal:
                row, col = divmod(idx, a.shape[1])
                return Comparison(False, f"entry ({row + 1}, {col + 1}) differs: {entry.how}", entry.evaluable)
        return Comparison(True, "every entry agrees")
    return _compare_scalars(a, b, domains, POINTS if thorough else QUICK_POINTS, seed)


def _compare_scalars(a: sp.Expr, b: sp.Expr, domains: dict[str, str], points: int, seed: int) -> Comparison:
    difference = a - b
    if difference == 0:
        return Comparison(True, "identical")
    if not difference.free_symbols:
        return _constant_verdict(difference)
    exact = _rational_verdict(difference, list(difference.free_symbols), seed)
    if exact is not None:
        return exact
    beyond = _beyond_sampling(a) or _beyond_sampling(b)
    if beyond == "huge":
        return Comparison(False, "holds a number too large to evaluate", evaluable=False)
    proved = _proved(difference) if points == POINTS else None
    if proved is False:
        return Comparison(False, "it differs from the expected expression by a constant")
    if beyond and not proved:
        return Comparison(
            False,
            "it is not exactly the expected expression, and it holds a constant "
            "too large or too small to compare by value",
        )
    # both sides' symbols, not only the difference's: one that cancels (c in s*cos(|k| w) + c*sin(k w)
    # against s*cos(k w) + c*sin(k w)) still needs a value to evaluate either side
    symbols = {s: domains.get(s.name, "real") for s in a.free_symbols | b.free_symbols}
    agreeing = 0
    with mpmath.workdps(DIGITS):
        for point in [*edge_points(symbols, seed=seed), *sample(symbols, points, seed=seed)]:
            x, y = value(a, point), value(b, point)
            if y is None:
                continue  # the expected expression has no value here: nothing to compare
            if x is None:
                return Comparison(False, "it has no finite value for some allowed values of its symbols")
            if not proved and (not close(x, y) or _real_difference(difference, point)):
                return Comparison(False, "differs at sampled values")
            agreeing += 1
    if not proved and agreeing < min(MIN_AGREEING, points // 2):
        return Comparison(False, "it is undefined for some allowed values of its symbols")
    if points == POINTS:
        if not proved:
            regions = branches.decide(
                difference, symbols=symbols, seed=seed, differs=lambda point: _differs(a, b, difference, point)
            )
            if regions is False:
                return Comparison(False, "differs at sampled values")
            if regions is None:
                raise OutOfTime("cannot decide whether it agrees on every region of its symbols' values")
        # equal as sympy simplifies them, or wherever both have values: not where the answer has none
        missing = poles.hole(a, b, symbols=symbols, seed=seed)
        if missing:
            return Comparison(False, f"it has no value at {missing}, where the expected expression has one")
    if proved:
        return Comparison(True, "equal by simplification on the symbols' domains")
    return Comparison(True, f"agrees at {agreeing} sampled points")


def _differs(a: sp.Expr, b: sp.Expr, difference: sp.Expr, point: dict) -> bool | None:
    """Do ``a`` and ``b`` differ at ``point``? None where ``b`` has no value."""
    with mpmath.workdps(DIGITS):
        x, y = value(a, point), value(b, point)
        if y is None:
            return None
        return x is None or not close(x, y) or _real_difference(difference, point)


def _proved(difference: sp.Expr) -> bool | None:
    """True when sympy simplifies ``difference`` to 0 under the symbols' assumptions, False when to
    a nonzero constant, None when it cannot tell (too large, not finished in its CPU budget)."""
    if sp.count_ops(difference) > MAX_PROOF_OPS:
        return None
    try:
        with cap(PROOF_CPU_SECONDS):
            simplified = sp.simplify(difference)
    except OutOfTime:
        return None
    if simplified == 0:
        return True
    if simplified.is_number and simplified.is_finite:
        return constant_is_zero(simplified)
    return None


def _constant_verdict(difference: sp.Expr) -> Comparison:
    zero = constant_is_zero(difference)
    if zero is None:
        # neither shown nonzero nor proved 0: a human decides, never a tolerance
        raise OutOfTime("cannot decide whether a constant is 0")
    if zero:
        return Comparison(True, "the difference is a constant proved to be 0")
    return Comparison(False, "it differs from the expected expression by a constant")


def _real_difference(difference: sp.Expr, point: dict) -> bool:
    """Is a - b, evaluated as one expression, a real value rather than round-off? Evaluated at
    DIGITS and again at CHECK_DIGITS, round-off moves; a true value stays within a millionth."""
    rough = value(difference, point)
    with mpmath.workdps(CHECK_DIGITS):
        fine = value(difference, point)
    if rough is None or fine is None or fine == 0:
        return False
    return abs(rough - fine) <= abs(fine) * mpmath.mpf(10) ** -6


def close(x, y) -> bool:
    """Equal within 1e-30 of their size: no term a student means is that small."""
    return abs(x - y) <= RTOL * max(1, abs(x), abs(y))


# ---- exact stage -----------------------------------------------------------------------------


def _degree(expr: sp.Basic) -> int:
    """An upper bound on the polynomial degree of ``expr`` (structural, cheap)."""
    if expr.is_Symbol:
        return 1
    if expr.is_Add:
        return max(_degree(t) for t in expr.args)
    if expr.is_Mul:
        return sum(_degree(t) for t in expr.args)
    if expr.is_Pow and expr.exp.is_Integer:
        return abs(int(expr.exp)) * _degree(expr.base)
    return 0 if not expr.free_symbols else MAX_POLY_DEGREE + 1


def _rational_verdict(difference: sp.Expr, symbols: list[sp.Symbol], seed: int) -> Comparison | None:
    """For a difference that is a rational function of the symbols: exact values at integer points
    decide (a pole is skipped); None when it is not one, or has irrational coefficients."""
    if not difference.is_rational_function(*symbols) or _degree(difference) > MAX_POLY_DEGREE:
        return None
    rng = random.Random(seed ^ 0x5EED)
    zeros = 0
    for _ in range(8):
        point = {s: sp.Integer(rng.randint(-(10**6), 10**6)) for s in symbols}
        got = difference.xreplace(point)
        if got.has(sp.zoo, sp.nan):
            continue  # a pole
        if not got.is_Rational:
            return None  # coefficients such as pi or sqrt(2): leave it to sampling
        if got != 0:
            return Comparison(False, "differs at sampled values")
        zeros += 1
        if zeros == 3:
            return Comparison(True, "equal as rational functions")
    return None


def _beyond_sampling(expr: sp.Basic) -> str:
    """ "huge" when ``expr`` holds a number too large to evaluate at all; "precise" when it holds a
    constant that 50-digit sampling cannot be trusted with; "" otherwise."""
    for part in sp.preorder_traversal(expr):
        if part.is_Rational and max(abs(part.p), abs(part.q)) >= 10**MAX_CONSTANT_DIGITS:
            return "precise"
        if part.is_number and not part.is_Rational and not part.free_symbols and not part.has(sp.zoo, sp.nan):
            with mpmath.workdps(DIGITS):
                size = value(part, {})
            if size is None:
                return "huge"
            if size != 0 and not 10**-MAX_CONSTANT_DIGITS < abs(size) < 10**MAX_CONSTANT_DIGITS:
                return "precise"
    return ""


# ---- numbers ---------------------------------------------------------------------------------


def value(expr: sp.Basic, point: dict[sp.Symbol, Fraction]):
    """The value of ``expr`` at ``point`` (an mpmath number at the working precision), or None
    where it is undefined or beyond any sensible size. A hand-written walk: nothing is compiled."""
    try:
        result = _value(expr, point)
    except (OverflowError, ZeroDivisionError, ValueError, TypeError, RecursionError, ArithmeticError):
        return None
    if not mpmath.isfinite(result):
        return None
    return result


def _number(q: Fraction):
    return mpmath.mpf(q.numerator) / q.denominator


def _value(expr: sp.Basic, point: dict[sp.Symbol, Fraction]):
    if expr in point:
        return _number(point[expr])
    if expr.is_Rational:
        return mpmath.mpf(int(expr.p)) / int(expr.q)
    if expr is sp.pi:
        return +mpmath.pi
    if expr is sp.E:
        return mpmath.e()
    if expr is sp.I:
        return mpmath.mpc(0, 1)
    if expr.is_Float:
        return mpmath.mpf(str(expr))
    if expr.is_Add:
        return mpmath.fsum(_value(t, point) for t in expr.args)
    if expr.is_Mul:
        out = mpmath.mpf(1)
        for factor in expr.args:
            out *= _value(factor, point)
        return out
    if expr.is_Pow:
        base, exponent = _value(expr.base, point), _value(expr.exp, point)
        if exponent == 0:
            return mpmath.mpf(1)
        if base == 0:
            if mpmath.re(exponent) < 0:
                raise ZeroDivisionError
            return mpmath.mpf(0)
        size = abs(mpmath.re(exponent) * mpmath.log(abs(base)))
        if size > MAX_EXP_ARGUMENT:
            raise OverflowError
        return mpmath.power(base, exponent)
    func = _FUNCS.get(type(expr))
    if func is not None:
        arg = _value(expr.args[0], point)
        if abs(arg) > _MAX_ARGUMENT.get(type(expr), mpmath.inf):
            raise OverflowError
        if type(expr) is sp.log and arg == 0:
            raise ZeroDivisionError
        return func(arg)
    raise TypeError(f"no numeric rule for {type(expr).__name__}")
