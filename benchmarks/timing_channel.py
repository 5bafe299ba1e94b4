"""Can a checker tell the probe built to catch single-permutation checkers from a pure one by how long
its calls take? A measurement, not a test: timing on a shared machine is noise and signal at once.

    python benchmarks/timing_channel.py [-n 40] [--calls 20]

One sandbox of a real zygote (isolated, as grading runs it), pinned with the worker to one core. A
hostile checker in it calls its lent function on X, then on the first ``--calls`` reorderings of a
five-row X, timing each call, and returns the median. Each of ``-n`` rounds lends, in turn:

1. a pure probe as the tests lend it (``Probe.lent``: the same table every time);
2. a pure probe with a table of its own (as the first lend of one in a worker);
3. ``checkers.one_permutation_only``, fresh for each question, as the tests lend it.

It prints each kind's median, quartiles and, for each two kinds, in how many rounds the first was the
faster. Kinds that cannot be told apart come out near n/2. Before the stateful probe answered from a
table too, the pure one was the faster in 20 of 20 rounds (37 against 92 microseconds).
"""

from __future__ import annotations

import argparse
import ast
import os
import statistics
import textwrap

import numpy as np

from attnlab import paths, testfiles
from attnlab.grade import worker
from attnlab.grade.runner import Limits
from attnlab.grade.session import Output, Zygote

CHECKER = """
import itertools, time
def timing(f, X, calls):
    f(X)
    spent = []
    for p in list(itertools.permutations(range(len(X))))[1 : calls + 1]:
        start = time.perf_counter_ns()
        f(X[list(p)])
        spent.append(time.perf_counter_ns() - start)
    return sorted(spent)[len(spent) // 2]
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=40, help="rounds")
    parser.add_argument("--calls", type=int, default=20, help="timed calls per question (at most 119)")
    args = parser.parse_args()
    testfiles.load_dir(paths.tests_dir())  # puts the oracle on the import path
    import attnlab_oracle as oracle

    options = dict(tests_dir=str(paths.tests_dir()), limits=Limits().__dict__, isolate=True, cpu=0)
    zygote = Zygote.of(worker.launch_zygote(options))
    os.sched_setaffinity(0, {0})
    sandbox = zygote.spawn(Output())
    try:
        code = textwrap.dedent(CHECKER)
        sandbox.request("load", [code], 10, "compiling")
        for j in range(len(ast.parse(code).body)):
            sandbox.request("exec", (0, j), 10, "executing")
        X = np.random.default_rng(50).normal(size=(5, 4))
        mean = oracle.probes.row_probes(5)["mean"]
        kinds = {
            "pure, shared table": lambda: mean.lent(X),
            "pure, own table": lambda: oracle.probes.KnownAnswers(mean.f, X.copy(), oracle.probes.reorderings(5)),
            "stateful": lambda: oracle.checkers.one_permutation_only(X, "equivariant").lent(X),
        }
        spent: dict[str, list[int]] = {k: [] for k in kinds}
        for _ in range(args.n):
            for kind, lend in kinds.items():
                spent[kind].append(sandbox.call("timing", None, (lend(), X, args.calls), {}, 10)[0])
    finally:
        sandbox.kill()
        zygote.close()
    print(f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}; median call of {args.calls}, {args.n} rounds")
    for kind, times in spent.items():
        q1, q3 = np.percentile(times, [25, 75]) / 1000
        print(f"  {kind:20s} {statistics.median(times) / 1000:6.1f} us  (quartiles {q1:.1f}, {q3:.1f})")
    names = list(kinds)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            faster = sum(x < y for x, y in zip(spent[a], spent[b]))
            print(f"  {a} faster than {b}: {faster} of {args.n}")


if __name__ == "__main__":
    main()
