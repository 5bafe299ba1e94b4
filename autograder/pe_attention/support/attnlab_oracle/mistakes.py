"""Families of mistakes derived from a definition.

Each graded function's wrong versions come from one numpy implementation of its definition whose
keyword parameters are the places a mistake can happen (an axis, a transpose, the scale and where it
is applied, a sign, an offset by one, an exponent, the layout of pairs, a fill value, how heads are
split and merged, ...). The defaults give the right answer; a ``Mistake`` turns one parameter to one
wrong value and names that mistake. ``variants`` builds every mistake's result for the test's inputs,
in the ``(name, explanation, result)`` form ``compare.assert_close`` takes, which names a result only
when it matches one mistake and no other. ``raising`` does the same for a call that raises: it names
the one mistake whose version raises the same exception with the same message on the same inputs
(a slip that breaks the shapes only for some inputs, e.g. W_V sliced with W_Q's head width).

``FAMILIES`` lists every function's family, so that a test can submit each mistake as a student's
function and check that it is named as itself or not at all. ``ELSEWHERE`` holds, per family, other
inputs of the function (sizes, head counts, shapes, axes the tests' cases may not vary): a mistake
is named only when the student's function also gives its version's results there
(``compare.assert_close``), since two slips that agree on the inputs tested may part elsewhere
(8 // 3 heads and 8 / (3 + 1) agree; 8 // 5 and 8 / 6 do not).
"""

import functools
from typing import NamedTuple

import numpy as np

__all__ = [
    "Mistake",
    "variants",
    "raising",
    "wrong_version",
    "FAMILIES",
    "ELSEWHERE",
    "family",
    "mistake_of",
    "evidenced",
    "UNNORMALISED",
]

# What a mistake's name claims about the result itself, beyond matching it on one input: a claim
# the result must show before the name is given (``evidenced``).
UNNORMALISED = "slices not normalised one by one"


class Mistake(NamedTuple):
    name: str  # what the feedback calls it: "looks like <name>: <why>"
    why: str  # what to do instead
    knobs: dict  # the one parameter it turns (rarely two, when one slip moves both)
    claims: str = ""  # a relation its name claims of the result (UNNORMALISED), checked on the result


FAMILIES: dict = {}  # function name -> (build, mistakes)
ELSEWHERE: dict = {}  # function name -> a function giving other inputs, as [(args, kwargs), ...]
_CLAIMS: dict = {}  # mistake name -> what it claims of the result


def family(name, mistakes, elsewhere):
    """Register ``build`` as the parametrised definition of the graded function ``name``, with
    ``elsewhere()``, the other inputs a named mistake of it must hold on (``ELSEWHERE``)."""

    def register(build):
        FAMILIES[name] = (build, mistakes)
        ELSEWHERE[name] = functools.lru_cache(maxsize=1)(elsewhere)
        _CLAIMS.update({m.name: m.claims for m in mistakes if m.claims})
        return build

    return register


def mistake_of(function, label):
    """``(build, mistake)`` of the mistake called ``label`` in the family of the graded function
    ``function``, or None."""
    build, known = FAMILIES.get(function, (None, ()))
    return next(((build, m) for m in known if m.name == label), None)


def wrong_version(build, mistake):
    """The function a student who made ``mistake`` would have written."""
    wrong = functools.partial(build, **mistake.knobs)
    wrong.__name__ = build.__name__
    return wrong


def variants(build, mistakes, *args, **kwargs):
    """``(name, why, result)`` for every mistake whose version runs on these arguments."""
    out = []
    with np.errstate(all="ignore"):
        for m in mistakes:
            try:
                out.append((m.name, m.why, build(*args, **kwargs, **m.knobs)))
            except (ValueError, IndexError):  # its shapes do not work out for these inputs
                continue
    return out


def raising(build, mistakes, error, *args, **kwargs):
    """``(name, why)`` of the one mistake whose version raises what ``error`` is (the same type and
    message) on these arguments, or None when no mistake or more than one does."""
    same = []
    with np.errstate(all="ignore"):
        for m in mistakes:
            try:
                build(*args, **kwargs, **m.knobs)
            except Exception as e:  # noqa: BLE001 - what the version raises is the answer
                if type(e) is type(error) and str(e) == str(error):
                    same.append((m.name, m.why))
    return same[0] if len(same) == 1 else None


def evidenced(name, got, sums_to_one=None):
    """Whether the result ``got`` shows what the mistake ``name`` claims of it. A normalisation over
    the whole array (or by anything but each slice's own sum) leaves some slice with weight in it
    summing to something other than 1; where every such slice sums to 1 (others may be all 0, from
    an exp that underflowed) the slices are normalised one by one, whatever else went wrong."""
    if _CLAIMS.get(name) != UNNORMALISED or sums_to_one is None:
        return True
    got = np.asarray(got, dtype=np.float64)
    with np.errstate(all="ignore"):
        sums = got.sum(axis=sums_to_one)
    weighted = np.isfinite(sums) & (np.abs(sums) > 1e-12)
    return bool(np.any(weighted & ~np.isclose(sums, 1.0, rtol=0, atol=1e-6)))
