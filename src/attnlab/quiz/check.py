"""One verdict for one answer to one item: right, wrong, unreadable (or graded by hand), with feedback."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

import sympy as sp

from . import proof
from .bank import Item, load
from .deadline import OutOfTime, can_interrupt, cap
from .domains import make_symbol
from .equivalence import Comparison, compare
from .parse import Namespace, Softmax, Unreadable, parse
from .variants import illustration

RIGHT, WRONG, UNREADABLE, MANUAL = "right", "wrong", "unreadable", "manual"
EXIT_CODES = {RIGHT: 0, WRONG: 1, UNREADABLE: 2, MANUAL: 0}
VERDICT_SECONDS = 0.9  # the promise is one second; keep a margin for printing


@dataclass(frozen=True)
class Verdict:
    status: str
    message: str

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.status]


def check(item: Item, answer: str, *, student: str | None = None) -> Verdict:
    """Grade ``answer`` to ``item``; never raises for anything a student can type."""
    if item.withheld:
        return Verdict(MANUAL, "This question is graded by your instructor: answer it in the quiz notebook.")
    if item.type == "free":
        rubric = "\n".join(f"  - {line}" for line in item.rubric)
        return Verdict(MANUAL, f"This question is graded by hand against this rubric:\n{rubric}")
    if not isinstance(answer, str) or len(answer) > 10_000:
        return Verdict(UNREADABLE, "Cannot read this answer: it is not short text.")
    try:
        if can_interrupt():
            with cap(VERDICT_SECONDS):
                return _check(item, answer, student)
        return _check(item, answer, student)
    except Unreadable as exc:
        return Verdict(UNREADABLE, f"Cannot read this answer: {exc}.")
    except OutOfTime:
        return Verdict(UNREADABLE, "Cannot read this answer: it is too large to check in time.")


@lru_cache(maxsize=1)
def bank_items() -> dict[str, Item]:
    """The default bank, loaded once: the items the notebook's answer variables belong to."""
    return load()


def check_variable(item_id: str, value: object) -> Verdict:
    """The verdict on a quiz notebook's answer variable; ``value`` is what it holds (None if unset)."""
    item = bank_items()[item_id]
    if type(value) is not str:  # exactly str: a subclass could redefine what the parser calls
        return Verdict(UNREADABLE, f"Cannot read this answer: {item.variable} must hold your answer "
                                   f'as text in quotes, e.g. {item.variable} = "...".')
    return check(item, value)


def key_text(item: Item) -> str:
    """The key as a student would type it (a numeric key for the notes' numbers)."""
    if item.type == "numeric":
        return f"{numeric_key(item):.12g}"
    if item.type == "chain":
        return f"{item.start} = {item.key}"
    if isinstance(item.key, list):
        return (", " if item.type == "choice" else " ").join(item.key)
    return "" if item.key is None else str(item.key)


def _check(item: Item, answer: str, student: str | None) -> Verdict:
    grader = {"symbolic": _expression, "matrix": _expression, "numeric": _numeric,
              "choice": _choice, "proof": _proof, "chain": _chain, "order": _order}[item.type]
    return grader(item, answer, student)


# ---- expressions and matrices ----------------------------------------------------------------

@lru_cache(maxsize=None)
def namespace(item: Item) -> Namespace:
    if item.type in ("proof", "chain"):
        return proof.namespace()
    return Namespace(scalars={n: make_symbol(n, d) for n, d in item.symbols.items()})


@lru_cache(maxsize=None)
def _parsed_key(item: Item):
    return parse(str(item.key), namespace(item))


def _known_wrong(item: Item, got, same) -> str | None:
    for known in item.feedback:
        if same(got, parse(known.answer, _feedback_namespace(item))).equal:
            return known.says
    return None


def _feedback_namespace(item: Item) -> Namespace:
    return _numeric_namespace() if item.type == "numeric" else namespace(item)


def _expression(item: Item, answer: str, student: str | None) -> Verdict:
    got = parse(answer, namespace(item))

    result = compare(got, _parsed_key(item), domains=item.symbols)
    if result.equal:
        return _not_simplest(item, got, "simplify it further") or _right(item)

    def same(a, b) -> Comparison:
        return compare(a, b, domains=item.symbols, thorough=False)

    hint = _known_wrong(item, got, same) or _reason(result)
    return Verdict(WRONG, f"Not right: {hint}")


def _reason(result: Comparison) -> str:
    return {"differs at sampled values": "it differs from the expected expression for some values "
            "of its symbols."}.get(result.how, result.how + ".")


def size(expr) -> int:
    """How long an expression is: each symbol, number and matrix symbol, plus each operation."""
    if isinstance(expr, sp.MatrixBase):
        return sum(size(e) for e in expr)
    if isinstance(expr, (sp.MatrixSymbol, sp.Identity)) or not expr.args:
        return 1
    operations = len(expr.args) - 1 if isinstance(expr, (sp.Add, sp.Mul, sp.MatAdd, sp.MatMul)) else 1
    return operations + sum(size(a) for a in expr.args)


def _not_simplest(item: Item, got, hint: str) -> Verdict | None:
    """For an item that asks for the simplest form: an equal answer longer than the key is wrong."""
    if not item.simplest or size(got) <= size(_parsed_key(item)):
        return None
    return Verdict(WRONG, f"That equals {item.simplest}, but it is not in its simplest form: {hint}.")


def _right(item: Item) -> Verdict:
    extra = f"\n{item.explanation}" if item.explanation else ""
    return Verdict(RIGHT, f"Right.{extra}")


