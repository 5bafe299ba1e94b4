"""The isolated grading engine behind ``attnlab grade``.

Data flow: ``source`` (submission -> code cells) -> ``sandbox`` (student side, forked from a zygote,
isolated by ``jail``) <-> ``wire`` (plain data only) <-> ``session`` (trusted side: proxies) ->
``runner`` (one submission: execute, run the test cases) -> ``report`` (results.json, feedback.md)
-> ``batch`` (workers, grades.csv) -> ``analysis`` (item analysis) and ``canvas`` (LMS import).
"""

from .batch import Graded, main

__all__ = ["Graded", "main"]
