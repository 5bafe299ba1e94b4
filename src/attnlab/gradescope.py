"""Gradescope's entry point inside the autograder zip: grade with the isolated engine.

The zip's ``run_autograder`` runs ``python -m attnlab.gradescope``. Gradescope's layout is
``/autograder/source`` (the unzipped autograder: ``tests/``, ``files/`` with the oracle, this
package), ``/autograder/submission`` (the student's files) and ``/autograder/results/results.json``
(what Gradescope reads). otter's own runner is not used here: it runs the tests inside the
student's process. ``otter run -a autograder.zip`` still works, through otter's runner. Whatever
Gradescope's environment holds stays on this side: the sandboxes' zygote starts with an
environment built from an allow-list (``grade.launch.environment``), as under ``attnlab grade``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
from pathlib import Path

from .upload import find_submission

# Gradescope shows "after_published" rows once the instructor publishes grades.
HIDDEN_VISIBILITY = "after_published"


def _error_results(message: str) -> dict:
    return {
        "score": 0,
        "output": message,
        "tests": [
            {
                "name": "Submission",
                "score": 0,
                "max_score": 0,
                "visibility": "visible",
                "output": message,
                "status": "failed",
            }
        ],
    }


def for_gradescope(results: dict) -> dict:
    """Engine results with hidden rows, and the per-question totals that include them, kept from
    students until grades are published; the visible summary covers the public tests only."""
    tests = [
        dict(t, visibility=HIDDEN_VISIBILITY) if t.get("visibility") == "hidden" else t
        for t in results.get("tests", [])
    ]
    public = [t for t in tests if t.get("visibility") == "visible" and "max_score" in t]
    passed = sum(t.get("status") == "passed" for t in public)
    summary = f"Public tests: {passed} of {len(public)} passed. Hidden tests are shown when grades are published."
    return dict(results, tests=tests, output=summary)


def main(*, root: Path = Path("/autograder")) -> dict:
    """Grade the submission under ``root`` and write ``root/results/results.json``."""
    from . import grade
    from .grade import report

    source, results_dir = root / "source", root / "results"
    results_dir.mkdir(parents=True, exist_ok=True)
    if os.geteuid() == 0:
        # the student's process runs as another user: keep the tests out of its reach
        os.chmod(source, 0o700)
        os.chmod(results_dir, 0o700)
    try:
        submission = find_submission(root / "submission", expected="one notebook or one .py file")
    except ValueError as err:
        results = _error_results(f"Nothing was graded: {err}.")
    else:
        work = Path(tempfile.mkdtemp(prefix="attnlab-", dir=results_dir))
        try:
            run = grade.main(
                submissions=[submission],
                out=work,
                tests_dir=source / "tests",
                support_dir=source / "files",
                jobs=1,
                force=True,
                progress=False,
            )
            written = run.graded[0].results
            assert written is not None  # every submission handed to the grader gets a results file
            results = for_gradescope(json.loads(written.read_text()))
        finally:
            shutil.rmtree(work, ignore_errors=True)
    report.write_atomic(results_dir / "results.json", json.dumps(results, indent=2))
    return results


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m attnlab.gradescope")
    parser.add_argument("--root", type=Path, default=Path("/autograder"))
    result = main(root=parser.parse_args().root)
    print(f"Score: {result.get('score')}")
