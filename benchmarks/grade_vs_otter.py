"""How fast ``attnlab grade`` and ``attnlab check`` are, as ratios against sequential ``otter run``
measured in the same run, so that a shared or loaded machine changes both sides alike.

    python benchmarks/grade_vs_otter.py [-n 40] [--bugs] [--copies 10] [--scale 500,5000] [--short]
        [--expect-mode root]

One run measures (issue 38's targets in brackets):

1. a small class: N mixed submissions (the known-outcome samples, cycled to N, with ``--bugs`` the
   one-bug submissions of the bug corpus too), each graded by ``otter run -a autograder.zip`` one
   after another and by one ``attnlab grade`` of them all (median of three); scores must agree,
   except on questions graded with a lent reference, which otter's runner cannot lend (there a
   failing callee costs points twice under otter);
2. a class: the same files ``--copies`` times under other names, graded once, against otter's
   time per file from 1 [ratio >= 70]; its CPU per file against the warm floor of 6 [<= 1.6];
3. one file: ``attnlab grade one.py`` (median of three) against otter's median time per file
   [otter / attnlab >= 5];
4. ``attnlab check`` on the student notebook and on its ``.py`` twin (median of five each)
   [notebook / .py <= 1.1];
5. linear at any class size: copies of one submission under 500 and 5,000 names (``--scale``),
   graded cold; the time per submission at the larger size against the smaller [<= 1.10], and
   the peak memory of the batch process itself (not its workers) at each size.

6. the floor (``floor.py``): the small class's files graded by the same test files in one process with no
   isolation, no limits and no protocol (what any engine must at least spend: the students' code
   and the tests' own work), as CPU time on one core, once cold (the first pass, as a small class
   meets them) and once more in the same process (warm, as most of a large class meets them);
   with the machine's cores, the best ratio against otter that any engine could reach on this
   machine with these tests, for each.

Every ``attnlab grade`` run must have graded in ``--expect-mode`` (default: the strongest this machine
should give, ``isolation_mode.py``), as its ``run.json`` records each worker's mode; any other mode
fails the benchmark. The small class and the class also report the CPU time of the whole process tree
(the batch, its workers, zygotes and sandboxes: all reaped) beside the wall time, per file and as a
ratio to the floor of 6 measured in the same run.

``--short`` is a quick look (N = 12, 3 copies, scale 50,500): its ratios are indicative only.
The machine's core count and load average (start and end) are printed with the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

from attnlab import build, paths
from attnlab.grade import report
from attnlab.grade.runner import lent_note

import floor as floor_of
import isolation_mode

REPO = Path(__file__).resolve().parents[1]

# the tests' own helpers: otter run as the parity tests run it, and the bug corpus
sys.path[:0] = [str(REPO / "tests"), str(REPO / "tests" / "autograder"), str(REPO / "tests" / "grade")]
from otter_runs import otter_results, question_scores  # noqa: E402

# the batch in a process of its own, reporting its own peak memory (workers not included)
GRADE = (
    "import resource, sys; from pathlib import Path; from attnlab.grade import main; "
    "main(submissions=[Path(sys.argv[1])], out=Path(sys.argv[2]), tests_dir=Path(sys.argv[3]), "
    "support_dir=Path(sys.argv[4]), progress=False); "
    "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"
)


def otter_scores(zip_path: Path, submission: Path, work: Path) -> tuple[dict[str, float], float]:
    """otter's points per question for one submission, and the seconds its ``otter run`` took."""
    start = time.perf_counter()
    results = otter_results(zip_path, submission, work)
    return question_scores(results), time.perf_counter() - start


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


MODES: set[str] = set()  # the isolation mode of every worker of every ``ours`` run


def ours(subs: Path, out: Path, ag: Path) -> tuple[float, int, float]:
    """Seconds for one ``attnlab grade`` of ``subs``, the batch process's peak memory (KiB), and the
    CPU seconds of its whole process tree (each process is reaped by its parent: its times reach
    this process's children's)."""
    cpu = _children_cpu()
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", GRADE, str(subs), str(out), str(ag / "tests"), str(ag / "files")],
        check=True,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - start
    MODES.update(w["mode"] for w in json.loads((out / "run.json").read_text())["workers"])
    return wall, int(done.stdout.split()[-1]), _children_cpu() - cpu


def _rounded(results: dict) -> dict[str, float]:
    return {q: round(v, 9) for q, v in results["extra_data"]["questions"].items()}


