"""``attnlab upload canvas`` against a local Canvas (``fake_canvas``): a Canvas bulk download graded
by the real ``attnlab grade``, then its totals and feedback uploaded, once and only once."""

import csv
import json
import os
import shutil
import socket

import pytest
from click.testing import CliRunner

from attnlab import cli, grade
from attnlab.lms import canvas_rest
from attnlab.lms import canvas_upload as upload_canvas
from attnlab.grade import report

from fake_canvas import FakeCanvas

EXAMPLES = upload_canvas.paths.kit_root() / "examples" / "submissions"
# Canvas bulk-download names: <sortable name>_[LATE_]<user id>_<attachment id>_<original name>
DOWNLOAD = {
    "doejane_4001_9001_pe_attention.py": "loops_score_full.py",
    "smithbob_LATE_4002_9002_pe_attention.py": "no_scaling_score_partial.py",
    "leeann_4003_9003_pe_attention.py": "missing_function_score_partial.py",
}
USERS = [
    {"id": 4001, "name": "Jane Doe", "sortable_name": "Doe, Jane", "sis_user_id": "S1", "login_id": "jdoe"},
    {"id": 4002, "name": "Bob Smith", "sortable_name": "Smith, Bob", "sis_user_id": "S2", "login_id": "bsmith"},
    {"id": 4003, "name": "Ann Lee", "sortable_name": "Lee, Ann", "sis_user_id": "S3", "login_id": "alee"},
    {"id": 4004, "name": "Noh Kim", "sortable_name": "Kim, Noh", "sis_user_id": "S4", "login_id": "nkim"},
]


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """RESULTS of the three students, graded once for the module; tests get copies."""
    root = tmp_path_factory.mktemp("canvas")
    download = root / "download"
    download.mkdir()
    for name, example in DOWNLOAD.items():
        shutil.copy(EXAMPLES / example, download / name)
    run = grade.main(submissions=[download], out=root / "results", progress=False)
    assert run.exit_code == 0
    return root / "results"


@pytest.fixture
def results(graded, tmp_path):
    return shutil.copytree(graded, tmp_path / "results")


@pytest.fixture
def possible(results):
    return upload_canvas.read_results(results)[1]


@pytest.fixture
def canvas(possible):
    fake = FakeCanvas(points=possible, users=[dict(u, email=f"{u['login_id']}@example.edu") for u in USERS])
    yield fake
    fake.close()


def upload(results, canvas, *extra, token=None, course=None, assignment=None):
    args = ["upload", "canvas", str(results), "--url", canvas.url]
    args += ["--course", str(course or canvas.course), "--assignment", str(assignment or canvas.assignment), *extra]
    env = {"CANVAS_TOKEN": canvas.token if token is None else token, "COLUMNS": "200"}
    return CliRunner().invoke(cli.main, args, env=env)


def one_line(result, message):
    """Whether the CLI stopped with exit 1 on one line holding ``message`` (not a traceback)."""
    last = result.output.rstrip("\n").split("\n")[-1]
    return (
        result.exit_code == 1
        and isinstance(result.exception, SystemExit)
        and last.startswith("Error: ")
        and message in last
    )


def totals(results):
    with open(results / "grades.csv", newline="", encoding="utf-8") as f:
        return {r["submission"]: float(r["total"]) for r in csv.DictReader(f) if r["total"]}


def feedback(results, key):
    return (results / "submissions" / report.folder_name(key) / "feedback.md").read_text(encoding="utf-8")


