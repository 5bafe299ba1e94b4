"""Run the quiz checker over a set of hand-derived verdicts and count where it disagrees.

The set is a TSV, one answer a line: ``id<TAB>verdict<TAB>answer`` with verdict ``right``, ``wrong``
or ``unreadable``; an id ``ITEM@STUDENT`` grades a numeric item with that student's numbers. The
answer is taken as written (leading and trailing spaces are part of it). Per item it prints the
agreements, wrong answers accepted, right answers rejected, answers read as unreadable where a
verdict was due, and the rest (an unreadable answer called wrong, "needs a human", a fault), then
every disagreement. ``--save`` writes every verdict as JSON, and ``--compare A B`` lists the answers
whose verdict differs between two saved runs (e.g. a quiet run and one beside CPU hogs). A
measurement, not a test.

    PYTHONPATH=src python benchmarks/quiz_audit.py tests/quiz/audit2_answers.tsv --save quiet.json
    nice -n 19 python benchmarks/quiz_audit.py tests/quiz/audit2_answers.tsv --save loaded.json
    python benchmarks/quiz_audit.py --compare quiet.json loaded.json
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter, defaultdict
from pathlib import Path

EXPECTED = ("right", "wrong", "unreadable")


def read_rows(*, path: Path) -> list[tuple[str, str, str]]:
    """The TSV's rows as (id, verdict, answer); a malformed line stops the run with its number."""
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").split("\n"), start=1):
        if not line:
            continue
        parts = line.split("\t")
        if len(parts) != 3 or parts[1] not in EXPECTED:
            raise SystemExit(f"{path}:{number}: expected id<TAB>right|wrong|unreadable<TAB>answer")
        rows.append((parts[0], parts[1], parts[2]))
    return rows


def category(*, expected: str, got: str) -> str:
    """How a verdict stands against the hand-derived one."""
    if got == expected:
        return "agree"
    if got == "right":
        return "wrong accepted"
    if expected == "right" and got == "wrong":
        return "right rejected"
    if got == "unreadable":
        return "unreadable"
    return f"other ({expected} -> {got})"


def run(*, rows: list[tuple[str, str, str]]) -> list[dict]:
    """Check every row in this process; record the verdict and the wall and CPU time it took."""
    from attnlab.quiz.bank import load
    from attnlab.quiz.check import check

    items = load()
    check(items["pe-dim0"], "sin(pos)")  # sympy's imports and caches, once, outside the timings
    results = []
    for row_id, expected, answer in rows:
        item_id, _, student = row_id.partition("@")
        wall, cpu = time.perf_counter(), time.process_time()
        verdict = check(items[item_id], answer, student=student or None)
        results.append(
            {
                "id": row_id,
                "expected": expected,
                "answer": answer,
                "got": verdict.status,
                "message": verdict.message,
                "wall": time.perf_counter() - wall,
                "cpu": time.process_time() - cpu,
            }
        )
    return results


def report(*, results: list[dict]) -> None:
    """Counts per item, then every disagreement."""
    per_item: dict[str, Counter] = defaultdict(Counter)
    for r in results:
        per_item[r["id"].partition("@")[0]][category(expected=r["expected"], got=r["got"])] += 1
    columns = ["agree", "wrong accepted", "right rejected", "unreadable"]
    print(f"{'item':<18}" + "".join(f"{c:>16}" for c in columns) + "   other")
    total: Counter = Counter()
    for item_id, counts in per_item.items():
        total.update(counts)
        other = sum(n for c, n in counts.items() if c not in columns)
        print(f"{item_id:<18}" + "".join(f"{counts[c]:>16}" for c in columns) + f"   {other}")
    other = sum(n for c, n in total.items() if c not in columns)
    print(f"{'total':<18}" + "".join(f"{total[c]:>16}" for c in columns) + f"   {other}")
    print(
        f"\n{len(results)} answers; slowest: wall {max(r['wall'] for r in results):.2f} s, "
        f"CPU {max(r['cpu'] for r in results):.2f} s\n"
    )
    for r in results:
        kind = category(expected=r["expected"], got=r["got"])
        if kind != "agree":
            print(
                f"[{kind}] {r['id']}  {r['answer']!r}\n    expected {r['expected']}, got {r['got']}: "
                f"{r['message'][:200]}"
            )


def compare(*, first: Path, second: Path) -> int:
    """Print every answer whose verdict differs between two saved runs; return how many."""
    a, b = (json.loads(p.read_text(encoding="utf-8")) for p in (first, second))
    if [(r["id"], r["answer"]) for r in a] != [(r["id"], r["answer"]) for r in b]:
        raise SystemExit("the two runs are not of the same answers")
    changed = [(x, y) for x, y in zip(a, b) if x["got"] != y["got"]]
    for x, y in changed:
        print(f"{x['id']}  {x['answer']!r}: {x['got']} ({x['wall']:.2f} s) -> {y['got']} ({y['wall']:.2f} s)")
    slow = max(r["wall"] for r in b)
    print(
        f"{len(changed)} of {len(a)} verdicts differ; slowest wall time {max(r['wall'] for r in a):.2f} s "
        f"vs {slow:.2f} s"
    )
    return len(changed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tsv", nargs="?", type=Path, help="the answers: id<TAB>verdict<TAB>answer")
    parser.add_argument("--save", type=Path, help="write every verdict to this JSON file")
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("A", "B"), help="diff two saved runs")
    args = parser.parse_args()
    if args.compare:
        raise SystemExit(1 if compare(first=args.compare[0], second=args.compare[1]) else 0)
    if args.tsv is None:
        parser.error("give a TSV of answers, or --compare A B")
    results = run(rows=read_rows(path=args.tsv))
    report(results=results)
    if args.save:
        args.save.write_text(json.dumps(results, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
