"""One verdict for one answer to one item: right, wrong, unreadable, graded by hand or by the instructor.

Every verdict is the same on every run: sample points come from the item id and the answer text,
never from the clock. A fault of the checker itself is its own verdict (``fault``, exit code 3),
never a traceback and never "wrong".
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

import mpmath
import sympy as sp

from . import proof
from .bank import Item, load
from .deadline import OutOfTime, can_interrupt, cap
from .domains import make_symbol, seed_of
from .equivalence import Comparison, compare
from .equivalence import value as number_value
from .parse import Namespace, Softmax, Unreadable, parse
from .definitions import load as load_definitions
from .variants import illustration

RIGHT, WRONG, UNREADABLE, MANUAL, GRADED, FAULT = (
    "right", "wrong", "unreadable", "manual", "graded", "fault")
# MANUAL (graded by hand) and GRADED (no key here: graded by the instructor) give no verdict on the
# answer, so they exit 0 like every run that went as it should; FAULT is the checker's own failure.
EXIT_CODES = {RIGHT: 0, WRONG: 1, UNREADABLE: 2, MANUAL: 0, GRADED: 0, FAULT: 3}
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
    if item.type == "free":
        if not item.rubric:
            return Verdict(MANUAL, "This question is graded by hand by your instructor.")
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
    except RecursionError:
        return Verdict(UNREADABLE, "Cannot read this answer: it is nested too deeply to check.")
    except Exception as exc:  # noqa: BLE001 - a checker bug must never look like a verdict on the answer
        return Verdict(FAULT, f"The checker failed on this answer ({type(exc).__name__}). This is a fault "
                              "in the quiz, not in your answer: please tell your instructor.")


@lru_cache(maxsize=1)
def bank_items() -> dict[str, Item]:
    """The default bank, loaded once: the items the notebook's answer variables belong to."""
    return load()


def check_variable(item_id: str, value: object, *, student: str | None = None) -> Verdict:
    """The verdict on a quiz notebook's answer variable; ``value`` is what it holds (None if unset);
    numeric items use ``student``'s numbers (the notes' without one)."""
    item = bank_items()[item_id]
    if type(value) is not str:  # exactly str: a subclass could redefine what the parser calls
        return Verdict(UNREADABLE, f"Cannot read this answer: {item.variable} must hold your answer "
                                   f'as text in quotes, e.g. {item.variable} = "...".')
    return check(item, value, student=student)


def key_text(item: Item, *, student: str | None = None) -> str:
    """The key as a student would type it (a numeric key for the student's or the notes' numbers)."""
    if item.key is None:
        return ""
    if item.type == "numeric":
        return f"{numeric_key(item, student=student):.12g}"
    if item.type == "chain":
        return item.solution
    if isinstance(item.key, list):
        return (", " if item.type == "choice" else " ").join(item.key)
    return "" if item.key is None else str(item.key)


def _check(item: Item, answer: str, student: str | None) -> Verdict:
    if item.key is None:
        return _graded_elsewhere(item, answer)
    grader = {"symbolic": _expression, "matrix": _expression, "numeric": _numeric,
              "choice": _choice, "proof": _proof, "chain": _chain, "order": _order}[item.type]
    return grader(item, answer, student)


def _graded_elsewhere(item: Item, answer: str) -> Verdict:
    """No key here (a student's copy of a graded item): say whether the answer reads, nothing more."""
    if item.type in ("symbolic", "matrix", "proof"):
        parse(answer, namespace(item))
    elif item.type == "numeric":
        _number(answer)
    elif item.type == "chain":
        _chain_parts(item, answer)
    elif item.type in ("choice", "order"):
        labels(answer, item)
    return Verdict(GRADED, "This question is graded by your instructor: your answer can be read, "
                           "and it is not checked here.")


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
    seed = seed_of(item.id, answer)
    result = compare(got, _parsed_key(item), domains=item.symbols, seed=seed)
    if result.equal:
        return _not_simplest(item, got, "simplify it further") or _right(item)
    if not result.evaluable:
        return Verdict(UNREADABLE, f"Cannot read this answer: '{_quote(answer)}' {result.how}.")

    def same(a, b) -> Comparison:
        return compare(a, b, domains=item.symbols, thorough=False, seed=seed)

    hint = _known_wrong(item, got, same) or _reason(result)
    return Verdict(WRONG, f"Not right: {hint}")


