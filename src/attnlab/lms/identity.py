"""Who wrote a submission, as the LMS that handed it over says, and the one id that seeds a
student's quiz numbers.

The quiz id (``QUIZ_ID``) is the student's number as the institution gives it: the roster's ``SIS
User ID`` (Canvas), the ``:sid:`` of Gradescope's metadata (its "Student ID"), Moodle's "ID number".
Students know it, and every LMS can hand it over. A Canvas user id, a Moodle participant id or a
login is never used in its place: those are not what the quiz tells students to type. A submission
that came as a plain file, folder or zip (named by the instructor, no LMS around it) and whose
number no roster gives stands for the number by its own name.

Matching a submission's student to a roster row or an enrolled Canvas user compares each kind of
identifier only with the same kind (``keys`` and ``known_by``): a Canvas user id with the Canvas
user id, a student number with the student number (a Gradescope SID with the SIS User ID, never with
a Canvas ID that happens to be equal), an email with the email or the login. A Moodle participant id
is no identifier of a Canvas course. ``attnlab grade --roster``, ``attnlab quiz grade --roster`` and
``attnlab upload canvas`` all match through them, so they cannot disagree.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Protocol, TypeVar

from ..studentids import normal_id

T = TypeVar("T")

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


def keys(student: Student) -> list[tuple[str, str]]:
    """Each identifier the submission's source gives for ``student``, with its kind, in the form
    ``normal_id``; a file or folder name (``login``) only when the source gives nothing else."""
    given = [("canvas", student.canvas_id), ("number", student.number), ("email", student.email)]
    said = [(kind, normal_id(value)) for kind, value in given if normal_id(value)]
    if said or student.id or student.participant:  # an LMS named the student: its name is no login
        return said
    return [("login", normal_id(student.login))] if normal_id(student.login) else []


def known_by(*, canvas_id: str, number: str, login: str, email: str) -> list[tuple[str, str]]:
    """The keys under which a roster row or an enrolled Canvas user is found (``keys`` gives a
    student's): the Canvas user id, the student number (SIS User ID), the email or the login as an
    email, and, for a file named by the instructor, the login, the part of it before ``@`` or the
    Canvas user id."""
    login = normal_id(login)
    found = [("canvas", canvas_id), ("number", number), ("email", email), ("email", login), ("login", login)]
    found += [("login", login.split("@", 1)[0] if "@" in login else ""), ("login", canvas_id)]
    return [(kind, normal_id(value)) for kind, value in found if normal_id(value)]


def candidates(student: Student, index: Mapping[tuple[str, str], set[T]]) -> set[T]:
    """Everyone ``index`` (built from ``known_by``) finds under any of ``student``'s keys: one is a
    match, none is no match, several are a disagreement for a human, never resolved by an order."""
    return {hit for key in keys(student) for hit in index.get(key, set())}


def other_number(given: str, known: str) -> bool:
    """Whether the student number a submission ``given`` for a student it matched by another id is
    not the ``known`` one of that roster row or Canvas user (nothing to compare where either is blank)."""
    given, known = normal_id(given), normal_id(known)
    return bool(given and known) and given != known
