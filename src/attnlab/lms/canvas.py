"""Canvas: its bulk-download file names, the roster (a gradebook export) and the import file
filled from it. (Its REST upload: ``canvas_upload``, ``canvas_rest``.)

A "Download Submissions" zip names every file ``<name>_[LATE_]<user id>_<file id>_<original
name>`` (``DOWNLOAD_NAME``): the sortable name lowercased without punctuation, and the Canvas user id.

The roster is read and checked before any grading: a CSV (comma, semicolon or tab separated) in
UTF-8 (with or without a BOM), UTF-16 with a BOM, or else Latin-1, with the columns ``Student`` and
``ID`` (Canvas's own ``SIS User ID``, ``SIS Login ID``, ``Section`` and ``Email`` are used when
present), one student per row, no ID twice. Canvas's "Points Possible" row above the students gives
the assignment column's points (a semicolon-separated file's with a decimal comma, a number that
reads as two values refused: ``_points``), checked against the autograder's total before anything is graded
(``check_points``): a mismatch is refused with the message ``attnlab upload canvas`` gives, unless
the totals are scaled to the roster's points.

The grade goes into the roster's existing assignment column, chosen by its title or its Canvas id
(``pe_attention (12345)`` is chosen by ``pe_attention`` or ``12345``). Only a roster without any
assignment column gets a new column, which Canvas turns into a new assignment on import.

A submission's students are matched to roster rows by each identifier against the column of its
kind (``identity.keys``, ``identity.known_by``), ignoring case and the spaces around it:
1. a Canvas user id (in a Canvas bulk download's file names): ``ID``;
2. a student number (Gradescope's SID): ``SIS User ID``;
3. an email (Gradescope): ``SIS Login ID`` or ``Email``;
4. for a submission without any of these, its name (the file's stem or the folder's name): ``SIS
   Login ID``, the part of it before ``@``, or ``ID``.
A student whose identifiers find different rows (an SID that is one student's SIS User ID, an
email that is another's) is matched to none of them and listed (``Matching.several``).
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .. import userfiles
from ..studentids import normal_id
from ..grade.report import csv_text, write_atomic
from .identity import Identified, Student, candidates, known_by, other_number

NAME = "canvas_import.csv"
IDENTITY = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
OPTIONAL = ("SIS User ID", "SIS Login ID", "Section", "Email")
REQUIRED = ("Student", "ID")
# sortable name lowercased without punctuation, optional LATE, user id, file id, original name
DOWNLOAD_NAME = re.compile(r"^(?P<name>[^\W_]+)_(?P<late>LATE_)?(?P<uid>\d+)_(?P<fid>\d+)_(?P<file>.+)$")
ASSIGNMENT_COLUMN = re.compile(r"^(?P<title>.*\S)\s+\((?P<id>\d+)\)$")


class RosterError(ValueError):
    """A roster that cannot be used; the message names the file."""


@dataclass
class Roster:
    path: Path
    students: list[dict[str, str]]  # by canonical column name, plus "line"
    column: str  # the assignment column's header
    new_column: bool  # no assignment column existed: the import adds one
    encoding: str
    points: float | None = None  # the column's Points Possible, when the roster says it
    scale: float = 1.0  # totals are multiplied by this in the import (``check_points``)
    may_scale: bool = False  # --scale: a mismatch of points scales instead of refusing


@dataclass
class Matching:
    rows: dict[str, list[int]] = field(default_factory=dict)  # submission key -> its students' rows
    unmatched: list[str] = field(default_factory=list)  # keys with a student not in the roster
    missing: list[int] = field(default_factory=list)  # roster rows without a submission
    clashes: dict[int, list[str]] = field(default_factory=dict)  # a row claimed by several submissions
    students: dict[str, list[int | None]] = field(default_factory=dict)  # submission key -> each student's row
    # a submission whose student's ids name different rows (also in ``unmatched``): a human decides
    several: dict[str, list[int]] = field(default_factory=dict)
    # a submission whose student, matched by another id, gives a student number that is not their
    # row's: (the number it gives, the row); a quiz's numbers are drawn from one of the two
    numbers: dict[str, list[tuple[str, int]]] = field(default_factory=dict)


def load(path: Path, *, column: str | None, assignment: str, scale: bool = False) -> Roster:
    """The roster, checked; ``RosterError`` says what is wrong with it and where. ``scale``: a
    Points Possible other than the autograder's total scales the import (``check_points``)."""
    path = Path(path)
    text, encoding = _decode(path)
    lines = text.splitlines()
    if not lines or not lines[0].strip():
        raise RosterError(f"{path} is empty: expected a Canvas gradebook export (a CSV with Student and ID)")
    delimiter = max(",;\t", key=lambda d: lines[0].count(d))
    try:
        table = list(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True))
    except csv.Error as e:
        raise RosterError(f"{path} is not a readable CSV file: {e}") from None
    header = [h.strip() for h in table[0]]
    canonical = {h.lower(): h for h in (*IDENTITY, "Email")}
    names = [canonical.get(h.lower(), h) for h in header]
    missing = [c for c in REQUIRED if c not in names]
    if missing:
        raise RosterError(
            f"{path} lacks the column(s) {', '.join(missing)} (its columns: "
            f"{', '.join(header[:8]) or 'none'}); expected a Canvas gradebook export"
        )
    students: list[dict[str, str]] = []
    possible: dict[str, str] = {}
    seen: dict[tuple[str, str], int] = {}
    for number, cells in enumerate(table[1:], start=2):
        if not any(c.strip() for c in cells):
            continue
        row = {n: (cells[i].strip() if i < len(cells) else "") for i, n in enumerate(names)}
        if not row["ID"]:
            if not students and (row["Student"].startswith("Points Possible") or not row["Student"]):
                if row["Student"].startswith("Points Possible"):
                    possible = row
                continue  # Canvas's rows above the students
            raise RosterError(f"{path}, line {number}: {row['Student'] or 'a row'} has no ID")
        for col in ("ID", "SIS User ID", "SIS Login ID"):
            value = normal_id(row.get(col, ""))
            if value and (col, value) in seen:
                raise RosterError(
                    f"{path}, lines {seen[(col, value)]} and {number}: the same {col} "
                    f"{row[col]!r}; each student must appear once"
                )
            if value:
                seen[(col, value)] = number
        row["line"] = str(number)
        students.append(row)
    if not students:
        raise RosterError(f"{path} has no student rows")
    chosen, new = _choose_column(path, header, column or assignment, column is not None)
    points = _points(path, chosen, possible.get(chosen, ""), delimiter=delimiter) if not new else None
    return Roster(path, students, chosen, new, encoding, points, may_scale=scale)