def test_do_three_students_of_a_canvas_download_get_their_totals_and_feedback_once(results, canvas):
    expected = totals(results)
    assert len(expected) == 3 and len(set(expected.values())) > 1  # a full and partial scores

    shown = upload(results, canvas)
    assert shown.exit_code == 0, shown.output
    assert canvas.puts == [] and not (results / upload_canvas.STATE).exists()
    assert "Dry run: nothing changed" in shown.output and "3 student(s) to change" in shown.output
    assert f"- -> {expected['doejane_4001']:g}" in shown.output
    assert "Kim, Noh" in shown.output  # enrolled, no submission: listed

    applied = upload(results, canvas, "--yes")
    assert applied.exit_code == 0, applied.output
    assert {u: canvas.scores[u] for u in (4001, 4002, 4003)} == {
        4001: expected["doejane_4001"],
        4002: expected["smithbob_4002"],
        4003: expected["leeann_4003"],
    }
    assert canvas.scores[4004] is None
    people = {
        4001: ("doejane_4001", "Jane Doe"),
        4002: ("smithbob_4002", "Bob Smith"),
        4003: ("leeann_4003", "Ann Lee"),
    }
    for user, (key, name) in people.items():
        [comment] = canvas.comments[user]
        # plain text, as Canvas shows comments: the student by Canvas's name, no Markdown, no machine tag
        assert comment.startswith(f"Feedback for {name}\n") and key not in comment
        assert not any(mark in comment for mark in ("|", "**", "#", "[attnlab"))
        score_line = next(line for line in feedback(results, key).splitlines() if "Score:" in line)
        assert score_line.strip("*") in comment
    # the users and the submissions came in pages of two
    assert any("users?" in p and "page=2" in p for _, p in canvas.log)
    assert any("/submissions?" in p and "page=2" in p for _, p in canvas.log)

    puts = len(canvas.puts)
    again = upload(results, canvas, "--yes")
    assert again.exit_code == 0, again.output
    assert len(canvas.puts) == puts and "0 student(s) to change, 3 already up to date" in again.output
    assert all(len(canvas.comments[u]) == 1 for u in (4001, 4002, 4003))


def test_does_a_wrong_token_exit_naming_it_and_change_nothing(results, canvas):
    result = upload(results, canvas, "--yes", token="expired")
    assert result.exit_code == 1
    assert "refused the token in CANVAS_TOKEN" in result.output and "Traceback" not in result.output
    assert canvas.puts == [] and not (results / upload_canvas.STATE).exists()


def test_does_a_missing_token_say_which_variable_to_set(results, canvas):
    result = upload(results, canvas, "--yes", token="")
    assert result.exit_code == 1 and "set the environment variable CANVAS_TOKEN" in result.output
    assert canvas.log == []


@pytest.mark.parametrize(
    "where, message",
    [({"course": 999}, "there is no course 999 at"), ({"assignment": 999}, "course 101 has no assignment 999")],
)
def test_is_an_unknown_course_or_assignment_one_line(results, canvas, where, message):
    result = upload(results, canvas, "--yes", **where)
    assert result.exit_code == 1 and message in result.output and "Traceback" not in result.output
    assert canvas.puts == []


def test_do_points_that_differ_from_the_autograders_name_both(results, possible):
    fake = FakeCanvas(points=possible + 10, users=USERS)
    try:
        result = upload(results, fake, "--yes")
    finally:
        fake.close()
    assert result.exit_code == 1
    assert f"worth {possible + 10:g} points in Canvas but the autograder's total is {possible:g}" in result.output
    # a run graded with --scale filled canvas_import.csv for such a column: the way to it is named
    assert "--scale" in result.output and "canvas_import.csv" in result.output
    assert fake.puts == []


def test_is_an_unreachable_canvas_one_line(results, canvas):
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    canvas.url = f"http://127.0.0.1:{port}"
    result = upload(results, canvas, "--yes")
    assert result.exit_code == 1 and "cannot reach Canvas at http://127.0.0.1" in result.output
    assert "Traceback" not in result.output


def upload_within(results, canvas, deadline, monkeypatch):
    """What stops ``upload_canvas.main`` (the CLI's function) with ``deadline`` seconds a request."""
    monkeypatch.setenv("CANVAS_TOKEN", canvas.token)
    args = dict(url=canvas.url, course=canvas.course, assignment=canvas.assignment, apply=True)
    with pytest.raises(upload_canvas.UploadError) as stopped:
        upload_canvas.main(results=results, deadline=deadline, **args)
    return str(stopped.value)


def test_does_a_canvas_that_never_answers_end_the_upload_with_one_line(results, canvas, monkeypatch):
    with socket.socket() as s:  # takes connections (the kernel's backlog) and never answers
        s.bind(("127.0.0.1", 0))
        s.listen(8)
        canvas.url = f"http://127.0.0.1:{s.getsockname()[1]}"
        said = upload_within(results, canvas, 0.5, monkeypatch)
    assert said.startswith(f"Canvas at {canvas.url} did not answer GET /api/v1/courses/101 within 0.5 s")


