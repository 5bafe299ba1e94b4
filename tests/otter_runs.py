"""Real ``otter run -a autograder.zip`` on submissions, two at a time (this kind of machine has two
cores and one otter run is mostly start-up): the reference against which the engine is compared."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

OTTER = Path(sys.executable).with_name("otter")

# otter runs a notebook in a Jupyter kernel that listens on ports picked as free when it starts; two
# runs that start at once can pick the same one, and then one kernel dies at start-up, or never
# answers (CI met both). That is the reference tool's start-up failing, not a result, so such a run is
# started again, up to STARTS times.
KERNEL_START_FAILED = "Kernel died before replying to kernel_info"
KERNEL_SILENT = "Kernel didn't respond in"
STARTS = 3


def otter_run(zip_path: Path, submission: Path, out: Path, *, timeout: float = 300) -> subprocess.CompletedProcess:
    """``otter run -a zip_path -o out submission``, started again while its kernel dies at start-up."""
    for _ in range(STARTS):
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir(parents=True)
        proc = subprocess.run(
            [str(OTTER), "run", "-a", str(zip_path), "-o", str(out), str(submission)],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        said = proc.stdout + proc.stderr
        if KERNEL_START_FAILED not in said and KERNEL_SILENT not in said:
            break
    return proc


def otter_results(zip_path: Path, submission: Path, work: Path) -> dict:
    """otter's ``results.json`` for one submission, graded in a folder of its own under ``work``."""
    out = work / f"otter-{submission.stem}"
    proc = otter_run(zip_path, submission, out)
    results = out / "results.json"
    assert results.exists(), proc.stdout[-2000:] + proc.stderr[-2000:]
    return json.loads(results.read_text())


def otter_results_of(zip_path: Path, submissions: list[Path], work: Path) -> dict[Path, dict]:
    with ThreadPoolExecutor(2) as pool:
        return dict(zip(submissions, pool.map(lambda s: otter_results(zip_path, s, work), submissions)))


def question_scores(results: dict) -> dict[str, float]:
    """Points per question from otter's results (its rows that carry points)."""
    return {t["name"]: float(t["score"]) for t in results["tests"] if "max_score" in t}
