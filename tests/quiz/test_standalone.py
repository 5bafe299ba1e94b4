"""Questions about graded items standing alone: nothing a student sees gives away a graded item's answer.

What a student sees of an item: of a graded item, what its student copy keeps (title, prompt,
options or steps) and what grading shows (feedback, per-option reasons, the messages of
``not_in_answer``, explanation); of a practice item, everything, key and rubric included (its
student copy ships whole, in the student wheel).

Checked here, for every graded item (the target) and every other item (the source):

- no piece of the source's text that could be typed as an answer is accepted by the target;
- nor any piece of a matrix formula in it after up to ``steps.MAX_RULES`` of the chain's stated rules
  (a start that shows ``softmax(P S P^T)`` is ``P A P^T`` two rules on: proof-a's answer);
- nor the same pieces with the projections renamed into each other (Q, K and V are built alike from
  X, so a prompt that shows ``K' = PK`` gives ``Q' = PQ`` by analogy);
- a right option of a choice or order target (a statement of six words or more) does not appear in
  the source word for word;
- an order item's key is not its steps in the order listed.

Left to reading, since no parser can tell them: a result stated in words ("the queries are permuted
like the input rows", "transposing reverses the order", "the permutation cancels against its
transpose"); proof-order's steps say what each step does, not what it gives. Two graded items that
ask one fact in two forms (equivariance in words, proof-z as a formula) share it: each one's
explanation, shown once its own answer is in, states it.
"""

import itertools
import re
from functools import lru_cache

import pytest
import sympy as sp

from attnlab.quiz import bank, proof, steps
from attnlab.quiz.check import RIGHT, check
from attnlab.quiz.parse import Unreadable, parse

_LATEX = [
    (re.compile(r"\\(?:mathrm|operatorname|text)\{([^{}]*)\}"), r"\1"),
    (re.compile(r"\\sqrt\{([^{}]*)\}"), r"sqrt(\1)"),
    (re.compile(r"\^\{([^{}]*)\}"), r"^(\1)"),
    (re.compile(r"_\{([^{}]*)\}"), r"_\1"),
    (re.compile(r"\\(?:left|right|,|;|!)"), " "),
    (re.compile(r"\\cdot"), "*"),
]
_PROJECTION = re.compile(r"\b(W_)?([QKV])\b")


def _plain(math: str) -> str:
    for pattern, by in _LATEX:
        math = pattern.sub(by, math)
    return math


def shown_text(item, copy=None) -> str:
    """Everything a student may see of ``item``: for a graded item what its student copy ``copy``
    keeps and what grading shows; for a practice item all of it."""
    kept = item if copy is None or item.practice else copy
    parts = [kept.title, kept.prompt, kept.start, *kept.options.values()]
    parts += [item.explanation, *item.option_feedback.values(), *(f.says for f in item.feedback)]
    parts += [str(why) for why in item.not_in_answer.values()]
    if item.practice:
        keys = item.key if isinstance(item.key, list) else [item.key]
        parts += [str(k) for k in keys if k is not None] + [*item.rubric, item.solution]
    return "\n".join(p for p in parts if p)


def fragments(text: str) -> set[str]:
    """Every piece of ``text`` that could be typed as an answer: math and code spans, bracketed
    groups, and the pieces between '=', ',', ';', ':' and a few joining words, of those and of
    the prose."""
    spans = re.findall(r"\$([^$]+)\$", text) + re.findall(r"`([^`]+)`", text)
    pieces = {_plain(s) for s in spans} | {text}
    pieces |= {group for piece in pieces for group in re.findall(r"\(([^()]*)\)", piece)}
    out: set[str] = set()
    for piece in pieces:
        for part in re.split(r"=|,|;|:|\n|\bso\b|\bis\b|\bwith\b|\bthat\b", piece):
            # with and without the brackets at its ends: "(P V)" is P V, "softmax(S) (P V)" needs its last
            out |= {p for p in (part.strip(" .'\"()"), part.strip(" .'\"")) if p and len(p) < 120}
    return out


def _text(expr) -> str:
    return sp.sstr(expr).replace("Softmax(", "softmax(")


@lru_cache(maxsize=None)
def rule_forms(piece: str) -> frozenset[str]:
    """Every run of factors of ``piece`` (a matrix formula) and of each form up to ``MAX_RULES``
    stated rules from it; empty when ``piece`` is not a product of the proof's matrices."""
    try:
        expr = parse(piece, proof.namespace())
    except Unreadable:
        return frozenset()
    if not isinstance(expr, sp.MatrixExpr):
        return frozenset()
    reach = steps._reachable(  # the chain's own rule search, so that this counts rules as the chain does
        expr,
        steps.MAX_RULES,
        permutation=proof.M[proof.PERMUTATION],
        identity=proof.IDENTITY,
        folds=proof.FOLDS,
        vanish=2,
    )
    runs = {
        _text(coeff * sp.MatMul(*factors[i:j]))
        for coeff, factors in reach
        for i in range(len(factors))
        for j in range(i + 1, len(factors) + 1)
    }
    return frozenset(runs)


