"""Moodle: its "Download all submissions" names, and ``moodle_import.csv``, the totals in a form
Moodle imports.

The download names each student's files ``<full name>_<participant id>_assignsubmission_<plugin>_``
(a folder per student, "Download submissions in folders") or prefixes each file with the same
(``..._assignsubmission_file_<original name>``): ``DOWNLOAD_NAME``. The participant id is the
assignment's own id for the student.

Which import form is written follows from what the sources say about every graded student:
- all of them came with a participant id (a Moodle download): the assignment's grading worksheet
  (Assignment -> View all submissions -> Upload grading worksheet), matched on ``Identifier``
  ("Participant <id>");
- otherwise the gradebook import (Grades -> Import -> CSV file), whose "Map from" matches
  ``Email address`` (to ``useremail``) or ``ID number`` (to ``useridnumber``: a Gradescope SID, the
  roster's SIS User ID). A Canvas user id is no Moodle ID number and is left out.
A student neither form can name has no row; when no graded student can be named the file is not
written and ``write`` says why. Submissions that were not graded have no row either: Moodle
leaves their grade as it is, for a human to decide.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from pathlib import Path

from ..grade.report import csv_text, write_atomic
from .identity import Student

DOWNLOAD_NAME = re.compile(r"^(?P<name>.+)_(?P<pid>\d+)_assignsubmission_(?P<plugin>[a-z]+)_(?P<file>.*)$")
GRADEBOOK = ("Email address", "ID number")
WORKSHEET = ("Identifier", "Full name", "Email address", "Grade")
NAME = "moodle_import.csv"


def student(match: re.Match) -> Student:
    """Who a download name says wrote the file or folder."""
    return Student(name=match["name"].strip(), id=match["pid"], participant=match["pid"])


def write(
    out: Path,
    graded: Iterable[tuple[tuple[Student, ...], float]],
    column: str,
    *,
    single: Callable[[Student], bool],
) -> tuple[Path | None, str]:
    """Write ``out/moodle_import.csv`` from each graded submission's students and total, leaving
    out a student not ``single`` (claimed by several submissions: ``imports.claims``); returns its
    path, or None and why no row could be filled."""
    graded = list(graded)  # (an earlier run's file is gone already: ``imports.remove_earlier``)
    everyone = [(s, score) for students, score in graded for s in students]
    if not everyone:
        return None, "no submission was graded"
    people = [(s, score) for s, score in everyone if single(s)]
    if not people:
        return None, "every graded student is claimed by several submissions (listed above)"
    if all(s.participant for s, _ in people):
        rows = [list(WORKSHEET)] + [[f"Participant {s.participant}", s.name, s.email, f"{g:g}"] for s, g in people]
    else:
        rows = [[*GRADEBOOK, column]]
        rows += [[s.email, s.number, f"{g:g}"] for s, g in people if s.email or s.number]
    if len(rows) == 1:
        return None, (
            "no graded student has an email or a student number, which Moodle's import matches on "
            "(a Canvas download names students by Canvas user id only: their numbers come from a --roster "
            "whose SIS User ID column holds them)"
        )
    path = Path(out) / NAME
    write_atomic(path, csv_text(rows))
    return path, ""
