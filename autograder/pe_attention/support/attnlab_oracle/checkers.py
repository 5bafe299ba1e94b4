"""Part C: telling a student's permutation checker apart from the known wrong ones.

A checker's mistake cannot be read off one answer: "True for reversed rows" fits comparing sorted
rows, checking only the identity and any() instead of all() alike. So ``diagnose`` asks the
student's checker a fixed battery of questions, answers the same battery with a simulation of every
known wrong checker, and names a mistake only when exactly one of them gives the student's answers.

``OnePermutationOnly`` is a function built against whichever checker calls it: equivariant (or
invariant) under the first reordering of X it is called on and under no other, so any checker that
tries a single permutation answers True for a function that is not equivariant (or invariant).
"""

import functools
import itertools
import weakref

import numpy as np

from . import evidence, probes
from .compare import MUTATION_LABEL, advice, call_as, call_as_noting_changes, show_call

__all__ = [
    "expect",
    "one_permutation_only",
    "diagnose",
    "single_default_permutation",
    "battery",
    "simulations",
    "OnePermutationOnly",
]

EQUIVARIANT, INVARIANT = "equivariant", "invariant"
SHAPE_ERROR = "an error for a result of another shape"
NOUN = {EQUIVARIANT: "equivariance", INVARIANT: "invariance"}
GENERIC = {
    EQUIVARIANT: "f(P X) must be close to P f(X), within atol, for every permutation tried",
    INVARIANT: "f(P X) must be close to f(X), within atol, for every permutation tried",
}


# ---- asking a student's checker (the hidden tests of both checkers)


def _given(perms, kwargs):
    given = {} if perms is None else {"perms": [list(p) for p in perms]}
    given.update(kwargs)
    return given


def _extra(given):
    # perms as the student passes it, a list of index lists (bare tuples would read as separate arguments)
    return "".join(f", {k}={v}" for k, v in given.items())


def _shown(kind, probe, X, given):
    return f"is_permutation_{kind}(f=<{probe.what}>, X=<a {X.shape} array>{_extra(given)})"


def _case(probe, X, given):
    """The question in few words, for a wrong answer (the test's name says which checker)."""
    return f"f = {probe.what}, X of shape {X.shape}{_extra(given)}"


def _rows_seen(lent, X):
    """What the checker's calls of f on other row counts than X's show (none for a right checker:
    every permutation of X keeps its rows), or ""."""
    rows = sorted(getattr(lent, "other_rows", ()))
    if not rows:
        return ""
    counts = ", ".join(map(str, rows))
    return f"your checker called f on arrays of {counts} rows, where X has {len(X)} (every reordering of X has {len(X)} rows)"


def _answer(kind, checker, probe, X, perms, kwargs):
    """The checker's answer, which of its arguments the call changed in place, and what its calls of
    f showed (``_rows_seen``)."""
    given = _given(perms, kwargs)
    lent = probe.lent(X, perms)
    getattr(lent, "other_rows", set()).clear()
    try:
        answer, changed = call_as_noting_changes(_shown(kind, probe, X, given), checker, lent, X, **given)
    except AssertionError as e:
        if probe.f in (probes.rows_through_largest, probes.total_through_largest, probes.total):
            raise AssertionError(
                f"{e} (looks like {SHAPE_ERROR}: a result of a different shape is not {kind}: return False, not "
                "an error)"
            ) from None
        seen = _rows_seen(lent, X)
        if seen:
            raise AssertionError(f"{e} ({seen})") from None
        raise
    if not isinstance(answer, (bool, np.bool_)):
        raise AssertionError(f"{_shown(kind, probe, X, given)} returned {type(answer).__name__}, not a bool")
    return bool(answer), changed, _rows_seen(lent, X)


