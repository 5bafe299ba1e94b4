"""The built autograder zip under real `otter run`: the reference, the stub and every sample."""

import shutil
from pathlib import Path

import nbformat
import pytest

from attnlab import build, paths, release, samples
from otter_runs import otter_results

pytestmark = pytest.mark.slow


def otter_score(dist: Path, submission: Path, tmp_path: Path) -> float:
    return otter_results(dist / "autograder.zip", submission, tmp_path)["score"]


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
def test_does_every_sample_score_what_its_name_says_under_otter(otter_on_samples, sample):
    promised = samples.expected_outcome(sample.stem)
    assert promised, f"{sample.name} should be named ..._score_full, _partial or _zero"
    assert samples.outcome(otter_on_samples[sample]["score"], build.points_possible()) == promised
