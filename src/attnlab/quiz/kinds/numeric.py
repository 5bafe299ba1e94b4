"""Numeric items: a number computed from the illustration's quantities, to the decimals the prompt
asks for; each student's key comes from their own numbers."""

from __future__ import annotations

import re
from decimal import ROUND_HALF_DOWN, ROUND_HALF_UP
from functools import lru_cache
from typing import Any

import mpmath
import sympy as sp

from ..bank import Item
from ..definitions import load as load_definitions
from ..definitions import Definitions, illustration_values, matrix
from ..equivalence import value as number_value
from ..parse import Namespace, Unreadable, parse
from ..variants import illustration, nontrivial
from ..verdict import UNREADABLE, Verdict, quote, right, wrong
from .base import Element, Kind, Writer
from .common import sides

VARIANTS_CHECKED = 60  # students whose numbers verify derives every numeric key for
MIN_CANVAS_TOLERANCE = 1e-4  # text2qti writes numeric bounds with 4 decimals
_DECIMALS = re.compile(r"\bto (\d+) decimals?\b")


def quantities() -> Namespace:
    """A numeric key names the illustration's quantities (``quiz/definitions.yaml``)."""
    return _quantities(load_definitions())


@lru_cache(maxsize=8)
def _quantities(defs: Definitions) -> Namespace:
    spec = defs.illustration
    return Namespace(scalars={n: sp.Symbol(n) for n in (spec.quantities if spec else {})})


def numeric_key(item: Item, *, student: str | None = None) -> float:
    """The item's key, computed from the (student's) illustration numbers with every step the
    prompt rounds (``rounded``) rounded."""
    return value_of(parse(str(item.key), quantities()), student, item.rounded)


def accepted_keys(item: Item, student: str | None) -> list[float]:
    """The values an answer may round to: the key with the prompt's rounding at each step (an
    exact half, such as a score of 12.345, rounded up or down: a calculator may do either), and
    the key computed without rounding (a student who keeps every digit is not wrong)."""
    expr = parse(str(item.key), quantities())
    rounded = {value_of(expr, student, item.rounded, halves=h) for h in (ROUND_HALF_UP, ROUND_HALF_DOWN)}
    return sorted(rounded | {value_of(expr, student, {})})


def value_of(expr, student: str | None, rounded: dict[str, int] | None = None, *, halves: str = ROUND_HALF_UP) -> float:
    ill = illustration(student=student)
    values = ill.values
    if rounded:
        defs = load_definitions()
        values = illustration_values(defs, ill.inputs, rounded, halves=halves)
    return float(sp.N(expr.xreplace({sym: values[sym.name] for sym in expr.free_symbols}), 30))


def within(value: float, key: float, item: Item) -> bool:
    """Does ``value`` round to ``key`` at the item's decimals (half a unit of the last decimal)?"""
    return abs(value - key) <= item.tolerance * (1 + 1e-9)


