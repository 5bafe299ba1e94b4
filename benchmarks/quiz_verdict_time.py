"""Verdict time of the quiz checker: median and max over representative answers (target: median
<= 50 ms in-process, every verdict < 1 s). A measurement, not a test.

    PYTHONPATH=src python benchmarks/quiz_verdict_time.py
"""

from __future__ import annotations

import statistics
import time

from attnlab.quiz.bank import load
from attnlab.quiz.check import check

ANSWERS = [
    ("pe-dim0", "sin(pos)"),
    ("pe-dim0", "cos(pos)"),
    ("pe-dim0", "sin(pos/10000)"),
    ("pe-dim1", "cos(pos/10000**(2/d_model))"),
    ("wavelength", "2*pi*10**(8*i/d_model)"),
    ("wavelength", "2*pi*exp(2*i*log(10000)/d_model)"),
    ("wavelength", "2*pi/10000**(2*i/d_model)"),
    ("shift-block", "[[cos(k*w), -sin(k*w)], [sin(k*w), cos(k*w)]]"),
    ("proof-q", "Q*P"),
    ("proof-kt", "P^T*K^T"),
    ("proof-a", "softmax(P*S*P^T)"),
    ("proof-z", "P*A*P^T*P*V"),
    ("proof-chain", "(P*A*P^T)*(P*V) = P*A*(P^T*P)*V = P*A*V = P*Z"),
    ("score-12", "21.97"),
    ("score-12", "15.53"),
    ("rope-relative", "(q1*k1 + q2*k2)*cos((m-n)*theta) + (q1*k2 - q2*k1)*sin((m-n)*theta)"),
    ("pe-dim0", "9**9**9**9"),
    ("pe-dim0", "x" * 1_000_000),
    ("pe-dim0", "pos**pos**pos**pos"),
    ("wavelength", "(pi+i)**100*(d_model+i+1)**100"),
    ("pe-dim0", "exp(exp(exp(exp(pos))))"),
    ("pe-dim0", "exp(exp(exp(exp(5))))"),
    ("pe-dim0", "sin(pos) + exp(pos - 1000)"),
    ("pe-dim0", "-sin(-pos)"),
    ("proof-a", "P A P^T"),
    ("wavelength", "2 pi 10000^(2i/d_model)"),
    ("proof-z", "(P+Q+X+A)*(P+Q+X+A)*(P+Q+X+A)*(P+Q+X+A)*(P+Q+X+A)*(P+Q+X+A)"),
]


def main() -> None:
    items = load()
    check(items["pe-dim0"], "sin(pos)")  # warm sympy's caches and imports once
    times = []
    for item_id, answer in ANSWERS:
        started = time.perf_counter()
        verdict = check(items[item_id], answer)
        elapsed = time.perf_counter() - started
        times.append(elapsed)
        print(f"{elapsed * 1000:8.1f} ms  {verdict.status:<10} {item_id:<12} {answer[:50]!r}")
    print(
        f"\nmedian {statistics.median(times) * 1000:.1f} ms, max {max(times) * 1000:.1f} ms "
        f"over {len(times)} answers (target: median <= 50 ms, max < 1000 ms)"
    )


if __name__ == "__main__":
    main()
