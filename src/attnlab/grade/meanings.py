"""What an exception from a submission means, in a plain sentence: numpy's messages name numpy's
terms ("operands could not be broadcast", "gufunc signature", "inhomogeneous shape"); ``meaning``
says what the code was doing when it raised, in terms of arrays and shapes, keeping the numbers
numpy gives (the shapes). Used wherever a student reads an error of theirs: a public test's relayed
error (``messages``) and the oracle's calls (``attnlab_oracle.errors``).
"""

from __future__ import annotations

import re
from typing import Callable

__all__ = ["meaning", "public_name", "said"]

_MEANINGS = [
    (
        r"inhomogeneous shape after \d+ dimensions?\. The detected shape was (\(.*?\)) \+ inhomogeneous",
        "an array was built from pieces of different shapes (np.array of a list whose items differ in shape); "
        "they agree up to shape {0}",
    ),
    (
        r"setting an array element with a sequence|inhomogeneous",
        "an array was built from pieces of different shapes (np.array of a list whose items differ in shape)",
    ),
    (
        r"operands could not be broadcast together with (?:remapped )?shapes? (.*?)(?:$| and requested)",
        "two arrays combined entry by entry have shapes that do not fit together: {0}",
    ),
    (
        r"matmul: Input operand \d+ has a mismatch in its core dimension.*\(size (\d+) is different from (\d+)\)",
        "a matrix product's inner sizes differ ({1} columns on the left, {0} rows on the right): they must be equal",
    ),
    (
        r"matmul: Input operand (\d+) does not have enough dimensions",
        "a matrix product was given a number (no axes) as operand {0}, where an array is needed",
    ),
    (
        r"shapes (\(.*?\)) and (\(.*?\)) not aligned",
        "a matrix product of shapes {0} and {1}: the number of columns on the left must equal the rows on the right",
    ),
    (
        r"index (-?\d+) is out of bounds for axis (\d+) with size (\d+)",
        "index {0} is past the end of an axis of size {2}",
    ),
    (
        r"cannot reshape array of size (\d+) into shape (.*)",
        "a reshape asked for shape {1}, which does not hold {0} entries",
    ),
    (r"too many indices for array", "an array was indexed with more indices than it has axes"),
    (
        r"boolean index did not match indexed array along axis (\d+); size of axis is (\d+) but size of "
        r"corresponding boolean axis is (\d+)",
        "a True/False mask used as an index has {2} entries where the array it selects from has {1} (axis {0}): "
        "a mask must have the shape of the axes it selects",
    ),
    (
        r"operand has more dimensions than subscripts given in einstein sum",
        'np.einsum was given an array with more axes than its subscripts name ("nd" for an array of 3 axes, '
        'say); "..." in the subscripts stands for any leading axes',
    ),
    (r"len\(\) of unsized object", "len() was given a single number (an array of no axes), which has no length"),
    (
        r"truth value of an array with more than one element is ambiguous",
        "an `if`, `while`, `and`, `or` or `not` was given an array of several values, where one True or False is needed",
    ),
    (
        r"all the input array dimensions .* must match exactly|all the input arrays must have same number of dimensions",
        "arrays joined by concatenate or stack do not have matching shapes",
    ),
    (r"division by zero", "a division by zero"),
    (
        r"could not broadcast input array from shape (\(.*?\)) into shape (\(.*?\))",
        "an array of shape {0} was stored into a place of shape {1} (a slice or an output array): they must fit",
    ),
    (
        r"Cannot cast ufunc '(\w+)' output from dtype\('(\w+)'\) to dtype\('(\w+)'\)",
        "an in-place {0} would store {1} values in an {2} array, which cannot hold them",
    ),
]


def meaning(e: BaseException) -> str | None:
    """A plain sentence for a numpy or Python error, or None when none is known."""
    text = str(e)
    for pattern, sentence in _MEANINGS:
        found = re.search(pattern, text)
        if found:
            return sentence.format(*(g.strip() for g in found.groups()))
    return None


def public_name(e: BaseException) -> str:
    """The exception's class name as a student can look it up: numpy raises private subclasses
    (``_UFuncOutputCastingError``), which are shown by their first public base (``TypeError``). The
    engine's ``StudentError``, which stands in for the student's class on this side, is no such base."""
    for cls in type(e).__mro__:
        if not cls.__name__.startswith("_") and cls.__name__ != "StudentError":
            return cls.__name__
    return type(e).__name__


def said(e: BaseException, *, clean: Callable[[str], str] = str) -> str:
    """``Name: sentence`` for a student's error: the plain sentence where one is known (it keeps the
    sizes numpy gives), else the error's own text, either passed through ``clean`` (it may quote what
    the student's code put in the error); the name alone if there is no text."""
    message = clean(meaning(e) or str(e).strip())
    return f"{public_name(e)}: {message}" if message else public_name(e)
