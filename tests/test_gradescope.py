"""The autograder zip under Gradescope's layout: its run_autograder grades with the isolated engine."""

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from attnlab import build, gradescope, paths, release

pytestmark = pytest.mark.slow


def _layout(tmp_path: Path, dist: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "autograder"
    for sub in ("source", "submission", "results"):
        (root / sub).mkdir(parents=True)
    zipfile.ZipFile(dist / "autograder.zip").extractall(root / "source")
    (root / "submission_metadata.json").write_text("{}")
    for name, text in files.items():
        (root / "submission" / name).write_text(text)
    return root


def _run(root: Path) -> dict:
    """What run_autograder does, with this machine's Python instead of the image's mamba env."""
    env = dict(os.environ, PYTHONPATH=str(root / "source"))
    subprocess.run(
        [sys.executable, "-m", "attnlab.gradescope", "--root", str(root)],
        cwd=root / "source",
        env=env,
        check=True,
        capture_output=True,
        timeout=300,
    )
    return json.loads((root / "results" / "results.json").read_text())


def test_does_run_autograder_call_the_isolated_engine(dist):
    script = zipfile.ZipFile(dist / "autograder.zip").read("run_autograder").decode()
    assert "attnlab.gradescope" in script and "run_otter" not in script


def test_does_a_correct_submission_get_full_marks_with_hidden_rows_kept_back(dist, tmp_path):
    root = _layout(tmp_path, dist, {"pe_attention.py": release.solution.reference_source(paths.solution_file())})
    results = _run(root)
    assert results["score"] == build.points_possible()
    rows = results["tests"]
    assert {r["visibility"] for r in rows} == {"visible", gradescope.HIDDEN_VISIBILITY}
    assert all("max_score" in r for r in rows)
    public = [r for r in rows if r["visibility"] == "visible"]
    assert results["output"].startswith(f"Public tests: {len(public)} of {len(public)} passed")


def test_does_the_untouched_stub_score_zero(dist, tmp_path):
    stub = (paths.release_dir() / f"{paths.ASSIGNMENT}.ipynb").read_text()
    assert _run(_layout(tmp_path, dist, {"pe_attention.ipynb": stub}))["score"] == 0


def test_do_two_python_files_get_a_clear_message_instead_of_a_crash(dist, tmp_path):
    results = _run(_layout(tmp_path, dist, {"a.py": "", "b.py": ""}))
    assert results["score"] == 0 and "more than one .py file" in results["tests"][0]["output"]
