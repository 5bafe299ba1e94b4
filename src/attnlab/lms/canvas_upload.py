"""``attnlab upload canvas``: each graded student's total and feedback into a Canvas assignment.

1. Everything is read and checked before anything changes: RESULTS (the ``grades.csv`` that
   ``attnlab grade`` wrote, whose question columns name the course's assignment and so its points,
   or the ``quiz_grades.csv`` of ``attnlab quiz grade``, whose item columns are the quiz's),
   the token in ``CANVAS_TOKEN``, the course, the Canvas assignment and its points, the enrolled
   students and their submissions with comments. What is wrong is one ``UploadError`` line.
2. Students are matched to enrolled Canvas users by what their submission's source recorded
   (results.json's ``students``), each id against its own kind as ``attnlab grade --roster`` matches
   (``identity.keys``): the Canvas user id of a bulk download or roster, the student number (a
   Gradescope SID) against the SIS id, the email, or, for a student with none, the login.
   Submissions that match nobody or whose ids name several users, users claimed by two submissions
   and students without a submission are listed, never guessed. Only submissions with status "graded" are uploaded: one that was unreadable or could not
   be graded is listed for a human, never sent as 0.
3. Per student: the grade, when Canvas's differs from the total (both at two decimals, a gradebook's
   precision); the feedback as a comment in plain text (Canvas shows comments as typed: no
   Markdown), addressed by the name Canvas shows, ending in a line that names the autograder with a
   hash of the feedback, unless a comment with that hash is already there. A Canvas grade that no upload sent (``RESULTS/canvas_upload.json`` remembers what
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
import os
import re
import stat
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from .. import paths
from ..grade import report
from ..grade.report import GRADED
from ..studentids import normal_id
from .identity import Student, candidates, known_by, other_number
from .canvas_rest import DEADLINE, MAKE_TOKEN, TOKEN, Canvas, Submission, UploadError, User, base_url, is_number

STATE = "canvas_upload.json"
QUIZ_GRADES = "quiz_grades.csv"  # RESULTS of `attnlab quiz grade`: its results folders lie beside it
NEEDS_HUMAN = 3  # as `attnlab grade`: done, but something listed needs a human
FIXED_COLUMNS = (("submission", "student", "student_id", "email"), ("total", "status", "problem", "notes"))


@dataclass
class Entry:
    """A submission in RESULTS."""

    submission: str
    total: float | None  # None: not uploaded (not graded, unreadable), for the reason in ``why``
    students: list[dict[str, str]]
    feedback: str
    why: str = ""
    by_hand: tuple[str, ...] = ()  # quiz items to be graded by hand that are not yet: not in the total


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
    # "submission (items)": totals without the points of items still to be graded by hand
    partial: list[str] = field(default_factory=list)
    # "submission: number (name: Canvas's)": a student matched by another id, their number not Canvas's
    numbers: list[str] = field(default_factory=list)

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
    base = base_url(url)
    canvas = Canvas(base, token, course, assignment, deadline)
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
            canvas.send(change.user_id, grade=change.new if change.grade else None, comment=change.comment)
            bar.advance(change.name)
    console.print(f"Changed {len(plan.to_send)} student(s) in Canvas.")
    return plan


# ---- RESULTS


def read_results(results: Path) -> tuple[list[Entry], float]:
    """The submissions and the assignment's total points, after checking that RESULTS is a complete ``attnlab grade`` output of one of the course's assignments."""
    grades = results / "grades.csv"
    quiz = not _is_file(grades) and _is_file(results / QUIZ_GRADES)  # `attnlab quiz grade` wrote it
    if quiz:
        grades = results / QUIZ_GRADES
    text = _text(grades, newline="")  # (csv reads the line ends itself)
    if text is None:
        raise UploadError(
            f"{grades} does not exist: give the folder `attnlab grade --out` (or `attnlab quiz grade --out`) wrote"
        )
    try:
        rows = [[report.csv_value(c) for c in cells] for cells in csv.reader(io.StringIO(text, newline=""))]
    except csv.Error as e:
        raise UploadError(f"{grades} cannot be read: {e}") from None
    header = rows[0] if rows else []
    first, last = FIXED_COLUMNS
    if tuple(header[: len(first)]) != first or tuple(header[-len(last) :]) != last:
        raise UploadError(f"{grades} is not a grades.csv that `attnlab grade` wrote (its columns: {', '.join(header)})")
    questions = header[len(first) : -len(last)]
    possible = _quiz_points(grades, questions) if quiz else _assignment_points(grades, questions)
    by_hand = _by_hand() if quiz else []
    store = results if quiz else results / "submissions"
    entries = []
    for cells in rows[1:]:
        row = dict(zip(header, [*cells, *[""] * len(header)]))  # (a short row: its missing cells empty)
        folder = store / report.folder_name(row["submission"])
        data = _results(folder / "results.json", quiz=quiz) if _is_file(folder / "results.json") else None
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
            if not isinstance(score, (int, float)) or not is_number(score):
                raise UploadError(f"{folder / 'results.json'} is not one `attnlab grade` wrote: its score is garbled")
            pending = tuple(i for i in by_hand if not row.get(i, "").strip())  # a blank cell: not graded yet
            entries.append(Entry(row["submission"], float(score), students, feedback, by_hand=pending))
        else:  # unreadable or not graded: a human decides, never a 0 sent for them
            entries.append(Entry(row["submission"], None, students, feedback, f"{row['status']}: {row['problem']}"))
    return entries, possible


def _assignment_points(grades: Path, questions: list[str]) -> float:
    """The total points of the course's assignment whose questions are ``questions``."""
    from ..grade.runner import load_tests

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


