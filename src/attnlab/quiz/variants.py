"""Per-student numbers for the numeric illustration, reproducible from the student's id.

Without an id the numbers are the notes' own (``quiz/definitions.yaml``: ``illustration.inputs``);
with one, each input is redrawn as ``illustration.variants`` says, from a generator seeded by the
id, until every quantity listed under ``nontrivial`` keeps two significant digits away from 0 and 1
at its decimals, and each listed under ``distinct`` stays apart from its known wrong answers. Keys are recomputed from the numbers, never pasted.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import sympy as sp

from ..studentids import normal_id
from .definitions import Definitions, illustration_values, load, matrix
from .domains import seed_of

MAX_DRAWS = 1000
_PLACEHOLDER = re.compile(r"<<([A-Za-z_][A-Za-z0-9_]*)>>")


@dataclass(frozen=True)
class Illustration:
    """The inputs of the illustration and every quantity that follows from them."""

    inputs: dict[str, Any]
    values: dict[str, sp.Expr]
    student: str | None = None

    def value(self, quantity: str) -> float:
        return float(sp.N(self.values[quantity], 30))

    def render(self, prompt: str) -> str:
        """The prompt with ``<<NAME>>`` replaced by the input NAME (a row as [a, b], a matrix in LaTeX)."""

        def fill(match: re.Match) -> str:
            name = match.group(1)
            return _show(self.inputs[name]) if name in self.inputs else match.group(0)

        return _PLACEHOLDER.sub(fill, prompt)


def illustration(*, student: str | None = None, defs: Definitions | None = None) -> Illustration:
    """The notes' numbers, or the numbers of ``student`` (an id as on the course roster, in any case
    and with any spaces around it: ``normal_id``, as the roster matches it)."""
    return _illustration(normal_id(student or "") or None, defs or load())


@lru_cache(maxsize=256)
def _illustration(student: str | None, defs: Definitions) -> Illustration:
    spec = defs.illustration
    if spec is None:
        return Illustration(inputs={}, values={}, student=student)
    if student is None:
        return Illustration(spec.inputs, illustration_values(defs, spec.inputs), None)
    for attempt in range(MAX_DRAWS):
        rng = random.Random(seed_of("attnlab-quiz-variant", student, str(attempt)))
        inputs = {name: _draw(rng, spec.inputs[name], how) for name, how in spec.variants.items()}
        inputs = {**spec.inputs, **inputs}
        values = illustration_values(defs, inputs)
        if all(nontrivial(values[q], d) for q, d in spec.nontrivial.items()) and all(
            apart(values[q], values[other], spec.nontrivial.get(q, 2))
            for q, others in spec.distinct.items()
            for other in others
        ):
            return Illustration(inputs, values, student)
    raise RuntimeError(f"no variant for {student!r} keeps {sorted(spec.nontrivial)} nontrivial")


def nontrivial(value: sp.Expr, decimals: int) -> bool:
    """Two significant digits at ``decimals``, away from 0 and from 1 (a weight of 1.00000 is trivial)."""
    x = abs(float(sp.N(value, 30)))
    floor = 10.0 ** (1 - decimals)
    return x >= floor and abs(1 - x) >= floor


def apart(value: sp.Expr, other: sp.Expr, decimals: int) -> bool:
    """At least two units of the last decimal apart: no rounding of one is accepted for the other."""
    return abs(float(sp.N(value - other, 30))) >= 2 * 10.0**-decimals


def _draw(rng: random.Random, shape_of: Any, how: dict[str, Any]) -> list[list[Any]]:
    rows, cols = len(shape_of), len(shape_of[0])
    if "uniform" in how:
        low, high = how["uniform"]
        places = int(how.get("decimals", 2))
        return [[round(rng.uniform(low, high), places) for _ in range(cols)] for _ in range(rows)]
    low, high = how["integers"]
    return [[rng.randint(int(low), int(high)) for _ in range(cols)] for _ in range(rows)]


def _show(value: Any) -> str:
    m = matrix(value)
    if m.rows == 1:
        return "[" + ", ".join(f"{float(x):.2f}" for x in m) + "]"
    rows = r" \\ ".join(" & ".join(f"{float(x):g}" for x in m.row(r)) for r in range(m.rows))
    return r"\begin{pmatrix} " + rows + r" \end{pmatrix}"
