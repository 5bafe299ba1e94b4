"""What a student reads when a test case fails, shared by ``attnlab grade`` and ``attnlab check``.

Messages come only from the assertion messages that test files write, the student's own exception
messages, and the kit's phrases: never from test source lines or tracebacks, and never with a
numpy.testing dump of the expected array.

Misconception convention: a test names a known wrong variant by putting ``looks like <variant>:``
in its assertion message (the oracle's ``assert_close`` does, only when the result matches that
variant and no other). The item analysis counts variants. When the student's code raises, the
message names the call that raised: the oracle's ``call`` does so in the test's own assertion, and
an exception from the engine's proxy may carry the call as ``student_call`` and the submission's
line that raised as ``student_line`` (cell, line, text: read from the sandbox's traceback).
"""

from __future__ import annotations

import re

from .meanings import said
from .session import SandboxDied, StudentError, StudentTimeout

MAX_MESSAGE = 600
_VARIANT = re.compile(r"\blooks like ([^:\n]{1,80}):")
# numpy.testing's reports print both arrays after these markers.
_DUMP = re.compile(r"\n\s*(x|y|ACTUAL|DESIRED):|\n\s*Mismatched elements|\n\s*Max absolute difference")


def failure_message(exc: BaseException, missing: list[str]) -> str:
    """One or a few lines saying why a case failed."""
    if isinstance(exc, (StudentTimeout, SandboxDied)):
        text = str(exc)
    elif isinstance(exc, StudentError) or getattr(exc, "from_student", False):
        call = getattr(exc, "student_call", None)
        # the engine may record which call raised, e.g. "sinusoidal_pe(seq_len=5, d_model=7)"
        text = _ending(f"{call if isinstance(call, str) and call else 'your code'} raised {_kind(exc)}", _at(exc))
    elif isinstance(exc, AssertionError):
        text = str(exc).strip() or "a check failed"
        match = _DUMP.search(text)
        if match:
            text = text[: match.start()].strip() or "the values differ from the expected ones"
    elif missing:
        text = ""
    else:
        text = f"{_kind(exc)} while checking your result"
    if missing:
        defined = ", ".join(f"`{n}`" for n in missing)
        text = f"the submission does not define {defined}" + (f" ({text})" if text else "")
    return _cap(text)


def _at(exc: BaseException) -> str:
    """Where in the submission it raised, as the engine read it from the sandbox's traceback."""
    line = getattr(exc, "student_line", None)
    if not (isinstance(line, tuple) and len(line) == 3):
        return ""
    cell, number, text = line
    place = f"line {number}" if cell == 1 else f"code cell {cell}, line {number}"
    return f". It raised at your {place}" + (f": {text}" if text else "")


def _ending(text: str, more: str) -> str:
    """``text`` followed by the sentence ``more`` (one full stop between them)."""
    return text.rstrip(". ") + more if more else text


def _kind(exc: BaseException) -> str:
    return said(exc)


def _cap(text: str) -> str:
    return text if len(text) <= MAX_MESSAGE else text[: MAX_MESSAGE - 3] + "..."


def misconception(message: str) -> str | None:
    """The named wrong variant in a failure message, if any."""
    match = _VARIANT.search(message)
    return match.group(1).strip() if match else None
