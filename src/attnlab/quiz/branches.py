"""Answers equal to the key in one region and different in another (a threshold), decided.

Why sampling alone cannot be trusted with them: ``x - 10^4 + sqrt((x - 10^4)^2)`` is 0 for
x <= 10^4 and 2(x - 10^4) beyond, and a larger constant outruns any finite set of sample points.

Why this closes the class: an answer is built from + - * /, powers, sin cos tan exp log sqrt and
pi, so it is analytic (tan: meromorphic) wherever the arguments of its non-analytic pieces keep
their sign. Those pieces are Abs and sign (sympy writes sqrt(g^2) as Abs(g)) and the branch points
of sqrt, log and fractional or symbolic powers (a base that changes sign). On a connected region
where the difference is analytic, it is either 0 throughout or 0 only on a set without interior
(the identity theorem), so sample points in a region decide it there. A difference can be 0 on
one region and not on the next only across the zero set of such an argument, so every region is
visited:

1. Abs(g) is written as g or -g and sign(g) as 1, -1 or 0 by the sign of g (a Piecewise), then
   folded: if every branch is 0 as sympy builds, expands or simplifies it, the two are equal on
   every region (cos(|m - n| t) = cos((m - n) t)).
2. Otherwise each argument of one symbol x is solved exactly (sympy's solveset over x's domain:
   10^4, exp(100)); its real roots cut x's domain into intervals (an integer root of an integer
   symbol is its own interval). The regions are the products of these intervals over the symbols
   (at most MAX_CELLS), and each is sampled at CELL_POINTS points (of at most CELL_TRIES drawn),
   answer and key evaluated as in the equivalence's sampling stage. A point where they differ is a disagreement; agreement in
   every region that holds a value is agreement.
3. An argument of several symbols (k*w - 10^4) is followed along each of its symbols' axes
   through the first sample points (solved the same way), which crosses a threshold in any one
   symbol; a point beyond it where the two differ is a disagreement.

What it cannot decide, and leaves to a human (never "right" by default, never 0): an argument
whose roots sympy cannot list (infinitely many, as sin(x) - 1/2, or none in closed form), an
argument of several symbols whose branches step 1 does not prove equal (step 3 finds only
disagreements), more than MAX_CELLS regions, a region where the expected expression has no finite
value at any point tried (beyond mpmath's sizes), or running out of BRANCH_CPU_SECONDS of the
checking thread's CPU time (never the wall clock). The caller turns None into "needs a human". Two
assumptions, stated rather than checked: an argument that is complex on a region (sqrt(x) - 2 for
x < 0) is cut only at its real roots, as if it crossed sqrt's and log's cut only there; and a pole
of tan is a point, not a region, so this stage leaves tan(k w) cos(k w) equal to sin(k w): the
points where an answer has no value are the next stage's (``poles``).
"""

from __future__ import annotations

import itertools
import random
from fractions import Fraction
from typing import Callable

import sympy as sp

from .deadline import OutOfTime, cap
from .domains import DOMAINS, sample

MAX_CELLS = 32
CELL_POINTS = 3
CELL_TRIES = 9  # points drawn in a region until CELL_POINTS of them give the expected side a value
AXIS_POINTS = 3  # sample points through which an argument of several symbols is followed
MAX_PROOF_OPS = 60  # a branch is simplified only up to this size
BRANCH_CPU_SECONDS = 0.3

Point = dict[sp.Symbol, Fraction]
Interval = tuple[Fraction | None, Fraction | None]  # open; None is unbounded on that side

_SOLVE_DOMAIN = {
    "real": sp.Reals,
    "int": sp.Reals,
    "positive": sp.Interval.open(0, sp.oo),
    "even_pos_int": sp.Interval.open(0, sp.oo),
    "nonneg": sp.Interval(0, sp.oo),
    "nonneg_int": sp.Interval(0, sp.oo),
}


def branch_arguments(expr: sp.Expr) -> set[sp.Expr]:
    """Arguments whose sign may change where ``expr`` is not analytic: of Abs, sign and log, and the
    bases of powers that are not whole (sqrt included)."""
    found = set()
    for part in sp.preorder_traversal(expr):
        if isinstance(part, (sp.Abs, sp.sign, sp.log)):
            argument = part.args[0]
        elif part.is_Pow and part.exp.is_integer is not True:
            argument = part.base
        else:
            continue
        if argument.free_symbols and not _keeps_sign(argument):
            found.add(argument)
    return found


def _keeps_sign(argument: sp.Expr) -> bool:
    return any((argument.is_positive, argument.is_negative, argument.is_nonnegative, argument.is_nonpositive))


