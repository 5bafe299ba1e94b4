"""What grading one submission leaves in RESULTS/submissions/<name>/, each file written atomically.

- ``results.json``: Gradescope's schema. One row per test CASE, so that each row can carry its own
  visibility: ``visible`` for public cases, ``hidden`` for hidden ones. ``extra_data`` holds the
  per-question scores that ``grades.csv`` is built from, and (stamped by ``batch``) the student's
  identity, the grading ``status`` and the content hash that re-runs compare. It is written last:
  its presence means the submission is graded.
- ``feedback.md``: for the student, what failed and why (messages only, see ``messages``).
- ``output.txt``: everything the submission printed (first 64 KiB), for the instructor only: while
  tests run (``grader.check`` runs them during execution too), a student's prints may echo hidden
  inputs or callback results, so no printed output goes into student-facing files.

Also the helpers every output of a batch goes through: ``write_atomic`` (files readable by the
grading group), ``csv_text`` (no cell can become a spreadsheet formula) and ``shown`` (names printed
to the terminal as plain text).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from .. import atomic
from ..testfiles import points_sum

ENGINE = "attnlab"
# statuses in results.json's extra_data: only "not graded" (the grading itself failed) has no total
GRADED, UNREADABLE, NOT_GRADED = "graded", "unreadable", "not graded"


# what grading one submission found (the runner fills them; here, so that the batch can write a
# report without importing the runner, which imports numpy)
@dataclass
class CaseResult:
    question: str
    name: str
    points: float
    hidden: bool
    passed: bool
    message: str = ""
    misconception: str | None = None
    note: str = ""  # graded with a lent reference: which, and why


@dataclass
class QuestionResult:
    name: str
    possible: float
    all_or_nothing: bool
    cases: list[CaseResult]

    @property
    def score(self) -> float:
        if self.all_or_nothing:
            return self.possible if all(c.passed for c in self.cases) else 0.0
        return points_sum(c.points for c in self.cases if c.passed)


@dataclass
class Report:
    submission: str
    path: str
    questions: list[QuestionResult]
    errors: list[str] = field(default_factory=list)  # execution errors, in cell order
    log: str = ""  # everything it printed (instructor only)
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def score(self) -> float:
        return points_sum(q.score for q in self.questions)

    @property
    def possible(self) -> float:
        return points_sum(q.possible for q in self.questions)


def _umask() -> int:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


# Group members read what the grading account writes, whatever its umask (a TA group grades
# together); "other" gets what the umask allows.
FILE_MODE = 0o640 | (0o666 & ~_umask())
DIR_MODE = 0o750 | (0o777 & ~_umask())


def make_dirs(path: Path) -> None:
    """``mkdir -p`` whose new folders the grading group can enter."""
    path = Path(path)
    missing = []
    while not path.exists():
        missing.append(path)
        path = path.parent
    for folder in reversed(missing):
        try:
            folder.mkdir()
        except FileExistsError:
            continue
        os.chmod(folder, DIR_MODE)


def write_atomic(path: Path, text: str) -> None:
    """Write a batch's output file atomically, readable as the module docstring says."""
    path = Path(path)
    make_dirs(path.parent)
    atomic.write_atomic(path, text, mode=FILE_MODE)


_FORMULA = ("=", "+", "-", "@", "\t", "\r")
# a leading ' is escaped too, so that ``csv_value`` can undo every escape without guessing
_ESCAPED = (*_FORMULA, "'")


def csv_cell(value: Any) -> str:
    """The cell as text that no spreadsheet reads as a formula (a leading ``'`` keeps it text)."""
    text = value if isinstance(value, str) else str(value)
    return "'" + text if text.startswith(_ESCAPED) else text


def csv_value(cell: str) -> str:
    """What ``csv_cell`` was given: how the kit reads back a file it wrote."""
    return cell[1:] if cell.startswith("'") else cell


def csv_text(rows: Iterable[Iterable[Any]]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf)
    for row in rows:
        writer.writerow([csv_cell(v) for v in row])
    return buf.getvalue()


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069]")


def shown(text: Any) -> str:
    """Text for the terminal through rich: markup escaped, control and bidi characters spelled out."""
    from rich.markup import escape

    plain = _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode(), str(text))
    return escape(plain)