# the decimal separator a delimiter implies: a spreadsheet in a locale whose decimal separator is
# the comma separates fields with semicolons; a tab says nothing
DECIMAL_OF = {",": ".", ";": ","}


def _points(path: Path, column: str, text: str, *, delimiter: str) -> float | None:
    """The Points Possible cell of ``column`` as a number (None when blank). A comma or a point may
    be the decimal separator or group thousands: a number that reads both ways as two values
    (``1,234``, ``63,000``) takes the file's convention (``DECIMAL_OF``) when its separator is the
    convention's decimal one, else it is refused, never guessed."""
    text = text.strip()
    if not text:
        return None
    readings = {d: v for d in ".," if (v := _read_number(text, decimal=d)) is not None}
    if len(set(readings.values())) == 1:
        return next(iter(readings.values()))
    decimal = DECIMAL_OF.get(delimiter, "")
    if decimal and decimal in text and decimal in readings:
        return readings[decimal]
    if not readings:
        raise RosterError(f"{path}: the Points Possible of {column!r} is {text!r}, not a number")
    point, comma = readings["."], readings[","]
    raise RosterError(
        f"{path}: the Points Possible of {column!r}, {text!r}, may be {point:g} or {comma:g} (a "
        f"{'point' if '.' in text else 'comma'} may group thousands or separate decimals): write it "
        "without a thousands separator, or export the gradebook again"
    )


def _read_number(text: str, *, decimal: str) -> float | None:
    """``text`` as a number whose decimal separator is ``decimal`` and whose thousands, if grouped,
    are grouped by the other of ``.`` and ``,``; None when it is not one."""
    group = "," if decimal == "." else "."
    whole = rf"(?:\d{{1,3}}(?:{re.escape(group)}\d{{3}})+|\d*)"
    found = re.fullmatch(rf"([+-]?)({whole})(?:{re.escape(decimal)}(\d*))?", text)
    if not found or not (found[2] + (found[3] or "")).strip(group):
        return None
    return float(f"{found[1]}{found[2].replace(group, '') or '0'}.{found[3] or '0'}")


