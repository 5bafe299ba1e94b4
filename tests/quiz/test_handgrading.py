"""Questions about free-response answers graded by hand (attnlab.quiz.handgrading, via quiz grade)."""

import csv

import pytest

from attnlab.quiz import batch, handgrading


@pytest.fixture
def quizzes(tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "ada.py").write_text(
        'th_self_attention = "each token looks at all others"\nwavelength = "2*pi*10000**(2*i/d_model)"\n'
    )
    (folder / "bob.py").write_text('th_why_pe = "attention alone ignores order"\n')
    return folder


def _rows(out):
    with open(out / "quiz_grades.csv", newline="", encoding="utf-8") as f:
        return {r["submission"]: r for r in csv.DictReader(f)}


def test_are_free_response_answers_gathered_one_file_per_item_with_a_sheet_to_fill(quizzes, tmp_path):
    free = handgrading.items()
    assert {"th-self-attention", "th-why-pe"} <= {i.id for i in free}
    batch.main(submissions=[quizzes], out=tmp_path / "out", progress=False)
    folder = tmp_path / "out" / handgrading.FOLDER
    assert sorted(p.name for p in folder.glob("*.md")) == sorted(f"{i.id}.md" for i in free)
    first = (folder / "th-self-attention.md").read_text()
    assert "## ada" in first and "each token looks at all others" in first and "## bob" in first
    assert "attention alone ignores order" in (folder / "th-why-pe.md").read_text()
    with open(folder / handgrading.SHEET, newline="", encoding="utf-8") as f:
        sheet = list(csv.reader(f))
    assert sheet[0] == ["submission", *(i.id for i in free)] and [r[0] for r in sheet[1:]] == ["ada", "bob"]
    assert all(cell == "" for row in sheet[1:] for cell in row[1:])
    assert {r["th-why-pe"] for r in _rows(tmp_path / "out").values()} == {""}, "not graded yet is blank, not 0"


def test_are_hand_graded_points_merged_into_the_totals(quizzes, tmp_path):
    out = tmp_path / "out"
    auto = {name: float(r["total"]) for name, r in _rows_after(quizzes, out).items()}
    sheet = tmp_path / "graded.csv"
    sheet.write_text("submission,th-self-attention,th-why-pe\nada,1.5,\nbob,,2\n")
    run = batch.main(submissions=[quizzes], out=out, progress=False, hand_graded=sheet)
    rows = _rows(out)
    assert float(rows["ada"]["total"]) == auto["ada"] + 1.5 and float(rows["bob"]["total"]) == auto["bob"] + 2
    assert (rows["ada"]["th-self-attention"], rows["ada"]["th-why-pe"]) == ("1.5", "")
    bob = next(r for r in run.rows if r.submission == "bob")
    assert bob.results is not None and bob.results["extra_data"]["items"]["th-why-pe"] == 2
    kept = (out / handgrading.FOLDER / handgrading.SHEET).read_text()
    assert "ada,1.5," in kept and "bob,,2" in kept, "a re-run keeps the points given"


def _rows_after(quizzes, out):
    batch.main(submissions=[quizzes], out=out, progress=False)
    return _rows(out)


@pytest.mark.parametrize(
    "text, says",
    [
        ("submission,th-self-attention\nada,3\n", "not a number from 0 to 2"),
        ("submission,th-self-attention\nada,lots\n", "'lots' is not a number"),
        ("submission,th-self-attention\ncarol,1\n", "no submission named 'carol'"),
        ("submission,wavelength\nada,1\n", "unknown: wavelength"),
    ],
)
def test_is_a_sheet_that_is_not_grades_refused_before_anything_is_written(quizzes, tmp_path, text, says):
    sheet = tmp_path / "graded.csv"
    sheet.write_text(text)
    with pytest.raises(ValueError, match=says):
        batch.main(submissions=[quizzes], out=tmp_path / "out", progress=False, hand_graded=sheet)
    assert not (tmp_path / "out").exists()


def test_do_a_tenth_graded_by_machine_and_a_fifth_by_hand_make_three_tenths():
    """An auto-graded item's 0.1 and a hand-graded 0.2: is the quiz's score 0.3 in results.json,
    not the float sum 0.30000000000000004?"""
    free = handgrading.items()[0]
    results = {"score": 0.1, "tests": [], "extra_data": {"items": {"wavelength": 0.1}, "possible": {}}}
    assert handgrading.merged(results, {free.id: 0.2})["score"] == 0.3