def decide(
    difference: sp.Expr,
    *,
    symbols: dict[sp.Symbol, str],
    seed: int,
    differs: Callable[[Point], bool | None],
) -> bool | None:
    """True when the two sides agree on every region, False when ``differs`` finds a point where
    they do not, None when undecided. ``differs(point)`` is None where the expected side has no value."""
    arguments = branch_arguments(difference)
    if not arguments:
        return True
    try:
        with cap(BRANCH_CPU_SECONDS):
            if _every_branch_zero(difference):
                return True
            return _visit(arguments, symbols, seed, differs)
    except OutOfTime:
        return None


def _every_branch_zero(difference: sp.Expr) -> bool:
    if not difference.has(sp.Abs, sp.sign):
        return False
    split = difference.replace(sp.Abs, lambda g: sp.Piecewise((g, g >= 0), (-g, True)))
    split = split.replace(sp.sign, lambda g: sp.Piecewise((1, g > 0), (-1, g < 0), (0, True)))
    folded = sp.piecewise_fold(split)
    branches = [e for e, _ in folded.args] if isinstance(folded, sp.Piecewise) else [folded]
    return all(_is_zero(e) for e in branches)


def _is_zero(branch: sp.Expr) -> bool:
    if branch == 0 or sp.expand(branch) == 0:
        return True
    return sp.count_ops(branch) <= MAX_PROOF_OPS and sp.simplify(branch) == 0


def _visit(
    arguments: set[sp.Expr], symbols: dict[sp.Symbol, str], seed: int, differs: Callable[[Point], bool | None]
) -> bool | None:
    rng = random.Random(seed ^ 0xB7A9C)
    one_symbol = [g for g in arguments if len(g.free_symbols) == 1]
    several = [g for g in arguments if len(g.free_symbols) > 1]
    roots: dict[sp.Symbol, list[Fraction]] = {}
    for argument in one_symbol:
        (x,) = argument.free_symbols
        found = _roots(argument, x, symbols[x])
        if found is None:
            return None
        roots.setdefault(x, []).extend(found)
    cut = {x: _intervals(found, symbols[x]) for x, found in roots.items()}
    cells = list(itertools.product(*cut.values()))
    if len(cells) > MAX_CELLS:
        return None
    base = sample(symbols, len(cells) * CELL_TRIES + AXIS_POINTS, seed=seed ^ 0x3C11)
    for n, cell in enumerate(cells):
        valued = 0
        for k in range(CELL_TRIES):
            drawn = {x: DOMAINS[symbols[x]].draw_between(rng, *interval) for x, interval in zip(cut, cell)}
            if any(v is None for v in drawn.values()):
                break  # no allowed value in this region (no integer between two roots)
            verdict = differs({**base[n * CELL_TRIES + k], **drawn})  # type: ignore[dict-item]
            if verdict:
                return False
            valued += verdict is False
            if valued == CELL_POINTS:
                break
        else:
            if not valued:
                return None
    for argument in several:
        for point in base[-AXIS_POINTS:]:
            for x in sorted(argument.free_symbols, key=lambda s: s.name):
                line = argument.xreplace({s: sp.Rational(point[s]) for s in argument.free_symbols if s != x})
                found = _roots(line, x, symbols[x]) if line.free_symbols else []
                if found is None:
                    return None
                for interval in _intervals(found, symbols[x]):
                    v = DOMAINS[symbols[x]].draw_between(rng, *interval)
                    if v is not None and differs({**point, x: v}):
                        return False
    return None if several else True


def _roots(argument: sp.Expr, x: sp.Symbol, domain: str) -> list[Fraction] | None:
    """The real roots of ``argument`` in ``x``'s domain, each to 40 digits; None when sympy cannot list them."""
    found = sp.solveset(argument, x, domain=_SOLVE_DOMAIN[domain])
    if not isinstance(found, sp.FiniteSet):
        return None
    out = []
    for root in found:
        approx = sp.N(root, 40)
        if approx.is_real:
            out.append(Fraction(str(approx)))
    return out


def _intervals(roots: list[Fraction], domain: str) -> list[Interval]:
    """The open intervals between consecutive roots (and beyond the outermost ones); for an integer
    symbol, an integer root is an interval of its own."""
    ordered = sorted(set(roots))
    edges: list[Fraction | None] = [None, *ordered, None]
    intervals: list[Interval] = list(zip(edges[:-1], edges[1:]))
    if DOMAINS[domain].step:
        half = Fraction(1, 2)
        intervals += [(r - half, r + half) for r in ordered if r.denominator == 1]
    return intervals
