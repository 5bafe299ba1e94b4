"""The built autograder zip under real `otter run`: the reference, the stub and every sample."""

import pytest

from attnlab import build, samples

pytestmark = pytest.mark.slow


def otter_score(otter_on_course: dict, name: str) -> float:
    """otter's score for one of the course's own files (``otter_on_course`` ran it)."""
    return next(results["score"] for path, results in otter_on_course.items() if path.name == name)


def test_does_the_reference_py_score_full_marks(otter_on_course):
    assert otter_score(otter_on_course, "reference.py") == build.points_possible()


def test_does_the_solved_notebook_score_full_marks(otter_on_course):
    assert otter_score(otter_on_course, "solved.ipynb") == build.points_possible()


def test_does_the_untouched_notebook_score_zero(otter_on_course):
    assert otter_score(otter_on_course, "stub.ipynb") == 0


SAMPLES = samples.bundled()


@pytest.mark.parametrize("sample", SAMPLES, ids=[p.name for p in SAMPLES])
def test_does_every_sample_score_what_its_name_says_under_otter(otter_on_samples, sample):
    promised = samples.expected_outcome(sample.stem)
    assert promised, f"{sample.name} should be named ..._score_full, _partial or _zero"
    assert samples.outcome(otter_on_samples[sample]["score"], build.points_possible()) == promised
