"""Calling the submission and comparing its results with the oracle's.

Every call of student code goes through ``call``: the student gets copies of the test's arrays (so
nothing it does to them can reach an expected value), and an exception it raises becomes a failure
that names the call, e.g. ``sinusoidal_pe(seq_len=5, d_model=7) raised ValueError: ...``.

``assert_close`` first says how the result differs from the right one (``describe``: the strongest
relation between the two that holds, e.g. rows in reverse order, a constant factor, right on the
diagonal and wrong above it), then names a known wrong variant (``looks like <variant>:``) only when
the result matches that variant and no other. Messages never print expected arrays.
The variants are asked for only when the result is wrong: a correct submission never builds them.

Mistakes of the contract rather than the formula get the same kind of line when they are certain:
an integer or boolean array where float64 is promised, float32 arithmetic (every entry of the result
is a float32 number), an argument changed in place, and for ``assert_raises`` a call that returns
(``returned=``) or checks with ``assert``.
"""

import inspect
import re
import weakref

import numpy as np

from . import errors, mistakes
from .describe import Relation, difference

ATOL = 1e-8
RTOL = 1e-6

__all__ = [
    "ATOL",
    "RTOL",
    "call",
    "call_as",
    "show_call",
    "mutated_arguments",
    "call_noting_changes",
    "call_as_noting_changes",
    "assert_unchanged",
    "assert_not_changed",
    "assert_raises",
    "call_refused",
    "raised_by",
    "assert_pair",
    "as_array",
    "assert_shape",
    "assert_close",
    "assert_close_in_turn",
    "same_whatever",
    "STALE_LABEL",
    "matches",
    "defuse",
]

# The grading engine's own failures (a timeout, a crashed sandbox) pass through unchanged: they are
# not the submission raising.
_ENGINE = {"StudentTimeout", "SandboxDied"}


def defuse(text):
    """The student's own text, made unable to pass for a test's ``looks like <variant>:`` label."""
    return re.sub(r"(?i)looks(\s+)like", "looks\u00a0like", str(text))[:300]


def _describe(value):
    if isinstance(value, np.ndarray) and value.dtype.kind in "iub" and value.ndim == 1 and value.size <= 10:
        return str(value.tolist())
    if isinstance(value, np.ndarray):
        return f"a {value.shape} {'boolean ' if value.dtype == np.bool_ else ''}array"
    if isinstance(value, (list, tuple)) and len(value) <= 10 and all(isinstance(v, (int, np.integer)) for v in value):
        return str([int(v) for v in value])
    if isinstance(value, (list, tuple)):
        return f"a list of {len(value)}"
    if callable(value):
        func = getattr(value, "func", value)
        return getattr(func, "__name__", "a function")
    return repr(value)[:40]


def _named(k, value):
    """One argument: an array as its name and shape ("X (5, 6)", "mask (3, 5) boolean"), short
    enough that a call of six arrays stays readable; anything else as ``name=value``."""
    shown = _describe(value)
    if isinstance(value, np.ndarray) and shown.startswith("a ") and shown.endswith(" array"):
        return f"{k} {shown[2:-6]}"
    return f"{k}={shown}"


def show_call(fn, args, kwargs):
    """``name(X (5, 6), d_model=7)``: the call, with arrays shown by shape, never by value."""
    name = getattr(fn, "__name__", "the function")
    try:
        bound = inspect.signature(fn).bind(*args, **kwargs).arguments
        parts = [_named(k, v) for k, v in bound.items()]
    except (TypeError, ValueError):
        parts = [_describe(a) for a in args] + [_named(k, v) for k, v in kwargs.items()]
    return f"{name}({', '.join(parts)})"


