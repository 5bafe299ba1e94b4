"""The isolated grading engine behind ``attnlab grade``.

Data flow: ``discover`` (downloads -> submissions and who wrote them) -> ``source`` (submission ->
code cells; ``preloads``: which slow modules the zygote imports for them) -> ``sandbox`` (student
side, forked from a zygote, isolated by ``jail``, or by ``landlock`` where namespaces are refused) <-> ``wire`` (plain data only) <-> ``session`` (trusted side: proxies) ->
``runner`` (one submission: execute, run the test cases in ``calls`` order, lending references) -> ``report`` (results.json, feedback.md)
-> ``batch`` (re-runs, workers, grades.csv, summary) -> ``analysis`` (item analysis) and the LMS import
files (``attnlab.lms``: roster, Canvas and Moodle imports). ``attnlab upload canvas`` takes it from there.
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .batch import Graded, Interrupted, Run, main

__all__ = ["Graded", "Interrupted", "Run", "main"]


def __getattr__(name: str) -> Any:
    # the batch (and what it imports: the roster, the item analysis) loads only when asked for, so
    # that a worker or `attnlab check` importing one module of this package starts quicker
    if name in __all__:
        from . import batch

        return getattr(batch, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
