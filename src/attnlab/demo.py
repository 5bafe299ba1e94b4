"""``attnlab demo``: the whole flow on the bundled samples, for a newcomer's first command.

Solution → student release and autograder zip (``build``) → graded results (``grade``) → a score
table that also says whether each sample got the outcome its name promises. Inside a course folder
the demo uses that course; anywhere else it uses a temporary copy of the bundled course, so it works
right after ``pip install`` and never touches the installed files.
"""

from __future__ import annotations

import contextlib
import csv
import tempfile
from pathlib import Path

from rich.console import Console
from rich.table import Table

from . import build, course, grade, paths, samples, testfiles


def main(*, out: Path = Path("attnlab-demo"), course_dir: Path | None = None, assignment: str | None = None) -> bool:
    """Run the demo into ``out``; True when every sample scored what its name says."""
    console = Console()
    out = Path(out).resolve()
    with contextlib.ExitStack() as stack:
        course_dir = course_dir or paths.find_course(Path.cwd())
        if course_dir is None:
            tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="attnlab-demo-")))
            course_dir = course.new(dest=tmp / "course")
            console.print("Using a temporary copy of the bundled course (`attnlab new DIR` makes one to keep)")
        stack.enter_context(paths.use(course=course_dir, assignment=assignment))
        return _run(console, out, paths.current_assignment(assignment))


def _run(console: Console, out: Path, assignment: str) -> bool:
    console.print(f"[bold]1. Build[/] the student release and the autograder into {out / 'dist'}")
    for path in build.main(out=out / "dist", assignment=assignment):
        console.print(f"   wrote {path}")
    subs = samples.copy_all(into=out / "submissions")
    console.print(f"[bold]2. Grade[/] {len(subs)} sample submissions, each in its own sandbox")
    grade.main(submissions=subs, out=out / "results", force=True)
    points = {tf.name: tf.points for tf in testfiles.load_dir(paths.tests_dir(assignment))}
    possible = sum(points.values())

    with open(out / "results" / "grades.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    table = Table(
        title=f"3. Scores out of {possible:g} (per question: {out / 'results' / 'grades.csv'}; "
        f"feedback: {out / 'results' / 'submissions'}/<submission>/feedback.md)"
    )
    table.add_column("submission (name without _score_...)", no_wrap=True)
    table.add_column("promised")
    table.add_column("total", justify="right")
    table.add_column("lost points in")
    questions = [c for c in (rows[0] if rows else {}) if c in points]
    all_ok = True
    for row in rows:
        promised = samples.expected_outcome(row["submission"])
        got = samples.outcome(float(row["total"]), possible)
        ok = promised is None or promised == got
        all_ok &= ok
        lost = [q for q in questions if float(row[q]) < points[q]]
        table.add_row(
            row["submission"].rsplit("_score_", 1)[0],
            f"[green]{promised}[/]" if ok else f"[red]{promised}, got {got}[/]",
            row["total"],
            "all" if len(lost) == len(questions) else ", ".join(lost) or "-",
        )
    console.print(table)
    return all_ok
