"""Free-response answers, graded by hand: gathered for the grader, and the grader's points merged back.

``attnlab quiz grade`` writes ``RESULTS/free_response/<item id>.md`` per free-response item (its
prompt, its rubric, then every submission's answer under the submission's name) and
``RESULTS/free_response/hand_graded.csv`` (``submission``, one column per item). The grader fills in
the points and runs the same command again with ``--hand-graded`` that file: each submission's
points join its results (the item's score and the total). A blank cell is not graded yet. Practice
items score nothing, so none of them is gathered.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

from ..atomic import write_atomic
from .answers import UnreadableFile, read
from .bank import Item
from .check import bank_items
from .grading import total
from .kinds import KINDS

FOLDER = "free_response"
SHEET = "hand_graded.csv"
HIDDEN = "after_published"


def items() -> list[Item]:
    """The items graded by hand: free response worth points, in bank order."""
    return [i for i in bank_items().values() if not KINDS[i.type].has_key and i.points > 0]


def read_points(sheet: Path, *, names: set[str]) -> dict[str, dict[str, float]]:
    """The points in a filled-in ``SHEET``: {submission: {item id: points}}, blank cells left out.

    Raises ``ValueError`` naming the row and column of anything that is not a grade: an unknown
    column or submission, a cell that is not a number from 0 to the item's points."""
    by_id = {i.id: i for i in items()}
    with open(sheet, newline="", encoding="utf-8-sig") as f:
        rows = list(csv.DictReader(f))
        columns = list(rows[0]) if rows else []
    unknown = [c for c in columns if c != "submission" and c not in by_id]
    if "submission" not in columns or unknown:
        raise ValueError(
            f"{sheet}: the columns are 'submission' and free-response item ids "
            f"({', '.join(by_id) or 'none in this bank'}){'; unknown: ' + ', '.join(unknown) if unknown else ''}"
        )
    points: dict[str, dict[str, float]] = {}
    for line, row in enumerate(rows, 2):
        name = (row["submission"] or "").strip()
        if name not in names and name.startswith("'"):  # kept as text by the sheet we wrote (csv_cell)
            name = name[1:]
        if name not in names:
            raise ValueError(f"{sheet}, line {line}: no submission named {name!r} in this run")
        for item_id, cell in row.items():
            if item_id == "submission" or not (cell or "").strip():
                continue
            possible = by_id[item_id].points
            try:
                value = float(cell)
            except ValueError:
                value = math.nan
            if not 0 <= value <= possible:  # nan included
                raise ValueError(f"{sheet}, line {line}, {item_id}: {cell!r} is not a number from 0 to {possible:g}")
            points.setdefault(name, {})[item_id] = value
    return points


def merged(results: dict, points: dict[str, float]) -> dict:
    """One submission's ``results`` (``grading.grade``'s) with its hand-graded ``points`` added."""
    extra = results["extra_data"]
    for item in items():
        if item.id not in points:
            continue
        extra["items"][item.id] = points[item.id]
        extra["possible"][item.id] = item.points
        results["tests"].append(
            {
                "name": item.variable,
                "score": points[item.id],
                "max_score": item.points,
                "status": "passed" if points[item.id] else "failed",
                "visibility": HIDDEN,
                "output": "Graded by hand.",
            }
        )
    results["score"] = total(extra["items"].values())
    return results


def gather(*, files: dict[str, Path], out: Path, points: dict[str, dict[str, float]]) -> list[Path]:
    """Write one file per hand-graded item with every submission's answer, and the sheet to fill in
    (with the ``points`` already given). ``files``: submission name -> quiz file. Returns what it wrote."""
    graded = items()
    if not graded:
        return []
    folder = Path(out) / FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    answers = {}
    for name, path in sorted(files.items()):
        try:
            answers[name] = read(path).variables
        except UnreadableFile:
            answers[name] = {}
    written = []
    for item in graded:
        lines = [f"# {item.id}: {item.title} ({item.points:g} pt, graded by hand)", "", item.prompt, ""]
        if item.rubric:
            lines += ["Rubric:", "", *(f"- {r}" for r in item.rubric), ""]
        for name, given in answers.items():
            answer = given.get(item.variable)
            text = answer.text.strip() if answer is not None and answer.text and answer.text.strip() else ""
            lines += [f"## {name}", "", text or "(no answer)", ""]
        path = folder / f"{item.id}.md"
        write_atomic(path, "\n".join(lines))
        written.append(path)
    rows = [["submission", *(i.id for i in graded)]]
    for name in sorted(files):
        done = points.get(name, {})
        rows.append([name, *(f"{done[i.id]:g}" if i.id in done else "" for i in graded)])
    sheet = folder / SHEET
    write_atomic(sheet, _csv(rows))
    return [*written, sheet]


def _csv(rows: list[list[str]]) -> str:
    from ..grade.report import csv_text  # cells that cannot become spreadsheet formulas

    return csv_text(rows)