def expect(kind, checker, probe, X, expected, perms=None, **kwargs):
    """Fail unless the student's ``is_permutation_<kind>`` answers ``expected`` for the probe, saying
    what f does on this question (``evidence``) and naming its mistake when only one known mistake
    gives the answers it gives. Returns the
    arguments the call changed in place (``compare.assert_not_changed``)."""
    answer, changed, seen = _answer(kind, checker, probe, X, perms, kwargs)
    if answer == expected:
        return changed
    # a checker that reorders the caller's X in place compares f on permutations of permutations:
    # that it changed X is certain (the call's arguments were compared, as for every function), and
    # said first, as any other function that changes its input is told
    if changed:
        shown = ", ".join({0: "f", 1: "X"}.get(k, str(k)) for k in changed)
        why = advice(MUTATION_LABEL, "work on a copy and leave the caller's X as it was")
        raise AssertionError(
            f"{_case(probe, X, _given(perms, kwargs))}: returned {answer}, expected {expected}, and changed its input "
            f"{shown} in place: it looks like {MUTATION_LABEL}: {why}"
        )
    found = None
    if isinstance(probe.f, OnePermutationOnly) and answer:
        found = single_default_permutation(kind, checker, probe)
    found = found or diagnose(kind, checker, (probe, X, perms, kwargs), answer)
    # the facts of this question first (what f does under which permutation), a cause only when one
    # known wrong checker answers as this one does
    facts = evidence.question(kind, probe, X, perms, kwargs)
    if facts is None and isinstance(probe.f, OnePermutationOnly):
        facts = f"your checker called f on {probe.f.tried()} reordering(s) of X besides X itself"
    said = "; ".join(filter(None, [facts or GENERIC[kind], seen]))
    named = f"; looks like {found[0]}: {advice(*found)}" if found else ""
    raise AssertionError(
        f"{_case(probe, X, _given(perms, kwargs))}: returned {answer}, expected {expected}: {said}{named}"
    )


def one_permutation_only(X, kind):
    """A probe that is ``kind`` under the first reordering a checker tries and under no other."""
    f = OnePermutationOnly(X, kind)
    return probes.Probe(f.what, f, False, False, pure=False)


def _battery_X(n=5):
    # distinct rows, and sums whose round-off depends on the order (for the exact-equality mistake)
    X = np.array([[0.1, 0.7, 0.3], [0.2, 0.1, 0.9], [0.3, 0.2, 0.4], [0.7, 0.3, 0.6], [1e-3, 0.6, 0.2]])
    return X[:n]


def battery(kind):
    """The questions: (probe, perms or None, keyword arguments)."""
    rows, attn = probes.row_probes(5), probes.attention_probes(d_model=3, seed=3)
    swap, two, cycles = [(1, 0, 2, 3, 4)], [(1, 0, 2, 3, 4), (0, 1, 3, 2, 4)], [(1, 2, 0, 3, 4), (4, 0, 1, 2, 3)]
    common = [
        # any() says True and a loose tolerance False here; the other way round on the next one
        (rows["offsets 0,0,10,.."], two, {}),
        (rows["offsets 1e-3"], two, {}),
        (rows["affine"], swap, {}),
        (rows["affine"], [(1, 2, 0, 3, 4)], {}),
        (rows["reverse"], None, {}),
        (rows["identity"], None, {}),
        (rows["mean"], cycles, {}),
        (rows["offsets 0,0,1,.."], two, {}),
        (rows["offsets 0,0,1,.."], None, {}),
        (rows["offsets 1e-3"], None, {}),
        (rows["first row offset"], None, {}),
        (attn["self-attention + PE"], None, {}),
        # equivariant under the reversal only: a checker that tries just the reversal says True
        (rows["palindromic offsets"], None, {}),
        # the second permutation passes, the first moves the changed row 0: any() says True, a
        # checker that compares only the first row False
        (rows["first row offset"], two, {}),
        # the output's shape changes with the order: a checker that compares only shapes says False
        (rows["rows through largest"], None, {}),
        # outputs of one shape are equal: a checker that skips the other shapes says True
        (rows["total through largest"], None, {}),
        # moved rows keep the output's norm but not its rows: comparing norms says True, sorted rows False
        (rows["first row negated"], None, {}),
    ]
    # the first given permutation passes and the second fails in the first row: a checker that tries only
    # the first says True, one that compares only the first row False
    if kind == EQUIVARIANT:
        return common + [
            (rows["small offsets"], None, {"atol": 1e-2}),
            # differences of at most 4e-3 on rows near 100, within atol=1e-2: a checker that ignores atol
            # says False, one that takes it as relative (1e-2 * 100) True
            (rows["large rows, offsets 1e-3"], None, {"atol": 1e-2}),
            (attn["self-attention"], cycles, {}),
            (rows["first row offset"], [(0, 1, 3, 2, 4), (1, 0, 2, 3, 4)], {}),
        ]
    return common + [
        # invariant bit for bit: exact equality says True here, a checker that always says False does not
        (rows["column maximum"], None, {}),
        (rows["weighted sum 1e-4"], None, {"atol": 1e-2}),
        (rows["weighted sum 1e-4"], None, {}),
        (attn["pooled self-attention"], cycles, {}),
        (rows["first two summed"], two, {}),
        (attn["pooled self-attention + PE"], None, {}),
        # near 0 and within atol=1e-2: a tolerance taken as relative (np.allclose(a, b, atol)) says False
        (rows["centred weighted sum 1e-4"], None, {"atol": 1e-2}),
        (rows["first two summed"], None, {}),
        (rows["first row and rest sum"], None, {}),
        (rows["first two summed"], [(1, 0, 2, 3, 4), (2, 1, 0, 3, 4)], {}),
        # the other way round: any() says True, a checker that tries only the first given False
        (rows["first two summed"], [(0, 1, 3, 2, 4), (1, 0, 2, 3, 4)], {}),
    ]


