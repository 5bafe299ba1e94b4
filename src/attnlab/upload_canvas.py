"""``attnlab upload canvas``: each graded student's total and feedback into a Canvas assignment.

1. Everything is read and checked before anything changes: RESULTS (the ``grades.csv`` that
   ``attnlab grade`` wrote, whose question columns name the course's assignment and so its points),
   the token in ``CANVAS_TOKEN``, the course, the Canvas assignment and its points, the enrolled
   students and their submissions with comments. What is wrong is one ``UploadError`` line.
2. Students are matched to enrolled Canvas users by what their submission's source recorded
   (results.json's ``students``): the Canvas user id of a bulk download or roster; else the SIS id
   (a Gradescope SID), the email, or, for a student with neither, the login. Submissions that match
   nobody, users claimed by two submissions and students without a submission are listed, never
   guessed. Only submissions with status "graded" are uploaded: one that was unreadable or could not
   be graded is listed for a human, never sent as 0.
3. Per student: the grade, when Canvas's differs from the total (both at two decimals, a gradebook's
   precision); the feedback as a comment, unless a comment with its marker (a hash of the text) is
   already there. A Canvas grade that no upload sent (``RESULTS/canvas_upload.json`` remembers what
   was sent) was set by hand: it is reported and kept, unless ``force``; so is an excused submission.
4. Without ``apply`` the plan is only shown. With it, each student is one PUT, remembered before it
   is sent; an interrupted upload resumes, since a re-run sends only what Canvas still lacks.

Canvas's rate limiting (403 "Rate Limit Exceeded") is waited out with growing pauses. Canvas's
answers are untrusted: each has a deadline and a size limit, and every field read from one is
checked to be of its type; an answer that is not what Canvas sends stops the upload with one line.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import os
import stat
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

from . import paths
from .grade import report
from .grade.report import GRADED

TOKEN = "CANVAS_TOKEN"
STATE = "canvas_upload.json"
NEEDS_HUMAN = 3  # as `attnlab grade`: done, but something listed needs a human
BACKOFF = (1.0, 2.0, 4.0, 8.0, 16.0, 32.0)  # seconds waited between tries while Canvas throttles
# seconds a request to Canvas may take in all, from connecting to its answer's last byte: a Canvas
# that never answers, or answers a byte at a time, ends the upload with a message instead of hanging it
DEADLINE = 60.0
MAX_ANSWER = 64 << 20  # bytes: a page of 100 submissions with their comments is a few MiB
PER_PAGE = 100  # items a page of a list (Canvas's own maximum)
MAX_PAGES = 1000  # pages of one list: 100,000 students or submissions
MAKE_TOKEN = "make one in Canvas under Account -> Settings -> New access token"
FIXED_COLUMNS = (("submission", "student", "student_id", "email"), ("total", "status", "problem", "notes"))

T = TypeVar("T")


class UploadError(Exception):
    """What stops the upload, in one line for the user."""


@dataclass
class Entry:
    """A submission in RESULTS."""

    submission: str
    total: float | None  # None: not uploaded (not graded, unreadable), for the reason in ``why``
    students: list[dict[str, str]]
    feedback: str
    why: str = ""


@dataclass
class Change:
    """What one student gets."""

    user_id: int
    name: str
    submission: str
    old: float | None  # the grade in Canvas now
    new: float
    grade: bool  # the new grade is sent
    comment: str  # the comment to add, or ""
    kept: bool = False  # Canvas's grade was set by hand and stays


@dataclass
class Plan:
    changes: list[Change] = field(default_factory=list)
    not_graded: list[str] = field(default_factory=list)  # "submission (status: problem)"
    unmatched: list[str] = field(default_factory=list)  # submissions with a student no user matches
    claimed: dict[str, list[str]] = field(default_factory=dict)  # a user's name -> the submissions naming them
    missing: list[str] = field(default_factory=list)  # enrolled students without a submission

    @property
    def to_send(self) -> list[Change]:
        return [c for c in self.changes if c.grade or c.comment]

    @property
    def exit_code(self) -> int:
        needs_human = self.not_graded or self.unmatched or self.claimed or any(c.kept for c in self.changes)
        return NEEDS_HUMAN if needs_human else 0


def main(
    *,
    results: Path,
    url: str,
    course: int,
    assignment: int,
    apply: bool = False,
    force: bool = False,
    deadline: float = DEADLINE,
) -> Plan:
    """Show (and with ``apply``, make) the changes that put RESULTS into the Canvas assignment;
    ``force`` overwrites grades set by hand in Canvas; each request to Canvas has ``deadline``
    seconds in all. Raises ``UploadError``."""
    from rich.console import Console

    results = Path(results)
    entries, possible = read_results(results)
    token = os.environ.get(TOKEN, "").strip()
    if not token:
        raise UploadError(f"set the environment variable {TOKEN} to a Canvas access token ({MAKE_TOKEN})")
    if not (token.isascii() and token.isprintable()):
        raise UploadError(
            f"the environment variable {TOKEN} holds a line break or another character no access token "
            f"has: set it to the token alone ({MAKE_TOKEN})"
        )
    base = _base_url(url)
    canvas = _Canvas(base, token, course, assignment, deadline)
    name = canvas.assignment(possible)
    users = canvas.students()
    state_path = results / STATE
    state = _read_state(state_path)
    key = f"{base}/courses/{course}/assignments/{assignment}"
    sent: dict[str, list[float]] = state.setdefault(key, {})
    plan = _plan(entries, users)
    submissions = canvas.submissions([c.user_id for c in plan.changes])
    _fill_plan(plan, submissions, force, sent)

    console = Console(highlight=False)
    for line in describe(plan, name, apply):
        console.print(line)
    if not apply:
        return plan
    with _Progress(len(plan.to_send)) as bar:
        for change in plan.to_send:
            if change.grade:
                # remembered before it is sent: should the PUT land but its answer be lost, the
                # next run still knows the grade in Canvas as ours, not a hand's
                mine = sent.setdefault(str(change.user_id), [])
                if not any(_same(change.new, x) for x in mine):
                    mine.append(change.new)
                    report.write_atomic(state_path, json.dumps(state, indent=1))
            canvas.send(change)
            bar.advance(change.name)
    console.print(f"Changed {len(plan.to_send)} student(s) in Canvas.")
    return plan


# ---- RESULTS


def read_results(results: Path) -> tuple[list[Entry], float]:
    """The submissions and the assignment's total points, after checking that RESULTS is a complete ``attnlab grade`` output of one of the course's assignments."""
    grades = results / "grades.csv"
    text = _text(grades, newline="")  # (csv reads the line ends itself)
    if text is None:
        raise UploadError(f"{grades} does not exist: give the folder `attnlab grade --out` wrote")
    try:
        rows = list(csv.reader(io.StringIO(text, newline="")))
    except csv.Error as e:
        raise UploadError(f"{grades} cannot be read: {e}") from None
    header = rows[0] if rows else []
    first, last = FIXED_COLUMNS
    if tuple(header[: len(first)]) != first or tuple(header[-len(last) :]) != last:
        raise UploadError(f"{grades} is not a grades.csv that `attnlab grade` wrote (its columns: {', '.join(header)})")
    questions = header[len(first) : -len(last)]
    possible = _assignment_points(grades, questions)
    entries = []
    for cells in rows[1:]:
        row = dict(zip(header, [*cells, *[""] * len(header)]))  # (a short row: its missing cells empty)
        folder = results / "submissions" / report.folder_name(row["submission"])
        data = report.read(folder / "results.json") if _is_file(folder / "results.json") else None
        if data is None:
            entries.append(Entry(row["submission"], None, [], "", f"{row['status']}: no results.json"))
            continue
        students = data["extra_data"].get("students", [])
        score = data.get("score")
        if not isinstance(students, list) or not all(
            isinstance(s, dict) and all(isinstance(v, str) for v in s.values()) for s in students
        ):
            raise UploadError(f"{folder / 'results.json'} is not one `attnlab grade` wrote: its students are garbled")
        if any("canvas_id" not in s for s in students):
            raise UploadError(
                f"{results} was graded by an older attnlab, which did not record Canvas user ids: run "
                f"`attnlab grade` with `--out {results}` again (unchanged submissions are not regraded)"
            )
        feedback = _text(folder / "feedback.md") or ""
        if row["status"] == GRADED:
            if not isinstance(score, (int, float)) or not _is_number(score):
                raise UploadError(f"{folder / 'results.json'} is not one `attnlab grade` wrote: its score is garbled")
            entries.append(Entry(row["submission"], float(score), students, feedback))
        else:  # unreadable or not graded: a human decides, never a 0 sent for them
            entries.append(Entry(row["submission"], None, students, feedback, f"{row['status']}: {row['problem']}"))
    return entries, possible


def _assignment_points(grades: Path, questions: list[str]) -> float:
    """The total points of the course's assignment whose questions are ``questions``."""
    from .grade.runner import load_tests

    known = {}
    for name in paths.assignments():
        support = paths.support_dir(name)
        tests = load_tests(paths.tests_dir(name), support if support.is_dir() else None)
        known[name] = tests
        if sorted(t.name for t in tests) == sorted(questions):  # (the grading order may change)
            return sum(t.points for t in tests)
    theirs = "; ".join(f"{name}: {', '.join(t.name for t in tests)}" for name, tests in known.items())
    raise UploadError(
        f"{grades} is from another assignment: its questions are {', '.join(questions) or 'none'}, "
        f"the course's assignments have {theirs or 'none'}"
    )