def same_points(points: float, possible: float) -> bool:
    """Whether an assignment worth ``points`` in Canvas is worth the autograder's total ``possible``:
    equal at two decimals, a gradebook's precision (tests worth 1/3 point total 67.642857..., which
    Canvas holds as 67.64), so that the points ``points_mismatch`` asks for are always accepted."""
    return _gradebook(points) == _gradebook(possible)


def _gradebook(points: float) -> str:
    return f"{round(points, 2) + 0.0:.2f}".rstrip("0").rstrip(".")  # (+ 0.0: never a -0)


def points_mismatch(name: str, points: float | None, possible: float) -> str:
    """The words for a Canvas assignment whose points are not the autograder's total (both shown
    at the precision ``same_points`` compares them)."""
    theirs = "no points" if points is None else f"{_gradebook(points)} points"
    return (
        f"assignment {name} is worth {theirs} in Canvas but the autograder's total is {_gradebook(possible)}: "
        f"set its points in Canvas to {_gradebook(possible)}"
    )


def check_points(roster: Roster, possible: float) -> None:
    """Refuse a roster whose assignment column is worth other points than ``possible`` (when it
    ``may_scale``, the import's totals are scaled to the roster's points instead)."""
    if roster.points is None or same_points(roster.points, possible):
        return
    if roster.may_scale and possible > 0:
        roster.scale = roster.points / possible
        return
    raise RosterError(
        f"{roster.path}: {points_mismatch(repr(roster.column), roster.points, possible)} and export the "
        f"gradebook again, or give --scale to fill in totals scaled to {roster.points:g}"
    )


MAX_ROSTER_BYTES = 64 * 2**20  # a gradebook export of tens of thousands of students is a few MB


def _decode(path: Path) -> tuple[str, str]:
    try:
        data = userfiles.read_bytes(path, limit=MAX_ROSTER_BYTES)
    except userfiles.NotAFile as e:
        raise RosterError(str(e)) from None
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return data.decode("utf-16"), "UTF-16"
        except UnicodeDecodeError:
            raise RosterError(f"{path} starts like UTF-16 text but is not") from None
    if b"\x00" in data:
        raise RosterError(f"{path} is not a text file (a spreadsheet? export it as CSV)")
    if data.startswith(b"PK\x03\x04"):
        raise RosterError(f"{path} is a zip or .xlsx file, not a CSV: export the gradebook as CSV")
    try:
        return data.decode("utf-8-sig"), "UTF-8"
    except UnicodeDecodeError:
        return data.decode("latin-1"), "Latin-1 (it is not UTF-8)"


def _choose_column(path: Path, header: list[str], wanted: str, explicit: bool) -> tuple[str, bool]:
    columns = [(h, ASSIGNMENT_COLUMN.match(h)) for h in header]
    assignments = [(h, m) for h, m in columns if m and h not in IDENTITY]
    if not assignments:
        return wanted, True
    hits = [h for h, m in assignments if wanted in (h, m["title"], m["id"])]
    if len(hits) == 1:
        return hits[0], False
    listed = ", ".join(repr(h) for h, _ in assignments[:12]) + (" ..." if len(assignments) > 12 else "")
    if hits:
        raise RosterError(
            f"{path}: several assignment columns match {wanted!r}: "
            f"{', '.join(map(repr, hits))}; choose one by its id with --column"
        )
    hint = "" if explicit else " (the default is the assignment's name)"
    raise RosterError(
        f"{path} has no assignment column {wanted!r}{hint}; its assignment columns are "
        f"{listed}: choose one by title or id with --column"
    )