def _simulate(
    kind,
    f,
    X,
    perms,
    atol=1e-8,
    *,
    target=None,
    reduce=all,
    compare="allclose",
    tol=None,
    inverse=False,
    default=None,
    atol_as_rtol=False,
    first_given=False,
    skip_shape=False,
):
    """A checker with one knob turned: what it answers for f, X, perms, atol. The answers reach
    ``reduce`` one permutation at a time, so all() stops at the first that fails."""
    target = target or kind
    n = len(X)
    if perms is None:
        perms = default(n) if default else probes.reorderings(n)
    elif first_given:
        perms = list(perms)[:1]
    atol = atol if tol is None else tol
    fX = np.asarray(f(X.copy()), dtype=np.float64)

    def answer(p):
        p = np.asarray(p)
        fPX = np.asarray(f(X[p]), dtype=np.float64)
        if target == INVARIANT:
            want = fX
        elif fX.ndim == 0 or len(fX) != n:
            return False
        else:
            want = fX[np.argsort(p)] if inverse else fX[p]
        if compare == "sums":
            return bool(np.isclose(fPX.sum(), want.sum(), atol=atol))
        if compare == "means":
            return bool(np.isclose(fPX.mean(), want.mean(), atol=atol))
        if compare == "norms":
            return bool(np.isclose(np.linalg.norm(fPX), np.linalg.norm(want), atol=atol))
        if fPX.shape != want.shape:
            return skip_shape
        if compare == "exact":
            return bool(np.array_equal(fPX, want))
        if compare == "sorted":
            a, b = fPX.reshape(len(fPX), -1), want.reshape(len(want), -1)
            return bool(np.allclose(a[np.lexsort(a.T[::-1])], b[np.lexsort(b.T[::-1])], atol=atol))
        if compare == "sorted columns":
            return bool(np.allclose(np.sort(fPX, axis=0), np.sort(want, axis=0), atol=atol))
        if compare == "sorted entries":
            return bool(np.allclose(np.sort(fPX, axis=None), np.sort(want, axis=None), atol=atol))
        if compare == "shape":
            return True
        if compare == "first row":
            return bool(np.allclose(fPX[:1], want[:1], atol=atol))
        if atol_as_rtol:  # np.allclose(a, b, atol): the third argument is rtol
            return bool(np.allclose(fPX, want, rtol=atol))
        return bool(np.allclose(fPX, want, atol=atol, rtol=1e-9))

    return reduce(answer(p) for p in perms)