def folder_name(key: str) -> str:
    """A submission's folder under RESULTS/submissions: the key when it is plain lowercase ASCII,
    else a slug plus a hash of the key, so that names differing in case or Unicode normalisation,
    ``..`` and overlong names each get a folder of their own on any file system."""
    slug = unicodedata.normalize("NFKD", key).encode("ascii", "ignore").decode().lower()
    slug = re.sub(r"[^a-z0-9_-]+", "_", slug).strip("_-")[:60] or "submission"
    if slug == key:
        return slug
    return f"{slug}-{hashlib.sha256(key.encode('utf-8', 'surrogatepass')).hexdigest()[:12]}"


def results_json(report: Report) -> dict[str, Any]:
    tests = []
    for q in report.questions:
        for c in q.cases:
            earned = c.points if c.passed and not (q.all_or_nothing and q.score == 0) else 0.0
            tests.append(
                {
                    "name": c.name,
                    "score": earned,
                    "max_score": c.points,
                    "status": "passed" if c.passed else "failed",
                    "visibility": "hidden" if c.hidden else "visible",
                    "output": "\n".join(filter(None, ["passed" if c.passed else c.message, c.note])),
                    "extra_data": {"question": q.name, "misconception": c.misconception},
                }
            )
    return {
        "score": report.score,
        "execution_time": round(report.seconds, 3),
        "output": summary(report),
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": tests,
        "extra_data": {
            "engine": ENGINE,
            "submission": report.submission,
            "questions": {q.name: q.score for q in report.questions},
            "possible": {q.name: q.possible for q in report.questions},
            "errors": report.errors,
            "notes": report.notes,
        },
    }


def summary(report: Report) -> str:
    lines = [f"Score: {_pts(report.score)} / {_pts(report.possible)}"]
    lines += [f"  {q.name}: {_pts(q.score)} / {_pts(q.possible)}" for q in report.questions]
    if report.errors:
        lines.append("Errors while running your submission:")
        lines += [f"  {e}" for e in report.errors]
    return "\n".join(lines)


def feedback_md(report: Report, who: str | None = None) -> str:
    """The student's feedback as Markdown. Only the kit writes Markdown here: every message (the
    student's exception text may be in any of them), error and note is quoted in a fenced block,
    and the name in the heading is escaped, so that no heading, score line, link or HTML comes
    from a student."""
    out = [
        heading(who or report.submission),
        "",
        f"**Score: {_pts(report.score)} / {_pts(report.possible)}**",
        "",
        "| question | score | out of |",
        "|---|---|---|",
    ]
    out += [f"| {q.name} | {_pts(q.score)} | {_pts(q.possible)} |" for q in report.questions]
    if report.errors:
        out += ["", "## Errors while running your submission", ""]
        for e in report.errors:
            out += [*quoted(e), ""]
        out.append(
            "Anything defined before an error still counts; what the failing statement "
            "(and, in a notebook, the rest of its cell) would have defined does not."
        )
    failed = [c for q in report.questions for c in q.cases if not c.passed]
    if failed:
        out += ["", "## What failed", ""]
        for alike in _alike(failed):
            c = alike[0]
            kind = "hidden test" if c.hidden else "public test"
            if len(alike) == 1:
                out.append(f"- **{c.name}** ({kind}, {_pts(c.points)} pt):")
            else:
                names = ", ".join(f"**{a.name}**" for a in alike)
                points = _pts(sum(a.points for a in alike))
                out.append(f"- {names} ({len(alike)} {kind}s, {points} pt together; the same message):")
            out += quoted(c.message or "failed", indent="  ")
            if c.note:
                out.append(f"  {c.note}")  # the kit's own words, naming the kit's functions
    else:
        out += ["", "Every test passed."]
    # a question graded with a reference in place of a failing callee says so even when it passed
    lent = {q.name: c.note for q in report.questions for c in q.cases if c.note}
    if lent or report.notes:
        out += ["", "## Notes", ""] + [f"- `{name}`: {note}" for name, note in lent.items()]
        for n in report.notes:
            out += ["-", *quoted(n, indent="  ")]
    return "\n".join(out) + "\n"


def _alike(failed: list[CaseResult]) -> list[list[CaseResult]]:
    """The failed cases in order, those of one question with the same message, note and visibility
    together (at the place of the first): a line said once, with every test it belongs to, where
    Gradescope, one box per test, has to repeat it."""
    groups: dict[tuple[str, str, str, bool], list[CaseResult]] = {}
    for c in failed:
        groups.setdefault((c.question, c.message, c.note, c.hidden), []).append(c)
    return list(groups.values())