def _results(path: Path, *, quiz: bool) -> dict[str, Any] | None:
    """A results.json that ``attnlab grade`` (or, with ``quiz``, ``attnlab quiz grade``) wrote, or None."""
    if not quiz:
        return report.read(path)
    from ..quiz.grading import ENGINE

    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    extra = data.get("extra_data") if isinstance(data, dict) else None
    return data if isinstance(extra, dict) and extra.get("engine") == ENGINE else None


def _quiz_points(grades: Path, questions: list[str]) -> float:
    """The total points of the course's quiz, whose items (auto-graded, then graded by hand) are ``questions``."""
    from ..quiz import handgrading
    from ..quiz.grading import graded_items

    items = graded_items() + handgrading.items()
    if sorted(i.id for i in items) != sorted(questions):
        raise UploadError(
            f"{grades} is from another quiz: its items are {', '.join(questions) or 'none'}, the course's "
            f"quiz has {', '.join(i.id for i in items)}"
        )
    return sum(i.points for i in items)


def _by_hand() -> list[str]:
    """The ids of the quiz's items graded by hand (``quiz_grades.csv`` leaves their cells blank until then)."""
    from ..quiz import handgrading

    return [i.id for i in handgrading.items()]


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
        isinstance(users, dict) and all(isinstance(g, list) and all(map(is_number, g)) for g in users.values())
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


def _student(recorded: dict[str, str]) -> Student:
    """A student as results.json recorded them (a field an older attnlab did not record: empty)."""
    return Student(**{f.name: recorded.get(f.name, "") for f in fields(Student)})


