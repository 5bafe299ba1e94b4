"""Which id seeds a student's quiz numbers: the student number, whatever else the LMS says."""

from attnlab.lms.identity import Student, quiz_id


def test_is_the_student_number_the_seed_whatever_the_lms_id():
    canvas = Student(name="Chen, John", id="10001", canvas_id="10001", number="S10001")
    assert quiz_id([canvas], key="chenjohn_10001", layout="canvas")[0] == "S10001"


def test_is_a_canvas_or_moodle_id_never_a_seed():
    for layout, student in (
        ("canvas", Student(id="10001", login="chenjohn", canvas_id="10001")),
        ("moodle", Student(name="Jane Doe", id="123456", participant="123456")),
    ):
        seed, why = quiz_id([student], key="x", layout=layout)
        assert seed is None and "--roster" in why


def test_does_a_file_the_instructor_named_stand_for_the_number_even_when_a_roster_matched_it():
    matched = Student(name="Ada", id="101", login="ada", canvas_id="101")  # a roster without SIS User ID
    assert quiz_id([matched], key="ada", layout="file")[0] == "ada"


def test_does_a_group_get_no_single_seed():
    seed, why = quiz_id([Student(number="1"), Student(number="2")], key="g", layout="gradescope")
    assert seed is None and "2 students" in why