_MARKDOWN = re.compile(r"([\\`*_\[\]<>#!|~&])")


def escaped(text: str) -> str:
    """``text`` on one line as Markdown that shows it as it is: every character that could start a
    heading, emphasis, code, a link (``(`` only follows ``]``), a table cell, an entity or HTML has
    its backslash."""
    return _MARKDOWN.sub(r"\\\1", " ".join(str(text).split()))


def heading(who: str) -> str:
    """The feedback's first line, naming the student (a name comes from a roster, an LMS or the
    file's own name: text, never Markdown)."""
    return f"# Feedback for {escaped(who)}"


def quoted(text: str, *, indent: str = "") -> list[str]:
    """``text`` as a fenced code block (lines to join with newlines), each line indented by ``indent``
    (a list item's): the fence is longer than any run of backticks inside, so nothing in ``text``
    can close it, and a carriage return, which Markdown reads as a line end too, is one."""
    lines = str(text).replace("\r\n", "\n").replace("\r", "\n").replace("\0", "\ufffd").split("\n")
    longest = max((len(run) for run in re.findall(r"`+", str(text))), default=0)
    fence = "`" * max(3, longest + 1)
    return [f"{indent}{fence}text", *(f"{indent}{line}" for line in lines), f"{indent}{fence}"]


def _pts(x: float) -> str:
    return f"{x:g}"


def write(out: Path, report: Report, fields: dict[str, Any] | None = None, who: str | None = None) -> Path:
    """Write the submission's files into ``out/<report.submission>``, with ``fields`` (identity,
    status, hashes: see ``stamp``) in results.json and ``who`` named in the feedback; returns its
    results.json. Written in one go, results.json last, so that a run killed at any point leaves
    either a complete result or none."""
    folder = Path(out) / report.submission
    write_atomic(folder / "output.txt", report.log)
    write_atomic(folder / "feedback.md", feedback_md(report, who))
    data = results_json(report)
    data["extra_data"]["status"] = GRADED
    data["extra_data"].update(fields or {})
    path = folder / "results.json"
    write_atomic(path, dumps(data))
    return path


def failed_results(name: str, questions: list[tuple[str, float]], why: str) -> dict[str, Any]:
    """The results.json of a submission whose grading itself failed (its worker died or hung):
    status "not graded", so a re-run grades it again."""
    return {
        "score": 0.0,
        "output": f"Grading failed: {why}",
        "visibility": "visible",
        "tests": [],
        "extra_data": {
            "engine": ENGINE,
            "submission": name,
            "questions": {q: 0.0 for q, _ in questions},
            "possible": dict(questions),
            "errors": [why],
            "notes": [],
            "status": NOT_GRADED,
        },
    }


def stamp(results: Path, fields: dict[str, Any], who: str) -> dict[str, Any]:
    """Add ``fields`` (identity, status, hashes) to a results.json's extra_data and name the
    student in the feedback beside it; returns the updated results."""
    data = read(results)
    if data is None:
        raise ValueError(f"{results} is not a results.json this engine wrote")
    data["extra_data"].setdefault("status", GRADED)
    data["extra_data"].update(fields)
    feedback = results.with_name("feedback.md")
    if feedback.is_file():
        text = feedback.read_text(encoding="utf-8")
        body = text.split("\n", 1)[1] if text.startswith("# Feedback for ") else "\n" + text
        write_atomic(feedback, f"{heading(who)}\n{body}")
    write_atomic(results, dumps(data))
    return data


def dumps(data: dict[str, Any]) -> str:
    """A results.json's text: each top-level key and each test row on a line of its own, so that a
    human finds a case by its line. Not ``indent``: that takes json's pure-Python encoder, twice the
    CPU of this (each piece through the C one) on the class's results."""
    lines = []
    for key, value in data.items():
        rows = value if key == "tests" and isinstance(value, list) and value else None
        text = "[\n  " + ",\n  ".join(map(json.dumps, rows)) + "\n ]" if rows else json.dumps(value)
        lines.append(f" {json.dumps(key)}: {text}")
    return "{\n" + ",\n".join(lines) + "\n}\n"


def read(path: Path) -> dict[str, Any] | None:
    """A results.json this engine wrote, or None."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    extra = data.get("extra_data") if isinstance(data, dict) else None
    if not isinstance(extra, dict) or extra.get("engine") != ENGINE:
        return None
    return data
