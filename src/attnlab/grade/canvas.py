"""A Canvas gradebook import file from a roster and the grades.

The roster is Canvas's gradebook export (or any CSV with its first columns: Student, ID, SIS User
ID, SIS Login ID, Section). A roster row matches the submission whose name equals its SIS Login ID
or its ID. Students without a submission get an empty cell, which Canvas leaves unchanged.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from .report import write_atomic

COLUMNS = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")


def write(out: Path, roster: Path, totals: dict[str, float], assignment: str,
          possible: float) -> tuple[Path, list[str]]:
    """Write ``canvas_import.csv``; returns its path and the submissions no roster row matched."""
    with open(roster, newline="", encoding="utf-8-sig") as f:
        rows = [r for r in csv.DictReader(f)]
    missing = [c for c in ("Student", "ID", "SIS Login ID") if rows and c not in rows[0]]
    if missing:
        raise ValueError(f"{roster} lacks the column(s) {', '.join(missing)}")
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow([*COLUMNS, assignment])
    w.writerow(["Points Possible", "", "", "", "", f"{possible:g}"])
    matched = set()
    for r in rows:
        if (r.get("Student") or "").strip() in ("Points Possible", "") and not r.get("ID"):
            continue
        if (r.get("Student") or "").strip().startswith("Points Possible"):
            continue
        key = next((k for k in ((r.get("SIS Login ID") or "").strip(), (r.get("ID") or "").strip())
                    if k and k in totals), None)
        score = "" if key is None else f"{totals[key]:g}"
        if key is not None:
            matched.add(key)
        w.writerow([(r.get(c) or "").strip() for c in COLUMNS] + [score])
    path = Path(out) / "canvas_import.csv"
    write_atomic(path, buf.getvalue())
    return path, sorted(set(totals) - matched)
