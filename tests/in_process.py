"""Driving the test files in this process, as otter would: for tests of the tests themselves.

(The grading engine never does this; it keeps student code in a sandboxed process.)
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from attnlab import testfiles


def grade_env(env: dict, test_files: list[testfiles.TestFile]) -> dict[str, tuple[float, float, list[str]]]:
    """{question: (score, possible, failure messages)} for the functions in ``env``."""
    results = {}
    with np.errstate(all="ignore"):
        for tf in test_files:
            score, messages = 0.0, []
            for case in tf.cases:
                try:
                    testfiles.call_case(case, env)
                    score += case.points
                except Exception as e:  # noqa: BLE001 - a failing case, whatever it raised
                    messages.append(str(e))
            results[tf.name] = (score, tf.points, messages)
    return results


def grade_file(path: Path, test_files: list[testfiles.TestFile]) -> dict[str, tuple[float, float, list[str]]]:
    """The same for a submission file, executed into a fresh namespace."""
    env: dict = {}
    exec(compile(Path(path).read_text(encoding="utf-8"), str(path), "exec"), env)
    return grade_env(env, test_files)
