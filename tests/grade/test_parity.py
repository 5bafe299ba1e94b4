"""Parity with otter: honest submissions get the same points from ``attnlab grade`` as from
``otter run -a autograder.zip``, once the course turns dependency isolation off (otter's runner
cannot lend references: with isolation on, a caller of a failing function scores more under
``attnlab grade``, by design; ``test_dependencies.py`` checks that)."""

import shutil
import subprocess
from pathlib import Path

import pytest

from attnlab import paths
from attnlab.grade import calls, main

from known_outcomes import ENGINE
from otter_runs import OTTER, otter_results_of, question_scores


def build_zip(tests: Path, support: Path | None, dest: Path) -> Path:
    """An otter autograder zip whose support files land next to the submission."""
    zip_path = dest / "autograder.zip"
    cwd = support if support is not None else tests.parent
    extra = [p.name for p in support.iterdir()] if support is not None else []
    subprocess.run(
        [str(OTTER), "generate", "-t", str(tests), "-o", str(zip_path), *extra],
        cwd=cwd,
        check=True,
        capture_output=True,
    )
    return zip_path


def compare(tests: Path, support: Path | None, theirs: dict[Path, dict], tmp: Path) -> None:
    """``attnlab grade`` of the submissions otter graded (``theirs``: otter's results.json for each)
    with the course's isolation setting off, question by question."""
    submissions = sorted(theirs)
    # the same tests with the course's setting off, as the autograder zip would carry it
    unisolated = shutil.copytree(tests, tmp / "unisolated" / "tests")
    calls.write(unisolated.parent / calls.FILE, {"calls": calls.for_tests(tests)["calls"], "isolate": False})
    ours = {
        g.submission: g.questions
        for g in main(
            submissions=submissions, out=tmp / "ours", tests_dir=unisolated, support_dir=support, progress=False
        ).graded
    }
    for sub in submissions:
        expected = question_scores(theirs[sub])
        assert {q: pytest.approx(v) for q, v in ours[sub.stem].items()} == expected, sub.name


@pytest.mark.slow
def test_do_the_shared_samples_score_as_under_otter(otter_on_samples, tmp_path):
    compare(paths.tests_dir(), paths.autograder_dir() / "support", otter_on_samples, tmp_path)


@pytest.mark.slow
def test_do_the_engine_fixtures_score_as_under_otter(tmp_path):
    zip_path = build_zip(ENGINE / "tests", None, tmp_path)
    submissions = sorted((ENGINE / "submissions").iterdir())
    compare(ENGINE / "tests", None, otter_results_of(zip_path, submissions, tmp_path / "otter"), tmp_path)