class _Question:
    """One question (a pure probe's f on X) as every simulated checker sees it, answered for all of
    them at once: what ``_simulate`` answers, without working out f(X[p]) once per simulation and
    comparing one permutation at a time (the battery's simulations took about a second, once per
    worker). f(X) and each f(X[p]) are worked out once (f is pure: the same whichever simulation
    asks), and each way of comparing is answered for every permutation it meets in one numpy call
    over the stacked outputs: ``np.isclose`` and ``==`` work entry by entry, so a row of the stack
    gets the answer ``np.allclose`` or ``np.array_equal`` gives for that permutation alone. The
    answers reach ``reduce`` one permutation at a time as before; none of these comparisons can
    raise, so answering permutations that all() would not have reached changes nothing."""

    def __init__(self, f, X):
        self.f, self.X, self.n = f, X, len(X)
        self.fX = np.asarray(f(X.copy()), dtype=np.float64)
        self.reorderings = [tuple(p) for p in probes.reorderings(self.n)]
        self.outputs = {}  # permutation (a tuple) -> f(X[p])
        self.wanted = {}  # (inverse, permutation) -> the equivariant result f(X)[p] (or f(X)[p^-1])
        self.answered = {}  # a way of comparing -> {permutation: answer}

    def simulate(
        self,
        kind,
        perms,
        atol=1e-8,
        *,
        target=None,
        reduce=all,
        compare="allclose",
        tol=None,
        inverse=False,
        default=None,
        atol_as_rtol=False,
        first_given=False,
        skip_shape=False,
    ):
        """``_simulate(kind, f, X, perms, atol, **knob)``."""
        if perms is None:
            perms = default(self.n) if default else self.reorderings
        elif first_given:
            perms = list(perms)[:1]
        perms = [p if type(p) is tuple else tuple(p) for p in perms]
        way = (target or kind, inverse, compare, atol if tol is None else tol, skip_shape, atol_as_rtol)
        answered = self.answered.setdefault(way, {})
        new = [p for p in dict.fromkeys(perms) if p not in answered]
        if new:
            answered.update(zip(new, self._compare(way, new)))
        return reduce(answered[p] for p in perms)

    def _output(self, p):
        if p not in self.outputs:
            self.outputs[p] = np.asarray(self.f(self.X[np.asarray(p)]), dtype=np.float64)
        return self.outputs[p]

    def _wanted(self, inverse, p):
        if (inverse, p) not in self.wanted:
            at = np.asarray(p)
            self.wanted[inverse, p] = self.fX[np.argsort(at)] if inverse else self.fX[at]
        return self.wanted[inverse, p]

    def _compare(self, way, perms):
        target, inverse, compare, atol, skip_shape, atol_as_rtol = way
        fX, answers = self.fX, [False] * len(perms)
        if target != INVARIANT and (fX.ndim == 0 or len(fX) != self.n):
            return answers
        got = [self._output(p) for p in perms]
        if target == INVARIANT:
            want = [fX] * len(perms)
        else:
            want = [self._wanted(inverse, p) for p in perms]
        if compare in ("sums", "means", "norms"):
            total = {"sums": np.sum, "means": np.mean, "norms": np.linalg.norm}[compare]
            close = np.isclose(np.array([total(a) for a in got]), np.array([total(b) for b in want]), atol=atol)
            return [bool(c) for c in close]
        same = {}  # an output shape -> the permutations whose output and wanted result both have it
        for i, (a, b) in enumerate(zip(got, want)):
            if a.shape != b.shape:
                answers[i] = skip_shape
            else:
                same.setdefault(a.shape, []).append(i)
        for rows in same.values():
            for i, answer in zip(rows, self._compare_same(compare, atol, atol_as_rtol, got, want, rows)):
                answers[i] = bool(answer)
        return answers

    @staticmethod
    def _compare_same(compare, atol, atol_as_rtol, got, want, rows):
        """The answers for ``rows``, whose outputs and wanted results all have one shape."""
        if compare == "shape":
            return [True] * len(rows)
        if compare == "sorted":

            def arranged(a):
                a = a.reshape(len(a), -1)
                return a[np.lexsort(a.T[::-1])]

        elif compare == "sorted columns":

            def arranged(a):
                return np.sort(a, axis=0)

        elif compare == "sorted entries":

            def arranged(a):
                return np.sort(a, axis=None)

        elif compare == "first row":

            def arranged(a):
                return a[:1]

        else:

            def arranged(a):
                return a

        A, B = np.stack([arranged(got[i]) for i in rows]), np.stack([arranged(want[i]) for i in rows])
        if compare == "exact":
            same = A == B
        elif compare in ("sorted", "sorted columns", "sorted entries", "first row"):
            same = np.isclose(A, B, atol=atol)
        elif atol_as_rtol:  # np.allclose(a, b, atol): the third argument is rtol
            same = np.isclose(A, B, rtol=atol)
        else:
            same = np.isclose(A, B, atol=atol, rtol=1e-9)
        return same.all(axis=tuple(range(1, same.ndim)))  # per permutation (True for empty outputs, as allclose)


