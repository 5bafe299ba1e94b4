"""Gradescope's entry point in the quiz autograder zip: grade the quiz without running it.

The zip's ``run_autograder`` runs ``python -m attnlab_quiz.gradescope`` (this module, shipped in
the support package) instead of otter's runner, which would execute the notebook and run the hidden
tests in the student's own kernel, where a cell could replace the checker. Layout:
``/autograder/submission`` (the student's files) and ``/autograder/results/results.json``.
``otter run -a quiz_autograder.zip`` still grades through otter's runner and the same test files.
"""

from __future__ import annotations

import argparse
import json
from typing import Any
from pathlib import Path

from ..atomic import write_atomic
from ..upload import find_submission
from .grading import grade


def _nothing_graded(message: str) -> dict:
    return {
        "score": 0,
        "output": message,
        "visibility": "visible",
        "tests": [
            {
                "name": "Submission",
                "score": 0,
                "max_score": 0,
                "status": "failed",
                "visibility": "visible",
                "output": message,
            }
        ],
    }


def student_id(root: Path) -> tuple[str | None, str]:
    """The submitter's student number from Gradescope's ``submission_metadata.json`` (the roster's
    Student ID: the one id the quiz documents), and where it came from; (None, why) when there is
    none (an email is no student number: the numbers it would seed are not the student's; a group
    has no one number, as ``attnlab quiz grade`` says of one)."""
    return _student_number(_submitter(root))


def _student_number(user: Any) -> tuple[str | None, str]:
    if user is None:
        return None, " (no student in Gradescope's submission metadata)"
    if isinstance(user, list):  # a group: one score for all, but each member has their own numbers
        return None, (
            f" ({len(user)} students hand in one quiz, each with their own numbers: numeric questions "
            "go to your instructor)"
        )
    value = str(user.get("sid") or "").strip() if isinstance(user, dict) else ""
    if value:
        return value, " (the Student ID in Gradescope's submission metadata)"
    return None, " (no Student ID in Gradescope's submission metadata: numeric questions go to your instructor)"


def _submitter(root: Path) -> Any:
    """The one submitter's entry in Gradescope's metadata; the list of them for a group; None when
    the metadata names nobody (a run outside Gradescope)."""
    try:
        metadata = json.loads((Path(root) / "submission_metadata.json").read_text(encoding="utf-8"))
        users = metadata["users"]
        return users[0] if len(users) == 1 else users if users else None
    except (OSError, ValueError, KeyError, IndexError, TypeError):
        return None


def main(*, root: Path = Path("/autograder")) -> dict:
    """Grade the submission under ``root`` and write ``root/results/results.json`` atomically."""
    root = Path(root)
    try:
        user = _submitter(root)
        student, whose = _student_number(user)
        submission = find_submission(root / "submission", expected="the quiz notebook")
        # a submitter without a Student ID: their numbers are unknown (no metadata at all: a run
        # outside Gradescope, graded with the notes' numbers)
        known = student is not None or user is None
        results = grade(submission=submission, student=student, whose=whose, numbers_known=known)
    except ValueError as err:
        results = _nothing_graded(f"Nothing was graded: {err}.")
    except Exception as err:  # noqa: BLE001 - Gradescope must get a results file, whatever went wrong
        results = _nothing_graded(f"The quiz autograder failed ({type(err).__name__}); please tell your instructor.")
    (root / "results").mkdir(parents=True, exist_ok=True)
    write_atomic(root / "results" / "results.json", json.dumps(results, indent=1))
    return results


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m attnlab_quiz.gradescope")
    parser.add_argument(
        "--root", type=Path, default=Path("/autograder"), help="Gradescope's folder with submission/ and results/"
    )
    print(f"Score: {main(root=parser.parse_args().root)['score']:g}")
