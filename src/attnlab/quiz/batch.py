"""``attnlab quiz grade``: grade many quiz submissions statically into one folder.

A submission is named by the student's roster id (as ``attnlab grade`` matches it to the Canvas
roster), so numeric items are graded with that student's numbers. Writes
``RESULTS/<submission>/results.json`` (Gradescope's schema, see ``grading``) and
``RESULTS/quiz_grades.csv``: ``submission`` (the file name without extension), one column per
auto-graded item id, ``total``; no cell can become a spreadsheet formula.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..grade.discover import find
from ..grade.report import csv_text
from ..atomic import write_atomic
from . import handgrading
from .grading import grade, graded_items


def main(
    *, submissions: list[Path], out: Path, progress: bool = True, hand_graded: Path | None = None
) -> dict[str, dict]:
    """Grade every submission (``.ipynb``/``.py`` files, or folders of them); results by name.
    ``hand_graded``: the filled-in sheet of free-response points (``handgrading``), merged in.

    Raises ``ValueError`` (or ``FileNotFoundError``) for paths that hold no submission, for two
    submissions with the same name and for a sheet that is not grades, before anything is written.
    """
    files = find([Path(s) for s in submissions])
    hand = handgrading.read_points(hand_graded, names={p.stem for p in files}) if hand_graded else {}
    out = Path(out)
    results: dict[str, dict] = {}
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    columns = (
        TextColumn("grading quiz"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.description}"),
    )
    with Progress(*columns, console=Console(stderr=True), disable=not progress) as bar:
        task = bar.add_task("", total=len(files))
        for path in files:
            bar.update(task, description=path.name)
            results[path.stem] = handgrading.merged(
                grade(submission=path, student=path.stem, whose=" (the submission's name, as on the roster)"),
                hand.get(path.stem, {}),
            )
            (out / path.stem).mkdir(parents=True, exist_ok=True)
            write_atomic(out / path.stem / "results.json", json.dumps(results[path.stem], indent=1))
            bar.advance(task)
    out.mkdir(parents=True, exist_ok=True)
    write_atomic(out / "quiz_grades.csv", grades_csv(results))
    handgrading.gather(files={p.stem: p for p in files}, out=out, points=hand)
    return results


def grades_csv(results: dict[str, dict]) -> str:
    """One row per submission: each item's points (a free-response one blank until graded by hand), total."""
    ids = [i.id for i in graded_items()] + [i.id for i in handgrading.items()]
    rows = [["submission", *ids, "total"]]
    for name in sorted(results):
        scores = results[name]["extra_data"]["items"]
        rows.append([name, *(f"{scores[i]:g}" if i in scores else "" for i in ids), f"{results[name]['score']:g}"])
    return csv_text(rows)