def test_does_a_canvas_that_answers_a_byte_at_a_time_end_the_upload_at_the_deadline(results, canvas, monkeypatch):
    canvas.drip = 0.05  # each byte well within the deadline, the ~70 bytes of the course's answer far past it
    said = upload_within(results, canvas, 0.5, monkeypatch)
    assert said.startswith(f"Canvas at {canvas.url} did not answer GET /api/v1/courses/101 within 0.5 s")
    assert canvas.puts == []


@pytest.mark.parametrize(
    "route, answer, said",
    [
        ("course", [1, 2, 3], "the course is [1, 2, 3], not an object"),
        ("course", None, "the course is null, not an object"),
        ("assignment", {"name": "pe", "points_possible": "63"}, "the assignment's 'points_possible' is \"63\""),
        ("assignment", '{"name": "pe", "points_possible": NaN}', "'points_possible' is NaN, not a number"),
        ("users", {"id": 4001}, '{"id": 4001} where a list belongs'),
        ("users", [{"name": "no id"}], "a user has no 'id'"),
        ("users", [{"id": "4001"}], "a user's 'id' is \"4001\", not a whole number"),
        ("users", [{"id": 4001, "login_id": ["jdoe"]}], "a user's 'login_id' is [\"jdoe\"], not text"),
        ("submissions", [None], "a submission is null, not an object"),
        ("submissions", [{"user_id": 4001, "score": "full"}], "a submission's 'score' is \"full\""),
        ("submissions", [{"user_id": 4001, "excused": "no"}], "a submission's 'excused' is \"no\""),
        ("submissions", [{"user_id": 4001, "submission_comments": {}}], "'submission_comments' is {}, not a list"),
        ("submissions", [{"user_id": 4001, "submission_comments": [7]}], "a submission comment is 7"),
    ],
)
def test_is_an_answer_of_the_wrong_shape_one_line_before_any_change(results, canvas, route, answer, said):
    canvas.answers[route] = answer
    result = upload(results, canvas, "--yes")
    assert one_line(result, said) and "with what its API never sends (" in result.output, result.output
    assert canvas.puts == []


def test_is_a_put_answered_with_the_wrong_shape_one_line(results, canvas):
    canvas.answers["submission"] = None  # (the submissions' list holds every student: no GET of one)
    result = upload(results, canvas, "--yes")
    assert one_line(result, "answered PUT /api/v1/courses/101/assignments/202/submissions/"), result.output
    assert "a submission is null, not an object" in result.output


@pytest.mark.parametrize("answer", ["<html>login page</html>", "[" * 100_000 + "]" * 100_000])
def test_is_an_answer_that_is_no_json_named_as_such(results, canvas, answer):
    canvas.answers["course"] = answer  # a login page; JSON nested deeper than a parser goes
    result = upload(results, canvas, "--yes")
    assert one_line(result, "answered GET /api/v1/courses/101 with something that is not JSON"), result.output
    assert "cannot reach" not in result.output


def test_is_an_answer_too_large_to_hold_refused(results, canvas, monkeypatch):
    monkeypatch.setattr(canvas_rest, "MAX_ANSWER", 1000)
    canvas.answers["course"] = {"id": 101, "name": "x" * 2000}
    result = upload(results, canvas, "--yes")
    assert one_line(result, "answered GET /api/v1/courses/101 with over"), result.output


@pytest.mark.parametrize(
    "where, said",
    [
        ("again", "Canvas's list at courses/101/users never ends"),
        ("elsewhere", "is not under http://127.0.0.1"),
    ],
)
def test_does_a_list_whose_next_page_is_one_it_gave_or_elsewhere_stop_with_one_line(results, canvas, where, said):
    page = f"{canvas.url}/api/v1/courses/101/users?page=1&per_page=2"
    canvas.next_page = page if where == "again" else "https://elsewhere.example.com/api/v1/courses/101/users?page=2"
    result = upload(results, canvas, "--yes")
    assert one_line(result, said), result.output
    assert canvas.puts == []


def test_is_a_token_with_a_line_break_named_as_such(results, canvas):
    result = upload(results, canvas, "--yes", token="secret\ntoken")
    assert one_line(result, "CANVAS_TOKEN holds a line break"), result.output
    assert canvas.log == []


