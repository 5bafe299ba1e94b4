"""What grading one submission leaves in RESULTS/<submission>/, each file written atomically.

- ``results.json``: Gradescope's schema. One row per test CASE, so that each row can carry its own
  visibility: ``visible`` for public cases, ``hidden`` for hidden ones. ``extra_data`` holds the
  per-question scores that ``grades.csv`` is built from. It is written last: its presence means
  the submission is graded.
- ``feedback.md``: for the student, what failed and why (messages only, see ``messages``).
- ``output.txt``: everything the submission printed (first 64 KiB), for the instructor only: while
  tests run (``grader.check`` runs them during execution too), a student's prints may echo hidden
  inputs or callback results, so no printed output goes into student-facing files.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from .runner import Report

ENGINE = "attnlab"


def write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def results_json(report: Report) -> dict[str, Any]:
    tests = []
    for q in report.questions:
        for c in q.cases:
            earned = c.points if c.passed and not (q.all_or_nothing and q.score == 0) else 0.0
            tests.append({
                "name": c.name,
                "score": earned,
                "max_score": c.points,
                "status": "passed" if c.passed else "failed",
                "visibility": "hidden" if c.hidden else "visible",
                "output": "passed" if c.passed else c.message,
                "extra_data": {"question": q.name, "misconception": c.misconception},
            })
    return {
        "score": report.score,
        "execution_time": round(report.seconds, 3),
        "output": summary(report),
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": tests,
        "extra_data": {
            "engine": ENGINE,
            "submission": report.submission,
            "questions": {q.name: q.score for q in report.questions},
            "possible": {q.name: q.possible for q in report.questions},
            "errors": report.errors,
            "notes": report.notes,
        },
    }


def summary(report: Report) -> str:
    lines = [f"Score: {_pts(report.score)} / {_pts(report.possible)}"]
    lines += [f"  {q.name}: {_pts(q.score)} / {_pts(q.possible)}" for q in report.questions]
    if report.errors:
        lines.append("Errors while running your submission:")
        lines += [f"  {e}" for e in report.errors]
    return "\n".join(lines)


def feedback_md(report: Report) -> str:
    out = [f"# Feedback for {report.submission}", "",
           f"**Score: {_pts(report.score)} / {_pts(report.possible)}**", "",
           "| question | score | out of |", "|---|---|---|"]
    out += [f"| {q.name} | {_pts(q.score)} | {_pts(q.possible)} |" for q in report.questions]
    if report.errors:
        out += ["", "## Errors while running your submission", ""]
        out += [f"- {e}" for e in report.errors]
        out.append("")
        out.append("Anything defined before an error still counts; what the failing statement "
                   "(and, in a notebook, the rest of its cell) would have defined does not.")
    failed = [(q, c) for q in report.questions for c in q.cases if not c.passed]
    if failed:
        out += ["", "## What failed", ""]
        for q, c in failed:
            kind = "hidden test" if c.hidden else "public test"
            body = c.message.replace("\n", "\n  ")
            out.append(f"- **{c.name}** ({kind}, {_pts(c.points)} pt): {body}")
    else:
        out += ["", "Every test passed."]
    if report.notes:
        out += ["", "## Notes", ""] + [f"- {n}" for n in report.notes]
    return "\n".join(out) + "\n"


def _pts(x: float) -> str:
    return f"{x:g}"


def write(out: Path, report: Report) -> Path:
    folder = Path(out) / report.submission
    write_atomic(folder / "output.txt", report.log)
    write_atomic(folder / "feedback.md", feedback_md(report))
    path = folder / "results.json"
    write_atomic(path, json.dumps(results_json(report), indent=1))
    return path


def failed_results(name: str, questions: list[tuple[str, float]], why: str) -> dict[str, Any]:
    """The results.json of a submission whose grading itself failed (its worker died or hung)."""
    return {
        "score": 0.0,
        "output": f"Grading failed: {why}",
        "visibility": "visible",
        "tests": [],
        "extra_data": {"engine": ENGINE, "submission": name, "questions": {q: 0.0 for q, _ in questions},
                       "possible": dict(questions), "errors": [why], "notes": []},
    }


def read(path: Path) -> dict[str, Any] | None:
    """A results.json this engine wrote, or None."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    extra = data.get("extra_data") if isinstance(data, dict) else None
    if not isinstance(extra, dict) or extra.get("engine") != ENGINE:
        return None
    return data
