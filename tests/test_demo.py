"""`attnlab demo`: the newcomer's first command runs the whole flow."""

import csv

import pytest

from attnlab import demo, samples

pytestmark = pytest.mark.slow


def test_does_the_demo_build_grade_and_find_every_sample_as_named(tmp_path):
    assert demo.main(out=tmp_path) is True
    assert (tmp_path / "dist" / "autograder.zip").is_file() and (tmp_path / "dist" / "student.zip").is_file()
    with open(tmp_path / "results" / "grades.csv", newline="") as f:
        graded = {row["submission"] for row in csv.DictReader(f)}
    assert graded == {p.stem for p in samples.bundled()} | {"untouched_stub_score_zero"}
