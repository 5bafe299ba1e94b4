"""The CPU time ``attnlab grade`` spends outside the grading itself: the batch process alone, and a
grading worker from its start to "ready" (issue 38).

    python benchmarks/batch_cpu.py [--copies 3,12] [--runs 5] [--workers 10] [--zip autograder.zip]

1. the batch: the bundled sample submissions, copied ``--copies`` times under other names, graded by
   the autograder zip's tests in a process of its own, ``--runs`` times for each class size: the CPU
   time of that process (user + system) and of its whole tree (the workers, zygotes and sandboxes,
   all reaped), medians; the difference between the sizes gives the CPU per submission;
2. worker start-up: ``--workers`` workers started one after another as the batch starts them, each
   read from ``/proc`` when it says it is ready: its own CPU time and its zygote's (clock ticks),
   medians.

CPU time, not wall time: the machine may be shared. To compare two checkouts, run this file with each
one's interpreter in turn (it imports ``attnlab`` from whichever is running it), several times.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from attnlab import build, paths
from attnlab.grade import batch, calls
from attnlab.grade.limits import Limits

# one run of the batch in a process of its own; prints its own CPU seconds and its children's
GRADE = (
    "import resource, sys; from pathlib import Path; from attnlab.grade import main; "
    "main(submissions=[Path(sys.argv[1])], out=Path(sys.argv[2]), tests_dir=Path(sys.argv[3]), "
    "support_dir=Path(sys.argv[4]), progress=False); "
    "own, kids = (resource.getrusage(w) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)); "
    "print(own.ru_utime + own.ru_stime, kids.ru_utime + kids.ru_stime)"
)


def graded_cpu(subs: Path, out: Path, ag: Path) -> tuple[float, float]:
    """The batch's own CPU seconds and its whole tree's."""
    shutil.rmtree(out, ignore_errors=True)
    line = subprocess.run(
        [sys.executable, "-c", GRADE, str(subs), str(out), str(ag / "tests"), str(ag / "files")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    own, children = float(line[-2]), float(line[-1])
    return own, own + children


def _cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def worker_start(ag: Path, out: Path) -> tuple[float, float]:
    """The CPU seconds of one worker and of its zygote when the worker says it is ready."""
    config: dict = dict(
        tests_dir=str(ag / "tests"),
        support_dir=str(ag / "files"),
        out=str(out),
        limits=Limits.from_timeout(10.0, 2048).__dict__,
        isolate=True,
        parent=os.getpid(),
        dependencies=calls.for_tests(ag / "tests"),
        cpu=None,
    )
    if hasattr(batch, "_sandbox_settings"):  # (a checkout whose batch reads sandbox.yaml for its workers)
        config["sandbox"] = batch._sandbox_settings(ag / "tests")
    w = batch._Worker(config)
    try:
        assert "ready" in json.loads(w.out.readline())
        own = _cpu(w.proc.pid)
        zygotes = Path(f"/proc/{w.proc.pid}/task/{w.proc.pid}/children").read_text().split()
        return own, sum(_cpu(int(z)) for z in zygotes)
    finally:
        w.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--copies", default="3,12", help="class sizes, in copies of the samples")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--workers", type=int, default=10)
    parser.add_argument("--zip", type=Path, help="an autograder zip (default: built now)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="attnlab-batch-cpu-") as tmp:
        work = Path(tmp)
        zip_path = args.zip or build.autograder_zip(out=work)
        ag = work / "ag"
        with zipfile.ZipFile(zip_path) as zf:
            zf.extractall(ag)
        samples = sorted(p for p in paths.sample_submissions_dir().iterdir() if p.suffix in (".py", ".ipynb"))
        per_size: dict[int, tuple[float, float]] = {}
        for copies in (int(c) for c in args.copies.split(",")):
            subs = work / f"subs{copies}"
            subs.mkdir()
            for i in range(copies):
                for p in samples:
                    shutil.copy(p, subs / f"c{i}_{p.name}")
            runs = [graded_cpu(subs, work / "out", ag) for _ in range(args.runs)]
            own, tree = statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)
            per_size[len(samples) * copies] = own, tree
            print(f"{len(samples) * copies} files: batch {own:.3f} s, whole tree {tree:.3f} s of CPU (medians)")
        if len(per_size) >= 2:
            (n0, (own0, tree0)), *_, (n1, (own1, tree1)) = sorted(per_size.items())
            print(
                f"per file: batch {(own1 - own0) / (n1 - n0) * 1e3:.1f} ms, whole tree "
                f"{(tree1 - tree0) / (n1 - n0) * 1e3:.1f} ms; fixed: batch {own0 - n0 * (own1 - own0) / (n1 - n0):.3f} s"
            )
        starts = [worker_start(ag, work / "wout") for _ in range(args.workers)]
        print(
            f"worker start-up: the worker {statistics.median(s[0] for s in starts):.3f} s, its zygote "
            f"{statistics.median(s[1] for s in starts):.3f} s of CPU until ready (medians)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
