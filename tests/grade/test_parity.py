"""Parity with otter: honest submissions get the same points from ``attnlab grade`` as from
``otter run -a autograder.zip``, once the course turns dependency isolation off (otter's runner
cannot lend references: with isolation on, a caller of a failing function scores more under
``attnlab grade``, by design; ``test_dependencies.py`` checks that)."""

import json
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from attnlab import paths
from attnlab.grade import calls, main

from known_outcomes import ENGINE

OTTER = Path(sys.executable).with_name("otter")


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


def compare(tests: Path, support: Path | None, submissions: list[Path], tmp: Path) -> None:
    zip_path = build_zip(tests, support, tmp)
    work = tmp / "otter"
    work.mkdir()
    with ThreadPoolExecutor(2) as pool:
        theirs = dict(zip(submissions, pool.map(lambda s: otter_scores(zip_path, s, work), submissions)))
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
        assert {q: pytest.approx(v) for q, v in ours[sub.stem].items()} == theirs[sub], sub.name


@pytest.mark.slow
def test_do_the_shared_samples_score_as_under_otter(tmp_path):
    compare(
        paths.tests_dir(),
        paths.autograder_dir() / "support",
        sorted(paths.sample_submissions_dir().iterdir()),
        tmp_path,
    )


@pytest.mark.slow
def test_do_the_engine_fixtures_score_as_under_otter(tmp_path):
    compare(ENGINE / "tests", None, sorted((ENGINE / "submissions").iterdir()), tmp_path)
