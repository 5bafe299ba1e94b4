"""Independently written correct submissions (tests/fixtures/alternatives/*.py) in different styles
must all get full marks: no false failures."""

from pathlib import Path

import pytest

from in_process import grade_file

ALTERNATIVES = sorted((Path(__file__).parent.parent / "fixtures" / "alternatives").glob("*.py"))


def test_are_there_enough_styles():
    assert len(ALTERNATIVES) >= 5


@pytest.mark.parametrize("path", ALTERNATIVES, ids=[p.stem for p in ALTERNATIVES])
def test_does_a_correct_submission_in_another_style_get_full_marks(path, test_files):
    results = grade_file(path, test_files)
    lost = {q: (s, p, m) for q, (s, p, m) in results.items() if s != p}
    assert not lost, lost
