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

Canvas's rate limiting (403 "Rate Limit Exceeded") is waited out with growing pauses.
"""

from __future__ import annotations

import csv
import functools
import hashlib
import json
import os
import time
import warnings
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
# seconds to connect and between bytes of an answer: a Canvas that takes the connection and never
# answers must end the upload with a message, not hang it (canvasapi sets no timeout of its own)
DEADLINE = 60.0
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
) -> Plan:
    """Show (and with ``apply``, make) the changes that put RESULTS into the Canvas assignment;
    ``force`` overwrites grades set by hand in Canvas. Raises ``UploadError``."""
    from rich.console import Console

    results = Path(results)
    entries, possible = read_results(results)
    token = os.environ.get(TOKEN, "").strip()
    if not token:
        raise UploadError(f"set the environment variable {TOKEN} to a Canvas access token ({MAKE_TOKEN})")
    base = _base_url(url)
    canvas = _Canvas(base, token, course, assignment)
    target = canvas.assignment(possible)
    users = canvas.students()
    state_path = results / STATE
    state = _read_state(state_path)
    key = f"{base}/courses/{course}/assignments/{assignment}"
    sent: dict[str, list[float]] = state.setdefault(key, {})
    plan = _plan(entries, users)
    submissions = canvas.submissions(target, [c.user_id for c in plan.changes])
    _fill_plan(plan, submissions, force, sent)

    console = Console(highlight=False)
    for line in describe(plan, target.name, apply):
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
            canvas.send(submissions[change.user_id], change)
            bar.advance(change.name)
    console.print(f"Changed {len(plan.to_send)} student(s) in Canvas.")
    return plan


# ---- RESULTS


def read_results(results: Path) -> tuple[list[Entry], float]:
    """The submissions and the assignment's total points, after checking that RESULTS is a complete ``attnlab grade`` output of one of the course's assignments."""
    grades = results / "grades.csv"
    try:
        with open(grades, newline="", encoding="utf-8") as f:
            rows = list(csv.reader(f))
    except FileNotFoundError:
        raise UploadError(f"{grades} does not exist: give the folder `attnlab grade --out` wrote") from None
    except (OSError, UnicodeDecodeError, csv.Error) as e:
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
        data = report.read(folder / "results.json")
        if data is None:
            entries.append(Entry(row["submission"], None, [], "", f"{row['status']}: no results.json"))
            continue
        students = data["extra_data"].get("students", [])
        if any("canvas_id" not in s for s in students):
            raise UploadError(
                f"{results} was graded by an older attnlab, which did not record Canvas user ids: run "
                f"`attnlab grade` with `--out {results}` again (unchanged submissions are not regraded)"
            )
        feedback = folder / "feedback.md"
        text = feedback.read_text(encoding="utf-8") if feedback.is_file() else ""
        if row["status"] == GRADED:
            entries.append(Entry(row["submission"], float(data["score"]), students, text))
        else:  # unreadable or not graded: a human decides, never a 0 sent for them
            entries.append(Entry(row["submission"], None, students, text, f"{row['status']}: {row['problem']}"))
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
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as e:
        raise UploadError(
            f"{path} cannot be read ({e}): it remembers earlier uploads; move it away to start over"
        ) from None
    return data if isinstance(data, dict) else {}


# ---- matching and the plan


def _plan(entries: list[Entry], users: list[Any]) -> Plan:
    """Who gets what, before asking Canvas what it holds."""
    index: dict[tuple[str, str], set[int]] = {}

    def add(kind: str, value: Any, user_id: int) -> None:
        if value:
            index.setdefault((kind, str(value).strip().lower()), set()).add(user_id)

    names: dict[int, str] = {}
    for u in users:
        names[u.id] = str(getattr(u, "sortable_name", None) or getattr(u, "name", None) or u.id)
        login = getattr(u, "login_id", None) or ""
        add("canvas", u.id, u.id)
        add("sis", getattr(u, "sis_user_id", None), u.id)
        add("email", getattr(u, "email", None), u.id)
        add("email", login if "@" in login else "", u.id)
        add("login", login, u.id)
        add("login", login.split("@", 1)[0] if "@" in login else "", u.id)

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


def _fill_plan(plan: Plan, submissions: dict[int, Any], force: bool, sent: dict[str, list[float]]) -> None:
    """Each change against what Canvas holds: an equal grade is not sent, nor a comment already there."""
    for c in plan.changes:
        sub = submissions[c.user_id]
        c.old = sub.score if isinstance(getattr(sub, "score", None), (int, float)) else None
        c.grade = c.old is None or not _same(c.old, c.new)
        by_hand = c.old is not None and not any(_same(c.old, x) for x in sent.get(str(c.user_id), []))
        if c.grade and (by_hand or getattr(sub, "excused", False)) and not force:
            c.grade, c.kept = False, True
        marker = c.comment.rsplit("\n", 1)[-1]
        existing = [str(m.get("comment", "")) for m in getattr(sub, "submission_comments", None) or []]
        if c.comment and any(marker in text for text in existing):
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


# ---- Canvas


def _base_url(url: str) -> str:
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise UploadError(f"--url {url!r} is not your Canvas's address, like https://canvas.example.edu")
    base = url.strip().rstrip("/")
    return base.removesuffix("/api/v1").rstrip("/")


class _Canvas:
    """The few calls the upload makes, each with Canvas's errors said in one line."""

    def __init__(self, base: str, token: str, course: int, assignment: int):
        from canvasapi import Canvas

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # canvasapi warns about http:// addresses (a local Canvas)
            self.api = Canvas(base, token)
        _with_deadline(self.api)
        self.base, self.course_id, self.assignment_id = base, course, assignment
        self.course: Any = None

    def assignment(self, possible: float) -> Any:
        """The Canvas assignment, checked to be worth the autograder's total."""
        self.course = self.call(
            lambda: self.api.get_course(self.course_id), f"there is no course {self.course_id} at {self.base}"
        )
        target = self.call(
            lambda: self.course.get_assignment(self.assignment_id),
            f"course {self.course_id} has no assignment {self.assignment_id}",
        )
        points = getattr(target, "points_possible", None)
        if points is None or abs(float(points) - possible) > 1e-9:
            theirs = "no points" if points is None else f"{float(points):g} points"
            raise UploadError(
                f"assignment {target.name!r} ({self.assignment_id}) is worth {theirs} in Canvas but the "
                f"autograder's total is {possible:g}: set its points in Canvas to {possible:g}"
            )
        return target

    def students(self) -> list[Any]:
        return self.call(
            lambda: list(self.course.get_users(enrollment_type=["student"], include=["email"])),
            f"there is no course {self.course_id} at {self.base}",
        )

    def submissions(self, target: Any, user_ids: list[int]) -> dict[int, Any]:
        """Each user's submission with its comments (Canvas lists one per student; asked one by one
        for any it left out)."""
        found = self.call(
            lambda: {s.user_id: s for s in target.get_submissions(include=["submission_comments"])},
            f"course {self.course_id} has no assignment {self.assignment_id}",
        )
        for user_id in user_ids:
            if user_id not in found:
                found[user_id] = self.call(
                    functools.partial(target.get_submission, user_id, include=["submission_comments"]),
                    f"Canvas has no submission of user {user_id} in assignment {self.assignment_id}",
                )
        return found

    def send(self, submission: Any, change: Change) -> None:
        kwargs: dict[str, Any] = {}
        if change.grade:
            kwargs["submission"] = {"posted_grade": f"{change.new:.2f}"}
        if change.comment:
            kwargs["comment"] = {"text_comment": change.comment}
        self.call(lambda: submission.edit(**kwargs), f"Canvas has no submission of user {change.user_id}")

    def call(self, request: Callable[[], T], missing: str) -> T:
        """``request()``, retried while Canvas throttles; ``missing`` is said for a 404."""
        from canvasapi.exceptions import (
            CanvasException,
            Forbidden,
            InvalidAccessToken,
            RateLimitExceeded,
            ResourceDoesNotExist,
            Unauthorized,
        )

        for pause in (*BACKOFF, None):
            try:
                return request()
            except (RateLimitExceeded, Forbidden) as e:
                if not isinstance(e, RateLimitExceeded) and "rate limit exceeded" not in str(e).lower():
                    raise UploadError(f"Canvas forbids it: {_said(e)}") from None
                if pause is None:
                    raise UploadError(
                        f"Canvas kept answering 'Rate Limit Exceeded' for {sum(BACKOFF):g} s: try again later "
                        "(what was sent is remembered; a re-run resumes)"
                    ) from None
                time.sleep(pause)
            except InvalidAccessToken:
                raise UploadError(
                    f"Canvas at {self.base} refused the token in {TOKEN}: it is wrong or expired ({MAKE_TOKEN})"
                ) from None
            except Unauthorized as e:
                raise UploadError(
                    f"the token in {TOKEN} may not do this in course {self.course_id} "
                    f"(is its account a teacher there?): {_said(e)}"
                ) from None
            except ResourceDoesNotExist:
                raise UploadError(missing) from None
            except CanvasException as e:
                raise UploadError(f"Canvas answered with an error: {_said(e)}") from None
            except OSError as e:  # requests' errors are OSErrors: no route, refused, reset, DNS
                raise UploadError(f"cannot reach Canvas at {self.base} (network down or wrong --url): {e}") from None
        raise AssertionError("unreachable: the last pause is None")


def _with_deadline(api: Any) -> None:
    """Every request of ``api`` gets ``DEADLINE``: canvasapi keeps its requests session private and
    passes no timeout, so its adapters are replaced by ones that fill one in."""
    from requests.adapters import HTTPAdapter

    class _Deadline(HTTPAdapter):
        def send(self, request: Any, *args: Any, **kwargs: Any) -> Any:
            if kwargs.get("timeout") is None:
                kwargs["timeout"] = DEADLINE
            return super().send(request, *args, **kwargs)

    session = api._Canvas__requester._session  # private: see the docstring
    for prefix in ("https://", "http://"):
        session.mount(prefix, _Deadline())


def _said(e: Exception) -> str:
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
