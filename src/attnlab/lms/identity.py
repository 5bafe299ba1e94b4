"""Who wrote a submission, as the LMS that handed it over says, and the one id that seeds a
student's quiz numbers.

The quiz id (``QUIZ_ID``) is the student's number as the institution gives it: the roster's ``SIS
User ID`` (Canvas), the ``:sid:`` of Gradescope's metadata (its "Student ID"), Moodle's "ID number".
Students know it, and every LMS can hand it over. A Canvas user id, a Moodle participant id or a
login is never used in its place: those are not what the quiz tells students to type. A submission
that came as a plain file, folder or zip (named by the instructor, no LMS around it) and whose
number no roster gives stands for the number by its own name.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

QUIZ_ID = (
    "your student number as on the course roster (the institution's student ID: Canvas's "
    "SIS User ID, Gradescope's Student ID, Moodle's ID number)"
)
NAMED_LAYOUTS = ("file", "folder", "zip")  # submissions named by whoever named the file, not by an LMS


@dataclass(frozen=True)
class Student:
    """Who wrote a submission, as far as its source (and the roster) says."""

    name: str = ""
    email: str = ""
    id: str = ""  # the LMS's id: a Canvas user id, a Gradescope SID, a Moodle participant id
    login: str = ""  # a file or folder name that may be the student's login
    # the Canvas user id, when the source says it (a Canvas bulk download, a Canvas roster's ID):
    # ``attnlab upload canvas`` matches on it, since ``id`` may also be a Gradescope SID
    canvas_id: str = ""
    number: str = ""  # the institution's student number (SIS User ID, Gradescope SID, Moodle ID number)
    participant: str = ""  # Moodle's participant id (its assignment download's folder names)

    def label(self) -> str:
        extra = ", ".join(x for x in (self.id, self.email) if x)
        who = self.name or self.login or "?"
        return f"{who} ({extra})" if extra else who


class Identified(Protocol):
    """A submission as the LMS modules see it: its key and who wrote it (which a roster fills in)."""

    key: str
    students: tuple[Student, ...]


def quiz_id(students: Iterable[Student], *, key: str, layout: str) -> tuple[str | None, str]:
    """The id that seeds the quiz numbers of a one-student submission and where it came from;
    (None, why) when it is not known (see the module docstring)."""
    students = tuple(students)
    if len(students) != 1:
        return None, f"{len(students)} students hand in one quiz: each has their own numbers"
    (student,) = students
    if student.number:
        return student.number, "the student number"
    if layout in NAMED_LAYOUTS:
        return key, "the submission's name, standing for the student number"
    return None, (
        f"the student number of {student.label()} is not known (the download names only the "
        "LMS's own id): give --roster, the course's Canvas gradebook export, to know it"
    )
