"""Is a constant (an expression without symbols) zero? Decided by mathematics, not by a tolerance.

A difference such as ``sqrt(5 + 2*sqrt(6)) - sqrt(2) - sqrt(3)`` or ``log(8)/log(2) - 3`` is exactly
0 although it is not 0 as written. Nonzero is shown by evaluation with tracked accuracy (sympy's
evalf raises its precision until it has correct digits, and says so when it has none: a value it
cannot tell from 0 after ``ZERO_BITS`` bits is never called nonzero). Zero is shown only by a proof:
a rewriting (logs expanded or combined, radicals denested or rationalised) that gives 0, or, for an
algebraic number, a minimal polynomial equal to x. A constant that is neither shown nonzero nor
proved zero is left undecided: the caller must not guess.
"""

from __future__ import annotations

import sympy as sp

from .deadline import OutOfTime, cap

DIGITS = 50
ZERO_BITS = 2000  # evalf's working-precision ceiling when it meets cancellation
PROOF_CPU_SECONDS = 0.3  # for the rewritings and the minimal polynomial together

_X = sp.Dummy("x")


def constant_is_zero(constant: sp.Expr) -> bool | None:
    """True when ``constant`` is proved to be 0, False when shown nonzero, None when undecided."""
    if constant.is_Rational:
        return bool(constant == 0)
    if constant.has(sp.zoo, sp.nan, sp.oo):
        return False  # no finite value: not the 0 a right answer would leave
    if constant.is_zero is False or _clearly_nonzero(constant):  # sympy's facts: exp(x) is never 0
        return False
    try:
        with cap(PROOF_CPU_SECONDS):
            return True if _proved_zero(constant) else None
    except OutOfTime:
        return None


def _clearly_nonzero(constant: sp.Expr) -> bool:
    """Does evaluation give a real or imaginary part with at least one correct digit?"""
    approx = constant.evalf(DIGITS, maxn=ZERO_BITS)
    for part in approx.as_real_imag():
        if part.is_Float and part != 0 and part._prec > 1:  # evalf's "no correct digit" is 1 bit
            return True
        if part.is_Rational and part != 0:
            return True
    return False


def _proved_zero(constant: sp.Expr) -> bool:
    # force is safe here: only a constant whose value is 0 to ZERO_BITS bits gets this far
    bases = [
        constant,
        sp.expand_log(constant, force=True),
        sp.logcombine(constant, force=True).doit(),
        _prime_logs(constant),
    ]
    for base in bases:
        for form in (base, sp.expand(base), sp.sqrtdenest(base), sp.radsimp(base)):
            if form == 0:
                return True
    if any(sp.simplify(base) == 0 for base in bases[1:3]):
        return True
    if constant.is_algebraic:
        return sp.minimal_polynomial(constant, _X) == _X
    return False


def _prime_logs(constant: sp.Expr) -> sp.Expr:
    """Each log of a positive rational written over primes (log(6) = log(2) + log(3)), so that a
    polynomial in logs that is 0 expands to 0."""

    def over_primes(q: sp.Rational) -> sp.Expr:
        up = sum(e * sp.log(p) for p, e in sp.factorint(q.p).items())
        down = sum(e * sp.log(p) for p, e in sp.factorint(q.q).items())
        return sp.Add(up, -down)

    return constant.replace(
        lambda e: isinstance(e, sp.log) and e.args[0].is_Rational and e.args[0] > 0,
        lambda e: over_primes(e.args[0]),
    )