def simulations(kind):
    """{mistake: (why, [simulated checkers])}; the right checker is under None."""
    other = INVARIANT if kind == EQUIVARIANT else EQUIVARIANT
    compare_to = "f(X)" if kind == INVARIANT else "P f(X)"
    sims = {
        None: ("", [dict()]),
        # which one of a default set passes depends on the set: compare where the perms are given
        "any() instead of all()": (
            "every permutation must pass, not just one of them",
            [dict(reduce=any, given_only=True)],
        ),
        "exact equality": (
            "round-off changes with the order of the rows: compare within atol (np.allclose)",
            [dict(compare="exact")],
        ),
        f"a check for {NOUN[other]}": (f"{kind} means f(P X) ≈ {compare_to}", [dict(target=other)]),
        "checking only the identity": (
            "f(X) always equals f(X); permute the rows of X",
            [dict(reduce=lambda answers: True), dict(default=lambda n: [tuple(range(n))])],
        ),
        "comparing sorted rows or row multisets": (
            f"f(P X) must equal {compare_to} row for row, in order",
            [
                dict(compare="sorted"),
                dict(compare="sorted columns"),
                dict(compare="sorted", tol=1e-8),
                dict(compare="sorted entries"),
            ],
        ),
        "comparing only the shapes": (
            f"equal shapes are not equal values: compare f(P X) with {compare_to} entry by entry, within atol",
            [dict(compare="shape")],
        ),
        "only the first of the given permutations": (
            "every permutation in perms must pass: loop over all of them",
            [dict(first_given=True)],
        ),
        "comparing the first row only": (
            f"every row of f(P X) must be close to {compare_to}, not just the first",
            [dict(compare="first row")],
        ),
        "comparing sums of the outputs": (
            f"equal sums (or means) do not make equal arrays: compare f(P X) with {compare_to} entry by entry",
            [dict(compare="sums"), dict(compare="means")],
        ),
        "comparing the norms of the outputs": (
            f"equal norms do not make equal arrays: compare f(P X) with {compare_to} entry by entry",
            [dict(compare="norms")],
        ),
        "atol ignored": (
            "compare within the `atol` you are given: np.allclose(a, b, atol=atol)",
            [dict(tol=1e-8), dict(tol=1e-5), dict(tol=1.0, given_only=True)],
        ),
        # its own mistake, not "atol ignored": such a checker does use atol, and is told what it does
        "atol taken as a relative tolerance": (
            "atol bounds each entry's difference absolutely, |a - b| <= atol + rtol*|b|: "
            "np.allclose(a, b, atol=atol), not rtol=atol (np.allclose's third argument) or atol*|b|",
            [dict(atol_as_rtol=True)],
        ),
        SINGLE: (
            SINGLE_WHY,
            [
                dict(default=lambda n: [(1, 0) + tuple(range(2, n))]),
                dict(default=lambda n: [tuple(range(n))[::-1]], reversal=True),
            ],
        ),
        "too few default permutations": (
            "with perms=None, the permutations tried must move every row, row 0 included",
            [dict(default=lambda n: list(itertools.islice(itertools.permutations(range(n)), 1, 24)))],
        ),
    }
    if kind == INVARIANT:
        # an equivariance checker rejects another length before comparing: only here can it skip
        sims["outputs of another shape skipped"] = (
            "an output of another shape is not invariant: answer False, do not skip the permutation",
            [dict(skip_shape=True)],
        )
        # the invariance battery cannot tell these two from a right checker: leave them out there
        for name, drop in ((SINGLE, "reversal"),):
            why, knobs = sims[name]
            sims[name] = (why, [k for k in knobs if not k.get(drop)])
    if kind == EQUIVARIANT:
        sims["the inverse permutation"] = (
            "row i of P X is X[p[i]], so compare f(X[p]) with f(X)[p]",
            [dict(inverse=True)],
        )
    return sims


