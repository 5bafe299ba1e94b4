"""What starting and ending one sandbox costs in CPU, against what a bare fork of an interpreter of
the same size costs, both measured in the same run (a loaded machine changes both alike).

    python benchmarks/sandbox_cost.py [-n 100] [--rounds 3] [--expect-mode root]

A sandbox here is what grading a submission starts and ends: ``Zygote.spawn``, one request (the
names it defines: its set-up is done by then), ``Sandbox.kill`` without waiting, as at the end of a
submission. Its cost is the CPU of the zygote and every process it started (reaped: the zygote's
own and its children's times), and of this process, per sandbox; the zygote and this process share
one core, as a worker and its zygote do. The baseline is an interpreter with the same imports
(numpy and the zygote's ``PRELOAD``: a submission that imports none of the slow optional modules,
``preloads.py``, gets no more) that forks a child that exits at once, as often.
Prints the median of ``--rounds`` of each (CPU, and wall time beside it) and their ratio, with the
machine's core count and load; fails unless every round's zygote had ``--expect-mode`` (default: the
strongest this machine should give, ``isolation_mode.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import isolation_mode

ROOT = Path(__file__).resolve().parents[1]
TICK = os.sysconf("SC_CLK_TCK")

BARE_FORK = """
import gc, os, resource, sys
for name in sys.argv[2:]:
    __import__(name)
gc.collect()
gc.freeze()
n = int(sys.argv[1])
before = resource.getrusage(resource.RUSAGE_CHILDREN)
self_before = resource.getrusage(resource.RUSAGE_SELF)
for _ in range(n):
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
after = resource.getrusage(resource.RUSAGE_CHILDREN)
self_after = resource.getrusage(resource.RUSAGE_SELF)
used = sum(getattr(after, k) - getattr(before, k) for k in ("ru_utime", "ru_stime"))
used += sum(getattr(self_after, k) - getattr(self_before, k) for k in ("ru_utime", "ru_stime"))
print(used / n)
"""


def sandbox_seconds(n: int, cpu: int) -> tuple[float, float, str]:
    """CPU and wall seconds per sandbox started, asked once and ended, and the zygote's mode."""
    sys.path.insert(0, str(ROOT / "src"))
    from attnlab.grade.session import Output, Zygote
    from attnlab.grade.worker import claim_uid, sandbox_config

    uid, lock = claim_uid() if os.geteuid() == 0 else (None, None)
    allowed = sandbox_config(ROOT / "autograder" / "pe_attention" / "tests")
    zygote = Zygote(
        uid=uid,
        gid=uid,
        memory_mb=2048,
        cpu_seconds=60,
        packages=allowed["packages"],
        preload=allowed["preload"],
        cpu=cpu,
    )
    try:
        for _ in range(2):  # the trial's sandbox, and the first forked on request
            sb = zygote.spawn(Output())
            sb.request("names", False, 20, "listing names")
            sb.kill()
        stat = open(f"/proc/{zygote.proc.pid}/stat").read().rpartition(")")[2].split()
        zygote_before = sum(int(x) for x in stat[11:15]) / TICK
        me = resource.getrusage(resource.RUSAGE_SELF)
        start = time.perf_counter()
        for _ in range(n):
            sb = zygote.spawn(Output())
            sb.request("names", False, 20, "listing names")
            sb.kill()
        me_after = resource.getrusage(resource.RUSAGE_SELF)
        wall = time.perf_counter() - start
    finally:
        zygote.close()
        if lock is not None:
            os.close(lock)
    # the zygote has exited and been waited for: its times and its children's are this process's
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    used = children.ru_utime + children.ru_stime - zygote_before
    used += me_after.ru_utime + me_after.ru_stime - me.ru_utime - me.ru_stime
    return used / n, wall / n, zygote.mode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=100, help="sandboxes (and bare forks) per round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)  # a round, in a process of its own
    isolation_mode.add_option(parser)
    args = parser.parse_args()
    cpu = max(os.sched_getaffinity(0))
    if args.one:
        os.sched_setaffinity(0, {cpu})
        seconds, wall, mode = sandbox_seconds(args.n, cpu)
        print(json.dumps({"seconds": seconds, "wall": wall, "mode": mode}))
        return
    sys.path.insert(0, str(ROOT / "src"))
    from attnlab.grade import sandbox as zygote_side

    modules = ["numpy", *zygote_side.PRELOAD]
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MPLBACKEND="Agg")
    load_before = os.getloadavg()[0]
    sandboxes, walls, forks, modes = [], [], [], set()
    for _ in range(args.rounds):
        out = subprocess.run(
            [sys.executable, __file__, "--one", "-n", str(args.n)], capture_output=True, text=True, check=True
        ).stdout
        result = json.loads(out.strip().splitlines()[-1])
        sandboxes.append(result["seconds"])
        walls.append(result["wall"])
        modes.add(result["mode"])
        out = subprocess.run(
            ["taskset", "-c", str(cpu), sys.executable, "-I", "-c", BARE_FORK, str(args.n), *modules],
            capture_output=True,
            text=True,
            check=True,
            env=env,
        ).stdout
        forks.append(float(out.strip().splitlines()[-1]))
    isolation_mode.check(modes, args.expect_mode)
    sandbox, fork = statistics.median(sandboxes), statistics.median(forks)
    print(f"{os.cpu_count()} cores, load {load_before:.1f} -> {os.getloadavg()[0]:.1f}; mode {args.expect_mode}")
    print(
        f"one sandbox started, asked once, ended: {1000 * sandbox:.1f} ms of CPU, "
        f"{1000 * statistics.median(walls):.1f} ms wall (medians of {args.rounds})"
    )
    print(f"one bare fork of an interpreter as large: {1000 * fork:.2f} ms of CPU")
    print(f"ratio: {sandbox / fork:.1f} bare forks per sandbox")


if __name__ == "__main__":
    main()