@pytest.mark.parametrize("name", ["grades.csv", "feedback.md"])
def test_is_a_named_pipe_in_results_refused_without_waiting_for_a_writer(results, canvas, name):
    path = (
        results / name if name == "grades.csv" else results / "submissions" / report.folder_name("doejane_4001") / name
    )
    path.unlink()
    os.mkfifo(path)
    result = upload(results, canvas, "--yes")
    assert one_line(result, f"{path} is a named pipe, not a file"), result.output
    assert canvas.log == []


def test_is_feedback_that_is_not_utf8_one_line(results, canvas):
    (results / "submissions" / report.folder_name("doejane_4001") / "feedback.md").write_bytes(
        b"# Feedback\n\xff\xfe caf\xe9\n"
    )
    result = upload(results, canvas, "--yes")
    assert one_line(result, "feedback.md is not UTF-8 text"), result.output
    assert canvas.log == []


def test_is_a_grades_csv_saved_by_excel_with_a_bom_read(results, canvas):
    grades = results / "grades.csv"
    grades.write_bytes(b"\xef\xbb\xbf" + grades.read_bytes())
    result = upload(results, canvas)
    assert result.exit_code == 0 and "3 student(s) to change" in result.output, result.output


def test_is_a_results_folder_of_another_assignment_refused(results, canvas):
    grades = results / "grades.csv"
    text = grades.read_text(encoding="utf-8")
    grades.write_text(text.replace(",softmax,", ",quiz_item,", 1), encoding="utf-8")
    result = upload(results, canvas, "--yes")
    assert result.exit_code == 1 and "is from another assignment" in result.output and "quiz_item" in result.output
    assert canvas.log == []


def test_is_canvas_rate_limiting_waited_out(results, canvas, monkeypatch):
    monkeypatch.setattr(canvas_rest, "BACKOFF", (0.0,) * 4)
    canvas.throttle = 3
    result = upload(results, canvas, "--yes")
    assert result.exit_code == 0, result.output
    assert sum(s is not None for s in canvas.scores.values()) == 3


def test_does_endless_rate_limiting_stop_with_one_line(results, canvas, monkeypatch):
    monkeypatch.setattr(canvas_rest, "BACKOFF", (0.0,) * 2)
    canvas.throttle = 100
    result = upload(results, canvas, "--yes")
    assert result.exit_code == 1 and "Rate Limit Exceeded" in result.output
    assert canvas.puts == []


def test_is_a_grade_changed_by_hand_in_canvas_kept_unless_forced(results, canvas):
    assert upload(results, canvas, "--yes").exit_code == 0
    canvas.scores[4001] = 1.0  # the instructor's own grade
    kept = upload(results, canvas, "--yes")
    assert kept.exit_code == upload_canvas.NEEDS_HUMAN
    assert "1 kept" in kept.output and canvas.scores[4001] == 1.0
    forced = upload(results, canvas, "--yes", "--force")
    assert canvas.scores[4001] == totals(results)["doejane_4001"], forced.output
    assert len(canvas.comments[4001]) == 1


def test_is_an_existing_grade_no_upload_sent_kept(results, canvas):
    canvas.scores[4002] = 7.0  # graded by hand before any upload
    result = upload(results, canvas, "--yes")
    assert result.exit_code == upload_canvas.NEEDS_HUMAN and canvas.scores[4002] == 7.0
    assert len(canvas.comments[4002]) == 1  # the feedback still arrives


def test_is_an_excused_student_left_excused(results, canvas):
    canvas.excused.add(4003)
    result = upload(results, canvas, "--yes")
    assert result.exit_code == upload_canvas.NEEDS_HUMAN and 4003 in canvas.excused
    assert canvas.scores[4003] is None and "Lee, Ann" in result.output.split("kept (--force overwrites):")[1]


@pytest.mark.parametrize(
    "url", ["canvas.example.edu", "ftp://canvas.example.edu", "", "http://[::1", "https://canvas.example.edu:port"]
)
def test_is_an_address_that_is_no_url_refused(results, canvas, url):
    canvas.url = url
    result = upload(results, canvas)
    assert one_line(result, "is not your Canvas's address"), result.output