# ---- numbers ---------------------------------------------------------------------------------

_QUANTITY = re.compile(r"(score|weight)([12])([12])$")


@lru_cache(maxsize=1)
def _numeric_namespace() -> Namespace:
    names = [f"{q}{i}{j}" for q in ("score", "weight") for i in "12" for j in "12"]
    return Namespace(scalars={n: sp.Symbol(n) for n in names})


def numeric_key(item: Item, *, student: str | None = None) -> float:
    """The item's key, computed from the (student's) illustration numbers."""
    return _numeric_value(parse(str(item.key), _numeric_namespace()), student)


def _numeric_value(expr, student: str | None) -> float:
    ill = illustration(student=student)
    values = {}
    for sym in expr.free_symbols:
        quantity, row, col = _QUANTITY.match(sym.name).groups()
        values[sym] = sp.Float(ill.value(quantity, int(row), int(col)))
    return float(expr.xreplace(values).evalf())


def _numeric(item: Item, answer: str, student: str | None) -> Verdict:
    got = parse(answer, Namespace())
    if not (isinstance(got, sp.Expr) and got.is_number):
        return Verdict(UNREADABLE, "Cannot read this answer: a number is expected.")
    try:
        value = complex(got.evalf())
    except TypeError:  # 1/0 and friends evaluate to zoo or nan
        return Verdict(WRONG, "Not right: that is not a finite number.")
    key = numeric_key(item, student=student)
    if value.imag == 0 and abs(value.real - key) <= item.tolerance:
        return _right(item)
    for known in item.feedback:
        wrong = _numeric_value(parse(known.answer, _numeric_namespace()), student)
        if value.imag == 0 and abs(value.real - wrong) <= item.tolerance:
            return Verdict(WRONG, f"Not right: {known.says}")
    return Verdict(WRONG, "Not right: recompute it step by step (row vectors: Q = X W_Q, "
                          "K = X W_K, then the dot product).")


# ---- choices and ordering --------------------------------------------------------------------

def labels(answer: str, item: Item) -> list[str]:
    """The option labels in an answer such as ``b``, ``a, c`` or ``c a d b``."""
    text = answer.strip().lower()
    found = re.findall(r"[a-z]", text) if re.fullmatch(r"[a-z]+", text) else re.split(r"[\s,;]+", text)
    found = [f.strip("()") for f in found if f]
    unknown = [f for f in found if f not in item.options]
    if not found or unknown:
        raise Unreadable(f"answer with the option letters {', '.join(item.options)}")
    return found


def _choice(item: Item, answer: str, student: str | None) -> Verdict:
    chosen = labels(answer, item)
    key = item.key if item.multiple else [item.key]
    if not item.multiple and len(chosen) != 1:
        return Verdict(UNREADABLE, "Cannot read this answer: choose exactly one option.")
    if sorted(set(chosen)) == sorted(key):
        return _right(item)
    notes = [f"({c}) {item.option_feedback[c]}" for c in chosen
             if c not in key and c in item.option_feedback]
    missed = [k for k in key if k not in chosen]
    if item.multiple and missed:
        notes.append(f"{len(missed)} right option(s) not chosen.")
    return Verdict(WRONG, "Not right. " + " ".join(notes) if notes else "Not right.")


def _order(item: Item, answer: str, student: str | None) -> Verdict:
    chosen = labels(answer, item)
    key = list(item.key)
    if sorted(chosen) != sorted(key):
        return Verdict(UNREADABLE, f"Cannot read this answer: use each of {', '.join(key)} once.")
    if chosen == key:
        return _right(item)
    first = next(i for i, (c, k) in enumerate(zip(chosen, key)) if c != k)
    why = item.option_feedback.get(chosen[first], "")
    return Verdict(WRONG, f"Not right: step {first + 1} should not be ({chosen[first]}). {why}".strip())


# ---- proof steps -----------------------------------------------------------------------------

def _proof(item: Item, answer: str, student: str | None) -> Verdict:
    got = parse(answer, namespace(item))
    for name, why in item.not_in_answer.items():
        if name == "softmax" and got.has(Softmax):
            return Verdict(WRONG, f"Not right: {why}")
    key = _parsed_key(item)
    result = proof.compare(got, key)
    if result.equal:
        found = proof.shortcuts(got)
        hint = "use " + " and ".join(found) if found else "write it with fewer factors"
        return _not_simplest(item, got, hint) or _right(item)
    hint = (_known_wrong(item, got, proof.compare) or proof.explain(got, key)
            or _reason(result))
    return Verdict(WRONG, f"Not right: {hint}")


def _chain(item: Item, answer: str, student: str | None) -> Verdict:
    parts = answer.replace("==", "=").split("=")
    if any(not p.strip() for p in parts):
        raise Unreadable("separate the steps with single '=' signs")
    ns = namespace(item)
    steps = [parse(p, ns) for p in parts]
    start = parse(item.start, ns)
    for verdict in proof.check_chain(steps, start=start, target=_parsed_key(item)):
        if not verdict.ok:
            return Verdict(WRONG, f"Step {verdict.index} ('{parts[verdict.index - 1].strip()}') "
                                  f"does not follow: {verdict.reason}")
    # every valid step equals the start, so the end is checked by form, not by value
    if proof.canonical(steps[-1]) != proof.canonical(_parsed_key(item)):
        return Verdict(WRONG, f"Every step holds, but the chain must end at {item.key}.")
    return _right(item)
