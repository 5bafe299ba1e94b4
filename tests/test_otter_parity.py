"""The built autograder zip under real `otter run`: the reference, the stub and every sample."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from attnlab import build, paths, release, samples

pytestmark = pytest.mark.slow
OTTER = str(Path(sys.executable).with_name("otter"))


def otter_score(dist: Path, submission: Path, tmp_path: Path) -> float:
    out = tmp_path / f"otter-{submission.stem}"
    out.mkdir()
    proc = subprocess.run(
        [OTTER, "run", "-a", str(dist / "autograder.zip"), "-o", str(out), str(submission)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert (out / "results.json").exists(), proc.stdout[-2000:] + proc.stderr[-2000:]
    return json.loads((out / "results.json").read_text())["score"]


def test_does_the_reference_py_score_full_marks(dist, tmp_path):
    sub = tmp_path / "reference.py"
    sub.write_text(release.solution.reference_source(paths.solution_file()))
    assert otter_score(dist, sub, tmp_path) == build.points_possible()


def test_does_the_solved_notebook_score_full_marks(dist, tmp_path):
    sub = tmp_path / "solved.ipynb"
    nbformat.write(release.notebook(solved=True), sub)
    assert otter_score(dist, sub, tmp_path) == build.points_possible()


def test_does_the_untouched_notebook_score_zero(dist, tmp_path):
    sub = shutil.copy(paths.release_dir() / f"{paths.ASSIGNMENT}.ipynb", tmp_path / "stub.ipynb")
    assert otter_score(dist, Path(sub), tmp_path) == 0


SAMPLES = samples.bundled()


@pytest.mark.parametrize("sample", SAMPLES, ids=[p.name for p in SAMPLES])
def test_does_every_sample_score_what_its_name_says_under_otter(dist, tmp_path, sample):
    promised = samples.expected_outcome(sample.stem)
    assert promised, f"{sample.name} should be named ..._score_full, _partial or _zero"
    assert samples.outcome(otter_score(dist, sample, tmp_path), build.points_possible()) == promised
