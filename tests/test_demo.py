"""`attnlab demo`: the newcomer's first command runs the whole flow."""

import csv

import pytest

from attnlab import demo, paths, samples

pytestmark = pytest.mark.slow


def test_does_the_demo_build_grade_and_find_every_sample_as_named(tmp_path, monkeypatch):
    """Outside any course folder, the demo runs on a temporary copy of the bundled course."""
    expected = {p.stem for p in samples.bundled()} | {"untouched_stub_score_zero"}
    monkeypatch.chdir(tmp_path)
    assert paths.find_course(tmp_path) is None
    assert demo.main(out=tmp_path / "demo") is True
    dist = tmp_path / "demo" / "dist"
    assert (dist / "autograder.zip").is_file() and (dist / "student.zip").is_file()
    with open(tmp_path / "demo" / "results" / "grades.csv", newline="") as f:
        graded = {row["submission"] for row in csv.DictReader(f)}
    assert graded == expected
    assert sorted(p.name for p in tmp_path.iterdir()) == ["demo"], "the temporary course is gone"
