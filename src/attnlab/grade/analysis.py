"""Item analysis over every graded submission: pass rate per test case and how often each named
misconception was seen. The misconceptions are the engine's (``CaseResult.misconception``, from the
tests' own messages, in results.json's ``extra_data``): nothing here reads a student's text."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from xml.sax.saxutils import escape

from .report import csv_text, write_atomic


@dataclass
class CaseStats:
    """How many graded submissions passed one test case."""

    question: str
    case: str
    hidden: bool
    passed: int
    graded: int

    @property
    def rate(self) -> float:
        return self.passed / self.graded if self.graded else 0.0


def analyse(results: Iterable[dict[str, Any]]) -> tuple[list[CaseStats], Counter]:
    items: dict[str, CaseStats] = {}
    variants: Counter = Counter()
    for data in results:
        seen = set()
        for row in data.get("tests", []):
            extra = row.get("extra_data") or {}
            item = items.setdefault(
                row["name"], CaseStats(extra.get("question", ""), row["name"], row.get("visibility") == "hidden", 0, 0)
            )
            item.graded += 1
            item.passed += row.get("status") == "passed"
            if extra.get("misconception"):
                seen.add((item.question, extra["misconception"]))
        variants.update(seen)
    return list(items.values()), variants


def write(out: Path, results: Iterable[dict[str, Any]]) -> tuple[list[CaseStats], Counter]:
    items, variants = analyse(results)
    write_atomic(
        out / "item_analysis.csv",
        csv_text(
            [["question", "case", "hidden", "passed", "graded", "pass_rate"]]
            + [[it.question, it.case, it.hidden, it.passed, it.graded, f"{it.rate:.3f}"] for it in items]
        ),
    )
    write_atomic(
        out / "misconceptions.csv",
        csv_text([["question", "misconception", "submissions"]] + [[q, v, n] for (q, v), n in variants.most_common()]),
    )
    if items:
        plot(out / "item_analysis.svg", items, variants)
    return items, variants


ROW = 18  # pixels per bar
LEFT, WIDTH = 330, 420  # label column, bar area


def plot(path: Path, items: list[CaseStats], variants: Counter) -> None:
    """The analysis as an SVG drawing: a bar per case (pass rate, grouped by question, public blue,
    hidden grey), then a bar per named misconception (submissions). Written as text: no plotting
    library to import, so the drawing costs nothing next to grading even a single submission."""
    out: list[str] = []
    y = 0

    def text(x: float, y: float, s: str, anchor: str = "end", weight: str = "normal") -> None:
        out.append(f'<text x="{x:g}" y="{y:g}" text-anchor="{anchor}" font-weight="{weight}">{escape(s)}</text>')

    def bar(y: float, fraction: float, colour: str, label: str) -> None:
        out.append(
            f'<rect x="{LEFT}" y="{y + 3:g}" width="{WIDTH * fraction:.1f}" height="{ROW - 6}" fill="{colour}"/>'
        )
        text(LEFT + WIDTH * fraction + 4, y + ROW - 5, label, anchor="start")

    y += 24
    text(LEFT + WIDTH / 2, y, f"Pass rate per test case ({items[0].graded} submissions)", "middle", "bold")
    y += 16
    text(LEFT + WIDTH / 2, y, "public cases blue, hidden grey", "middle")
    y += 10
    for i, it in enumerate(items):
        if i == 0 or items[i - 1].question != it.question:
            out.append(f'<line x1="10" x2="{LEFT + WIDTH}" y1="{y:g}" y2="{y:g}" stroke="#dddddd"/>')
            text(LEFT - 8, y + ROW - 5, it.question)
        bar(y, it.rate, "#8c8c8c" if it.hidden else "#4c72b0", f"{100 * it.rate:.0f}%")
        y += ROW
    y += 34
    text(LEFT + WIDTH / 2, y, "Named misconceptions (submissions)", "middle", "bold")
    y += 10
    common = variants.most_common()
    for (question, variant), n in common:
        text(LEFT - 8, y + ROW - 5, f"{question}: {variant}")
        bar(y, n / common[0][1], "#dd8452", str(n))
        y += ROW
    if not common:
        y += ROW
        text(LEFT + WIDTH / 2, y, "no named misconception seen", "middle")
    height = y + 20
    svg = (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{LEFT + WIDTH + 60}" height="{height}" '
        'font-family="sans-serif" font-size="12">\n'
        f'<rect width="100%" height="100%" fill="white"/>\n' + "\n".join(out) + "\n</svg>\n"
    )
    write_atomic(path, svg)


def table(items: list[CaseStats], variants: Counter) -> list:
    """The analysis as rich renderables: pass rates per question (each case in item_analysis.csv
    and the plot), then the named misconceptions (a line saying so where none was seen)."""
    from rich.table import Table

    from .report import shown as escape

    t = Table(title="Item analysis (every case: item_analysis.csv and .svg)")
    for col in ("question", "cases", "hardest case", "its pass rate"):
        t.add_column(col)
    by_question: dict[str, list[CaseStats]] = {}
    for it in items:
        by_question.setdefault(it.question, []).append(it)
    for question, cases in by_question.items():
        worst = min(cases, key=lambda it: it.rate)
        label = worst.case.removeprefix(f"{question} - ") + (" (hidden)" if worst.hidden else "")
        t.add_row(
            escape(question), str(len(cases)), escape(label), f"{100 * worst.rate:.0f}% ({worst.passed}/{worst.graded})"
        )
    if not variants:
        return [t, "No named misconception was seen in these submissions."]
    m = Table(title="Named misconceptions")
    for col in ("question", "looks like", "submissions"):
        m.add_column(col)
    for (q, v), n in variants.most_common():
        m.add_row(escape(q), escape(v), str(n))
    return [t, m]
