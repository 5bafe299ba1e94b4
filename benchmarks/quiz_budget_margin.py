"""How far the quiz's verdicts are from its CPU budgets: the audits' answers (tests/quiz/audit*_answers.tsv,
about 2,500) checked with every budget scaled by each factor, each factor in a fresh process, and the
verdicts that differ from those at the budgets as shipped. A measurement, not a test.

A verdict that changes when the budgets shrink or grow by half is one that load could change (a loaded
machine charges a few per cent more CPU time for the same work); none should. The same goes for what
a process checked before: ``--cold`` also checks every answer after emptying sympy's caches, as the
first answer of a process meets them (ten or more times the work of a warm check, for some).

    .venv/bin/python benchmarks/quiz_budget_margin.py [--scales 0.5 2] [--cold]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

AUDITS = sorted((Path(__file__).resolve().parent.parent / "tests" / "quiz").glob("audit*_answers.tsv"))

# every module's budget, scaled; then each audit answer's verdict, as JSON
VERDICTS = """
import json, sys
from attnlab.quiz import branches, check, constants, equivalence, poles
from sympy.core.cache import clear_cache
scale, cold = float(sys.argv[1]), sys.argv[2] == "cold"
for module, name in [(check, "VERDICT_CPU_SECONDS"), (equivalence, "PROOF_CPU_SECONDS"),
                     (constants, "PROOF_CPU_SECONDS"), (branches, "BRANCH_CPU_SECONDS"), (poles, "POLE_CPU_SECONDS")]:
    setattr(module, name, getattr(module, name) * scale)
items = check.bank_items()
verdicts = []
for line in sys.stdin:
    row_id, _, answer = line.rstrip("\\n").split("\\t", 2)
    item_id, _, student = row_id.partition("@")
    if cold:
        clear_cache()
    verdicts.append(check.check(items[item_id], answer, student=student or None).status)
print(json.dumps(verdicts))
"""


def verdicts(rows: list[str], scale: float, *, cold: bool = False) -> tuple[list[str], float]:
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", VERDICTS, str(scale), "cold" if cold else "warm"],
        input="\n".join(rows) + "\n",
        capture_output=True,
        text=True,
    )
    if done.returncode:
        sys.exit(f"checking at scale {scale} failed:\n{done.stderr}")
    return json.loads(done.stdout), time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scales", type=float, nargs="+", default=[0.5, 2.0])
    parser.add_argument("--cold", action="store_true", help="also check each answer with sympy's caches emptied")
    args = parser.parse_args()
    rows = [line for audit in AUDITS for line in audit.read_text(encoding="utf-8").split("\n") if line.strip()]
    shipped, took = verdicts(rows, 1.0)
    print(f"{len(rows)} answers, budgets as shipped: {took:.0f} s")
    changed_any = 0
    runs = [(f"budgets x{scale:g}", scale, False) for scale in args.scales]
    for label, scale, cold in runs + ([("caches emptied before each answer", 1.0, True)] if args.cold else []):
        scaled, took = verdicts(rows, scale, cold=cold)
        changed = [(row, a, b) for row, a, b in zip(rows, shipped, scaled) if a != b]
        changed_any += len(changed)
        print(f"{label}: {len(changed)} verdicts differ ({took:.0f} s)")
        for row, a, b in changed:
            print(f"    {row[:90]!r}: {a} -> {b}")
    print("every verdict is the same in every run" if not changed_any else "some verdicts depend on the budgets")


if __name__ == "__main__":
    main()