def _read_state(path: Path) -> dict[str, Any]:
    """What earlier uploads sent: Canvas assignment -> user id -> grades sent."""
    again = "it remembers earlier uploads; move it away to start over"
    try:
        text = _text(path)
        data = json.loads(text) if text is not None else {}
    except UploadError as e:
        raise UploadError(f"{e}; {again}") from None
    except (ValueError, RecursionError) as e:
        raise UploadError(f"{path} cannot be read ({e}): {again}") from None
    fits = isinstance(data, dict) and all(
        isinstance(users, dict) and all(isinstance(g, list) and all(map(_is_number, g)) for g in users.values())
        for users in data.values()
    )
    if not fits:
        raise UploadError(f"{path} is not what an upload wrote: {again}")
    return data


def _text(path: Path, *, newline: str | None = None) -> str | None:
    """The UTF-8 text of the file ``path`` (a BOM, as Excel writes, dropped); None if there is none."""
    if not _is_file(path):
        return None
    try:
        with open(path, encoding="utf-8-sig", newline=newline) as f:
            return f.read()
    except UnicodeDecodeError as e:
        raise UploadError(
            f"{path} is not UTF-8 text ({e.reason} at byte {e.start}): `attnlab grade` writes UTF-8; "
            "save it as UTF-8, or grade again"
        ) from None
    except OSError as e:
        raise UploadError(f"{path} cannot be read: {e.strerror or e}") from None


