"""Grade the same N mixed submissions with sequential ``otter run`` and with ``attnlab grade`` in one
run; print both times, the ratio, and whether every score agrees. Also time ``attnlab check``.

    python benchmarks/grade_vs_otter.py [-n 20] [--bugs]

Targets (issues 5 and 9): ratio >= 30 on 2 cores with identical scores, over the samples and the
bug corpus (``--bugs``); ``attnlab check`` <= 0.5 s. The submissions are the shared known-outcome
samples (correct, partial, stub, broken), cycled to N, and with ``--bugs`` the 70 one-bug
submissions too. Measured on 2 shared virtual cores (2026-11-23, four runs over the day): 48-49x
with ``--bugs`` (110 submissions, otter 453-454 s, attnlab 9.2-9.5 s); 26-32x for the 40 samples
alone, where attnlab's fixed two seconds of start-up (workers; sandbox zygotes, most of it importing
the matplotlib the assignment preloads; the item-analysis plot) weigh more.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

from attnlab import build, paths
from attnlab.grade import report

OTTER = Path(sys.executable).with_name("otter")


def otter_scores(zip_path: Path, submission: Path, work: Path) -> dict[str, float]:
    out = work / submission.stem
    out.mkdir()
    subprocess.run(
        [str(OTTER), "run", "-a", str(zip_path), str(submission), "-o", str(out)],
        cwd=work,
        check=True,
        capture_output=True,
    )
    tests = json.loads((out / "results.json").read_text())["tests"]
    return {t["name"]: float(t["score"]) for t in tests if "max_score" in t}


def _rounded(results: dict) -> dict[str, float]:
    return {q: round(v, 9) for q, v in results["extra_data"]["questions"].items()}


def bug_submissions(folder: Path) -> list[Path]:
    """The bug corpus (tests/fixtures/bugs), each overlay composed with its correct base as the
    corpus test composes it."""
    root = Path(__file__).resolve().parents[1] / "tests"
    sys.path[:0] = [str(root), str(root / "autograder"), str(root / "grade")]
    from test_bug_corpus import BUGS, compose

    out = []
    for overlay in BUGS:
        path = folder / f"bug_{overlay.name}"
        path.write_text(compose(overlay), encoding="utf-8")
        out.append(path)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=40, help="number of sample submissions")
    parser.add_argument("--bugs", action="store_true", help="add the 70 one-bug submissions of the bug corpus")
    args = parser.parse_args()
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

        work = tmp / "otter"
        work.mkdir()
        start = time.perf_counter()
        theirs = {f.stem: otter_scores(zip_path, f, work) for f in files}
        otter_time = time.perf_counter() - start

        # attnlab takes seconds, so it runs three times (fresh results each) and the median counts:
        # on a shared or virtual machine one short run can be a quarter off either way
        runs = []
        for k in range(3):
            start = time.perf_counter()
            subprocess.run(
                [
                    sys.executable,
                    "-c",
                    "import sys; from pathlib import Path; from attnlab.grade import main; "
                    "main(submissions=[Path(sys.argv[1])], out=Path(sys.argv[2]), tests_dir=Path(sys.argv[3]), "
                    "support_dir=Path(sys.argv[4]), progress=False)",
                    str(subs),
                    str(tmp / f"ours{k}"),
                    str(ag / "tests"),
                    str(ag / "files"),
                ],
                check=True,
            )
            runs.append(time.perf_counter() - start)
        ours_time = sorted(runs)[1]
        disagree = sorted(
            {
                f.stem
                for k in range(len(runs))
                for f in files
                if _rounded(
                    json.loads(
                        (tmp / f"ours{k}" / "submissions" / report.folder_name(f.stem) / "results.json").read_text()
                    )
                )
                != {q: round(v, 9) for q, v in theirs[f.stem].items()}
            }
        )

        check_target = next(p for p in samples if "full" in p.name and p.suffix == ".py")
        times = []
        for _ in range(5):
            start = time.perf_counter()
            subprocess.run(
                [sys.executable, "-c", "from attnlab.cli import main; main()", "check", str(check_target)],
                capture_output=True,
                check=True,
            )
            times.append(time.perf_counter() - start)

        print(f"submissions:            {len(files)}")
        print(f"sequential otter run:   {otter_time:.1f} s ({otter_time / len(files):.2f} s each)")
        print(f"attnlab grade:          {ours_time:.2f} s (median of {', '.join(f'{t:.2f}' for t in runs)}; all cores)")
        print(f"ratio:                  {otter_time / ours_time:.1f}x (target >= 30x)")
        print(f"every score agrees:     {'yes' if not disagree else 'NO: ' + ', '.join(disagree)}")
        print(
            f"attnlab check:          {min(times):.2f} s best, {sorted(times)[2]:.2f} s median of 5 (target <= 0.5 s)"
        )
        return 0 if not disagree else 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