class Numeric(Kind):
    fields = ("key", "decimals", "rounded", "notes", "feedback", "holds", "where")
    syntax = (
        "a number to the decimals the question asks for, e.g. `12.34` (arithmetic such as `4*4.12 + 1.5*3.66` is fine)."
    )
    moodle_type = "numerical"
    per_student = True

    def read(self, item: Item, answer: str) -> Any:
        got = parse(answer, Namespace())
        if not (isinstance(got, sp.Expr) and got.is_number):
            raise Unreadable("a number is expected")
        return got

    def key_text(self, item: Item, student: str | None = None) -> str:
        return "" if item.key is None else f"{numeric_key(item, student=student):.12g}"

    def check(self, item: Item, answer: str, student: str | None) -> Verdict:
        got = self.read(item, answer)
        with mpmath.workdps(30):
            number = number_value(got, {})  # bounded: a tower of exponentials has no value, fast
        if number is None and got.has(sp.zoo, sp.nan, sp.oo, -sp.oo):
            return wrong(f"'{quote(answer)}' is not a finite number.")
        if number is None:
            return Verdict(UNREADABLE, f"Cannot read this answer: '{quote(answer)}' is too large to evaluate.")
        value = complex(number)
        if value.imag == 0 and any(within(value.real, key, item) for key in accepted_keys(item, student)):
            return right(item)
        for known in item.feedback:
            if value.imag == 0 and within(
                value.real, value_of(parse(known.answer, quantities()), student, item.rounded), item
            ):
                return wrong(known.says)
        return wrong(
            f"recompute it step by step with your own numbers; the question asks for {item.decimals} decimals."
        )

    def canvas(self, item: Item, text: Writer) -> list[str] | None:
        """Every key ``check`` accepts (``accepted_keys``, the notes' numbers) in text2qti's one
        range, written in full (the tolerance is absolute: a key cut to a few significant digits
        moves the range); None when that range would be finer than text2qti's 4 decimals or would
        take in answers between keys that ``check`` refuses."""
        keys = accepted_keys(item, None)
        if item.tolerance < MIN_CANVAS_TOLERANCE or keys[-1] - keys[0] > 2 * item.tolerance:
            return None
        if len(keys) == 1:
            return [f"=   {keys[0]!r} +- {item.tolerance:g}"]
        return [f"=   [{keys[0] - item.tolerance!r}, {keys[-1] + item.tolerance!r}]"]

    def moodle(self, item: Item, element: Element) -> list[str] | None:
        """Each key ``check`` accepts (the notes' numbers) as an answer worth 100%, written in full."""
        return [
            f'<answer fraction="100" format="moodle_auto_format"><text>{key!r}</text>'
            f"<tolerance>{item.tolerance:g}</tolerance></answer>"
            for key in accepted_keys(item, None)
        ]

    def verify(self, item: Item, defs: Any) -> str | None:
        """For the notes' numbers and many students': the key satisfies ``holds``, stays nontrivial at
        the decimals the prompt states, and (notes' numbers) rounds to the value the notes print."""
        stated = sorted(set(_DECIMALS.findall(item.prompt)))
        graded = sorted({str(item.decimals), *(str(d) for d in item.rounded.values())})
        if stated != graded:
            return (
                f"the prompt asks for {' and '.join(stated) or 'no stated number of'} decimals but "
                f"the item grades to {' and '.join(graded)}: say 'to N decimals' in the prompt for the "
                "answer and for every step in 'rounded'"
            )
        unknown = sorted(set(item.rounded) - set(quantities().scalars))
        if unknown:
            return f"'rounded' names {unknown}, which are not quantities of the illustration"
        for student in [None, *(f"verify-{k}" for k in range(VARIANTS_CHECKED))]:
            ill = illustration(student=student)
            key = numeric_key(item, student=student)
            exact = value_of(parse(str(item.key), quantities()), student, {})  # holds is stated without rounding
            inputs = {name: matrix(value) for name, value in ill.inputs.items()}
            ns = Namespace(scalars={**inputs, "ANSWER": sp.Float(exact, 30)}, dot_products=True)
            who = "the notes' numbers" if student is None else f"student {student!r}"
            for equation in item.holds:
                left, right_side = (float(sp.N(parse(side, ns), 30)) for side in sides(equation))
                if abs(left - right_side) > 1e-9 * max(1.0, abs(left), abs(right_side)):
                    return f"the key does not satisfy {equation} for {who}: {left:.10g} vs {right_side:.10g}"
            if not nontrivial(sp.Float(key, 30), item.decimals):
                return f"{who} make it trivial: the key is {key:.{item.decimals}f} at {item.decimals} decimals"
            if student is None and (item.notes is None or abs(round(key, item.decimals) - item.notes) > 1e-12):
                return (
                    f"for the notes' numbers the key rounds to {key:.{item.decimals}f}, but 'notes' says {item.notes}"
                )
        return None