def _is_file(path: Path) -> bool:
    """Whether ``path`` is a regular file; False if there is nothing there. Anything else is an
    ``UploadError``: reading a FIFO would wait for a writer forever."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return False
    except OSError as e:
        raise UploadError(f"{path} cannot be read: {e.strerror or e}") from None
    if not stat.S_ISREG(mode):
        kind = "a folder" if stat.S_ISDIR(mode) else "a named pipe" if stat.S_ISFIFO(mode) else "a device or socket"
        raise UploadError(f"{path} is {kind}, not a file: RESULTS holds the files `attnlab grade` wrote")
    return True


# ---- matching and the plan


def _plan(entries: list[Entry], users: list[User]) -> Plan:
    """Who gets what, before asking Canvas what it holds."""
    index: dict[tuple[str, str], set[int]] = {}

    def add(kind: str, value: Any, user_id: int) -> None:
        if value:
            index.setdefault((kind, str(value).strip().lower()), set()).add(user_id)

    names: dict[int, str] = {}
    for u in users:
        names[u.id] = u.name
        add("canvas", u.id, u.id)
        add("sis", u.sis_id, u.id)
        add("email", u.email, u.id)
        add("email", u.login if "@" in u.login else "", u.id)
        add("login", u.login, u.id)
        add("login", u.login.split("@", 1)[0] if "@" in u.login else "", u.id)

    def user_of(student: dict[str, str]) -> int | None:
        if student.get("canvas_id"):
            keys = [("canvas", student["canvas_id"])]
        else:
            keys = [("sis", student.get("id", "")), ("email", student.get("email", ""))]
            if not student.get("id") and not student.get("email"):
                keys.append(("login", student.get("login", "")))
        for kind, value in keys:
            hits = index.get((kind, value.strip().lower()), set()) if value else set()
            if len(hits) == 1:  # two users with one email or login: not guessed
                return next(iter(hits))
        return None

    plan = Plan()
    claims: dict[int, list[Entry]] = {}
    held: set[int | None] = set()  # users whose submission is not uploaded: they are not "without one"
    for entry in entries:
        found = [user_of(s) for s in entry.students]
        if entry.total is None:
            plan.not_graded.append(f"{entry.submission} ({entry.why})")
            held.update(found)
            continue
        if not found or None in found:  # a group's matched students still get theirs
            plan.unmatched.append(entry.submission)
        for user_id in found:
            if user_id is not None:
                claims.setdefault(user_id, []).append(entry)
    for user_id, claiming in claims.items():
        if len(claiming) > 1:
            plan.claimed[names[user_id]] = [e.submission for e in claiming]
            continue
        entry = claiming[0]
        comment = comment_text(entry.feedback) if entry.feedback.strip() else ""
        assert entry.total is not None  # (only uploaded entries claim users)
        total = round(entry.total, 2)  # a gradebook's precision: 10/3 points is sent and compared as 3.33
        plan.changes.append(Change(user_id, names[user_id], entry.submission, None, total, True, comment))
    plan.changes.sort(key=lambda c: c.name.lower())
    plan.missing = sorted((names[u.id] for u in users if u.id not in claims and u.id not in held), key=str.lower)
    return plan


def _fill_plan(plan: Plan, submissions: dict[int, Submission], force: bool, sent: dict[str, list[float]]) -> None:
    """Each change against what Canvas holds: an equal grade is not sent, nor a comment already there."""
    for c in plan.changes:
        sub = submissions[c.user_id]
        c.old = sub.score
        c.grade = c.old is None or not _same(c.old, c.new)
        by_hand = c.old is not None and not any(_same(c.old, x) for x in sent.get(str(c.user_id), []))
        if c.grade and (by_hand or sub.excused) and not force:
            c.grade, c.kept = False, True
        marker = c.comment.rsplit("\n", 1)[-1]
        if c.comment and any(marker in text for text in sub.comments):
            c.comment = ""


def _same(a: float, b: float) -> bool:
    """Equal as grades (two decimals), whatever precision Canvas keeps."""
    return abs(a - b) < 0.005


def comment_text(feedback: str) -> str:
    """The feedback as a submission comment, ending in a marker line that finds it again."""
    digest = hashlib.sha256(feedback.encode()).hexdigest()[:16]
    return f"{feedback.rstrip()}\n\n[attnlab feedback {digest}]"


def describe(plan: Plan, assignment: str, apply: bool) -> list[Any]:
    """The table of changes and the lines around it (rich renderables; every name escaped)."""
    from rich.table import Table

    s = report.shown
    out: list[Any] = []
    if plan.to_send or any(c.kept for c in plan.changes):
        table = Table("student", "submission", "grade", "comment to add", title=f"Canvas: {s(assignment)}")
        for c in plan.changes:
            if not (c.grade or c.comment or c.kept):
                continue
            old = "-" if c.old is None else f"{c.old:g}"
            if c.kept:
                grade = f"[red]{old} kept[/] (set by hand; ours {c.new:g})"
            elif c.grade:
                grade = f"{old} -> {c.new:g}"
            else:
                grade = f"{old} (unchanged)"
            lines = c.comment.count("\n") + 1
            comment = f"feedback ({lines} lines)" if c.comment else "-"
            table.add_row(s(c.name), s(c.submission), grade, comment)
        out.append(table)
    same = sum(not (c.grade or c.comment or c.kept) for c in plan.changes)
    out.append(f"{len(plan.to_send)} student(s) to change, {same} already up to date in Canvas.")
    kept = [c.name for c in plan.changes if c.kept]
    if kept:
        out.append(f"[red]Grades set by hand in Canvas, kept[/] (--force overwrites): {', '.join(map(s, kept))}")
    if plan.not_graded:
        out.append("[red]Not uploaded[/] (could not be graded; never sent as 0): " + ", ".join(map(s, plan.not_graded)))
    if plan.unmatched:
        out.append("[red]Submissions matching no enrolled student[/]: " + ", ".join(map(s, plan.unmatched)))
    for name, keys in plan.claimed.items():
        out.append(f"[red]{s(name)} is claimed by several submissions[/] (nothing sent): " + ", ".join(map(s, keys)))
    if plan.missing:
        shown = ", ".join(map(s, plan.missing[:20])) + (" ..." if len(plan.missing) > 20 else "")
        out.append(f"{len(plan.missing)} enrolled student(s) without a submission: {shown}")
    if not apply:
        out.append("Dry run: nothing changed in Canvas. Add --yes to apply.")
    return out


# ---- Canvas: the REST calls the upload makes; every answer is untrusted until checked


@dataclass
class User:
    """An enrolled student, as Canvas lists them."""

    id: int
    name: str  # the sortable name, else the name, else the id
    sis_id: str
    email: str
    login: str


@dataclass
class Submission:
    """What Canvas holds for one student in the assignment."""

    user_id: int
    score: float | None
    excused: bool
    comments: list[str]


@dataclass
class _Answer:
    status: int
    headers: Any  # (requests' case-insensitive dict)
    links: dict[str, Any]  # the Link header, by rel
    body: bytes


class _Odd(Exception):
    """An answer that is not what Canvas's API sends: what is wrong in it, for the message."""


