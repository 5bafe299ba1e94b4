"""What the crossings alone cost: the in-process floor of grading (``floor.py``) against the same
floor with one bare socket round trip wherever the engine crosses between its trusted side and a
sandbox (each call of a submission's function by the tests, each call of a function the tests hand
to one), measured in the same run. A measurement, not a test.

    python benchmarks/crossing_floor.py [-n 36] [--pairs 3]

The files are the bundled samples, cycled to ``n``, graded by the built autograder zip's tests.
Each pair runs the floor without and with the crossings, one after the other; the figures are the
medians over the pairs. Printed per file: the floor's CPU (cold: the first pass; warm: the second),
the crossings, the floor with them (both processes' CPU) and so the CPU of one crossing, and their
ratio: the least "CPU per file / floor" (issue 38 asks for at most 1.6) that any engine crossing
that often can reach on this machine, with no protocol work at all. The engine crosses somewhat
more often than this floor does (its lending reruns, and the requests that load a submission), so
the bound is if anything low. Prints the core count and the load.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import zipfile
from pathlib import Path

from attnlab import build, paths

import floor


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=36, help="submissions: the bundled samples, cycled")
    parser.add_argument("--pairs", type=int, default=3, help="runs of the floor without and with crossings")
    args = parser.parse_args()
    load = lambda: " ".join(f"{x:.1f}" for x in os.getloadavg())  # noqa: E731
    start_load = load()
    tmp = Path(tempfile.mkdtemp(prefix="attnlab-crossing-"))
    try:
        samples = sorted(paths.sample_submissions_dir().iterdir())
        (tmp / "subs").mkdir()
        files = [
            Path(shutil.copy(samples[i % len(samples)], tmp / "subs" / f"s{i:03d}_{samples[i % len(samples)].name}"))
            for i in range(args.n)
        ]
        (tmp / "dist").mkdir()
        zipfile.ZipFile(build.autograder_zip(out=tmp / "dist")).extractall(tmp / "ag")
        plain, crossed = [], []
        for _ in range(args.pairs):
            plain.append(floor.seconds(files=files, tests_dir=tmp / "ag" / "tests", support_dir=tmp / "ag" / "files"))
            crossed.append(
                floor.seconds(files=files, tests_dir=tmp / "ag" / "tests", support_dir=tmp / "ag" / "files", cross=True)
            )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    def per_file(runs, i):
        return statistics.median(run[i][0] + run[i][2] for run in runs) / args.n * 1000

    crossings = crossed[0][1][1]
    print(f"{os.cpu_count()} cores, load {start_load} -> {load()}; {args.n} files, medians of {args.pairs} pairs")
    for i, name in ((0, "cold"), (1, "warm")):
        bare, with_crossings = per_file(plain, i), per_file(crossed, i)
        each = (with_crossings - bare) / crossings * 1000
        print(
            f"  {name}: floor {bare:.1f} ms of CPU per file; with {crossings} crossings {with_crossings:.1f} ms "
            f"({each:.1f} us each); ratio {with_crossings / bare:.2f} (issue 38: an engine at most 1.6)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
