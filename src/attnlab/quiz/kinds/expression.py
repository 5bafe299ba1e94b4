"""Symbolic and matrix items: an expression (or nested list) over the item's symbols."""

from __future__ import annotations

from typing import Any

from ..bank import Item
from ..domains import DOMAINS, seed_of
from ..equivalence import Comparison, compare
from ..parse import CONSTANTS, FUNCTIONS, parse
from ..verdict import UNREADABLE, Verdict, quote, reason, right, wrong
from .base import Kind
from .common import hidden_symbols, known_wrong, namespace, not_simplest, parsed_key, put_in, sides

SYNTAX = {
    "symbolic": "an expression: `*` (or a space) multiplies, `**` or `^` raises to a power, "
    f"`{' '.join([*FUNCTIONS, *CONSTANTS])}` are known.",
    "matrix": "a nested list `[[a, b], [c, d]]` whose entries are expressions (`*` multiplies, "
    "`**` or `^` raises to a power).",
}


class Expression(Kind):
    fields = ("key", "symbols", "feedback", "simplest", "holds", "where", "stands_for")

    def __init__(self, name: str):
        self.syntax = SYNTAX[name]

    def read(self, item: Item, answer: str) -> Any:
        return parse(answer, namespace(item))

    def check(self, item: Item, answer: str, student: str | None) -> Verdict:
        got = self.read(item, answer)
        seed = seed_of(item.id, answer)
        domains = {**item.symbols, **hidden_symbols(item)}
        result = compare(put_in(item, got), put_in(item, parsed_key(item)), domains=domains, seed=seed)
        if result.equal:
            return not_simplest(item, got, "simplify it further") or right(item)
        if not result.evaluable:
            return Verdict(UNREADABLE, f"Cannot read this answer: '{quote(answer)}' {result.how}.")

        def same(a, b) -> Comparison:
            return compare(put_in(item, a), put_in(item, b), domains=domains, thorough=False, seed=seed)

        return wrong(known_wrong(item, got, same) or reason(result))

    def symbols(self, item: Item) -> str:
        return ", ".join(f"`{name}` ({DOMAINS[d].says})" for name, d in item.symbols.items())

    def verify(self, item: Item, defs: Any) -> str | None:
        """The key satisfies ``holds`` over the definitions' domains, and the item's domains are theirs."""
        stray = sorted(set(item.stands_for) - set(item.symbols))
        if stray:
            return f"'stands_for' names {stray}, which are not among the item's symbols"
        put_in(item, parsed_key(item))  # a stand-in that cannot be read fails here, not on a student
        for symbol, domain in item.symbols.items():
            if symbol in item.where:
                continue
            if symbol not in defs.symbols:
                return f"symbol {symbol} is not in the definitions (add it, or express it with 'where')"
            if defs.symbols[symbol] != domain:
                return f"symbol {symbol} is {domain} here but {defs.symbols[symbol]} in the definitions"
        base = defs.namespace()
        where = {name: parse(text, base) for name, text in item.where.items()}
        answer = parse(str(item.key), defs.namespace(where))
        ns = defs.namespace({"ANSWER": answer})
        for equation in item.holds:
            left, right_side = (parse(side, ns) for side in sides(equation))
            result = compare(left, right_side, domains=defs.symbols, seed=seed_of("verify", item.id, equation))
            if not result.equal:
                return f"the key does not satisfy {equation} ({result.how})"
        return None