def match(roster: Roster, submissions: Sequence[Identified]) -> Matching:
    """Which roster rows each submission's students are, by the rules in the module docstring."""
    index: dict[tuple[str, str], set[int]] = {}
    for i, row in enumerate(roster.students):
        number, login, email = row.get("SIS User ID", ""), row.get("SIS Login ID", ""), row.get("Email", "")
        for key in known_by(canvas_id=row["ID"], number=number, login=login, email=email):
            index.setdefault(key, set()).add(i)
    result = Matching()
    claimed: dict[int, list[str]] = {}
    for sub in submissions:
        found = [candidates(student, index) for student in sub.students]
        result.students[sub.key] = [next(iter(hits)) if len(hits) == 1 else None for hits in found]
        rows = [at for at in result.students[sub.key] if at is not None]
        for s, at in zip(sub.students, result.students[sub.key], strict=True):
            if at is not None and other_number(s.number, roster.students[at].get("SIS User ID", "")):
                result.numbers.setdefault(sub.key, []).append((s.number.strip(), at))
        if len(rows) < len(found) or not found:  # a group's matched students still get the grade
            result.unmatched.append(sub.key)
        several = sorted({at for hits in found if len(hits) > 1 for at in hits})
        if several:
            result.several[sub.key] = several
        if rows:
            result.rows[sub.key] = rows
            for at in rows:
                claimed.setdefault(at, []).append(sub.key)
    result.clashes = {at: keys for at, keys in claimed.items() if len(keys) > 1}
    result.missing = [
        i
        for i in range(len(roster.students))
        if i not in claimed
        and not is_test_student(roster.students[i])
        and not any(i in r for r in result.several.values())
    ]
    return result


def is_test_student(row: dict[str, str]) -> bool:
    """Canvas's Test Student (the student view's account, in every gradebook export): not a
    student who failed to hand in."""
    return row.get("Student", "").strip().casefold() in ("student, test", "test student")


def named(row: dict[str, str]) -> str:
    """A roster student as an instructor finds them: the gradebook's name and its student number
    (or Canvas's own id), since names repeat."""
    number = row.get("SIS User ID") or row.get("ID") or ""
    return f"{row.get('Student', '')} ({number})" if number else row.get("Student", "")


def write(
    out: Path,
    roster: Roster,
    matching: Matching,
    totals: dict[str, float | None],
    possible: float,
    *,
    claimed: set[int],
) -> Path:
    """``canvas_import.csv``: the roster's students with the total of their submission in the
    assignment column (scaled as ``check_points`` decided); empty (Canvas leaves it unchanged)
    without a total (``totals`` holds None for anything not graded) or for a row in ``claimed``
    (claimed by several submissions: ``imports.claims``)."""
    score: dict[int, str] = {}
    for key, rows in matching.rows.items():
        total = totals.get(key)
        for at in rows:
            if total is not None and at not in claimed:
                score[at] = f"{total if roster.scale == 1.0 else round(total * roster.scale, 2):g}"
    points = roster.points if roster.points is not None and roster.scale != 1.0 else possible
    table = [[*IDENTITY, roster.column], ["Points Possible", "", "", "", "", f"{points:g}"]]
    for i, row in enumerate(roster.students):
        table.append([row.get(c, "") for c in IDENTITY] + [score.get(i, "")])
    path = Path(out) / NAME
    write_atomic(path, csv_text(table))
    return path


def student(roster: Roster, row: int) -> Student:
    """The roster's identity of a row, to fill what a submission's source lacks."""
    r = roster.students[row]
    login = r.get("SIS Login ID", "")
    return Student(
        name=r["Student"],
        email=r.get("Email", "") or (login if "@" in login else ""),
        id=r["ID"],
        login=login,
        canvas_id=r["ID"],  # a Canvas gradebook export's ID is the Canvas user id
        number=r.get("SIS User ID", ""),
    )


def fill_identities(subs: Sequence[Identified], roster: Roster, matching: Matching) -> None:
    """Names, ids and emails the roster knows and the submission's source did not say."""
    for sub in subs:
        rows = matching.rows.get(sub.key)
        if rows and len(rows) == len(sub.students):  # (a group with an unmatched student keeps its own)
            sub.students = tuple(
                Student(
                    name=s.name or r.name,
                    email=s.email or r.email,
                    id=s.id or r.id,
                    login=s.login,
                    canvas_id=s.canvas_id or r.canvas_id,
                    number=s.number or r.number,
                    participant=s.participant,
                )
                for s, r in zip(sub.students, (student(roster, row) for row in rows), strict=True)
            )