def _base_url(url: str) -> str:
    text = url.strip()
    try:
        parts = urlsplit(text)
        ok = parts.scheme in ("http", "https") and bool(parts.hostname) and parts.port != 0
        ok = ok and not parts.query and not parts.fragment and text.isprintable() and " " not in text
    except ValueError:  # an unclosed IPv6 bracket, a port that is no number
        ok = False
    if not ok:
        raise UploadError(f"--url {url!r} is not your Canvas's address, like https://canvas.example.edu")
    return text.rstrip("/").removesuffix("/api/v1").rstrip("/")


class _Canvas:
    """The few REST calls the upload makes. A request has ``deadline`` seconds in all, from
    connecting to the last byte of its answer; an answer is checked field by field before it is
    used; what goes wrong is one ``UploadError`` line."""

    def __init__(self, base: str, token: str, course: int, assignment: int, deadline: float):
        import requests

        self.session = requests.Session()
        self.session.headers["Authorization"] = f"Bearer {token}"
        self.base, self.api, self.deadline = base, f"{base}/api/v1", deadline
        self.course_id, self.assignment_id = course, assignment
        self.no_course = f"there is no course {course} at {base}"
        self.no_assignment = f"course {course} has no assignment {assignment}"
        self.path = f"courses/{course}/assignments/{assignment}"

    def assignment(self, possible: float) -> str:
        """The Canvas assignment's name, checked to be worth the autograder's total."""
        self.get(f"courses/{self.course_id}", lambda data: _object(data, "the course"), missing=self.no_course)
        name, points = self.get(self.path, _assignment, missing=self.no_assignment)
        name = name or str(self.assignment_id)
        if points is None or abs(points - possible) > 1e-9:
            theirs = "no points" if points is None else f"{points:g} points"
            raise UploadError(
                f"assignment {name!r} ({self.assignment_id}) is worth {theirs} in Canvas but the "
                f"autograder's total is {possible:g}: set its points in Canvas to {possible:g}"
            )
        return name

    def students(self) -> list[User]:
        query = {"enrollment_type[]": ["student"], "include[]": ["email"]}
        return self.pages(f"courses/{self.course_id}/users", _user, query, missing=self.no_course)

    def submissions(self, user_ids: list[int]) -> dict[int, Submission]:
        """Each user's submission with its comments (Canvas lists one per student; asked one by one
        for any it left out)."""
        query = {"include[]": ["submission_comments"]}
        listed = self.pages(f"{self.path}/submissions", _submission, query, missing=self.no_assignment)
        found = {s.user_id: s for s in listed}
        for user_id in user_ids:
            if user_id not in found:
                missing = f"Canvas has no submission of user {user_id} in assignment {self.assignment_id}"
                sub = self.get(f"{self.path}/submissions/{user_id}", _submission, query, missing=missing)
                if sub.user_id != user_id:
                    raise UploadError(f"Canvas answered user {user_id}'s submission with user {sub.user_id}'s")
                found[user_id] = sub
        return found

    def send(self, change: Change) -> None:
        form: dict[str, str] = {}
        if change.grade:
            form["submission[posted_grade]"] = f"{change.new:.2f}"
        if change.comment:
            form["comment[text_comment]"] = change.comment
        url = f"{self.api}/{self.path}/submissions/{change.user_id}"
        self.call("PUT", url, _submission, missing=f"Canvas has no submission of user {change.user_id}", form=form)

    def get(self, path: str, parse: Callable[[Any], T], query: dict[str, Any] | None = None, *, missing: str) -> T:
        return self.call("GET", f"{self.api}/{path}", parse, missing=missing, query=query)[0]

    def pages(self, path: str, parse: Callable[[Any], T], query: dict[str, Any], *, missing: str) -> list[T]:
        """Every item of a list Canvas hands out in pages, by their ``next`` links: each under
        ``self.api``, none twice, at most ``MAX_PAGES``."""
        url: str | None = f"{self.api}/{path}"
        params: dict[str, Any] | None = {**query, "per_page": PER_PAGE}
        items: list[T] = []
        seen: set[str] = set()
        while url is not None:
            if len(seen) == MAX_PAGES:
                raise UploadError(f"Canvas's list at {path} goes on past {MAX_PAGES} pages: is --url your Canvas?")
            seen.add(url)
            page, links = self.call(
                "GET", url, lambda data: [parse(x) for x in _list(data)], missing=missing, query=params
            )
            items += page
            url, params = (links.get("next") or {}).get("url"), None  # (a next link holds the query)
            if url in seen:
                raise UploadError(f"Canvas's list at {path} never ends: its next page, {_said(url)}, is one it gave")
            if url is not None and not url.startswith(f"{self.api}/"):
                raise UploadError(
                    f"Canvas's next page of {path}, {_said(url)}, is not under {self.base}: give --url as the "
                    "address Canvas uses itself"
                )
        return items

    def call(
        self,
        method: str,
        url: str,
        parse: Callable[[Any], T],
        *,
        missing: str,
        query: dict[str, Any] | None = None,
        form: dict[str, str] | None = None,
    ) -> tuple[T, dict[str, Any]]:
        """``parse`` of Canvas's answer and its Link header, retried while Canvas throttles;
        ``missing`` is said for a 404."""
        shown = f"{method} {urlsplit(url).path}"
        for pause in (*BACKOFF, None):
            answer = self.exchange(method, url, query, form, shown)
            throttled = answer.status == 429 or (answer.status == 403 and b"rate limit exceeded" in answer.body.lower())
            if not throttled:
                break
            if pause is None:
                raise UploadError(
                    f"Canvas kept answering 'Rate Limit Exceeded' for {sum(BACKOFF):g} s: try again later "
                    "(what was sent is remembered; a re-run resumes)"
                )
            time.sleep(pause)
        if not 200 <= answer.status < 300:
            raise self.refused(answer, shown, missing)
        try:
            data = json.loads(answer.body)
        except (ValueError, RecursionError):  # (RecursionError: nested deeper than the parser goes)
            kind = answer.headers.get("Content-Type", "no type")
            raise UploadError(
                f"Canvas at {self.base} answered {shown} with something that is not JSON ({_said(kind)}: "
                f"{_said(answer.body.decode('utf-8', 'replace'))[:80]!r}): is --url your Canvas's own address, "
                "not a login page or a proxy?"
            ) from None
        try:
            return parse(data), answer.links
        except _Odd as e:
            raise UploadError(
                f"Canvas at {self.base} answered {shown} with what its API never sends ({e}): is --url your Canvas?"
            ) from None

    def refused(self, answer: _Answer, shown: str, missing: str) -> UploadError:
        """What an answer other than 2xx means."""
        status, said = answer.status, _errors(answer.body)
        if status == 401 and "WWW-Authenticate" in answer.headers:
            return UploadError(
                f"Canvas at {self.base} refused the token in {TOKEN}: it is wrong or expired ({MAKE_TOKEN})"
            )
        if status == 401:
            return UploadError(
                f"the token in {TOKEN} may not do this in course {self.course_id} "
                f"(is its account a teacher there?): {said}"
            )
        if status == 403:
            return UploadError(f"Canvas forbids it: {said}")
        if status == 404:
            return UploadError(missing)
        if 300 <= status < 400:
            where = _said(answer.headers.get("Location", "nowhere"))
            return UploadError(
                f"Canvas at {self.base} sent {shown} on to {where} (HTTP {status}): give --url as the address "
                "Canvas uses itself (https://, no path)"
            )
        return UploadError(f"Canvas answered {shown} with an error (HTTP {status}): {said}")

    def exchange(
        self, method: str, url: str, query: dict[str, Any] | None, form: dict[str, str] | None, shown: str
    ) -> _Answer:
        """One request and its whole answer, within ``self.deadline``. The request runs in a thread
        of its own, since a socket's timeout bounds each read, not their sum: a Canvas that sends a
        byte every few seconds would never time out."""
        import requests

        end = time.monotonic() + self.deadline
        box: list[Any] = []
        done = threading.Event()

        def run() -> None:
            try:
                box.append(self.fetch(method, url, query, form, end, shown))
            except Exception as e:  # noqa: BLE001 - handed to the waiting thread, which says it
                box.append(e)
            finally:
                done.set()

        threading.Thread(target=run, name="canvas-request", daemon=True).start()
        resumes = " (what was sent is remembered; a re-run resumes)" if method == "PUT" else ""
        late = UploadError(
            f"Canvas at {self.base} did not answer {shown} within {self.deadline:g} s (the deadline of each "
            f"request): it is down or overloaded; try again later{resumes}"
        )
        if not done.wait(self.deadline) or box == [None]:
            raise late  # (the thread ends at its socket's next read; nothing waits for it)
        [got] = box
        if isinstance(got, _Answer):
            return got
        if isinstance(got, requests.exceptions.ReadTimeout):
            raise late from None
        if isinstance(got, requests.exceptions.ConnectionError):  # no route, refused, reset, DNS, TLS
            raise UploadError(
                f"cannot reach Canvas at {self.base} (network down or wrong --url): {_said(got)}"
            ) from None
        if isinstance(got, requests.exceptions.RequestException):  # an answer cut off or garbled
            raise UploadError(f"Canvas at {self.base} broke off its answer to {shown}: {_said(got)}") from None
        raise got

    def fetch(
        self,
        method: str,
        url: str,
        query: dict[str, Any] | None,
        form: dict[str, str] | None,
        end: float,
        shown: str,
    ) -> _Answer | None:
        """The request, its socket's every wait bounded by what is left until ``end``; no redirect is
        followed (requests would turn a redirected PUT into a GET, or drop its form)."""
        left = max(end - time.monotonic(), 0.001)
        with self.session.request(
            method, url, params=query, data=form, timeout=(left, left), stream=True, allow_redirects=False
        ) as r:
            body = bytearray()
            for chunk in r.iter_content(1 << 16):
                body += chunk
                if len(body) > MAX_ANSWER:
                    raise UploadError(
                        f"Canvas at {self.base} answered {shown} with over {MAX_ANSWER / 2**20:g} MiB: is --url your Canvas?"
                    )
                if time.monotonic() > end:
                    return None  # (nobody waits any more)
            return _Answer(r.status_code, r.headers, r.links, bytes(body))


