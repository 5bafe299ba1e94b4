"""What the import files (``canvas_import.csv``, ``moodle_import.csv``) may hold, decided in one
place for ``attnlab grade`` and ``attnlab quiz grade`` alike:

- a student claimed by several submissions (the same roster row, or, roster or not, the same Moodle
  participant id, student number, email or Canvas user id) gets no row in any import file: which
  total is theirs is for a human to say (``claims``), and the summary says why (``summary``);
- no import file of an earlier run stays beside this run's grades: both are removed as a run's
  grades file is begun (``remove_earlier``), and written again from this run's totals only, so that
  a run without a roster, one that fills no row or one that is interrupted leaves none behind.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..grade.report import shown
from . import canvas, moodle
from ..studentids import normal_id
from .identity import Identified, Student

NAMES = (canvas.NAME, moodle.NAME)


def keys(student: Student) -> set[tuple[str, str]]:
    """What names one person to an import file or to Canvas; two students sharing one are one person."""
    said = {
        "participant": student.participant,
        "number": student.number,
        "email": student.email,
        "canvas": student.canvas_id,
    }
    return {(kind, normal_id(value)) for kind, value in said.items() if normal_id(value)}


@dataclass
class Claims:
    """The students claimed by several submissions, whom no import file names."""

    twice: dict[str, list[str]] = field(default_factory=dict)  # a student, as named -> the claiming submissions
    taken: set[tuple[str, str]] = field(default_factory=set)  # the ``keys`` of every such student
    rows: set[int] = field(default_factory=set)  # their roster rows

    def single(self, student: Student) -> bool:
        """Whether an import file may give ``student`` a row."""
        return not keys(student) & self.taken


def claims(
    submissions: Sequence[Identified], *, roster: canvas.Roster | None, matching: canvas.Matching | None
) -> Claims:
    """Who is claimed by several submissions: by the roster's matching, then by the students' own ids."""
    found = Claims()
    if roster is not None and matching is not None:
        for row, subs in matching.clashes.items():
            found.twice[canvas.named(roster.students[row])] = subs
            found.taken |= keys(canvas.student(roster, row))
            found.rows.add(row)
    claimers: dict[tuple[str, str], dict[str, Student]] = {}  # a key -> the submissions naming it, with whom
    for sub in submissions:
        for s in sub.students:
            for k in keys(s):
                claimers.setdefault(k, {})[sub.key] = s
    for k, by in claimers.items():
        if len(by) > 1 and k not in found.taken:
            found.twice[next(iter(by.values())).label()] = list(by)
        if len(by) > 1:
            for s in by.values():
                found.taken |= keys(s)
    if matching is not None:
        for sub in submissions:
            for s, at in zip(sub.students, matching.students.get(sub.key, ()), strict=False):
                if at is not None and (at in found.rows or not found.single(s)):
                    found.rows.add(at)
                    found.taken |= keys(s)
    return found


def remove_earlier(out: Path) -> None:
    """Remove the import files an earlier run wrote into ``out``: none may pass for this run's."""
    for name in NAMES:
        (Path(out) / name).unlink(missing_ok=True)


def summary(claimed: Claims, roster: canvas.Roster | None, matching: canvas.Matching | None) -> list[str]:
    """The lines on the roster and on students claimed twice (rich markup; every name escaped)."""
    lines = []
    if roster is not None and matching is not None:
        where = "a new column" if roster.new_column else "its column"
        missing = matching.missing
        lines.append(
            f"[bold]Roster[/] {shown(roster.path)} ({roster.encoding}): grades go into {where} "
            f"{shown(roster.column)}; {len(missing)} student(s) with no submission"
            + (": " + "; ".join(shown(canvas.named(roster.students[i])) for i in missing[:20]) if missing else "")
            + (" ..." if len(missing) > 20 else "")
        )
        if matching.unmatched:
            lines.append(
                f"  [red]{len(matching.unmatched)} submission(s) with no roster student[/]: "
                + ", ".join(shown(k) for k in matching.unmatched)
            )
        for key, rows in matching.several.items():
            lines.append(
                f"  [red]{shown(key)}'s ids name several roster students[/]: "
                + "; ".join(shown(canvas.named(roster.students[i])) for i in rows)
                + " (no grade filled in)"
            )
        for key, pairs in matching.numbers.items():
            for number, row in pairs:
                lines.append(
                    f"  [red]{shown(key)} gives the student number {shown(number)}, the roster "
                    f"{shown(canvas.named(roster.students[row]))}[/] (matched by another of their ids; which "
                    "number is theirs is for a human: a quiz's numeric items use the submission's)"
                )
    for who, subs in claimed.twice.items():
        lines.append(
            f"  [red]{shown(who)} is claimed by several submissions[/]: "
            + ", ".join(shown(k) for k in subs)
            + f" (no grade filled in: no row in {' or '.join(NAMES)})"
        )
    return lines