SINGLE = "a single default permutation"
SINGLE_WHY = "with perms=None try several permutations (all of them for small n), not one"


def _ask(checker, kind, probe, X, perms, kwargs):
    given = _given(perms, kwargs)
    try:
        answer = call_as(lambda: show_call(checker, (probe.f, X), given), checker, probe.lent(X, perms), X, **given)
    except AssertionError:
        return "raised"
    return bool(answer) if isinstance(answer, (bool, np.bool_)) else "not a bool"


def _agree(student, simulated):
    # a checker that raised has not said what it would answer: that question tells nothing about it
    return all(a is None or s == a or s == "raised" for s, a in zip(student, simulated))


def _answers(kind, questions, knob):
    """The simulated checker's answers (``_simulate``'s, for each of ``questions``, a ``_Question``
    with its perms and keyword arguments); None where it is not compared (``given_only``: questions
    with perms=None)."""
    knob = dict(knob)
    given_only = knob.pop("given_only", False)
    knob.pop("reversal", None)
    with np.errstate(all="ignore"):
        return [
            None if given_only and perms is None else question.simulate(kind, perms, **kwargs, **knob)
            for question, perms, kwargs in questions
        ]


def _every_answer(kind, questions):
    """{mistake: [each simulated checker's answers to ``questions``, (probe, X, perms, kwargs) each]}."""
    with np.errstate(all="ignore"):
        asked = [
            (_Question(probe.f, np.asarray(X, dtype=np.float64)), perms, kwargs)
            for probe, X, perms, kwargs in questions
        ]
    return {name: [_answers(kind, asked, knob) for knob in knobs] for name, (_, knobs) in simulations(kind).items()}


_SIMULATED = {}  # kind -> the battery's questions and every simulation's answers (they never change)
_ASKED = weakref.WeakKeyDictionary()  # a student's checker -> its answers to the battery


def _battery(kind):
    if kind not in _SIMULATED:
        X = _battery_X()
        questions = [(probe, X, perms, kwargs) for probe, perms, kwargs in battery(kind)]
        _SIMULATED[kind] = questions, _every_answer(kind, questions)
    return _SIMULATED[kind]


def _student(kind, checker, questions):
    try:
        cached = _ASKED.get(checker)
    except TypeError:  # not weakly referenceable: ask again
        cached = None
    if cached is None or cached[0] != kind:
        cached = kind, [_ask(checker, kind, *q) for q in questions]
        try:
            _ASKED[checker] = cached
        except TypeError:
            pass
    return cached[1]


_FAILING = {}  # (kind, a failing question) -> every simulation's answers to it: a test's data never change


def _failing_answers(kind, extra):
    """{mistake: [each simulated checker's answers to ``extra``]}, worked out once per question."""
    key = None
    if extra:
        probe, X, perms, kwargs = extra[0]
        X = np.asarray(X)
        perms = None if perms is None else tuple(tuple(int(i) for i in p) for p in perms)
        # the probe itself, not its id(): the key keeps it alive, so no other object can pass for it
        key = (kind, probe, X.dtype.str, X.shape, X.tobytes(), perms, tuple(sorted(kwargs.items())))
    if key is None or key not in _FAILING:
        answers = _every_answer(kind, extra)
        if key is None:
            return answers
        if len(_FAILING) >= 256:
            _FAILING.clear()
        _FAILING[key] = answers
    return _FAILING[key]