def _rename(piece: str, order: tuple[str, ...]) -> str:
    names = dict(zip("QKV", order))
    return _PROJECTION.sub(lambda m: (m.group(1) or "") + names[m.group(2)], piece)


def renamed(piece: str) -> set[str]:
    """``piece`` with Q, K, V (and W_Q, W_K, W_V) renamed into each other every way."""
    return {_rename(piece, order) for order in itertools.permutations("QKV")}


@lru_cache(maxsize=None)
def candidates(text: str, *, matrices: bool) -> frozenset[str]:
    """What a student could copy from ``text`` as an answer; for a matrix target also what the
    stated rules and the analogy between Q, K and V make of it."""
    pieces = fragments(text)
    if not matrices:
        return frozenset(pieces)
    grown = pieces | {run for piece in pieces for run in rule_forms(piece)}
    return frozenset(name for piece in grown for name in renamed(piece))


def statements(item) -> list[str]:
    """The right options of a choice item that state something (a method's name is no answer)."""
    keys = item.key if isinstance(item.key, list) else [item.key]
    return [item.options[k] for k in keys if len(item.options[k].split()) >= 6]


def graded(items):
    return [i for i in items.values() if not i.practice and i.key is not None and i.type != "free"]


@pytest.fixture(scope="module")
def copies(tmp_path_factory):
    """The bank as the student copy holds it."""
    folder = tmp_path_factory.mktemp("student")
    bank.student_copy(bank_dir=bank.default_folder(), out_dir=folder)
    return bank.load(folder)


def leaks_between(source_text: str, source_id: str, targets) -> list[str]:
    found = []
    for target in targets:
        if target.id == source_id:
            continue
        if target.type in ("choice", "order"):
            found += [
                f"{source_id} shows {target.id}'s right option {option!r}"
                for option in statements(target)
                if option.lower() in source_text.lower()
            ]
            continue
        pieces = candidates(source_text, matrices=target.type in ("proof", "chain"))
        found += [f"{source_id} shows {p!r}, right for {target.id}" for p in sorted(pieces) if _right(target, p)]
    return found


_verdicts: dict[tuple[str, str], bool] = {}


def _right(target, answer: str) -> bool:
    if (target.id, answer) not in _verdicts:
        _verdicts[target.id, answer] = check(target, answer).status == RIGHT
    return _verdicts[target.id, answer]


def test_a_graded_answer_in_another_items_text_is_found(items):
    """Would the search find proof-a's answer if another prompt wrote it out?"""
    leaks = leaks_between("Starting from $Z' = A'V' = (P A P^T)(P V)$, continue.", "elsewhere", [items["proof-a"]])
    assert any("'P A P^T'" in leak for leak in leaks), leaks


def test_an_answer_one_stated_rule_away_is_found(items):
    """Would it find proof-a's answer in a start that shows A'V' = softmax(P S P^T)(P V), which the
    softmax rule and folding softmax(S) into A turn into P A P^T?"""
    start = r"Starting from $Z' = A'V' = \mathrm{softmax}(P S P^T)\,(P V)$, continue."
    leaks = leaks_between(start, "elsewhere", [items["proof-a"]])
    assert any("right for proof-a" in leak for leak in leaks), leaks


def test_an_answer_by_analogy_is_found(items):
    """Would it find proof-q's answer in a prompt that gives "K' = PK" (the keys are built as the
    queries are)?"""
    leaks = leaks_between("With $K' = PK$, write $(K')^T$.", "elsewhere", [items["proof-q"]])
    assert any("right for proof-q" in leak for leak in leaks), leaks


def test_a_practice_items_rubric_is_seen(items):
    """Does what a student sees of a practice item include its rubric and key (its copy ships whole)?"""
    practice = next(i for i in items.values() if i.practice and i.rubric)
    assert practice.rubric[0] in shown_text(practice)
    keyed = next(i for i in items.values() if i.practice and i.type == "symbolic")
    assert str(keyed.key) in shown_text(keyed)


def test_every_graded_item_stands_alone(items, copies):
    """For every graded item and every other item, is what a student sees of the other free of an
    answer the graded one accepts, as written, a few stated rules on, or by the analogy of Q, K, V?"""
    pool = graded(items)
    leaks = []
    for source in items.values():
        leaks += leaks_between(shown_text(source, copies[source.id]), source.id, pool)
    assert not leaks, "\n".join(leaks)


def test_order_key_is_not_the_order_listed(items):
    """Is every order item's key something other than its steps in the order they are listed?"""
    orders = [i for i in items.values() if i.type == "order"]
    assert orders and all(list(i.key) != list(i.options) for i in orders)


def test_the_student_wheel_leaves_out_the_banks_readme():
    """Does the student wheel carry none of quiz/README.md, which quotes right answers to graded
    items as examples (it is for instructors)?"""
    from attnlab import student_tool

    readme = (bank.default_folder() / "README.md").read_text(encoding="utf-8")
    example = "s*cos(k*w) + c*sin(k*w)*(s^2 + c^2)"
    assert example in readme
    shipped = student_tool.files(bank_dir=bank.default_folder())
    assert not [name for name in shipped if name.endswith(".md")]
    assert not [name for name, data in shipped.items() if example.encode() in data]
