"""What several question types share: reading a key once, known wrong answers, the simplest form."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Callable

import sympy as sp

from ..bank import Item
from ..domains import make_symbol
from ..equivalence import Comparison
from ..parse import CONSTANTS, FUNCTIONS, Namespace, parse
from ..verdict import Verdict, WRONG


@lru_cache(maxsize=None)
def namespace(item: Item) -> Namespace:
    """What an answer to ``item`` may name: its symbols, or the proof's matrices."""
    if item.type in ("proof", "chain"):
        from .. import proof

        return proof.namespace()
    return Namespace(scalars={n: make_symbol(n, d) for n, d in item.symbols.items()})


@lru_cache(maxsize=None)
def parsed_key(item: Item):
    return parse(str(item.key), namespace(item))


HIDDEN_DOMAIN = "real"


@lru_cache(maxsize=None)
def hidden_symbols(item: Item) -> dict[str, str]:
    """The names ``stands_for`` uses that an answer may not (each a real number), with their domain."""
    names = {n for text in item.stands_for.values() for n in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text)}
    return {n: HIDDEN_DOMAIN for n in sorted(names - set(item.symbols) - set(FUNCTIONS) - set(CONSTANTS))}


@lru_cache(maxsize=None)
def _stand_ins(item: Item) -> dict:
    scalars = dict(namespace(item).scalars)
    scalars.update({n: make_symbol(n, d) for n, d in hidden_symbols(item).items()})
    ns = Namespace(scalars=scalars)
    return {scalars[name]: parse(text, ns) for name, text in item.stands_for.items()}


def put_in(item: Item, expr):
    """``expr`` with each symbol of ``stands_for`` replaced by what it stands for."""
    return expr.xreplace(_stand_ins(item)) if item.stands_for else expr


def known_wrong(item: Item, got, same: Callable[..., Comparison], ns: Namespace | None = None) -> str | None:
    """The message of the first known wrong answer that ``got`` equals, if any."""
    for known in item.feedback:
        if same(got, parse(known.answer, ns or namespace(item))).equal:
            return known.says
    return None


def size(expr) -> int:
    """How long an expression is: each symbol, number and matrix symbol, plus each operation."""
    if isinstance(expr, sp.MatrixBase):
        return sum(size(e) for e in expr)
    if isinstance(expr, (sp.MatrixSymbol, sp.Identity)) or not expr.args:
        return 1
    operations = len(expr.args) - 1 if isinstance(expr, (sp.Add, sp.Mul, sp.MatAdd, sp.MatMul)) else 1
    return operations + sum(size(a) for a in expr.args)


def not_simplest(item: Item, got, hint: str, *, longer: bool = False) -> Verdict | None:
    """For an item that asks for the simplest form: an equal answer longer than the key (as sympy
    holds it, or as written when ``longer``) is wrong."""
    if not item.simplest or (size(got) <= size(parsed_key(item)) and not longer):
        return None
    return Verdict(WRONG, f"That equals {item.simplest}, but it is not in its simplest form: {hint}.")


def sides(equation: str) -> tuple[str, str]:
    """``left = right`` of a bank's ``holds`` equation."""
    parts = equation.split("=")
    if len(parts) != 2:
        raise ValueError(f"'{equation}' is not one equation 'left = right'")
    return parts[0], parts[1]
