"""What an exception from the submission means, in a plain sentence, and which of its lines raised.

``meaning`` (the kit's ``attnlab.grade.meanings``, which a public test's relayed error uses too)
says what the code was doing when it raised, in terms of arrays and shapes, and stands in for
numpy's text. ``where`` finds the submission's own line: from the grading engine, which reads it
from the traceback inside the sandbox (``student_line``: cell, line, text), or, in the same process
(otter, the kit's own tests), from the traceback of the call itself.
"""

import traceback

from attnlab.grade.meanings import meaning, said

__all__ = ["meaning", "said", "where"]


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
