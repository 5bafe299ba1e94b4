"""``moodle_import.csv``: the totals in the form Moodle's gradebook imports (Grades → Import → CSV file).

One row per student of each graded submission, with the two identities Moodle's import can match on
(its "Map from" choice): ``Email address`` (to ``useremail``) and ``ID number`` (to
``useridnumber``: a Gradescope SID, the institution's student number). A Canvas user id is no
Moodle ID number and is left out. Submissions that could not be graded, or were unreadable, have no
row: Moodle leaves their grade as it is, for a human to decide.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from .report import GRADED, csv_text, write_atomic

if TYPE_CHECKING:
    from .batch import Graded

HEADER = ("Email address", "ID number")


def write(out: Path, graded: list[Graded], column: str) -> Path:
    """Write ``out/moodle_import.csv``, the totals in the column ``column``; returns its path."""
    rows: list[list[str]] = [[*HEADER, column]]
    for g in sorted(graded, key=lambda g: g.submission):
        if g.status != GRADED or g.score is None:
            continue
        for s in g.students:
            number = s.id if s.id != s.canvas_id else ""
            if s.email or number:
                rows.append([s.email, number, f"{g.score:g}"])
    path = Path(out) / "moodle_import.csv"
    write_atomic(path, csv_text(rows))
    return path
