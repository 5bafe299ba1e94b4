"""What a symbol may stand for, and sample values that cover where two expressions can differ.

Samples mix scales (small, medium and large magnitudes, both signs where allowed, and the domain's
edge) so that a term which vanishes on small values, or only matters for large ones, is seen.
The same seed gives the same values: a verdict never depends on when or where it is computed.
"""

from __future__ import annotations

import hashlib
import math
import random
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable

import sympy as sp

SCALES = (3.0, 100.0, 10_000.0)  # magnitudes sampled in turn


def _real(r: random.Random, scale: float) -> Fraction:
    return Fraction(r.uniform(-scale, scale))


def _positive(r: random.Random, scale: float) -> Fraction:
    return Fraction(r.uniform(0.0, scale)) or Fraction(1, 7)


def _nonneg(r: random.Random, scale: float) -> Fraction:
    return Fraction(r.uniform(0.0, scale)) if r.random() > 0.05 else Fraction(0)


def _int(r: random.Random, scale: float) -> Fraction:
    return Fraction(r.randint(-int(scale), int(scale)))


def _nonneg_int(r: random.Random, scale: float) -> Fraction:
    return Fraction(r.randint(0, int(scale)))


def _even_pos_int(r: random.Random, scale: float) -> Fraction:
    # even at the smallest scale several values (2, 4, 6): a term that vanishes only at d_model = 2
    # must not pass for nothing
    return Fraction(2 * r.randint(1, max(3, int(scale) // 2)))


@dataclass(frozen=True)
class Domain:
    name: str
    assumptions: dict[str, bool]
    draw: Callable[[random.Random, float], Fraction]
    says: str  # for students: what values the symbol stands for
    above: Fraction | None = None  # every value is greater than this (None: no bound below)
    step: int = 0  # 0: any real; 1: integers; 2: even integers
    # the domain's own values where an expression may differ and nowhere near (0^(k^2) is 1 at k = 0
    # only): every comparison meets each of them, never by luck of the draw
    edges: tuple[int, ...] = ()

    def draw_between(self, rng: random.Random, low: Fraction | None, high: Fraction | None) -> Fraction | None:
        """A value of the domain strictly between ``low`` and ``high`` (None: unbounded on that side),
        or None when there is none. An unbounded side reaches up to twice as far again as the bound."""
        if self.above is not None and (low is None or low < self.above):
            low = self.above
        if low is None:
            if high is None:
                return self.draw(rng, 100.0)
            low = high - 2 * (1 + abs(high))
        elif high is None:
            high = low + 2 * (1 + abs(low))
        if not self.step:
            return low + (high - low) * Fraction(rng.randint(1, 999), 1000) if low < high else None
        first = math.floor(low) + 1
        first += (-first) % self.step
        last = math.ceil(high) - 1
        if first > last:
            return None
        return Fraction(first + self.step * rng.randint(0, (last - first) // self.step))


DOMAINS: dict[str, Domain] = {
    d.name: d
    for d in [
        Domain("real", {"real": True}, _real, "a real number", edges=(0, 1, -1)),
        Domain("positive", {"positive": True}, _positive, "a number > 0", Fraction(0), edges=(1,)),
        Domain("nonneg", {"nonnegative": True}, _nonneg, "a number >= 0", Fraction(0), edges=(0, 1)),
        Domain("int", {"integer": True}, _int, "an integer", step=1, edges=(0, 1, -1)),
        Domain(
            "nonneg_int",
            {"integer": True, "nonnegative": True},
            _nonneg_int,
            "an integer >= 0",
            Fraction(-1),
            1,
            (0, 1),
        ),
        Domain(
            "even_pos_int",
            {"even": True, "positive": True},
            _even_pos_int,
            "an even integer > 0",
            Fraction(0),
            2,
            (2, 4),
        ),
    ]
}


def make_symbol(name: str, domain: str) -> sp.Symbol:
    """The sympy symbol carrying the domain's assumptions (so sympy may use them)."""
    if domain not in DOMAINS:
        raise ValueError(f"unknown domain {domain!r} for {name}; known: {', '.join(DOMAINS)}")
    return sp.Symbol(name, **DOMAINS[domain].assumptions)


def seed_of(*texts: str) -> int:
    """A seed fixed by the texts (e.g. an item id and an answer): fresh per answer, equal on every run."""
    digest = hashlib.sha256("\x00".join(texts).encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:8], "big")


def sample(symbols: dict[sp.Symbol, str], count: int, *, seed: int) -> list[dict[sp.Symbol, Fraction]]:
    """``count`` points, each symbol drawn from its domain at a scale that cycles through SCALES."""
    rng = random.Random(seed)
    ordered = sorted(symbols.items(), key=lambda item: item[0].name)
    return [{s: DOMAINS[d].draw(rng, SCALES[k % len(SCALES)]) for s, d in ordered} for k in range(count)]


def edge_points(symbols: dict[sp.Symbol, str], *, seed: int) -> list[dict[sp.Symbol, Fraction]]:
    """Every symbol at each of its domain's ``edges`` in turn, the others drawn; then all at their
    first edge together: the points a comparison must meet whatever its random ones are."""
    ordered = sorted(symbols.items(), key=lambda item: item[0].name)
    base = sample(symbols, 1, seed=seed ^ 0xED6E)[0] if ordered else {}
    points = [{**base, s: Fraction(v)} for s, d in ordered for v in DOMAINS[d].edges]
    together = {s: Fraction(DOMAINS[d].edges[0]) for s, d in ordered if DOMAINS[d].edges}
    if len(together) > 1:
        points.append({**base, **together})
    return points
