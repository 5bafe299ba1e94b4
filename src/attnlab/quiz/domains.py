"""What values a scalar symbol may take: its sympy assumptions and the points sampled from it."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Callable

import sympy as sp


@dataclass(frozen=True)
class Domain:
    name: str
    assumptions: dict[str, bool]
    draw: Callable[[random.Random], float]
    says: str  # for students: what values the symbol stands for


DOMAINS: dict[str, Domain] = {
    d.name: d
    for d in [
        Domain("real", {"real": True}, lambda r: r.uniform(-3.0, 3.0), "a real number"),
        Domain("positive", {"positive": True}, lambda r: r.uniform(0.05, 3.0), "a number > 0"),
        Domain("nonneg", {"nonnegative": True}, lambda r: r.uniform(0.0, 60.0), "a number >= 0"),
        Domain("int", {"integer": True}, lambda r: float(r.randint(-12, 12)), "an integer"),
        Domain("nonneg_int", {"integer": True, "nonnegative": True},
               lambda r: float(r.randint(0, 12)), "an integer >= 0"),
        Domain("even_pos_int", {"even": True, "positive": True},
               lambda r: float(2 * r.randint(1, 64)), "an even integer > 0"),
    ]
}


def make_symbol(name: str, domain: str) -> sp.Symbol:
    """The sympy symbol carrying the domain's assumptions (so sympy may use them)."""
    if domain not in DOMAINS:
        raise ValueError(f"unknown domain {domain!r} for {name}; known: {', '.join(DOMAINS)}")
    return sp.Symbol(name, **DOMAINS[domain].assumptions)


def sample(symbols: dict[sp.Symbol, str], count: int, *, seed: int = 0) -> list[dict[sp.Symbol, float]]:
    """``count`` points, each symbol drawn from its domain; the same seed gives the same points."""
    rng = random.Random(seed)
    return [{s: DOMAINS[d].draw(rng) for s, d in symbols.items()} for _ in range(count)]