# what the upload reads from Canvas's answers, each field checked: absent or null reads as None
KINDS: dict[type, tuple[str, Callable[[Any], bool]]] = {
    int: ("a whole number", lambda v: isinstance(v, int) and not isinstance(v, bool)),
    float: ("a number", lambda v: _is_number(v)),
    str: ("text", lambda v: isinstance(v, str)),
    bool: ("true or false", lambda v: isinstance(v, bool)),
    list: ("a list", lambda v: isinstance(v, list)),
}


def _field(data: dict[str, Any], key: str, kind: type, what: str, *, required: bool = False) -> Any:
    value = data.get(key)
    if value is None:
        if required:
            raise _Odd(f"{what} has no {key!r}")
        return None
    name, fits = KINDS[kind]
    if not fits(value):
        raise _Odd(f"{what}'s {key!r} is {_shown(value)}, not {name}")
    return float(value) if kind is float else value


def _object(data: Any, what: str) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise _Odd(f"{what} is {_shown(data)}, not an object")
    return data


def _list(data: Any) -> list[Any]:
    if not isinstance(data, list):
        raise _Odd(f"{_shown(data)} where a list belongs")
    return data


def _assignment(data: Any) -> tuple[str, float | None]:
    fields = _object(data, "the assignment")
    return _field(fields, "name", str, "the assignment") or "", _field(
        fields, "points_possible", float, "the assignment"
    )


