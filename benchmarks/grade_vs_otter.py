"""Grade the same N mixed submissions with sequential ``otter run`` and with ``attnlab grade`` in one
run; print both times, the ratio, and whether every score agrees. Also time ``attnlab check``.

    python benchmarks/grade_vs_otter.py [-n 20]

Targets (issue 5): ratio >= 30 on 2 cores with identical scores; ``attnlab check`` <= 0.5 s.
The submissions are the shared known-outcome samples (correct, partial, stub, broken), cycled to N.
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=40, help="number of submissions")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="attnlab-bench-"))
    try:
        samples = sorted(paths.sample_submissions_dir().iterdir())
        subs = tmp / "submissions"
        subs.mkdir()
        for i in range(args.n):
            sample = samples[i % len(samples)]
            shutil.copy(sample, subs / f"s{i:03d}_{sample.name}")
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

        start = time.perf_counter()
        subprocess.run(
            [
                sys.executable,
                "-c",
                "import sys; from pathlib import Path; from attnlab.grade import main; "
                "main(submissions=[Path(sys.argv[1])], out=Path(sys.argv[2]), tests_dir=Path(sys.argv[3]), "
                "support_dir=Path(sys.argv[4]), progress=False)",
                str(subs),
                str(tmp / "ours"),
                str(ag / "tests"),
                str(ag / "files"),
            ],
            check=True,
        )
        ours_time = time.perf_counter() - start
        ours = {}
        for f in files:
            data = json.loads((tmp / "ours" / "submissions" / f.stem / "results.json").read_text())
            ours[f.stem] = data["extra_data"]["questions"]
        disagree = [
            name
            for name in theirs
            if {q: round(v, 9) for q, v in ours[name].items()} != {q: round(v, 9) for q, v in theirs[name].items()}
        ]

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
        print(f"attnlab grade:          {ours_time:.2f} s (one run, all cores)")
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