LENT = lent_note(("f",)).split("`")[0]  # how a row graded with a lent reference begins its note


def _lent(results: dict) -> set[str]:
    """The questions graded with a lent reference: otter's runner cannot lend, so there the
    submission's own failing callee costs points a second time (issue 22), by design."""
    return {t["name"].rsplit(" - ", 1)[0] for t in results["tests"] if LENT in t.get("output", "")}


def _disagree(ours: dict, theirs: dict[str, float]) -> bool:
    """Whether the scores differ on a question graded the same way by both."""
    mine, lent = _rounded(ours), _lent(ours)
    return {q: v for q, v in mine.items() if q not in lent} != {
        q: round(v, 9) for q, v in theirs.items() if q not in lent
    }


def bug_submissions(folder: Path) -> list[Path]:
    """The bug corpus (tests/fixtures/bugs), each overlay composed with its correct base as the
    corpus test composes it."""
    from test_bug_corpus import BUGS, compose

    out = []
    for overlay in BUGS:
        path = folder / f"bug_{overlay.name}"
        path.write_text(compose(overlay), encoding="utf-8")
        out.append(path)
    return out


def copies(files: list[Path], folder: Path, n: int) -> Path:
    folder.mkdir()
    for k in range(n):
        for f in files:
            shutil.copy(f, folder / f"c{k}_{f.name}")
    return folder


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def timed(command: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, capture_output=True, cwd=REPO)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=40, help="number of sample submissions in the small class")
    parser.add_argument("--bugs", action="store_true", help="add the one-bug submissions of the bug corpus")
    parser.add_argument("--copies", type=int, default=10, help="the class: the small class this many times")
    parser.add_argument("--scale", default="500,5000", help="the two class sizes of the linearity check")
    parser.add_argument("--short", action="store_true", help="a quick look: -n 12 --copies 3 --scale 50,500")
    isolation_mode.add_option(parser)
    args = parser.parse_args()
    if args.short:
        args.n, args.copies, args.scale = 12, 3, "50,500"
    small_n, large_n = (int(x) for x in args.scale.split(","))
    print(f"machine: {os.cpu_count()} cores, load average {load()} at the start; {time.strftime('%Y-%m-%d %H:%M')}")
    tmp = Path(tempfile.mkdtemp(prefix="attnlab-bench-"))
    try:
        samples = sorted(paths.sample_submissions_dir().iterdir())
        subs = tmp / "submissions"
        subs.mkdir()
        for i in range(args.n):
            sample = samples[i % len(samples)]
            shutil.copy(sample, subs / f"s{i:03d}_{sample.name}")
        if args.bugs:
            bug_submissions(subs)
        files = sorted(subs.iterdir())
        (tmp / "dist").mkdir()
        zip_path = build.autograder_zip(out=tmp / "dist")
        # Both sides grade with the zip's snapshot of the tests, even if the tree changes meanwhile.
        ag = tmp / "ag"
        zipfile.ZipFile(zip_path).extractall(ag)

        # 1. the small class
        work = tmp / "otter"
        work.mkdir()
        theirs, otter_each = {}, []
        for f in files:
            theirs[f.stem], seconds = otter_scores(zip_path, f, work)
            otter_each.append(seconds)
        otter_time = sum(otter_each)
        measured = [ours(subs, tmp / f"ours{k}", ag) for k in range(3)]
        runs = [m[0] for m in measured]
        ours_time, ours_cpu = statistics.median(runs), statistics.median(m[2] for m in measured)
        disagree = sorted(
            {
                f.stem
                for k in range(len(runs))
                for f in files
                if _disagree(
                    json.loads(
                        (tmp / f"ours{k}" / "submissions" / report.folder_name(f.stem) / "results.json").read_text()
                    ),
                    theirs[f.stem],
                )
            }
        )
        per_file = otter_time / len(files)

        # 2. the class
        big = copies(files, tmp / "class", args.copies)
        class_time, _, class_cpu = ours(big, tmp / "ours-class", ag)
        class_n = len(files) * args.copies

        # 3. one file
        one = tmp / "one"
        one.mkdir()
        shutil.copy(next(p for p in samples if "full" in p.name and p.suffix == ".py"), one / "one.py")
        one_runs = []
        for k in range(3):  # the command as an instructor types it
            start = time.perf_counter()
            grade = [sys.executable, "-m", "attnlab.cli", "grade", str(one / "one.py"), "--out", str(tmp / f"one{k}")]
            subprocess.run(grade, capture_output=True, cwd=REPO, check=True)
            one_runs.append(time.perf_counter() - start)
        one_time = statistics.median(one_runs)
        otter_one = statistics.median(otter_each)

        # 4. the student's check, notebook and .py twin
        release = paths.release_dir()
        name = paths.current_assignment()
        check = [sys.executable, "-m", "attnlab.cli", "check"]
        notebook = timed([*check, str(release / f"{name}.ipynb")], 5)
        twin = timed([*check, str(release / f"{name}.py")], 5)

        # 5. linear at any class size
        cheap = next(p for p in samples if "full" in p.name and p.suffix == ".py")
        linear = {}
        for n in (small_n, large_n):
            folder = tmp / f"cheap{n}"
            folder.mkdir()
            for i in range(n):
                shutil.copy(cheap, folder / f"student{i:05d}.py")
            linear[n] = ours(folder, tmp / f"ours-cheap{n}", ag)[:2]
            shutil.rmtree(tmp / f"ours-cheap{n}")
        per_small, per_large = (linear[n][0] / n for n in (small_n, large_n))

        # 6. the floor
        passes = [floor_of.seconds(files=files, tests_dir=ag / "tests", support_dir=ag / "files") for _ in range(3)]
        floor, warm = (statistics.median(p[i][0] for p in passes) / len(files) for i in (0, 1))
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1

        def row(what: str, value: str, target: str) -> None:
            print(f"{what:<44} {value:<44} {target}")

        isolation_mode.check(MODES, args.expect_mode)
        print(f"load average at the end: {load()}; isolation mode {args.expect_mode} in every worker")
        row("small class", f"{len(files)} submissions", "")
        row("  sequential otter run", f"{otter_time:.1f} s ({per_file:.2f} s each)", "")
        row("  attnlab grade", f"{ours_time:.2f} s (median of {', '.join(f'{t:.2f}' for t in runs)})", "")
        row("  its CPU, whole process tree", f"{ours_cpu:.2f} s ({1000 * ours_cpu / len(files):.0f} ms per file)", "")
        row("  ratio", f"{otter_time / ours_time:.1f}x", "")
        row(
            "  every score agrees with otter",
            "yes" if not disagree else "NO: " + ", ".join(disagree),
            "(questions graded with a lent reference aside)",
        )
        row(f"class ({args.copies} copies)", f"{class_n} submissions: {class_time:.1f} s", "")
        row("  its CPU, whole process tree", f"{class_cpu:.1f} s ({1000 * class_cpu / class_n:.0f} ms per file)", "")
        row("  ratio (otter's time per file x count)", f"{per_file * class_n / class_time:.1f}x", "target >= 70x")
        row("one file: attnlab grade", f"{one_time:.2f} s (otter run: {otter_one:.2f} s)", "")
        row("  otter / attnlab", f"{otter_one / one_time:.1f}x", "target >= 5x")
        row(
            "attnlab check: notebook / .py twin",
            f"{notebook:.2f} s / {twin:.2f} s = {notebook / twin:.2f}",
            "target <= 1.1",
        )
        for n in (small_n, large_n):
            seconds, rss = linear[n]
            row(
                f"  {n} copies of one file",
                f"{seconds:.1f} s, {1000 * seconds / n:.1f} ms each, batch {rss // 1024} MiB",
                "",
            )
        row(f"linear: per submission at {large_n} / at {small_n}", f"{per_large / per_small:.3f}", "target <= 1.10")
        row(
            "floor: in one process, no isolation",
            f"{1000 * floor:.0f} ms of CPU per file, {1000 * warm:.0f} ms again (medians of 3)",
            "",
        )
        row(
            f"  best ratio any engine could reach ({cores} cores)",
            f"small class {per_file * cores / floor:.0f}x, class {per_file * cores / warm:.0f}x",
            "",
        )
        row(
            "  attnlab's time per file / floor",
            f"small class {ours_time / len(files) * cores / floor:.1f}, class {class_time / class_n * cores / warm:.1f}",
            "",
        )
        row(
            "  attnlab's CPU per file / floor",
            f"small class {ours_cpu / len(files) / floor:.2f}, class {class_cpu / class_n / warm:.2f}",
            "target <= 1.6 (class)",
        )
        return 0 if not disagree else 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