def test_is_a_regraded_total_sent_over_the_one_uploaded_before(results, canvas):
    assert upload(results, canvas, "--yes").exit_code == 0
    path = results / "submissions" / report.folder_name("leeann_4003") / "results.json"
    data = json.loads(path.read_text())
    data["score"] += 1 / 3  # a fraction: Canvas gets 2 decimals, and a re-run sees them as ours
    path.write_text(json.dumps(data))
    (path.parent / "feedback.md").write_text("# Feedback\n\nRegraded.\n")
    result = upload(results, canvas, "--yes")
    assert result.exit_code == 0, result.output
    assert canvas.scores[4003] == round(data["score"], 2) and len(canvas.comments[4003]) == 2
    puts = len(canvas.puts)
    again = upload(results, canvas, "--yes")
    assert again.exit_code == 0 and len(canvas.puts) == puts, again.output


def test_is_a_submission_that_was_not_graded_never_uploaded(results, canvas):
    grades = results / "grades.csv"
    rows = list(csv.reader(grades.open(newline="", encoding="utf-8")))
    at = rows[0].index
    for row in rows[1:]:
        if row[0] == "smithbob_4002":
            row[at("total")], row[at("status")], row[at("problem")] = "", "not graded", "the grading worker died"
    grades.write_text(report.csv_text(rows), encoding="utf-8")
    result = upload(results, canvas, "--yes")
    assert result.exit_code == upload_canvas.NEEDS_HUMAN
    assert "smithbob_4002 (not graded: the grading worker died)" in result.output
    assert "1 enrolled student(s) without a submission: Kim, Noh\n" in result.output  # Bob's is held, not missing
    assert canvas.scores[4002] is None and canvas.comments[4002] == []
    assert canvas.scores[4001] is not None


def test_does_an_interrupted_upload_resume_without_duplicates(results, canvas):
    canvas.fail_puts_after = 1
    broken = upload(results, canvas, "--yes")
    assert broken.exit_code == 1 and len(canvas.puts) == 1
    canvas.fail_puts_after = None
    resumed = upload(results, canvas, "--yes")
    assert resumed.exit_code == 0, resumed.output
    assert len(canvas.puts) == 3
    assert all(len(canvas.comments[u]) == 1 and canvas.scores[u] is not None for u in (4001, 4002, 4003))


def test_is_a_student_matched_by_sis_id_or_email_when_no_canvas_id_is_known(results, canvas):
    for key, student in (
        ("doejane_4001", {"id": "S1", "number": "S1"}),
        ("smithbob_4002", {"email": "BSMITH@example.edu"}),
    ):
        path = results / "submissions" / report.folder_name(key) / "results.json"
        data = json.loads(path.read_text())
        data["extra_data"]["students"] = [
            dict({"name": "", "email": "", "id": "", "login": "", "canvas_id": ""}, **student)
        ]
        path.write_text(json.dumps(data))
    path = results / "submissions" / report.folder_name("leeann_4003") / "results.json"
    data = json.loads(path.read_text())
    data["extra_data"]["students"] = [
        {"name": "", "email": "", "id": "S999", "login": "alee", "canvas_id": "", "number": "S999"}
    ]
    path.write_text(json.dumps(data))
    result = upload(results, canvas, "--yes")
    assert result.exit_code == upload_canvas.NEEDS_HUMAN
    assert canvas.scores[4001] is not None and canvas.scores[4002] is not None
    # an id that matches nobody is not replaced by a guess from the login
    assert canvas.scores[4003] is None and "matching no enrolled student" in result.output


def test_do_results_from_before_canvas_ids_were_recorded_ask_for_a_regrade_run(results, canvas):
    path = results / "submissions" / report.folder_name("doejane_4001") / "results.json"
    data = json.loads(path.read_text())
    for s in data["extra_data"]["students"]:
        del s["canvas_id"]
    path.write_text(json.dumps(data))
    result = upload(results, canvas, "--yes")
    assert result.exit_code == 1 and "run `attnlab grade` with `--out" in result.output
    assert canvas.log == []


