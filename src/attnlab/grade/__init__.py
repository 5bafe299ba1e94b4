"""The isolated grading engine behind ``attnlab grade``.

Data flow: ``discover`` (downloads -> submissions and who wrote them) -> ``source`` (submission ->
code cells) -> ``sandbox`` (student side, forked from a zygote, isolated by ``jail``) <-> ``wire`` (plain data only) <-> ``session`` (trusted side: proxies) ->
``runner`` (one submission: execute, run the test cases) -> ``report`` (results.json, feedback.md)
-> ``batch`` (re-runs, workers, grades.csv, summary) -> ``analysis`` (item analysis) and ``canvas``
(roster, LMS import).
"""

from .batch import Graded, Run, main

__all__ = ["Graded", "Run", "main"]
