"""``attnlab grade`` over many submissions: outputs, re-runs, roster, item analysis."""

import csv
import json

from attnlab import paths
from attnlab.grade import main

from known_outcomes import ENGINE


def run(out, **kw):
    return main(submissions=[ENGINE / "submissions"], out=out, tests_dir=ENGINE / "tests", progress=False, **kw)


def test_are_grades_results_and_feedback_written_per_submission(tmp_path):
    graded = run(tmp_path)
    rows = list(csv.DictReader(open(tmp_path / "grades.csv")))
    assert [r["submission"] for r in rows] == sorted(g.submission for g in graded)
    assert list(rows[0]) == ["submission", "calls", "total"]
    for g in graded:
        data = json.loads((tmp_path / g.submission / "results.json").read_text())
        assert data["score"] == g.score
        assert {t["visibility"] for t in data["tests"]} == {"visible", "hidden"}
        assert all({"name", "score", "max_score", "visibility", "output"} <= set(t) for t in data["tests"])
        assert (tmp_path / g.submission / "feedback.md").read_text().startswith("# Feedback")
    assert (tmp_path / "item_analysis.png").stat().st_size > 1000
    misconceptions = list(csv.DictReader(open(tmp_path / "misconceptions.csv")))
    assert {"question": "calls", "misconception": "in-place scaling", "submissions": "1"} in misconceptions


def test_does_a_rerun_skip_what_is_graded_unless_forced(tmp_path):
    run(tmp_path)
    stamp = (tmp_path / "honest_score_full" / "results.json").stat().st_mtime_ns
    assert all(g.skipped for g in run(tmp_path))
    assert (tmp_path / "honest_score_full" / "results.json").stat().st_mtime_ns == stamp
    assert not any(g.skipped for g in run(tmp_path, force=True))


def test_does_the_roster_become_a_canvas_import(tmp_path):
    roster = tmp_path / "roster.csv"
    roster.write_text("Student,ID,SIS User ID,SIS Login ID,Section\n"
                      "    Points Possible,,,,\n"
                      "Ada,101,s1,honest_score_full,A\n"
                      "Bob,mutates_input_score_partial,s2,bob,B\n"
                      "Cy,103,s3,cy,A\n")
    run(tmp_path / "out", roster=roster)
    rows = list(csv.reader(open(tmp_path / "out" / "canvas_import.csv")))
    assert rows[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", paths.ASSIGNMENT]
    assert rows[1][0] == "Points Possible" and rows[1][-1] == "5"
    assert rows[2:] == [["Ada", "101", "s1", "honest_score_full", "A", "5"],
                        ["Bob", "mutates_input_score_partial", "s2", "bob", "B", "4"],
                        ["Cy", "103", "s3", "cy", "A", ""]]
