"""Points where an answer, as written, has no value though the expected expression has one.

Sampling almost never meets such a point: tan(k w) cos(k w) has no value where cos(k w) = 0, a
set without interior, and equals sin(k w) everywhere else. An answer with no value at an allowed
point where the key has one is not the key there (issue 37), so these points are looked for: the
zeros, in the symbols' domains, of what the answer divides by (the base of a negative power) and of
the cosines and sines under tan, sec, cot and csc. Each is solved exactly in one symbol (sympy's
solveset over the reals), the others fixed at sample points of their domains; the first few
solutions that lie in the symbol's domain are tried, exactly (sympy numbers, not floats): a
disagreement is a point where the answer's value is not finite and the key's is.

It only finds disagreements: a zero sympy cannot list (none in closed form) is passed over, and the
sampled verdict stands. Its work is bounded by POLE_CPU_SECONDS of the checking thread's CPU time (never
the wall clock); running out is the caller's "needs a human", as for the other stages.
"""

from __future__ import annotations

import itertools
import sympy as sp

from .deadline import cap
from .domains import DOMAINS, sample

POLE_CPU_SECONDS = 0.3
FIXED_POINTS = 2  # sample points at which the other symbols of a divisor are fixed
SOLUTIONS = 6  # solutions of one divisor tried


def divisors(expr: sp.Expr) -> set[sp.Expr]:
    """What ``expr`` divides by, where it may be 0: bases of negative powers, and cos or sin of
    the arguments of tan and sec, or cot and csc."""
    found = set()
    for part in sp.preorder_traversal(expr):
        if isinstance(part, (sp.tan, sp.sec)):
            found.add(sp.cos(part.args[0]))
        elif isinstance(part, (sp.cot, sp.csc)):
            found.add(sp.sin(part.args[0]))
        elif part.is_Pow and part.exp.is_negative and part.base.free_symbols:
            found.add(part.base)
    return {d for d in found if d.free_symbols and not d.is_nonzero}


def hole(answer: sp.Expr, key: sp.Expr, *, symbols: dict[sp.Symbol, str], seed: int) -> str | None:
    """An allowed point (as text) where ``answer`` has no finite value and ``key`` has one, or None."""
    found = divisors(answer)
    if not found:
        return None
    with cap(POLE_CPU_SECONDS):
        for divisor in sorted(found, key=sp.default_sort_key):
            for x in sorted(divisor.free_symbols, key=lambda s: s.name):
                others = {s: symbols[s] for s in divisor.free_symbols - {x}}
                for fixed in sample(others, FIXED_POINTS, seed=seed) if others else [{}]:
                    exact = {s: sp.Rational(v.numerator, v.denominator) for s, v in fixed.items()}
                    for root in _solutions(divisor.xreplace(exact), x):
                        if not _allowed(root, symbols[x]):
                            continue
                        point = {**exact, x: root}
                        if not _finite(answer.xreplace(point)) and _finite(key.xreplace(point)):
                            return ", ".join(f"{s} = {v}" for s, v in sorted(point.items(), key=lambda i: i[0].name))
    return None


def _solutions(expr: sp.Expr, x: sp.Symbol) -> list[sp.Expr]:
    return _some(sp.solveset(expr, x, sp.S.Reals))


def _some(found: sp.Set) -> list[sp.Expr]:
    """The first few elements of a solution set, where sympy can list them."""
    if isinstance(found, sp.FiniteSet):
        return list(found)[:SOLUTIONS]
    if isinstance(found, sp.Union):
        return list(itertools.chain.from_iterable(_some(part) for part in found.args))[: 2 * SOLUTIONS]
    if isinstance(found, sp.ImageSet):
        try:
            return list(itertools.islice(iter(found), SOLUTIONS))
        except TypeError:  # not enumerable
            return []
    return []


def _allowed(v: sp.Expr, domain: str) -> bool:
    """Whether ``v`` is a value of the domain: it has every assumption the domain's symbols carry
    (``make_symbol``), so 0 belongs to nonneg and pi/2 to positive."""
    assumed = DOMAINS[domain].assumptions
    return v.is_real is True and all(getattr(v, f"is_{name}") is True for name, holds in assumed.items() if holds)


def _finite(v: sp.Expr) -> bool:
    if v.has(sp.zoo, sp.nan, sp.oo, sp.S.NegativeInfinity):
        return False
    return sp.N(v, 30).is_finite is True
