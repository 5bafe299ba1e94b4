"""``attnlab quiz verify``: every key derived from the definitions, and the facts they rest on proved.

The facts (softmax commutes with permutations, self-attention is equivariant, P^T P = I, PE breaks
equivariance) are proved exactly with symbolic matrices. Each item's key is then derived from
``quiz/definitions.yaml``: its ``holds`` equations (over ANSWER, the key) must hold on the
symbols' domains, with the symbols' domains those of the definitions; a proof key must hold in
random worlds (sizes, inputs, permutation, d_k) built from the matrix definitions; a numeric key
must hold for the notes' numbers and for many students' variants, match the value the notes
print at the decimals the prompt asks for, and stay nontrivial in every variant. Every key must
also grade right, and every known wrong answer wrong.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import sympy as sp

from . import bank, check, definitions, proof, variants
from .domains import seed_of
from .equivalence import compare
from .parse import Namespace, Unreadable, parse


@dataclass(frozen=True)
class Result:
    name: str
    ok: bool
    detail: str = ""


def softmax_rows(S: sp.Matrix) -> sp.Matrix:
    rows = []
    for i in range(S.rows):
        e = [sp.exp(S[i, j]) for j in range(S.cols)]
        total = sp.Add(*e)
        rows.append([x / total for x in e])
    return sp.Matrix(rows)


def permutation(perm: tuple[int, ...]) -> sp.Matrix:
    """``P`` with ``(P X)[i] = X[perm[i]]``."""
    return sp.Matrix(len(perm), len(perm), lambda i, j: 1 if perm[i] == j else 0)


def _symbolic(name: str, rows: int, cols: int) -> sp.Matrix:
    return sp.Matrix(rows, cols, lambda i, j: sp.Symbol(f"{name}_{i}{j}", real=True))


def softmax_commutes_with_permutations() -> Result:
    """softmax(P S P^T) = P softmax(S) P^T for every permutation at n = 3 and 4, S symbolic."""
    count = 0
    for n in (3, 4):
        S = _symbolic("s", n, n)
        for perm in itertools.permutations(range(n)):
            P = permutation(perm)
            if softmax_rows(P * S * P.T) != P * softmax_rows(S) * P.T:
                return Result("softmax(P S P^T) = P softmax(S) P^T", False, f"fails for {perm}")
            count += 1
    return Result("softmax(P S P^T) = P softmax(S) P^T", True, f"all {count} permutations, n = 3, 4")


def self_attention(X: sp.Matrix, W_Q: sp.Matrix, W_K: sp.Matrix, W_V: sp.Matrix) -> sp.Matrix:
    d_k = W_K.cols
    return softmax_rows((X * W_Q) * (X * W_K).T / sp.sqrt(d_k)) * (X * W_V)


def self_attention_is_equivariant() -> Result:
    """Z(P X) = P Z(X) with symbolic X (3x2) and weights, for every permutation of 3 rows."""
    X = _symbolic("x", 3, 2)
    W = [_symbolic(w, 2, 2) for w in ("q", "k", "v")]
    Z = self_attention(X, *W)
    for perm in itertools.permutations(range(3)):
        P = permutation(perm)
        if sp.expand(self_attention(P * X, *W) - P * Z) != sp.zeros(3, 2):
            return Result("Z(P X) = P Z(X)", False, f"fails for {perm}")
    return Result("Z(P X) = P Z(X)", True, "symbolic X, W_Q, W_K, W_V; all 6 permutations")


def permutations_are_orthogonal() -> Result:
    for n in (3, 4):
        for perm in itertools.permutations(range(n)):
            P = permutation(perm)
            if P.T * P != sp.eye(n):
                return Result("P^T P = I", False, f"fails for {perm}")
    return Result("P^T P = I", True, "every permutation, n = 3, 4")


def pe_breaks_equivariance() -> Result:
    """A counterexample: with X = E + PE, permuting the tokens does not permute the output."""
    E = sp.Matrix([[1, 0], [0, 1], [1, 1]])
    PE = sp.Matrix([[0, 1], [sp.sin(1), sp.cos(1)], [sp.sin(2), sp.cos(2)]])
    I2 = sp.eye(2)
    P = permutation((1, 0, 2))
    gap = self_attention(P * E + PE, I2, I2, I2) - P * self_attention(E + PE, I2, I2, I2)
    size = max(abs(float(g.evalf())) for g in gap)
    return Result("adding PE breaks equivariance", size > 1e-6,
                  f"swap tokens 1 and 2, W = I: max |Z(P E + PE) - P Z(E + PE)| = {size:.3f}")


VARIANTS_CHECKED = 60  # students whose numbers every numeric key is derived for
PROOF_SEEDS = 3  # sets of random worlds a proof key is derived in
_DECIMALS = re.compile(r"\bto (\d+) decimals?\b")


def _item_sound(item: bank.Item, defs: definitions.Definitions) -> Result:
    name = f"item {item.id} ({item.where_defined})"
    try:
        problem = _problem(item, defs)
    except (Unreadable, KeyError, ValueError, TypeError) as exc:
        problem = f"{type(exc).__name__}: {exc}"
    except Exception as exc:  # noqa: BLE001 - report a broken item, keep verifying the others
        problem = f"{type(exc).__name__}: {exc}"
    return Result(name, problem is None, problem or "")


def _problem(item: bank.Item, defs: definitions.Definitions) -> str | None:
    """What is wrong with the item, or None."""
    if item.type == "free":
        return None if item.rubric else "no rubric"
    if item.key is None:
        return "no key"
    if item.type in ("choice", "order"):
        keys = item.key if isinstance(item.key, list) else [item.key]
        bad = [k for k in keys if k not in item.options]
        if bad:
            return f"keys not among the options: {bad}"
        derive = _derive_choice if item.type == "choice" else _derive_order
        return derive(item, keys) or _grades_its_key(item)
    if not item.holds:
        return "states no derivation ('holds'): its key would only be graded against itself"
    if bool(item.simplest) != ("simplest" in item.prompt.lower()):
        return "'simplest' must be set exactly when the prompt asks for the simplest form"
    derive = {"symbolic": _derive_expression, "matrix": _derive_expression, "numeric": _derive_numeric,
              "proof": _derive_proof, "chain": _derive_proof}[item.type]
    return derive(item, defs) or _grades_its_key(item)


def _derive_choice(item: bank.Item, keys: list[str]) -> str | None:
    """The bank says why each wrong option is wrong: exactly the options without such a reason are keys."""
    explained_keys = [k for k in keys if k in item.option_feedback]
    if explained_keys:
        return f"option(s) {explained_keys} are keys, yet 'option_feedback' explains why they are wrong"
    unexplained = [o for o in item.options if o not in keys and o not in item.option_feedback]
    if unexplained:
        return f"wrong option(s) {unexplained} need 'option_feedback' saying why they are wrong"
    return None


def _derive_order(item: bank.Item, keys: list[str]) -> str | None:
    """The steps' ``needs`` allow exactly one order, and it is the key."""
    unknown = sorted({s for k, v in item.needs.items() for s in (k, *v)} - set(item.options))
    if unknown:
        return f"'needs' names steps that do not exist: {unknown}"
    orders = [o for o in itertools.permutations(item.options)
              if all(o.index(x) < o.index(step) for step, before in item.needs.items() for x in before)]
    if len(orders) != 1:
        return f"'needs' allows {len(orders)} orders; it must allow exactly one"
    if list(orders[0]) != keys:
        return f"'needs' gives the order {' '.join(orders[0])}, not the key {' '.join(keys)}"
    return None


