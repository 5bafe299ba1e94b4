"""``attnlab quiz grade``: grade many quiz submissions statically into one folder.

Submissions are found and their students identified exactly as ``attnlab grade`` does
(``grade.discover``: Canvas bulk-download names, Gradescope metadata, Moodle folders, zips; the
roster through ``lms.canvas``). Numeric items are graded with the numbers of the one id the quiz
documents (``lms.identity.quiz_id``: the student number); a submission whose student number is not
known is a problem for a human, never graded with someone else's numbers.

Writes ``RESULTS/<folder>/results.json`` (Gradescope's schema, see ``grading``; the folder as
``attnlab grade`` names it) and ``feedback.md``, ``RESULTS/quiz_grades.csv`` with ``grades.csv``'s
columns (``submission``, ``student``, ``student_id``, ``email``, one column per auto-graded item id,
``total``, ``status``, ``problem``, ``notes``; no cell can become a spreadsheet formula), and the
same import files: ``canvas_import.csv`` (with ``--roster``) and ``moodle_import.csv``. Only
graded submissions have a total there; ``attnlab upload canvas RESULTS`` sends them. Free-response
answers are gathered for hand grading, and the points graded by hand merged in (``handgrading``).
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..grade.batch import NEEDS_HUMAN, folders_of
from ..grade.discover import Found, Submission, discover, unreadable
from ..grade.report import GRADED, NOT_GRADED, UNREADABLE, csv_text, write_atomic
from ..lms import canvas, imports, moodle
from ..lms.identity import quiz_id
from . import handgrading
from .grading import grade, graded_items

GRADES = "quiz_grades.csv"
COLUMN = "Attention Lab quiz"  # the roster's column by default: the title the quiz exports give it


@dataclass
class Row:
    submission: str
    submission_of: Submission
    folder: str
    results: dict[str, Any] | None = None  # None: nothing could be read
    status: str = GRADED
    problem: str = ""

    @property
    def total(self) -> float | None:
        return self.results["score"] if self.results is not None and self.status == GRADED else None


@dataclass
class QuizRun:
    rows: list[Row]
    found: Found
    roster: canvas.Roster | None = None
    matching: canvas.Matching | None = None
    claims: imports.Claims = field(default_factory=imports.Claims)  # students claimed by several submissions
    written: list[Path] = field(default_factory=list)
    not_written: dict[str, str] = field(default_factory=dict)

    @property
    def problems(self) -> list[Row]:
        return [r for r in self.rows if r.status != GRADED]

    @property
    def exit_code(self) -> int:
        m = self.matching
        return NEEDS_HUMAN if self.problems or (m and m.unmatched) or self.claims.twice else 0


def main(
    *,
    submissions: list[Path],
    out: Path,
    roster: Path | None = None,
    column: str | None = None,
    scale: bool = False,
    progress: bool = True,
    hand_graded: Path | None = None,
) -> QuizRun:
    """Grade every quiz submission found in ``submissions`` into ``out``; see the module docstring.

    ``hand_graded``: the filled-in sheet of free-response points (``handgrading``), merged in.
    Raises ``ValueError`` (a bad roster, points that differ from the roster's, a sheet that is not
    grades) or ``FileNotFoundError`` (nothing to grade) before anything is written."""
    if column is not None and roster is None:
        raise ValueError("--column chooses a column of the roster: give --roster too")
    if scale and roster is None:
        raise ValueError("--scale scales the totals to the roster's points: give --roster too")
    items = graded_items()
    the_roster = canvas.load(Path(roster), column=column, assignment=COLUMN, scale=scale) if roster else None
    if the_roster is not None:
        canvas.check_points(the_roster, sum(i.points for i in items + handgrading.items()))
    out = Path(out).resolve()
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with tempfile.TemporaryDirectory(prefix="attnlab-quiz-") as scratch:
        found = discover([Path(s) for s in submissions], unpack=Path(scratch), exclude=out)
        matching = canvas.match(the_roster, found.submissions) if the_roster else None
        if the_roster is not None and matching is not None:
            canvas.fill_identities(found.submissions, the_roster, matching)
        claims = imports.claims(found.submissions, roster=the_roster, matching=matching)
        names = {sub.key for sub in found.submissions}
        hand = handgrading.read_points(hand_graded, names=names) if hand_graded else {}
        folders = folders_of(found.submissions)
        imports.remove_earlier(out)  # this run's grades are being made: no earlier import may pass for them
        rows: list[Row] = []
        columns = (TextColumn("grading quiz"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
        with Progress(*columns, console=Console(stderr=True), disable=not progress) as bar:
            task = bar.add_task("", total=len(found.submissions))
            for sub in found.submissions:
                try:
                    rows.append(_grade_one(sub, out / folders[sub.key], hand.get(sub.key, {})))
                except Exception as e:  # noqa: BLE001 - whatever one quiz meets is that student's problem
                    problem = f"could not be graded ({type(e).__name__}: {str(e)[:120]}): a human must look"
                    rows.append(Row(sub.key, sub, folders[sub.key], status=NOT_GRADED, problem=problem))
                bar.advance(task)
        files = {r.submission: r.submission_of.file for r in rows if r.submission_of.file is not None}
        handgrading.gather(files=files, out=out, points=hand)
    run = QuizRun(rows, found, the_roster, matching, claims)
    write_atomic(out / GRADES, grades_csv(rows))
    run.written.append(out / GRADES)
    graded = [(r.submission_of.students, r.total) for r in rows if r.total is not None]
    path, why = moodle.write(out, [(s, t) for s, t in graded if t is not None], COLUMN, single=claims.single)
    if path is not None:
        run.written.append(path)
    else:
        run.not_written[moodle.NAME] = why
    if the_roster is not None and matching is not None:
        totals = {r.submission: r.total for r in rows}
        possible = sum(i.points for i in items + handgrading.items())
        run.written.append(canvas.write(out, the_roster, matching, totals, possible, claimed=claims.rows))
    return run


def _grade_one(sub: Submission, folder: Path, hand: dict[str, float]) -> Row:
    row = Row(sub.key, sub, folder.name)
    why = sub.problem if sub.file is None else unreadable(sub.file)
    if why:
        row.status, row.problem = UNREADABLE, why if sub.file is None else f"{sub.file.name}: {why}"
    else:
        assert sub.file is not None  # (a submission without a file has its problem)
        seed, source = quiz_id(sub.students, key=sub.key, layout=sub.layout)
        graded = grade(submission=sub.file, student=seed, whose=f" ({source})" if seed else "")
        row.results = handgrading.merged(graded, hand)
        unsettled = graded["extra_data"].get("needs_human", [])
        if seed is None:
            row.status, row.problem = NOT_GRADED, f"numeric items cannot be graded: {source}"
        elif unsettled:
            row.status = NOT_GRADED
            row.problem = f"the checker gave no verdict on {', '.join(unsettled)}: a human must grade it"
    extra = {
        "submission": sub.key,
        "students": [asdict(s) for s in sub.students],
        "origin": sub.origin,
        "notes": sub.notes,
        "status": row.status,
        "problem": row.problem,
    }
    data = row.results or {"score": 0, "output": f"Nothing was graded: {row.problem}.", "tests": [], "extra_data": {}}
    data["extra_data"] = {**data["extra_data"], **extra}
    write_atomic(folder / "results.json", json.dumps(data, indent=1))
    write_atomic(folder / "feedback.md", feedback(data, sub.who()))
    return row


def feedback(results: dict[str, Any], who: str) -> str:
    """What the student is told: the grader's summary and each item's verdict."""
    lines = [f"# Quiz feedback for {' '.join(who.split())}", "", str(results.get("output", "")), ""]
    for test in results.get("tests", []):
        if test.get("max_score"):
            lines.append(f"- {test['name']}: {test['score']:g} / {test['max_score']:g}. {test.get('output', '')}")
    return "\n".join(lines).rstrip() + "\n"


def grades_csv(rows: list[Row]) -> str:
    """grades.csv's columns; a free-response item's cell is blank until graded by hand."""
    ids = [i.id for i in graded_items()] + [i.id for i in handgrading.items()]
    table: list[list[Any]] = [
        ["submission", "student", "student_id", "email", *ids, "total", "status", "problem", "notes"]
    ]
    for row in sorted(rows, key=lambda r: r.submission):
        students = row.submission_of.students
        scores = row.results["extra_data"].get("items", {}) if row.results else {}
        table.append(
            [
                row.submission,
                "; ".join(s.name or s.login for s in students),
                "; ".join(s.id for s in students if s.id),
                "; ".join(s.email for s in students if s.email),
                *(f"{scores[i]:g}" if i in scores else "" for i in ids),
                "" if row.total is None else f"{row.total:g}",
                row.status,
                row.problem,
                "; ".join(row.submission_of.notes),
            ]
        )
    return csv_text(table)
