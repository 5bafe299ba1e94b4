"""The roster: checked before grading, matched to submissions, filled into its own column."""

import csv
import re

import pytest

from attnlab.lms import canvas
from attnlab.grade.discover import Submission
from attnlab.lms.identity import Student

from layouts import CANVAS_ROSTER


def roster_file(tmp_path, text, encoding="utf-8"):
    path = tmp_path / "roster.csv"
    path.write_bytes(text.encode(encoding))
    return path


def load(path, column=None):
    return canvas.load(path, column=column, assignment="pe_attention")


@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "utf-16", "latin-1"])
def test_is_a_roster_read_in_the_encodings_spreadsheets_write(tmp_path, encoding):
    text = CANVAS_ROSTER.replace("Doe, Jane", "Doé, Jane")
    roster = load(roster_file(tmp_path, text, encoding))
    assert [r["Student"] for r in roster.students][:1] == ["Doé, Jane"]
    assert roster.encoding.startswith("Latin-1") == (encoding == "latin-1")


def test_is_the_existing_assignment_column_chosen_by_name_or_id(tmp_path):
    path = roster_file(tmp_path, CANVAS_ROSTER)
    assert (load(path).column, load(path).new_column) == ("pe_attention (12345)", False)
    assert load(path, column="111").column == "Lab 1 (111)"
    assert load(path, column="Lab 1").column == "Lab 1 (111)"


def test_does_an_unknown_column_fail_listing_the_roster_columns(tmp_path):
    path = roster_file(tmp_path, CANVAS_ROSTER)
    with pytest.raises(canvas.RosterError, match=r"roster.csv has no assignment column 'Lab 9'.*Lab 1 \(111\)"):
        load(path, column="Lab 9")


def test_do_two_columns_with_one_title_ask_for_the_id(tmp_path):
    text = CANVAS_ROSTER.replace("Lab 1 (111)", "pe_attention (999)")
    with pytest.raises(canvas.RosterError, match="several assignment columns match 'pe_attention'"):
        load(roster_file(tmp_path, text))


def test_does_a_roster_without_assignment_columns_get_a_new_one(tmp_path):
    roster = load(roster_file(tmp_path, "Student,ID,SIS Login ID\nAda,101,ada\n"))
    assert (roster.column, roster.new_column) == ("pe_attention", True)


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "is empty"),
        ("Name,Email\nAda,a@x\n", "lacks the column(s) Student, ID"),
        ("Student,ID\nAda,101\nBob,101\n", "lines 2 and 3: the same ID '101'"),
        ("Student,ID,SIS Login ID\nAda,101,ada\nBob,102,ADA\n", "the same SIS Login ID"),
        ("Student,ID\nAda,101\nBob,\n", "line 3: Bob has no ID"),
        ('Student,ID\n"Ada,101\n', "not a readable CSV"),
    ],
)
def test_is_a_bad_roster_refused_with_the_file_and_the_reason(tmp_path, text, message):
    path = roster_file(tmp_path, text)
    with pytest.raises(canvas.RosterError) as err:
        load(path)
    assert str(path) in str(err.value) and message in str(err.value)


def test_is_a_spreadsheet_saved_as_csv_by_name_refused(tmp_path):
    path = tmp_path / "roster.csv"
    path.write_bytes(b"PK\x03\x04" + b"\0" * 20)
    with pytest.raises(canvas.RosterError, match="not a text file|not a CSV"):
        load(path)


def sub(key, *students):
    return Submission(key, None, key, "file", students)


def test_are_canvas_ids_emails_and_logins_matched_and_the_rest_listed(tmp_path):
    text = CANVAS_ROSTER.replace("jdoe", "jdoe@example.edu")
    roster = load(roster_file(tmp_path, text))
    m = canvas.match(
        roster,
        [
            sub("smithbob_4002", Student(id="4002", canvas_id="4002", login="smithbob")),  # Canvas bulk download
            sub("submission_1", Student(name="Ann", email="ALEE", id="")),  # Gradescope, by email/login
            sub("jdoe", Student(login="jdoe")),  # a file named by login
            sub("stranger", Student(login="stranger")),
            sub("4001_lookalike", Student(id="999", canvas_id="999", login="nkim")),  # an id wins over a login
        ],
    )
    assert m.rows == {"smithbob_4002": [1], "submission_1": [2], "jdoe": [0]}
    assert m.unmatched == ["stranger", "4001_lookalike"]
    assert [roster.students[i]["Student"] for i in m.missing] == ["Kim, Noh"]


