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
function and check that it is named as itself or not at all.
"""

import functools
from typing import NamedTuple

import numpy as np

__all__ = ["Mistake", "variants", "raising", "wrong_version", "FAMILIES", "family"]


class Mistake(NamedTuple):
    name: str  # what the feedback calls it: "looks like <name>: <why>"
    why: str  # what to do instead
    knobs: dict  # the one parameter it turns (rarely two, when one slip moves both)


FAMILIES: dict = {}  # function name -> (build, mistakes)


def family(name, mistakes):
    """Register ``build`` as the parametrised definition of the graded function ``name``."""

    def register(build):
        FAMILIES[name] = (build, mistakes)
        return build

    return register


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