def diagnose(kind, checker, failing=None, answer=None):
    """``(mistake, why)`` when exactly one known wrong checker answers the battery (and ``failing``,
    a (probe, X, perms, kwargs) question the student's checker got wrong) as the student's does.
    ``answer``: the checker's answer to ``failing`` when the caller has just had it from the same
    call (``expect``), which asking again would only repeat."""
    questions, simulated = _battery(kind)
    student = list(_student(kind, checker, questions))
    extra = []
    if failing is not None and not isinstance(failing[0].f, OnePermutationOnly):
        extra = [failing]
        student.append(_ask(checker, kind, *failing) if answer is None else answer)
    more = _failing_answers(kind, extra)
    matches = [
        (name, why)
        for name, (why, knobs) in simulations(kind).items()
        if any(_agree(student, answers + more[name][k]) for k, answers in enumerate(simulated[name]))
    ]
    if len(matches) == 1 and matches[0][0] is not None:
        return matches[0]
    return None


def single_default_permutation(kind, checker, probe):
    """``(mistake, why)`` when ``probe`` (a OnePermutationOnly) saw one reordering only and the checker
    answers every battery question with given permutations right: its default set is one permutation."""
    if probe.f.tried() != 1:
        return None
    questions, simulated = _battery(kind)
    student, right = _student(kind, checker, questions), simulated[None][0]
    if any(perms is not None and s != a for (_, _, perms, _), s, a in zip(questions, student, right)):
        return None
    return SINGLE, SINGLE_WHY


class OnePermutationOnly(probes.Tabled):
    """X + offsets[k] on row k, moving with the rows only for X itself and the first reordering of
    X it sees: equivariant under that one permutation, not under any other (for ``kind``
    "invariant": the row sum, plus 1 for every reordering but X and the first one). Lent with its
    two answers on every default reordering (``probes.Tabled``), the moving and the other one, so
    that it answers those calls as a pure probe does."""

    def __init__(self, X, kind):
        self.X, self.kind = np.array(X, dtype=np.float64), kind
        super().__init__(len(self.X))
        self.offsets = np.arange(len(self.X), dtype=np.float64)
        # a checker calls f on exact reorderings of X: each row found by its bytes, in one look-up
        self.rows = {}
        for i, row in enumerate(self.X):
            self.rows.setdefault(row.tobytes(), i)
        self.what = f"a function that is {kind} under the first permutation a checker tries and under no other"

    def order(self, Y):
        """sigma with Y = X[sigma], or None when Y is not a reordering of X."""
        Y = np.asarray(Y, dtype=np.float64)
        if Y.shape != self.X.shape:
            return None
        exact = [self.rows.get(row.tobytes()) for row in Y]
        if sorted(i for i in exact if i is not None) == list(range(len(self.X))):
            return tuple(exact)
        sigma = [int(np.argmin(np.abs(self.X - row).sum(axis=1))) for row in Y]
        if sorted(sigma) != list(range(len(self.X))) or not np.allclose(self.X[sigma], Y, atol=1e-12):
            return None
        return tuple(sigma)

    def __call__(self, Y):
        Y = np.array(Y, dtype=np.float64)
        sigma = self.order(Y)
        return self._output(Y, sigma, sigma is not None and self.met.meet(sigma))

    def _output(self, Y, sigma, moves):
        if self.kind == INVARIANT:
            return Y.sum(axis=0) + (0.0 if moves else 1.0)
        return Y + (self.offsets[list(sigma)] if moves else self.offsets)[:, None]

    def _table(self):
        return _stateful_table(self.kind, self.X.shape, self.X.tobytes())

    def _answers_of(self):
        inputs, moving, other, sigmas = [], [], [], []
        for p in [tuple(range(len(self.X)))] + probes.reorderings(len(self.X)):
            Y = self.X[list(p)]
            sigma = self.order(Y)
            if sigma is not None and sigma not in sigmas:
                inputs.append(Y)
                moving.append(self._output(Y, sigma, True))
                other.append(self._output(Y, sigma, False))
                sigmas.append(sigma)
        return inputs, moving, other, sigmas

    def tried(self):
        """How many different non-identity reorderings of X the checker called f on."""
        return len(self.met.seen - {self.met.identity})


@functools.lru_cache(maxsize=32)
def _stateful_table(kind, shape, data):
    """``OnePermutationOnly``'s table for X (its shape and bytes), made once per process: every
    submission's tests lend one for the same X, each fresh to meet a checker of its own."""
    return probes.stacked(*OnePermutationOnly(np.frombuffer(data).reshape(shape), kind)._answers_of())
