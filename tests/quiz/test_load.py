"""Questions about verdicts on a loaded machine (the checker's budgets count CPU time, not the clock)."""

import json
import os
import subprocess
import sys

# Answers whose checks cost from a few hundredths to a few tenths of a CPU second: beside a hog
# at a low priority each takes many times longer by the wall clock, never more CPU time.
ANSWERS = [
    [
        "rope-relative",
        "(q1*cos(m*theta) - q2*sin(m*theta))*(k1*cos(n*theta) - k2*sin(n*theta))"
        " + (q1*sin(m*theta) + q2*cos(m*theta))*(k1*sin(n*theta) + k2*cos(n*theta))",
    ],
    ["wavelength", "2*pi*exp(2*i*log(10000)/d_model)"],
    ["shift-block", "[[1 - 2*sin(k*w/2)^2, sin(k*w)], [-sin(k*w), cos(k*w)]]"],
    ["pe-dim0", "sin(pos) + exp(10^6*(d_model-2)) - 1"],
    ["proof-chain", "P*A*(P^T*P)*V = P*A*V = P*Z"],
]

# Imports at full speed, says so, then lowers its own priority and checks what it is sent.
CHECKER = """
import json, os, sys
from attnlab.quiz import bank
from attnlab.quiz.check import check
items = bank.load()
print("ready", flush=True)
answers = json.loads(sys.stdin.readline())
os.nice(int(sys.argv[1]))
print(json.dumps([check(items[i], a).status for i, a in answers]), flush=True)
"""


def _verdicts(*, hogs: int, nice: int) -> list[str]:
    checker = subprocess.Popen(
        [sys.executable, "-c", CHECKER, str(nice)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert checker.stdout is not None and checker.stdin is not None
    assert checker.stdout.readline().strip() == "ready"
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(hogs)]
    try:
        checker.stdin.write(json.dumps(ANSWERS) + "\n")
        checker.stdin.flush()
        out = checker.stdout.readline()
        checker.wait()
    finally:
        for hog in busy:
            hog.kill()
            hog.wait()
    return json.loads(out)


def test_same_verdicts_beside_a_cpu_hog():
    """Does each answer get the same verdict at a low priority beside CPU hogs as on its own?"""
    cores = len(os.sched_getaffinity(0))
    quiet = _verdicts(hogs=0, nice=0)
    loaded = _verdicts(hogs=cores, nice=15)
    assert loaded == quiet
    assert set(quiet) <= {"right", "wrong"}  # verdicts, none of them "could not finish"