def _copy(value):
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, list):
        return [_copy(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_copy(v) for v in value)
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    return value


def _fresh(fn, value):
    """A copy of ``value`` for ``fn`` to work on; ``value`` itself where ``fn`` is the grading
    engine's proxy (``copies_arguments``): the call sends the arguments as plain data to the
    student's process and cannot change them here, and what it changed there comes back in
    ``fn.mutated_arguments``. (Copying, then comparing each argument with its copy, was some of
    the worker's CPU on every call.)"""
    return value if getattr(fn, "copies_arguments", False) is True else _copy(value)


def _from_engine(e):
    return any(c.__name__ in _ENGINE for c in type(e).__mro__) and not getattr(e, "from_student", False)


def _raised(e):
    # defused: the sentence may quote text the student's code put in the error
    return errors.said(e, clean=defuse)


class _Seen:
    """What the tests have seen of one student function so far: the calls made to it, in order, the
    known mistakes that a failing case of it was checked against and did not match (no later case
    may name those: a variant that coincides with one case but not another is no cause), and the
    errors it raised (a refusal of one input's special case is not named for an error it also
    raised on other inputs), and whether it gives a known mistake's results on the family's other
    inputs (``holds_elsewhere``)."""

    LIMIT = 40  # calls remembered: far more than any function's tests make

    def __init__(self, fn):
        try:
            self.ref = weakref.ref(fn)
        except TypeError:  # an object without weak references: held for as long as it is the subject
            self.ref = lambda fn=fn: fn
        self.calls = []  # (shown, shapes, kind) of every call, oldest first
        self.refuted = set()
        self.explained = set()  # mistakes whose advice a message of this function has given
        self.elsewhere = {}  # (mistake, kind of input) -> whether the function gives its version's results there
        self.raised = set()  # (type, message without its numbers) of every error a call raised


# name -> _Seen of the function of that name called last. A new function object under the same name
# (the next submission, a fresh sandbox) starts afresh: nothing of one submission reaches another.
_SEEN: dict = {}
_LAST: list = [None]  # the _Seen of the function called last: the one whose result a test checks next


def _seen(fn):
    name = getattr(fn, "__name__", "")
    seen = _SEEN.get(name)
    if seen is None or seen.ref() is not fn:
        seen = _SEEN[name] = _Seen(fn)
    return seen


def _shapes(args):
    """What makes two calls alike for a cache: the arrays' shapes and the integer sizes, in order."""
    return tuple(
        ("array", a.shape)
        if isinstance(a, np.ndarray)
        else ("list", len(a))
        if isinstance(a, (list, tuple))
        else a
        if isinstance(a, int)
        else type(a).__name__
        for a in args
    )


def _kind(args, kwargs):
    """What kind of input a call had: the number of axes of each array argument (batched attention
    is another kind than plain), scalars alike whatever their value."""
    return tuple(np.ndim(a) if isinstance(a, np.ndarray) else "scalar" for a in args) + tuple(
        (k, np.ndim(v)) for k, v in sorted(kwargs.items()) if isinstance(v, np.ndarray)
    )


def _invoke(shown, fn, args, kwargs, refusals=None):
    if fn is None:
        # otter passes None for a function the submission lacks; the grader reports it as missing
        raise NameError("the function under test is not defined")
    seen = _LAST[0] = _seen(fn)
    seen.calls = [*seen.calls[-(seen.LIMIT - 1) :], (shown, _shapes(args), _kind(args, kwargs))]
    try:
        return fn(*args, **kwargs)
    except Exception as e:  # whatever the submission raised is its failure
        if _from_engine(e):
            raise
        # the error with its sizes left out: the same slip raises it on inputs of other sizes
        said = (type(e).__name__, re.sub(r"\d+", "#", str(e)))
        if callable(refusals):  # a function of the exception: the mistake that raises the same, or None
            found = refusals(e)
            named = []
            if found and found[0] not in seen.refuted and holds_elsewhere(seen, found[0]):
                named = [f" (looks like {found[0]}: {advice(*found)})"]
        elif said in seen.raised:
            named = []  # raised as well where this input's special case (an odd width, say) is absent
        else:
            named = [
                f" (looks like {label}: {why})" for k, (label, why) in (refusals or {}).items() if isinstance(e, k)
            ]
        seen.raised.add(said)
        raise AssertionError(
            f"{shown() if callable(shown) else shown} raised {_explained(_raised(e), e, fn)}{''.join(named[:1])}"
        ) from None


def _explained(raised, e, fn):
    """``raised``, then the submission's line that raised, when known."""
    line = errors.where(e, fn)
    return f"{raised.rstrip('. ')}. It raised at your {defuse(line)}" if line else raised


def call(fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` on copies of the arguments; an exception names the call."""
    args, kwargs = _fresh(fn, args), _fresh(fn, kwargs)
    return _invoke(lambda: show_call(fn, args, kwargs), fn, args, kwargs)


def call_as(shown, fn, *args, **kwargs):
    """``call`` with the call described by ``shown`` (for arguments a shape does not describe)."""
    return _invoke(shown, fn, _fresh(fn, args), _fresh(fn, kwargs))


ASSERT_LABEL = "an assert instead of raising ValueError"


def assert_raises(kind, fn, *args, why, returned=None, mistake=None, accepts=None, **kwargs):
    """Fail unless ``fn(*args, **kwargs)`` raises ``kind`` (a subclass counts). ``returned``, a
    (mistake, what to do) pair, names the mistake when the call returns instead; ``mistake`` names
    one the test has already diagnosed, whichever way this check fails. ``accepts``: the arguments
    of a call the contract allows, made first, which must not raise: a function that raises whatever
    it is given (a stub) has rejected nothing."""
    if accepts is not None:
        accepted = _fresh(fn, tuple(accepts))
        _invoke(lambda: f"{show_call(fn, accepted, {})}, a call it must accept,", fn, accepted, {})
    shown = show_call(fn, args, kwargs)
    try:
        fn(*_fresh(fn, args), **_fresh(fn, kwargs))
    except kind:
        return
    except Exception as e:  # the wrong kind of error is this check's failure
        if _from_engine(e):
            raise
        named = f" (looks like {mistake[0]}: {mistake[1]})" if mistake else ""
        if type(e) is AssertionError and kind is ValueError:
            named = f" (looks like {ASSERT_LABEL}: `assert` is for the programmer's own invariants)"
        raise AssertionError(f"{shown} raised {_raised(e)}; it should raise {kind.__name__}: {why}{named}") from None
    returned = returned or mistake
    named = f" (it returned a result: looks like {returned[0]}: {returned[1]})" if returned else ""
    raise AssertionError(f"{shown} should raise {kind.__name__}: {why}{named}")


def raised_by(fn, *args, **kwargs):
    """The type of the exception ``fn(*args, **kwargs)`` raises (on copies), or None when it returns."""
    try:
        fn(*_fresh(fn, args), **_fresh(fn, kwargs))
    except Exception as e:  # what it raised is the answer
        if _from_engine(e):
            raise
        return type(e)
    return None


def call_refused(refusals, fn, *args, **kwargs):
    """``call`` for inputs the contract accepts, naming the mistake when ``fn`` raises one of
    ``refusals``' exception types: a map from the type to (mistake, what to do), or a function from
    the exception to (mistake, what to do) or None (e.g. a family's ``*_raising``)."""
    args, kwargs = _fresh(fn, args), _fresh(fn, kwargs)
    return _invoke(lambda: show_call(fn, args, kwargs), fn, args, kwargs, refusals)


def _same(a, b):
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        return a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a is b or a == b


def mutated_arguments(fn, *args, **kwargs):
    """Which arguments ``fn`` changed in place: positional indices, then keyword names.

    ``fn`` gets copies. A grading proxy reports what the call changed on its own side as
    ``fn.mutated_arguments`` (indices and names); in-process, the copies are compared.
    """
    return call_noting_changes(fn, *args, **kwargs)[1]


def call_noting_changes(fn, *args, **kwargs):
    """``call``, and which arguments the call changed in place (as ``mutated_arguments`` finds them):
    ``(result, changed)``. A test that checks a result and then that the call left its inputs alone
    needs one call, not a second one made only to see what it changes (``assert_not_changed``)."""
    return call_as_noting_changes(None, fn, *args, **kwargs)


def call_as_noting_changes(shown, fn, *args, **kwargs):
    """``call_noting_changes`` with the call described by ``shown`` when it raises (``call_as``)."""
    copies, kw_copies = _fresh(fn, args), _fresh(fn, kwargs)
    result = _invoke(shown if shown is not None else lambda: show_call(fn, copies, kw_copies), fn, copies, kw_copies)
    return result, _changed(fn, args, kwargs, copies, kw_copies)


def _changed(fn, args, kwargs, copies, kw_copies):
    """What the call of ``fn`` just made on ``copies`` of ``args`` changed (see mutated_arguments)."""
    reported = getattr(fn, "mutated_arguments", None)
    changed = set()
    if isinstance(reported, (list, tuple, set, frozenset)):
        changed |= {
            k
            for k in reported
            if (isinstance(k, int) and not isinstance(k, bool) and 0 <= k < len(args))
            or (isinstance(k, str) and k in kwargs)
        }
    if getattr(fn, "copies_arguments", False) is not True:  # (a proxy's report is the whole answer)
        changed |= {i for i, (a, c) in enumerate(zip(args, copies)) if not _same(a, c)}
        changed |= {k for k in kwargs if not _same(kwargs[k], kw_copies[k])}
    return sorted(k for k in changed if isinstance(k, int)) + sorted(k for k in changed if isinstance(k, str))


MUTATION_LABEL = "an in-place update of an argument"


def assert_unchanged(fn, *args, **kwargs):
    """Fail, naming the arguments, when ``fn`` changes any of its arguments in place."""
    assert_not_changed(mutated_arguments(fn, *args, **kwargs), fn, *args, **kwargs)


def assert_not_changed(changed, fn, *args, **kwargs):
    """Fail as ``assert_unchanged(fn, *args, **kwargs)`` does, for that call made earlier:
    ``changed`` is what it changed (``call_noting_changes``). The same call on the same inputs
    changes the same arguments, so asking what it changes needs no second call."""
    if changed:
        try:
            names = list(inspect.signature(fn).bind(*args, **kwargs).arguments)
        except (TypeError, ValueError):
            names = []
        shown = ", ".join(names[k] if isinstance(k, int) and k < len(names) else str(k) for k in changed)
        raise AssertionError(
            f"{show_call(fn, args, kwargs)} changed its input {shown} in place: it looks like {MUTATION_LABEL}: "
            "compute into new arrays and leave the arguments as they were"
        )


def assert_pair(result, expected, what, names):
    """``result`` as a pair of arrays; a pair whose two results match ``expected`` the other way round
    is named. ``names`` are the two results' names, e.g. ("output", "weights")."""
    if not (isinstance(result, (tuple, list)) and len(result) == 2):
        raise AssertionError(
            f"{what} should return the pair ({names[0]}, {names[1]}) as a tuple, got {defuse(type(result).__name__)}"
        )
    first, second = (as_array(r, what) for r in result)
    wanted = [np.asarray(e, dtype=np.float64) for e in expected]
    if (
        _close(first, wanted[1], ATOL, RTOL)
        and _close(second, wanted[0], ATOL, RTOL)
        and not _close(first, wanted[0], ATOL, RTOL)
    ):
        raise AssertionError(f"{what} looks like the pair in the wrong order: return ({names[0]}, {names[1]})")
    return first, second


def as_array(value, what):
    """The submission's result as a plain float array, or a clear AssertionError."""
    if value is None:
        raise AssertionError(f"{what} returned None: did you forget `return`?")
    try:
        arr = np.array(value, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise AssertionError(
            f"{what} returned {defuse(type(value).__name__)}, not an array of numbers ({defuse(e)})"
        ) from None
    return arr


def assert_shape(value, shape, what):
    arr = as_array(value, what)
    if arr.shape != tuple(shape):
        raise AssertionError(f"{what} has shape {arr.shape}, expected {tuple(shape)}")
    return arr


def _close(a, b, atol, rtol, equal_nan=False):
    return a.shape == b.shape and bool(np.allclose(a, b, atol=atol, rtol=rtol, equal_nan=equal_nan))


def matches(value, wrong, atol=ATOL, rtol=RTOL):
    """Whether the submission's ``value`` is the array ``wrong`` (nan where it overflows), within tolerance."""
    try:
        got = np.array(value, dtype=np.float64)
    except (TypeError, ValueError):
        return False
    return _close(got, np.asarray(wrong, dtype=np.float64), atol, rtol, equal_nan=True)


FLOAT32_LABEL = "float32 arithmetic"
FLOAT32_WHY = "compute in float64 (np.float64 arrays, no dtype=np.float32 anywhere)"


def _dtype_mistake(value, got, expected, close, atol, rtol):
    """The promised float64 broken in a way that is certain: an integer or boolean array holding the
    right values, or a result whose every entry is a float32 number near the right ones. ``close``:
    whether ``got`` passes as it is (the common case, which costs nothing more here)."""
    dtype = getattr(value, "dtype", None)
    kind, size = getattr(dtype, "kind", "f"), getattr(dtype, "itemsize", 8)
    if close and kind in ("b", "i", "u"):
        label = "a boolean array" if kind == "b" else "an integer array"
        return label, f"{defuse(str(dtype))} where float64 is promised: return float64 values"
    if close and not (kind == "f" and size < 8):
        return None
    if got.shape != expected.shape or not (np.isfinite(got).all() and np.isfinite(expected).all()):
        return None
    if not np.allclose(got, expected, rtol=1e-4, atol=1e-5):
        return None
    if kind == "f" and size < 8:
        return FLOAT32_LABEL, FLOAT32_WHY
    # a wrong float64 result whose entries are all float32 numbers was computed in float32: float64
    # arithmetic almost never lands on one, except for round values (0, 1, 0.5), which are left out
    exact32 = np.array_equal(got.astype(np.float32).astype(np.float64), got)
    if exact32 and np.count_nonzero(got * 2**12 % 1) >= 3:
        return FLOAT32_LABEL, FLOAT32_WHY
    return None


# Relations that are certain from the result alone: said even when long. They are said, never
# named as a mistake with a cause: a transposed result may come from a .T, from the order of a
# product, or from a rotation turned the other way (its transpose); a factor from anywhere.
_CERTAIN = frozenset({"transposed", "factor", "sign"})
# a relation this long is left out where a mistake is named, to keep the message short, and so is
# the fallback count of wrong entries (kind ""), which the name says more precisely
_SHORT = 160


def assert_close(
    value, expected, what, variants=(), atol=ATOL, rtol=RTOL, *, axes=(), sums_to_one=None, regions=(), relation=None
):
    """Raise an AssertionError saying how ``value`` differs from ``expected`` when it is not close.

    The message says first what differs (``describe.difference``: ``axes`` names the result's last
    axes, ``sums_to_one`` the axis its weights must sum to 1 along, ``regions`` parts the test knows
    of, ``relation`` a function of the result giving a relation the test knows how to read, e.g.
    ``angles.pe_reading``, asked first), then names a mistake only when the result matches it. ``variants`` is a sequence of
    ``(name, explanation, array)``, or a function returning one (called only when the result is
    wrong): a result that matches exactly one name (of any shape) is named; one that matches several
    is described and the names listed. An array of None is a variant this case rules out by another
    part of the result (the other half of a pair): checked, and not matched.
    """
    promised = np.asarray(expected).dtype
    expected = np.asarray(expected, dtype=np.float64)
    got = as_array(value, what)
    close = _close(got, expected, atol, rtol)
    contract = _dtype_mistake(value, got, expected, close, atol, rtol) if promised == np.float64 else None
    if contract:
        raise AssertionError(f"{what} looks like {contract[0]}: {contract[1]}")
    if close:
        return
    found, checked = {}, set()
    for name, why, wrong in variants() if callable(variants) else variants:
        checked.add(name)
        # a wrong variant may overflow: nan where it overflows is part of what it looks like
        if wrong is not None and _close(got, np.asarray(wrong, dtype=np.float64), atol, rtol, equal_nan=True):
            found.setdefault(name, why)
    found = _explaining(found, checked, got, sums_to_one)
    if not axes and got.ndim == expected.ndim == 2:
        axes = ("row", "column")
    relation = (relation(got) if relation is not None else None) or difference(
        got, expected, axes=axes, sums_to_one=sums_to_one, regions=regions, atol=atol, rtol=rtol
    )
    if len(found) == 1:
        ((name, why),) = found.items()
        said = (
            f" {relation.text}:"
            if (relation.kind and len(relation.text) <= _SHORT) or relation.kind in _CERTAIN
            else ""
        )
        raise AssertionError(f"{what}{said} looks like {name}: {advice(name, why)}")
    several = f" (it matches several known mistakes at once: {'; '.join(found)})" if found else ""
    raise AssertionError(f"{what} {relation.text}{several}{_whole_numbers(value, promised)}")


def _whole_numbers(value, promised):
    """A wrong result held in an integer array where float64 is promised: certain from the result
    itself, and where its fractions went."""
    kind = getattr(getattr(value, "dtype", None), "kind", "f")
    if promised != np.float64 or kind not in ("i", "u"):
        return ""
    return f"; it is an {defuse(str(value.dtype))} array, where float64 is promised: its entries have no fractions"


def _explaining(found, checked, got, sums_to_one):
    """Of the known mistakes ``found`` to match this failing case (of those ``checked``), the ones
    that may be named: each must explain every failing case of the function checked against it so
    far (this one is recorded for the cases to come), and show the relation it claims in the result
    itself (``mistakes.evidenced``: a softmax said to normalise all entries together must have a
    slice that does not sum to 1)."""
    seen = _LAST[0]
    if seen is not None:
        seen.refuted |= checked - set(found)
        found = {n: w for n, w in found.items() if n not in seen.refuted}
    found = {n: w for n, w in found.items() if mistakes.evidenced(n, got, sums_to_one)}
    if seen is not None:
        seen.refuted |= {n for n in found if not holds_elsewhere(seen, n)}
        found = {n: w for n, w in found.items() if n not in seen.refuted}
    return found


def advice(name, why):
    """What to do about the mistake ``name``: ``why`` the first time a message of the function
    called last names it, its short form (``brief``) after that. Each test is a box of its own on
    Gradescope, so a later one cannot point to "above"; the same advice in full on each of them
    only makes them long."""
    seen = _LAST[0]
    if seen is None or name not in seen.explained:
        if seen is not None:
            seen.explained.add(name)
        return why
    return brief(why)


def brief(why):
    """``why`` in short, for the rows after the first: its last clause (after the last ": " or
    "; "), usually what to do, without a closing one-word aside such as "(np.allclose)"; ``why`` itself when that
    clause would not read on its own (too short, or a bracket left open)."""
    last = re.sub(r" \([^() ]*\)$", "", re.split(r": |; ", why)[-1])
    whole = all(last.count(a) == last.count(b) for a, b in ("()", "[]"))
    return last if whole and len(last) >= 12 else why


def holds_elsewhere(seen, label):
    """Whether the function ``seen`` follows gives what the version of its family's mistake
    ``label`` gives on the family's other inputs (``mistakes.ELSEWHERE``) of the kind its last call
    had (arrays with as many axes: a slip may show only on batched inputs), as far as it can be
    asked: two slips that agree on a test's inputs may part on others, and the refutation of a later
    case comes too late for the message of an earlier one. Inputs where the version's shapes do not
    work out, or where the student's function raises (the tests report that where it happens), are
    passed over. A label that is no mistake of this function's family (a relation of the result
    itself) claims nothing about other inputs."""
    fn = seen.ref()
    name = getattr(fn, "__name__", "")
    found = mistakes.mistake_of(name, label)
    if found is None or not seen.calls:
        return True
    kind = seen.calls[-1][2]
    if (label, kind) not in seen.elsewhere:
        build, mistake = found
        inputs = mistakes.ELSEWHERE[name]()
        inputs = [(a, k) for a, k in inputs if _kind(a, k) == kind] or inputs
        seen.elsewhere[label, kind] = all(_gives(fn, build, mistake.knobs, a, k) for a, k in inputs)
    return seen.elsewhere[label, kind]


def _gives(fn, build, knobs, args, kwargs):
    """Whether ``fn`` returns what ``build`` with ``knobs`` returns on these arguments (True where
    either raises: nothing to compare)."""
    with np.errstate(all="ignore"):
        try:
            wrong = build(*args, **kwargs, **knobs)
        except (ValueError, IndexError):  # its shapes do not work out here
            return True
    try:
        got = fn(*_fresh(fn, args), **_fresh(fn, kwargs))
    except Exception as e:  # raising here is reported where a test meets it
        if _from_engine(e):
            raise
        return True
    return _alike(got, wrong)


def _alike(got, wrong):
    if isinstance(wrong, tuple):
        return (
            isinstance(got, (tuple, list)) and len(got) == len(wrong) and all(_alike(g, w) for g, w in zip(got, wrong))
        )
    return matches(got, wrong)


def same_whatever(fn, inputs, special, words, noun="inputs"):
    """A ``relation`` for ``assert_close``: the result is ``special(shape)`` (``words`` says what
    that is, e.g. "the identity matrix"), and so is ``fn``'s result on each of ``inputs`` (one
    argument each) where it is: a result that does not follow its input is said so, with the inputs
    it was tried on. Called only when a result is wrong."""

    def relation(got):
        if not _close(got, np.asarray(special(got.shape), dtype=np.float64), ATOL, RTOL):
            return None
        alike = [x for x in inputs if _is_special(fn, x, special)]
        text = f"is {words}"
        if len(alike) == len(inputs) > 1:
            shown = ", ".join(_describe(x) for x in inputs)
            text += f", and so is its result for each of the {len(inputs)} {noun} tried here ({shown})"
        return Relation("special", text)

    return relation


def _is_special(fn, x, special):
    try:
        got = np.asarray(fn(_fresh(fn, x)), dtype=np.float64)
    except Exception as e:  # raising here is reported where a test meets it
        if _from_engine(e):
            raise
        return False
    return _close(got, np.asarray(special(got.shape), dtype=np.float64), ATOL, RTOL)


STALE_LABEL = "a result kept from an earlier call"


def assert_close_in_turn(fn, calls, *, axes=(), relation=None):
    """Make ``calls`` one after another in one process and check each as ``assert_close`` does:
    ``calls`` holds ``(args, kwargs, expected, variants)``. A function may keep what it worked out,
    but the promise holds for every call. A wrong result is first tested for what it owes to the
    calls before it: one that is what an earlier call with other arguments rightly returned is
    named, since that call shows the function can compute the right one; one that a second call with
    the same arguments, made at once, does not repeat depends on the calls before it, and is said so
    before any formula is matched. Only those two messages list the earlier calls that could matter
    (those of the same shapes, made by any test in this process). ``relation``, given a call's
    arguments, gives ``assert_close``'s ``relation`` for that call."""
    earlier = []  # (shown, expected) of the calls made so far, all of them right
    for args, kwargs, expected, variants in calls:
        shown = show_call(fn, args, kwargs)
        before = _history(fn, args)
        # a copy: in one process the result may be the very array a later call changes in place
        got = _copy(call(fn, *args, **kwargs))
        if matches(got, expected):
            earlier.append((shown, expected))
            continue
        after = f"{shown}, called after {before}," if before else shown
        stale = [s for s, e in earlier if matches(got, e) and not matches(expected, e)]
        if stale:
            raise AssertionError(
                f"{after} returned what {stale[-1]} returned: looks like {STALE_LABEL}: a cache must be keyed by "
                "every argument that changes the result (base too), or kept per call"
            )
        if not matches(call(fn, *args, **kwargs), got):
            raise AssertionError(
                f"{after} is wrong, and the same call made again at once returned another result: what it returns "
                "depends on the calls made before it (something kept between calls and changed by them, such as "
                "a cached array updated in place), not only on its arguments"
            )
        # the same wrong result again: history does not explain it, and listing it would invite a
        # search for state the function does not keep
        reading = relation(*args, **kwargs) if relation is not None else None
        assert_close(got, expected, shown, variants, axes=axes, relation=reading)
        earlier.append((shown, expected))


def _history(fn, args, limit=8):
    """The calls of ``fn`` made so far in this process that could matter to a call with ``args``:
    those of the same shapes, or every one when none has them, oldest first."""
    calls = _seen(fn).calls if fn is not None else []
    alike = [shown for shown, shapes, _ in calls if shapes == _shapes(args)] or [shown for shown, _, _ in calls]
    shown = [s() if callable(s) else s for s in alike]
    more = f" (and {len(shown) - limit} earlier ones)" if len(shown) > limit else ""
    return ", ".join(shown[-limit:]) + more
