"""Who a submission's student is: `attnlab grade --roster` (a gradebook export's rows) and
`attnlab upload canvas` (Canvas's enrolled users) must find the same person, each identifier
compared only with the same kind, and a disagreement listed for a human, never settled by an order."""

from dataclasses import asdict

import pytest

from attnlab.grade.discover import Submission
from attnlab.lms import canvas, canvas_upload
from attnlab.lms.canvas_rest import User
from attnlab.lms.identity import Student

# name, Canvas user id, SIS User ID (the student number), SIS Login ID; Ann's student number is
# Bob's Canvas user id, and Noh's login is Jane's Canvas user id
PEOPLE = [
    ("Doe, Jane", 4001, "S1", "jdoe@uni.edu"),
    ("Smith, Bob", 4002, "S2", "bsmith"),
    ("Lee, Ann", 4003, "4002", "alee@uni.edu"),
    ("Kim, Noh", 4004, "S4", "4001"),
]

CASES = {
    "a Gradescope SID that is Bob's Canvas id but Ann's student number": (
        Student(name="Ann Lee", email="alee@uni.edu", id="4002", number="4002"),
        "Lee, Ann",
    ),
    "a Canvas download's user id that is Ann's student number": (
        Student(id="4002", login="smithbob", canvas_id="4002"),
        "Smith, Bob",
    ),
    "a student number in small letters": (Student(id="s2", number="s2"), "Smith, Bob"),
    "a file named by a login with spaces around it": (Student(login=" bsmith "), "Smith, Bob"),
    "Jane's SID with Ann's email": (Student(email="alee@uni.edu", id="S1", number="S1"), None),
    "a file name that is Noh's login and Jane's Canvas id": (Student(login="4001"), None),
}


def gradebook(tmp_path):
    rows = [f'"{name}",{uid},{sis},{login},A,' for name, uid, sis, login in PEOPLE]
    path = tmp_path / "roster.csv"
    path.write_text("Student,ID,SIS User ID,SIS Login ID,Section,pe_attention (1)\n" + "\n".join(rows) + "\n")
    return canvas.load(path, column=None, assignment="pe_attention")


def by_roster(tmp_path, student):
    roster = gradebook(tmp_path)
    m = canvas.match(roster, [Submission("s", None, "s", "file", (student,))])
    assert bool(m.rows) != ("s" in m.unmatched)  # matched, or listed: never both, never neither
    return roster.students[m.rows["s"][0]]["Student"] if m.rows else None


def by_upload(student):
    users = [User(uid, name, sis, "", login) for name, uid, sis, login in PEOPLE]
    plan = canvas_upload._plan([canvas_upload.Entry("s", 1.0, [asdict(student)], "")], users)
    assert bool(plan.changes) != bool(plan.unmatched)
    return plan.changes[0].name if plan.changes else None


@pytest.mark.parametrize("case", CASES)
def test_do_the_roster_and_the_upload_find_the_same_student_by_ids_of_the_same_kind(tmp_path, case):
    student, expected = CASES[case]
    assert (by_roster(tmp_path, student), by_upload(student)) == (expected, expected)


def test_is_a_student_whose_ids_name_two_people_listed_with_both_and_neither_counted_as_missing(tmp_path):
    roster = gradebook(tmp_path)
    both = Submission("both", None, "both", "gradescope", (Student(email="alee@uni.edu", id="S1", number="S1"),))
    m = canvas.match(roster, [both])
    assert [canvas.named(roster.students[i]) for i in m.several["both"]] == ["Doe, Jane (S1)", "Lee, Ann (4002)"]
    assert m.unmatched == ["both"] and not m.rows
    assert [roster.students[i]["Student"] for i in m.missing] == ["Smith, Bob", "Kim, Noh"]


def test_is_a_name_written_in_decomposed_unicode_the_same_login(tmp_path):
    """A file named zoë in NFD (an e and a combining diaeresis, as macOS writes names), the roster's
    and Canvas's login zoë in NFC: do the roster, the upload and the quiz's numbers take them for
    one id?"""
    import unicodedata

    from attnlab.quiz.variants import illustration

    composed, decomposed = (unicodedata.normalize(form, "zoë") for form in ("NFC", "NFD"))
    assert composed != decomposed
    path = tmp_path / "roster.csv"
    path.write_text(f'Student,ID,SIS User ID,SIS Login ID,Section,pe_attention (1)\n"Zed, Zoë",4005,S5,{composed},A,\n')
    roster = canvas.load(path, column=None, assignment="pe_attention")
    student = Student(login=decomposed)
    m = canvas.match(roster, [Submission("s", None, "s", "file", (student,))])
    assert m.rows == {"s": [0]}
    users = [User(4005, "Zed, Zoë", "S5", "", composed)]
    plan = canvas_upload._plan([canvas_upload.Entry("s", 1.0, [asdict(student)], "")], users)
    assert [c.name for c in plan.changes] == ["Zed, Zoë"]
    assert illustration(student=decomposed).inputs == illustration(student=composed).inputs


def test_is_a_student_number_other_than_the_roster_rows_said(tmp_path):
    """A Gradescope SID S9 that is on no row, with Jane's email: Jane is matched by the email; is
    the disagreement on her student number (S9 against the roster's S1) said, since a quiz's
    numbers are drawn from one of the two, and a SID that agrees (in another case) not?"""
    from attnlab.lms import imports

    roster = gradebook(tmp_path)
    subs = [
        Submission("other", None, "other", "gradescope", (Student(email="jdoe@uni.edu", id="S9", number="S9"),)),
        Submission("same", None, "same", "gradescope", (Student(email="bsmith@uni.edu", id="s2", number="s2"),)),
    ]
    m = canvas.match(roster, subs)
    assert m.rows == {"other": [0], "same": [1]}
    said = " ".join(imports.summary(imports.Claims(), roster, m))
    assert "other gives the student number S9, the roster Doe, Jane (S1)" in said
    assert "same gives" not in said


def test_does_the_upload_say_a_student_number_other_than_canvass_as_the_roster_does():
    """The same S9 with Jane's email, against Canvas's enrolled users: is Jane (SIS id S1) still
    found, and the other number said, as `attnlab grade --roster` says it?"""
    users = [User(uid, name, sis, "", login) for name, uid, sis, login in PEOPLE]
    entries = [
        canvas_upload.Entry("other", 1.0, [asdict(Student(email="jdoe@uni.edu", id="S9", number="S9"))], ""),
        canvas_upload.Entry("same", 1.0, [asdict(Student(email="bsmith", id="s2", number="s2"))], ""),
    ]
    plan = canvas_upload._plan(entries, users)
    assert sorted(c.name for c in plan.changes) == ["Doe, Jane", "Smith, Bob"]
    said = " ".join(str(x) for x in canvas_upload.describe(plan, "pe_attention", apply=False) if isinstance(x, str))
    assert "other: S9 (Doe, Jane: S1)" in said and "same:" not in said
