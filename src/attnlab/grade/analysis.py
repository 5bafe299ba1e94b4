"""Item analysis over every graded submission: pass rate per test case and how often each named
misconception was seen. The misconceptions are the engine's (``CaseResult.misconception``, from the
tests' own messages, in results.json's ``extra_data``): nothing here reads a student's text."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from .. import atomic
from .report import FILE_MODE, csv_text, write_atomic


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
        plot(out / "item_analysis.png", items, variants)
    return items, variants


def preload() -> None:
    """Import matplotlib's Agg machinery (half a second), e.g. in a thread while grading runs."""
    from matplotlib.backends import backend_agg  # noqa: F401
    from matplotlib import figure  # noqa: F401


def plot(path: Path, items: list[CaseStats], variants: Counter) -> None:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    rows = len(items) + max(len(variants), 1)
    height = 1.5 + 0.28 * rows
    fig = Figure(figsize=(10, height))
    FigureCanvasAgg(fig)
    ax1, ax2 = fig.subplots(2, 1, gridspec_kw={"height_ratios": [max(len(items), 1), max(len(variants), 1)]})
    fig.subplots_adjust(left=0.46, right=0.97, top=1 - 0.5 / height, bottom=0.6 / height, hspace=0.9 / height * 4)
    # one bar per case, grouped by question; one label per question keeps the drawing fast
    ys = list(range(len(items)))
    ax1.barh(ys, [100 * it.rate for it in items], color=["#8c8c8c" if it.hidden else "#4c72b0" for it in items])
    firsts = [i for i, it in enumerate(items) if i == 0 or items[i - 1].question != it.question]
    ax1.set_yticks(firsts, [items[i].question for i in firsts])
    for i in firsts[1:]:
        ax1.axhline(i - 0.5, color="#dddddd", linewidth=0.8)
    ax1.set_ylim(len(items) - 0.5, -0.5)
    ax1.set_xlim(0, 100)
    ax1.set_xlabel("submissions passing (%)")
    ax1.set_title(f"Pass rate per test case ({items[0].graded} submissions)\npublic cases blue, hidden grey")
    if variants:
        common = variants.most_common()
        ax2.barh([f"{q}: {v}" for (q, v), _ in common], [n for _, n in common], color="#dd8452")
        ax2.invert_yaxis()
        ax2.set_xlabel("submissions")
        ax2.xaxis.get_major_locator().set_params(integer=True)
    else:
        ax2.text(0.5, 0.5, "no named misconception seen", ha="center", va="center")
        ax2.set_axis_off()
    ax2.set_title("Named misconceptions")
    with atomic.replacing(path) as tmp:
        fig.savefig(tmp, dpi=90, format="png")
        tmp.chmod(FILE_MODE)


def table(items: list[CaseStats], variants: Counter):
    """The analysis as rich tables: pass rates per question (each case in item_analysis.csv and
    the plot), then the named misconceptions."""
    from rich.table import Table

    from .report import shown as escape

    t = Table(title="Item analysis (every case: item_analysis.csv and .png)")
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
    m = Table(title="Named misconceptions")
    for col in ("question", "looks like", "submissions"):
        m.add_column(col)
    for (q, v), n in variants.most_common():
        m.add_row(escape(q), escape(v), str(n))
    return t, m