def _grades_its_key(item: bank.Item) -> str | None:
    if check.check(item, check.key_text(item)).status != check.RIGHT:
        return "its own key is not graded right"
    for known in item.feedback:
        if item.type != "numeric" and check.check(item, known.answer).status != check.WRONG:
            return f"the known wrong answer {known.answer!r} is not graded wrong"
    return None


def _sides(equation: str) -> tuple[str, str]:
    parts = equation.split("=")
    if len(parts) != 2:
        raise ValueError(f"'{equation}' is not one equation 'left = right'")
    return parts[0], parts[1]


def _derive_expression(item: bank.Item, defs: definitions.Definitions) -> str | None:
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
        left, right = (parse(side, ns) for side in _sides(equation))
        result = compare(left, right, domains=defs.symbols, seed=seed_of("verify", item.id, equation))
        if not result.equal:
            return f"the key does not satisfy {equation} ({result.how})"
    return None


def _derive_proof(item: bank.Item, defs: definitions.Definitions) -> str | None:
    ns = proof.namespace()
    extra = {"ANSWER": parse(str(item.key), ns)}
    if item.start:
        extra["START"] = parse(item.start, ns)
    ns = Namespace(scalars=ns.scalars, matrices={**ns.matrices, **extra}, softmax=True)
    for equation in item.holds:
        left, right = (parse(side, ns) for side in _sides(equation))
        for k in range(PROOF_SEEDS):
            result = proof.compare(left, right, seed=seed_of("verify", item.id, equation, str(k)))
            if not result.equal:
                return f"the key does not satisfy {equation} ({result.how})"
    return None