def test_does_the_import_fill_only_the_chosen_column_and_leave_clashes_empty(tmp_path):
    roster = load(roster_file(tmp_path, CANVAS_ROSTER))
    m = canvas.match(
        roster,
        [
            sub("a", Student(id="4001", canvas_id="4001")),
            sub("b", Student(id="4002", canvas_id="4002")),
            sub("c", Student(id="4002", canvas_id="4002")),
            sub("d", Student(id="4003", canvas_id="4003")),
        ],
    )
    assert m.clashes == {1: ["b", "c"]}
    path = canvas.write(tmp_path, roster, m, {"a": 63.0, "b": 10.0, "c": 20.0, "d": None}, 63, claimed=set(m.clashes))
    rows = list(csv.reader(path.open(encoding="utf-8")))
    assert rows[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "pe_attention (12345)"]
    assert rows[1][-1] == "63"
    assert [r[-1] for r in rows[2:]] == ["63", "", "", ""]


def test_can_no_roster_cell_become_a_formula(tmp_path):
    text = 'Student,ID,SIS Login ID\n"=HYPERLINK(""http://x"")",101,+cmd\n'
    roster = load(roster_file(tmp_path, text))
    path = canvas.write(tmp_path, roster, canvas.match(roster, []), {}, 5, claimed=set())
    cells = [c for r in csv.reader(path.open()) for c in r]
    assert '\'=HYPERLINK("http://x")' in cells and "'+cmd" in cells
    assert not any(c.startswith(("=", "+", "-", "@")) for c in cells)


def test_is_a_named_pipe_as_the_roster_refused_rather_than_waited_on(tmp_path):
    import os

    path = tmp_path / "roster.csv"
    os.mkfifo(path)
    with pytest.raises(canvas.RosterError, match="not a regular file"):
        load(path)


def test_is_canvass_test_student_never_listed_as_missing_and_are_the_missing_named_with_their_number(tmp_path):
    """Canvas puts its student-view account ("Student, Test") into every gradebook export: is it
    left out of the students with no submission, and is each of those shown with the student
    number that tells two students of one name apart?"""
    text = CANVAS_ROSTER + '"Student, Test",4999,,,A,,,\n'
    roster = load(roster_file(tmp_path, text))
    m = canvas.match(roster, [sub("smithbob_4002", Student(id="4002", canvas_id="4002", login="smithbob"))])
    shown = [canvas.named(roster.students[i]) for i in m.missing]
    assert shown == ["Doe, Jane (S1)", "Lee, Ann (S3)", "Kim, Noh (S4)"]


def gradebook(tmp_path, delimiter, cell):
    rows = [["Student", "ID", "pe_attention (12345)"], ["Points Possible", "", cell], ["Ada", "101", ""]]
    return roster_file(tmp_path, "\n".join(delimiter.join(r) for r in rows) + "\n")


@pytest.mark.parametrize(
    "delimiter, cell, points",
    [
        (";", "63,0", 63),  # numbers5 #5: a European-locale export, once read as 630
        (";", "62,5", 62.5),
        (";", "63,000", 63),  # the decimal comma of the file's convention, not a thousands group
        (";", "62.5", 62.5),  # a point that can only separate decimals
        (",", '"62,5"', 62.5),  # a comma that can only separate decimals, in a comma-separated file
        (",", "62.5", 62.5),
        ("\t", "1.234,5", 1234.5),
    ],
)
def test_is_points_possible_read_as_the_files_decimal_separator_says(tmp_path, delimiter, cell, points):
    """A semicolon-separated gradebook comes from a locale whose decimal separator is the comma: is
    its 63,0 worth 63 (and accepted for an autograder total of 63), and every number with one
    reading read so?"""
    roster = load(gradebook(tmp_path, delimiter, cell))
    assert roster.points == points
    canvas.check_points(roster, points)  # (refused, were it read as other points)


@pytest.mark.parametrize(
    "delimiter, cell, message",
    [
        (",", '"1,234"', "may be 1234 or 1.234"),
        (";", "1.234", "may be 1.234 or 1234"),
        ("\t", "63,000", "may be 63000 or 63"),
        (";", "sixty", "is 'sixty', not a number"),
    ],
)
def test_is_a_points_possible_with_two_readings_or_none_refused_rather_than_guessed(tmp_path, delimiter, cell, message):
    path = gradebook(tmp_path, delimiter, cell)
    with pytest.raises(canvas.RosterError) as err:
        load(path)
    assert str(path) in str(err.value) and "'pe_attention (12345)'" in str(err.value) and message in str(err.value)


def test_are_the_points_a_refusal_asks_for_accepted_when_the_total_has_more_decimals_than_canvas(tmp_path):
    """Tests worth 1/3 point total 67.642857...: is the roster's column worth 60 refused with
    points to set in Canvas that, once set, are accepted, and never 'worth X but the total is X'?"""
    possible = 67 + 9 / 14
    roster = load(gradebook(tmp_path, ",", "60"))
    with pytest.raises(canvas.RosterError) as err:
        canvas.check_points(roster, possible)
    asked = re.search(r"set its points in Canvas to (\S+?)[ :]", str(err.value))[1]
    worth = re.search(r"is worth (\S+) points in Canvas but the autograder's total is (\S+?):", str(err.value))
    assert worth[1] != worth[2]
    canvas.check_points(load(gradebook(tmp_path, ",", asked)), possible)
