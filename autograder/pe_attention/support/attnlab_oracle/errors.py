"""What an exception from the submission means, in a plain sentence, and which of its lines raised.

numpy's messages name numpy's terms ("operands could not be broadcast", "inhomogeneous shape");
``meaning`` says what the code was doing when it raised, in terms of arrays and shapes, keeping the
numbers numpy gives (the shapes), and stands in for numpy's text. ``where`` finds the submission's
own line: from the grading engine, which reads it from the traceback inside the sandbox
(``student_line``: cell, line, text), or, in the same process (otter, the kit's own tests), from
the traceback of the call itself.
"""

import re
import traceback

__all__ = ["meaning", "where"]

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
        r"truth value of an array with more than one element is ambiguous",
        "an `if`, `while`, `and`, `or` or `not` was given an array of several values, where one True or False is needed",
    ),
    (
        r"all the input array dimensions .* must match exactly|all the input arrays must have same number of dimensions",
        "arrays joined by concatenate or stack do not have matching shapes",
    ),
    (r"division by zero", "a division by zero"),
]


def meaning(e):
    """A plain sentence for a numpy or Python error, or None when none is known."""
    text = str(e)
    for pattern, sentence in _MEANINGS:
        found = re.search(pattern, text)
        if found:
            return sentence.format(*(g.strip() for g in found.groups()))
    return None


def where(e, fn):
    """``line N: <its text>`` (``cell C, line N`` in a notebook) of the submission's line that raised, or None."""
    line = getattr(e, "student_line", None)
    if isinstance(line, tuple) and len(line) == 3:
        cell, number, text = line
        place = f"line {number}" if cell == 1 else f"code cell {cell}, line {number}"
        return f"{place}: {text}" if text else place
    code = getattr(getattr(fn, "__wrapped__", fn), "__code__", None)
    if code is None:
        return None
    frames = [f for f in traceback.extract_tb(e.__traceback__) if f.filename == code.co_filename]
    if not frames:
        return None
    text = (frames[-1].line or "").strip()[:200]
    return f"line {frames[-1].lineno}: {text}" if text else f"line {frames[-1].lineno}"
