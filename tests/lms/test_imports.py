"""What the import files may hold: a student claimed by several submissions has no row in any of them."""

import csv

from attnlab.grade.discover import Submission
from attnlab.lms import canvas, imports, moodle
from attnlab.lms.identity import Student

from layouts import CANVAS_ROSTER


def sub(key, *students):
    return Submission(key, None, key, "file", students)


def moodle_rows(out):
    return list(csv.reader((out / moodle.NAME).open(encoding="utf-8")))[1:]


def canvas_cells(path):
    return {r[0]: r[-1] for r in list(csv.reader(path.open(encoding="utf-8")))[2:]}


def write_both(tmp_path, subs, totals, *, roster=None):
    """Both import files, as both commands write them; returns the claims and canvas_import's path."""
    matching = canvas.match(roster, subs) if roster else None
    if roster and matching:
        canvas.fill_identities(subs, roster, matching)
    claims = imports.claims(subs, roster=roster, matching=matching)
    moodle.write(tmp_path, [(s.students, totals[s.key]) for s in subs], "pe", single=claims.single)
    path = canvas.write(tmp_path, roster, matching, totals, 5, claimed=claims.rows) if roster and matching else None
    return claims, path


def test_does_a_student_two_roster_files_claim_get_no_row_in_either_import_file(tmp_path):
    """(numbers5 finding 1) jdoe.py and 4001.py are both Jane: neither total is hers in Moodle or Canvas."""
    roster_path = tmp_path / "roster.csv"
    roster_path.write_text(CANVAS_ROSTER)
    roster = canvas.load(roster_path, column=None, assignment="pe_attention")
    subs = [
        sub("jdoe", Student(login="jdoe")),
        sub("4001", Student(login="4001")),
        sub("bsmith", Student(login="bsmith")),
    ]
    claims, path = write_both(tmp_path, subs, {"jdoe": 5.0, "4001": 4.0, "bsmith": 3.0}, roster=roster)
    assert list(claims.twice.values()) == [["jdoe", "4001"]]
    assert moodle_rows(tmp_path) == [["", "S2", "3"]]
    assert canvas_cells(path) == {"Doe, Jane": "", "Smith, Bob": "3", "Lee, Ann": "", "Kim, Noh": ""}


def test_is_one_email_in_two_gradescope_submissions_left_out_of_moodle_without_a_roster(tmp_path):
    jane = Student(name="Jane", email="Jane@uni.edu", id="S1", number="S1")
    subs = [
        sub("s1", jane),
        sub("s2", Student(name="Jane D", email="jane@uni.edu")),
        sub("s3", Student(email="bo@uni.edu")),
    ]
    claims, _ = write_both(tmp_path, subs, {"s1": 5.0, "s2": 4.0, "s3": 3.0})
    assert [keys for keys in claims.twice.values()] == [["s1", "s2"]]
    assert moodle_rows(tmp_path) == [["bo@uni.edu", "", "3"]]


def test_does_a_group_keep_the_rows_of_its_students_no_one_else_claims(tmp_path):
    ann, bo = Student(email="ann@uni.edu"), Student(email="bo@uni.edu")
    claims, _ = write_both(tmp_path, [sub("pair", ann, bo), sub("ann", ann)], {"pair": 5.0, "ann": 4.0})
    assert moodle_rows(tmp_path) == [["bo@uni.edu", "", "5"]]
    assert not claims.single(ann) and claims.single(bo)


def test_does_moodle_say_why_it_is_not_written_when_every_graded_student_is_claimed_twice(tmp_path):
    jane = Student(email="jane@uni.edu")
    subs = [sub("a", jane), sub("b", jane)]
    claims = imports.claims(subs, roster=None, matching=None)
    path, why = moodle.write(tmp_path, [(s.students, 5.0) for s in subs], "pe", single=claims.single)
    assert path is None and not (tmp_path / moodle.NAME).exists()
    assert "claimed by several submissions" in why