def test_are_quiz_results_sent_too(tmp_path):
    """(issue 35.1) RESULTS of `attnlab quiz grade`: each graded student's quiz total, matched by
    the Canvas user id of the bulk download; a quiz that could not be graded is not sent."""
    from attnlab.quiz import batch as quiz_batch
    from attnlab.quiz import handgrading
    from attnlab.quiz.grading import graded_items

    download = tmp_path / "download"
    download.mkdir()
    # one graded item right (a practice item would score nothing)
    (download / "chenjohn_10001_8001_quiz.py").write_text('wavelength = "2*pi*10000**(2*i/d_model)"\n')
    (download / "lianna_10002_8002_quiz.ipynb").write_text("not a notebook")
    roster = tmp_path / "roster.csv"
    roster.write_text('Student,ID,SIS User ID\n"Chen, John",10001,S1\n"Li, Anna",10002,S2\n')
    quiz_batch.main(submissions=[download], out=tmp_path / "results", roster=roster, progress=False)
    users = [
        {"id": 10001, "name": "John Chen", "sortable_name": "Chen, John", "sis_user_id": "S1", "login_id": "jc"},
        {"id": 10002, "name": "Anna Li", "sortable_name": "Li, Anna", "sis_user_id": "S2", "login_id": "al"},
    ]
    # the quiz is worth its auto-graded points and its free-response points graded by hand
    fake = FakeCanvas(points=sum(i.points for i in graded_items() + handgrading.items()), users=users)
    try:
        applied = upload(tmp_path / "results", fake, "--yes")
        assert applied.exit_code == upload_canvas.NEEDS_HUMAN, applied.output  # Anna's file: for a human
        assert fake.scores[10001] == 1 and fake.scores[10002] is None
        [comment] = fake.comments[10001]
        assert "John Chen" in comment.splitlines()[0] and "**" not in comment
        assert "never sent as 0" in " ".join(applied.output.split())
    finally:
        fake.close()


@pytest.mark.parametrize("lead", ["=", "+", "-", "@", "'"])
def test_is_a_submission_whose_name_starts_like_a_formula_uploaded_under_its_own_name(tmp_path, lead):
    """(numbers5 finding 10) grades.csv keeps such a name as text ('-jdoe); the upload reads back
    the name it was given, finds its results and sends its total, not "could not be graded"."""
    from attnlab.quiz import batch as quiz_batch
    from attnlab.quiz import handgrading
    from attnlab.quiz.grading import graded_items

    quizzes = tmp_path / "quizzes"
    quizzes.mkdir()
    (quizzes / f"{lead}jdoe.py").write_text('wavelength = "2*pi*10000**(2*i/d_model)"\n')
    quiz_batch.main(submissions=[quizzes], out=tmp_path / "results", progress=False)
    users = [
        {"id": 4001, "name": "Jane Doe", "sortable_name": "Doe, Jane", "sis_user_id": "S1", "login_id": f"{lead}jdoe"}
    ]
    fake = FakeCanvas(points=sum(i.points for i in graded_items() + handgrading.items()), users=users)
    try:
        applied = upload(tmp_path / "results", fake, "--yes")
        assert applied.exit_code == 0, applied.output
        assert fake.scores[4001] == 1
    finally:
        fake.close()


def test_is_a_quiz_total_without_its_hand_graded_points_said_to_be_one(tmp_path):
    """A quiz graded before its free-response items were graded by hand: does the upload say that
    the total it sends leaves them out (naming the submission and the items), and stop saying it
    once they are graded?"""
    from attnlab.quiz import batch as quiz_batch
    from attnlab.quiz import handgrading
    from attnlab.quiz.grading import graded_items

    quizzes = tmp_path / "quizzes"
    quizzes.mkdir()
    (quizzes / "jdoe.py").write_text('wavelength = "2*pi*10000**(2*i/d_model)"\n')
    quiz_batch.main(submissions=[quizzes], out=tmp_path / "results", progress=False)
    users = [{"id": 4001, "name": "Jane Doe", "sortable_name": "Doe, Jane", "sis_user_id": "S1", "login_id": "jdoe"}]
    by_hand = [i.id for i in handgrading.items()]
    fake = FakeCanvas(points=sum(i.points for i in graded_items() + handgrading.items()), users=users)
    try:
        before = " ".join(upload(tmp_path / "results", fake).output.split())
        assert "not yet graded by hand" in before and f"jdoe ({', '.join(by_hand)})" in before
        sheet = tmp_path / "graded.csv"
        sheet.write_text("submission," + ",".join(by_hand) + "\njdoe," + ",".join("1" for _ in by_hand) + "\n")
        quiz_batch.main(submissions=[quizzes], out=tmp_path / "results", progress=False, hand_graded=sheet)
        after = " ".join(upload(tmp_path / "results", fake).output.split())
        assert "not yet graded by hand" not in after and "jdoe" in after
    finally:
        fake.close()