def _user(data: Any) -> User:
    fields = _object(data, "a user")
    user_id = _field(fields, "id", int, "a user", required=True)
    text = {
        k: _field(fields, k, str, "a user") or "" for k in ("sortable_name", "name", "sis_user_id", "email", "login_id")
    }
    name = text["sortable_name"] or text["name"] or str(user_id)
    return User(user_id, name, text["sis_user_id"], text["email"], text["login_id"])


def _submission(data: Any) -> Submission:
    fields = _object(data, "a submission")
    comments = [
        _field(_object(c, "a submission comment"), "comment", str, "a submission comment") or ""
        for c in _field(fields, "submission_comments", list, "a submission") or []
    ]
    return Submission(
        _field(fields, "user_id", int, "a submission", required=True),
        _field(fields, "score", float, "a submission"),
        bool(_field(fields, "excused", bool, "a submission")),
        comments,
    )


def _is_number(value: Any) -> bool:
    """A finite number (JSON's NaN and Infinity are no grade, nor points)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # an int too large for a float
        return False


def _shown(value: Any) -> str:
    """A value of an answer, as JSON writes it, cut short."""
    text = json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _errors(body: bytes) -> str:
    """What Canvas said in an error answer: its ``errors`` messages, else the start of its text."""
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):
        data = None
    errors = data.get("errors") if isinstance(data, dict) else None
    if isinstance(errors, list):
        messages = [e["message"] for e in errors if isinstance(e, dict) and isinstance(e.get("message"), str)]
        if messages:
            return _said("; ".join(messages))
    return _said(body.decode("utf-8", "replace")) or "(nothing said)"


def _said(e: object) -> str:
    return " ".join(str(e).split())[:300]


class _Progress:
    """A progress bar on stderr while the changes are sent."""

    def __init__(self, total: int):
        self.progress: Any = None
        if total:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

            self.progress = Progress(
                TextColumn("uploading"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.description}"),
                console=Console(stderr=True),
            )
            self.task = self.progress.add_task("", total=total)

    def __enter__(self) -> _Progress:
        if self.progress is not None:
            self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.progress is not None:
            self.progress.stop()

    def advance(self, name: str) -> None:
        if self.progress is not None:
            self.progress.update(self.task, advance=1, description=report.shown(name))