def _plan(entries: list[Entry], users: list[User]) -> Plan:
    """Who gets what, before asking Canvas what it holds."""
    index: dict[tuple[str, str], set[int]] = {}
    names: dict[int, str] = {}
    shown: dict[int, str] = {}
    for u in users:
        names[u.id], shown[u.id] = u.name, u.display or u.name
        for key in known_by(canvas_id=str(u.id), number=u.sis_id, login=u.login, email=u.email):
            index.setdefault(key, set()).add(u.id)

    plan = Plan()
    claims: dict[int, list[Entry]] = {}
    held: set[int] = set()  # users whose submission is not uploaded: they are not "without one"
    sis = {u.id: normal_id(u.sis_id) for u in users}
    for entry in entries:
        hits = [candidates(_student(s), index) for s in entry.students]
        found = [next(iter(h)) for h in hits if len(h) == 1]
        for s, h in zip(entry.students, hits, strict=True):
            user = next(iter(h)) if len(h) == 1 else None
            if user is not None and other_number(s.get("number", ""), sis[user]):
                plan.numbers.append(f"{entry.submission}: {normal_id(s['number'])} ({names[user]}: {sis[user]})")
        if entry.total is None:
            plan.not_graded.append(f"{entry.submission} ({entry.why})")
            held.update(u for h in hits for u in h)
            continue
        several = sorted({names[u] for h in hits if len(h) > 1 for u in h}, key=str.lower)
        held.update(u for h in hits if len(h) > 1 for u in h)  # listed with this submission instead
        if several:  # ids that name different users (or two users with one email): never guessed
            plan.unmatched.append(f"{entry.submission} (its ids name several students: {'; '.join(several)})")
        elif len(found) < len(hits) or not hits:  # a group's matched students still get theirs
            plan.unmatched.append(entry.submission)
        for user_id in found:
            claims.setdefault(user_id, []).append(entry)
    for user_id, claiming in claims.items():
        if len(claiming) > 1:
            plan.claimed[names[user_id]] = [e.submission for e in claiming]
            continue
        entry = claiming[0]
        comment = comment_text(entry.feedback, name=shown[user_id]) if entry.feedback.strip() else ""
        assert entry.total is not None  # (only uploaded entries claim users)
        total = round(entry.total, 2)  # a gradebook's precision: 10/3 points is sent and compared as 3.33
        plan.changes.append(Change(user_id, names[user_id], entry.submission, None, total, True, comment))
        if entry.by_hand:
            plan.partial.append(f"{entry.submission} ({', '.join(entry.by_hand)})")
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
        digest = c.comment.rsplit(" ", 1)[-1].rstrip(")")  # (also in the marker earlier versions wrote)
        if c.comment and any(digest in text for text in sub.comments):
            c.comment = ""


def _same(a: float, b: float) -> bool:
    """Equal as grades (two decimals), whatever precision Canvas keeps."""
    return abs(a - b) < 0.005


def comment_text(feedback: str, *, name: str) -> str:
    """The feedback (``feedback.md``) as a submission comment: plain text for ``name``, ending in a
    line that finds it again (a hash of the feedback)."""
    digest = hashlib.sha256(feedback.encode()).hexdigest()[:16]
    return f"{plain_text(feedback, name=name)}\n\n(Attention Lab autograder, feedback {digest})"


_HEADING = re.compile(r"^(#{1,6})\s+(.*)$")
_ADDRESSED = re.compile(r"^(.*[Ff]eedback for ).*$")  # "# Feedback for <the submission's name>"
_RULE = re.compile(r"^\|?[\s:|-]+\|?$")


def plain_text(markdown: str, *, name: str) -> str:
    """Markdown as text that reads well where it is shown as typed: headings as lines (the title
    addressed to ``name``), tables as "row: column value" lines, no emphasis marks or code fences."""
    out: list[str] = []
    header: list[str] | None = None
    fenced = False
    for line in markdown.rstrip().splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            continue
        if fenced:
            out.append("    " + line)
            continue
        if not line.startswith("|"):
            header = None
        heading = _HEADING.match(line)
        if heading and len(heading[1]) == 1:
            title = heading[2]
            addressed = _ADDRESSED.match(title)
            out.append(f"{addressed[1]}{name}" if addressed and name else title)
        elif heading:
            out.append(heading[2].rstrip(":") + ":")
        elif line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if header is None:
                header = cells
            elif not _RULE.match(line):
                pairs = ", ".join(f"{h} {v}" for h, v in zip(header[1:], cells[1:]))
                out.append(f"{cells[0]}: {pairs}")
        else:
            out.append(line.replace("**", ""))
    return "\n".join(out)


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
    if plan.partial:
        out.append(
            "[red]Totals without the points of items not yet graded by hand[/] (grade them in "
            "free_response/hand_graded.csv and run `attnlab quiz grade ... --hand-graded` again): "
            + ", ".join(map(s, plan.partial))
        )
    if plan.numbers:
        out.append(
            "[red]Student numbers other than Canvas's SIS id[/] (matched by another of their ids; which is "
            "theirs is for a human: a quiz's numeric items use the submission's): " + ", ".join(map(s, plan.numbers))
        )
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