def _derive_numeric(item: bank.Item, defs: definitions.Definitions) -> str | None:
    stated = _DECIMALS.findall(item.prompt)
    if stated != [str(item.decimals)]:
        return (f"the prompt asks for {' and '.join(stated) or 'no stated number of'} decimals but "
                f"the item grades to {item.decimals}: say 'to {item.decimals} decimals' in the prompt")
    for student in [None, *(f"verify-{k}" for k in range(VARIANTS_CHECKED))]:
        ill = variants.illustration(student=student)
        key = check.numeric_key(item, student=student)
        inputs = {name: definitions.matrix(value) for name, value in ill.inputs.items()}
        ns = Namespace(scalars={**inputs, "ANSWER": sp.Float(key, 30)}, dot_products=True)
        who = "the notes' numbers" if student is None else f"student {student!r}"
        for equation in item.holds:
            left, right = (float(sp.N(parse(side, ns), 30)) for side in _sides(equation))
            if abs(left - right) > 1e-9 * max(1.0, abs(left), abs(right)):
                return f"the key does not satisfy {equation} for {who}: {left:.10g} vs {right:.10g}"
        if not variants.nontrivial(sp.Float(key, 30), item.decimals):
            return f"{who} make it trivial: the key is {key:.{item.decimals}f} at {item.decimals} decimals"
        if student is None and (item.notes is None or abs(round(key, item.decimals) - item.notes) > 1e-12):
            return (f"for the notes' numbers the key rounds to {key:.{item.decimals}f}, but 'notes' says "
                    f"{item.notes}")
    return None


def required_ids(items: dict[str, bank.Item], defs: definitions.Definitions) -> Result:
    missing = [i for i in defs.required if i not in items]
    return Result("required ids", not missing, f"missing {missing}" if missing else f"{len(defs.required)} present")


PROOFS: tuple[Callable[[], Result], ...] = (
    softmax_commutes_with_permutations, self_attention_is_equivariant,
    permutations_are_orthogonal, pe_breaks_equivariance)


def verify(*, folder: Path | None = None) -> list[Result]:
    """Every proof and every item's derivation; the bank from ``folder`` (default: the kit's quiz/)."""
    items = bank.load(folder)
    defs = definitions.load(folder)
    results = [p() for p in PROOFS]
    results.append(required_ids(items, defs))
    return results + [_item_sound(item, defs) for item in items.values()]