def _quote(answer: str) -> str:
    text = " ".join(answer.split())
    return text if len(text) <= 60 else text[:57] + "..."


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

@lru_cache(maxsize=1)
def _numeric_namespace() -> Namespace:
    """A numeric key names the illustration's quantities (``quiz/definitions.yaml``)."""
    spec = load_definitions().illustration
    return Namespace(scalars={n: sp.Symbol(n) for n in (spec.quantities if spec else {})})


def numeric_key(item: Item, *, student: str | None = None) -> float:
    """The item's key, computed from the (student's) illustration numbers."""
    return _numeric_value(parse(str(item.key), _numeric_namespace()), student)


def _numeric_value(expr, student: str | None) -> float:
    ill = illustration(student=student)
    values = {sym: ill.values[sym.name] for sym in expr.free_symbols}
    return float(sp.N(expr.xreplace(values), 30))


def _number(answer: str) -> sp.Expr:
    got = parse(answer, Namespace())
    if not (isinstance(got, sp.Expr) and got.is_number):
        raise Unreadable("a number is expected")
    return got


def _numeric(item: Item, answer: str, student: str | None) -> Verdict:
    got = _number(answer)
    with mpmath.workdps(30):
        number = number_value(got, {})  # bounded: a tower of exponentials has no value, fast
    if number is None and got.has(sp.zoo, sp.nan, sp.oo, -sp.oo):
        return Verdict(WRONG, f"Not right: '{_quote(answer)}' is not a finite number.")
    if number is None:
        return Verdict(UNREADABLE, f"Cannot read this answer: '{_quote(answer)}' is too large to evaluate.")
    value = complex(number)
    key = numeric_key(item, student=student)
    if value.imag == 0 and within(value.real, key, item):
        return _right(item)
    for known in item.feedback:
        wrong = _numeric_value(parse(known.answer, _numeric_namespace()), student)
        if value.imag == 0 and within(value.real, wrong, item):
            return Verdict(WRONG, f"Not right: {known.says}")
    return Verdict(WRONG, f"Not right: recompute it step by step with your own numbers; the question "
                          f"asks for {item.decimals} decimals.")


def within(value: float, key: float, item: Item) -> bool:
    """Does ``value`` round to ``key`` at the item's decimals (half a unit of the last decimal)?"""
    return abs(value - key) <= item.tolerance * (1 + 1e-9)


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
    seed = seed_of(item.id, answer)
    result = proof.compare(got, key, seed=seed)
    if result.equal:
        found = proof.shortcuts(got)
        hint = "use " + " and ".join(found) if found else "write it with fewer factors"
        return _not_simplest(item, got, hint) or _right(item)
    hint = (_known_wrong(item, got, lambda a, b: proof.compare(a, b, seed=seed))
            or proof.explain(got, key) or _reason(result))
    return Verdict(WRONG, f"Not right: {hint}")


def _chain_parts(item: Item, answer: str) -> tuple[list[str], list]:
    """The chain's parts as typed and as parsed."""
    parts = answer.replace("==", "=").split("=")
    if any(not p.strip() for p in parts):
        raise Unreadable("separate the steps with single '=' signs")
    ns = namespace(item)
    return [p.strip() for p in parts], [parse(p, ns) for p in parts]


def _chain(item: Item, answer: str, student: str | None) -> Verdict:
    """Right when every step follows from the one before and the last step is the target as written."""
    parts, steps = _chain_parts(item, answer)
    start, target = parse(item.start, namespace(item)), _parsed_key(item)
    if steps[0] == start:  # the student wrote the given start out: the steps come after it
        parts, steps = parts[1:], steps[1:]
    if not steps:
        return Verdict(WRONG, f"Not finished: that is only the start; write the steps from it to {item.key}.")
    for verdict in proof.check_chain(steps, start=start, seed=seed_of(item.id, answer)):
        if not verdict.ok:
            return Verdict(WRONG, f"Step {verdict.index} ('{_quote(parts[verdict.index - 1])}') "
                                  f"does not follow: {verdict.reason}")
    if steps[-1] != target:
        return Verdict(WRONG, f"Not finished: every step holds, but the chain stops at "
                              f"'{_quote(parts[-1])}'; it must end at {item.key}.")
    if not any(step not in (start, target) for step in steps[:-1]):
        return Verdict(WRONG, f"Not finished: show the steps between the start and {item.key}, "
                              "not only the end.")
    return _right(item)
