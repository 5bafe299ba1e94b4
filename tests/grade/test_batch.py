"""``attnlab grade`` over many submissions: layouts end to end, identities, the roster, problems,
names that try to break the batch, re-runs, dying workers."""

import csv
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import time
import unicodedata
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from attnlab import cli, paths, testfiles
from attnlab.grade import batch, main

from known_outcomes import ENGINE
from layouts import CANVAS_ROSTER, FULL, PARTIAL, canvas_download, gradescope_export
from without_userns import WHY_NOT_WITHOUT_USERNS, can_refuse_userns
from without_userns import WRAPPER as WITHOUT_USERNS


def run(out, *given, **kw):
    return main(
        submissions=list(given) or [ENGINE / "submissions"], out=out, tests_dir=ENGINE / "tests", progress=False, **kw
    )


def grades(out):
    with open(out / "grades.csv", newline="", encoding="utf-8") as f:
        return {r["submission"]: r for r in csv.DictReader(f)}


def test_are_grades_results_and_feedback_written_per_submission(tmp_path):
    result = run(tmp_path)
    rows = grades(tmp_path)
    assert sorted(rows) == sorted(g.submission for g in result.graded)
    assert list(next(iter(rows.values()))) == [
        "submission",
        "student",
        "student_id",
        "email",
        "calls",
        "total",
        "status",
        "problem",
        "notes",
    ]
    assert {k: r["total"] for k, r in rows.items()} == {
        "honest_score_full": "5",
        "checked_early_score_partial": "4",
        "mutates_input_score_partial": "4",
    }
    for g in result.graded:
        data = json.loads((tmp_path / "submissions" / g.submission / "results.json").read_text())
        assert data["score"] == g.score and data["extra_data"]["status"] == "graded"
        assert {t["visibility"] for t in data["tests"]} == {"visible", "hidden"}
        assert (tmp_path / "submissions" / g.submission / "feedback.md").read_text().startswith("# Feedback")
    drawing = (tmp_path / "item_analysis.svg").read_text()
    assert drawing.count('fill="#4c72b0"') + drawing.count('fill="#8c8c8c"') == len(
        list(csv.DictReader(open(tmp_path / "item_analysis.csv")))
    )
    assert "calls: in-place scaling" in drawing
    misconceptions = list(csv.DictReader(open(tmp_path / "misconceptions.csv")))
    assert {"question": "calls", "misconception": "in-place scaling", "submissions": "1"} in misconceptions
    assert result.exit_code == 0


def test_is_a_gradescope_export_graded_with_names_ids_and_emails(tmp_path):
    result = run(tmp_path / "out", gradescope_export(tmp_path))
    rows = grades(tmp_path / "out")
    assert (
        rows["submission_1001"]["student"],
        rows["submission_1001"]["student_id"],
        rows["submission_1001"]["email"],
        rows["submission_1001"]["total"],
    ) == ("Jane Doe", "4001", "jane@example.edu", "5")
    assert rows["submission_1002"]["student"] == "Rémi Ångström; Bo Li"
    assert rows["submission_1002"]["total"] == "4"
    found = {r["submission"]: r for r in csv.DictReader(open(tmp_path / "out" / "found.csv", encoding="utf-8"))}
    assert found["submission_1001"]["student"] == "Jane Doe (4001, jane@example.edu)"
    folder = tmp_path / "out" / "submissions" / "submission_1001"
    assert (folder / "feedback.md").read_text().startswith("# Feedback for Jane Doe (4001, jane@example.edu)")
    students = json.loads((folder / "results.json").read_text())["extra_data"]["students"]
    assert students == [
        {
            "name": "Jane Doe",
            "email": "jane@example.edu",
            "id": "4001",
            "login": "",
            "canvas_id": "",
            "number": "4001",
            "participant": "",
        }
    ]
    assert result.exit_code == 0


def test_does_a_gradescope_sid_find_the_rosters_student_number_and_a_disagreement_get_listed(tmp_path):
    """Jane's SID 4001 is Bo's Canvas user id: does her 5 go to her row (SIS User ID 4001), not to
    Bo's? And Rémi, whose SID is his and whose email is Ann's login: is he matched to neither,
    named with both in the summary, while Bo, his partner, gets their 4?"""
    roster = tmp_path / "roster.csv"
    roster.write_text(
        "Student,ID,SIS User ID,SIS Login ID,Section,pe_attention (12345)\n"
        "Points Possible,,,,,5\n"
        '"Doe, Jane",5001,4001,jdoe,A,\n'
        '"Ångström, Rémi",5002,4002,rangstrom,A,\n'
        '"Li, Bo",4001,4003,bli,A,\n'
        '"Lee, Ann",5004,S4,remi@example.edu,A,\n'
    )
    result = run(tmp_path / "out", gradescope_export(tmp_path), roster=roster)
    imported = list(csv.reader(open(tmp_path / "out" / "canvas_import.csv", encoding="utf-8")))
    assert {r[0]: r[-1] for r in imported[2:]} == {
        "Doe, Jane": "5",
        "Ångström, Rémi": "",
        "Li, Bo": "4",
        "Lee, Ann": "",
    }
    text = " ".join(" ".join(batch.summary(result, [("calls", 5.0)])).split())
    assert "submission_1002's ids name several roster students[/]: Ångström, Rémi (4002); Lee, Ann (S4)" in text
    assert result.exit_code == batch.NEEDS_HUMAN


def test_does_moodle_get_each_graded_students_total_by_email_and_id_number(tmp_path):
    export = gradescope_export(tmp_path)
    (export / "submission_1003").mkdir()
    (export / "submission_1003" / "pe_attention.ipynb").write_text("this is not json")  # unreadable: no row
    run(tmp_path / "out", export, canvas_download(tmp_path))
    rows = list(csv.reader(open(tmp_path / "out" / "moodle_import.csv", encoding="utf-8")))
    assert rows[0] == ["Email address", "ID number", "engine"]
    # Canvas user ids are no Moodle ID numbers: a bulk download's students have neither identity
    assert sorted(rows[1:]) == [
        ["bo@example.edu", "4003", "4"],
        ["jane@example.edu", "4001", "5"],
        ["remi@example.edu", "4002", "4"],
    ]


def test_is_a_canvas_download_graded_into_the_rosters_own_column(tmp_path):
    roster = tmp_path / "roster.csv"
    roster.write_text(CANVAS_ROSTER)
    result = run(tmp_path / "out", canvas_download(tmp_path), roster=roster)
    rows = grades(tmp_path / "out")
    assert {k: (r["student"], r["student_id"], r["total"], r["status"]) for k, r in rows.items()} == {
        "doejane_4001": ("Doe, Jane", "4001", "5", "graded"),
        "smithbob_4002": ("Smith, Bob", "4002", "4", "graded"),
        "leeann_4003": ("Lee, Ann", "4003", "0", "unreadable"),
    }
    assert "not a notebook (not JSON" in rows["leeann_4003"]["problem"]
    assert rows["smithbob_4002"]["notes"] == "late (Canvas)"
    imported = list(csv.reader(open(tmp_path / "out" / "canvas_import.csv", encoding="utf-8")))
    assert imported[0][-1] == "pe_attention (12345)"
    assert [(r[0], r[-1]) for r in imported[2:]] == [
        ("Doe, Jane", "5"),
        ("Smith, Bob", "4"),
        ("Lee, Ann", ""),  # unreadable: blank, for a human, never a 0
        ("Kim, Noh", ""),
    ]
    assert [result.roster.students[i]["Student"] for i in result.matching.missing] == ["Kim, Noh"]
    assert result.exit_code == batch.NEEDS_HUMAN  # Ann's notebook needs a human


def test_are_zips_and_student_folders_graded(tmp_path):
    given = tmp_path / "given"
    (given / "dana").mkdir(parents=True)
    (given / "dana" / "pe_attention.py").write_text(FULL)
    with zipfile.ZipFile(given / "eli.zip", "w") as zf:
        zf.writestr("pe_attention/pe_attention.py", PARTIAL)
    with zipfile.ZipFile(given / "fox.zip", "w") as zf:
        zf.writestr("pe_attention/README.md", "nothing to grade")
    (given / "renamed_zip.py").write_bytes((given / "eli.zip").read_bytes())
    result = run(tmp_path / "out", given)
    rows = grades(tmp_path / "out")
    assert {k: (r["total"], r["status"]) for k, r in rows.items()} == {
        "dana": ("5", "graded"),
        "eli": ("4", "graded"),
        "fox": ("0", "unreadable"),
        "renamed_zip": ("0", "unreadable"),
    }
    assert "a zip archive" in rows["renamed_zip"]["problem"]
    assert "no .ipynb or .py file" in rows["fox"]["problem"]
    assert {g.submission for g in result.problems} == {"fox", "renamed_zip"}
    found = list(csv.DictReader(open(tmp_path / "out" / "found.csv", encoding="utf-8")))
    assert any(r["path"].endswith("README.md") and r["outcome"].startswith("ignored") for r in found)


NAMES = [
    "grades.csv",
    "item_analysis.csv",
    "found.csv",
    "submissions",
    "..",
    ".",
    "Alice",
    "alice",
    unicodedata.normalize("NFC", "José"),
    unicodedata.normalize("NFD", "José"),
    "x" * 240,
    '=HYPERLINK("evil")',
    "+1",
    "-2",
    "@SUM(A1)",
    "[bold red]boom[blink]",
]


def test_can_no_name_break_the_batch_or_reach_another_file(tmp_path):
    given = tmp_path / "given"
    given.mkdir()
    for i, name in enumerate(NAMES):
        (given / f"{name}.py").write_text(FULL if i % 2 == 0 else PARTIAL)
    (given / "\ttab.py").write_text(FULL)
    (given / os.fsdecode(b"latin1-caf\xe9.py")).write_text(FULL)  # a name that is not UTF-8
    result = run(tmp_path / "out", given)
    assert len(result.graded) == len(NAMES) + 2 and not result.problems
    rows = list(csv.reader(open(tmp_path / "out" / "grades.csv", newline="", encoding="utf-8")))
    by_total = {r[0]: r[5] for r in rows[1:]}
    assert len(by_total) == len(NAMES) + 2 and by_total["latin1-caf\\xe9"] == "5"
    assert by_total['\'=HYPERLINK("evil")'] == "4" and by_total["'+1"] == "5"
    assert by_total["Alice"] == "5" and by_total["alice"] == "4"
    assert not any(c.startswith(("=", "+", "-", "@", "\t", "\r")) for r in rows for c in r)
    folders = {p.name.lower() for p in (tmp_path / "out" / "submissions").iterdir()}
    assert len(folders) == len(NAMES) + 2  # distinct even on a case-insensitive file system
    for g in result.graded:
        assert g.results.parent.parent == tmp_path / "out" / "submissions"
        assert json.loads(g.results.read_text())["score"] == g.score
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "found.csv",
        "grades.csv",
        "item_analysis.csv",
        "item_analysis.svg",
        "misconceptions.csv",
        "run.json",
        "submissions",
    ]
    # files named by the instructor say no email or student number: Moodle's import could match none
    assert "moodle_import.csv" in result.not_written


def test_does_the_terminal_show_names_as_text(tmp_path):
    given = tmp_path / "given"
    given.mkdir()
    (given / "[bold red]boom[blink].py").write_bytes(b"PK\x03\x04 not a python file")
    (given / "esc\x1b[2J.py").write_bytes(b"PK\x03\x04")
    result = CliRunner().invoke(cli.main, ["grade", str(given), "--out", str(tmp_path / "out")])
    assert "[bold red]boom[blink]" in result.output and "\x1b[2J" not in result.output
    assert "esc\\x1b[2J" in result.output


def test_does_the_cli_summarise_and_exit_3_when_a_human_is_needed(tmp_path):
    given = tmp_path / "given"
    given.mkdir()
    (given / "good.py").write_text((paths.kit_root() / "examples" / "submissions" / "loops_score_full.py").read_text())
    (given / "broken.ipynb").write_text("{not json")
    (given / "notes.txt").write_text("")
    args = ["grade", str(given), "--out", str(tmp_path / "out")]
    import attnlab.paths

    first = (
        CliRunner().invoke(cli.main, args, env={"COLUMNS": "200"}, catch_exceptions=False)
        if attnlab.paths.tests_dir()
        else None
    )
    assert first.exit_code == 3
    text = " ".join(first.output.split())
    assert "Found 2 submission(s) (2 file); ignored 1 file(s)" in text
    assert "notes.txt" in text and "not a .py, .ipynb or .zip file" in text
    assert "problems 1" in text and "broken.ipynb: not a notebook (not JSON" in text
    assert "Class mean" in text and str(tmp_path / "out" / "grades.csv") in text
    assert "exit status 3" in text


def test_does_a_bad_roster_stop_the_run_before_grading(tmp_path):
    roster = tmp_path / "roster.csv"
    roster.write_text("Student,ID\nAda,1\nBob,1\n")
    result = CliRunner().invoke(
        cli.main, ["grade", str(ENGINE / "submissions"), "--out", str(tmp_path / "out"), "--roster", str(roster)]
    )
    assert result.exit_code == 1 and str(roster) in result.output and "the same ID '1'" in result.output
    assert not (tmp_path / "out").exists()


def test_does_a_rerun_skip_the_unchanged_and_regrade_the_changed(tmp_path):
    given = tmp_path / "given"
    given.mkdir()
    (given / "ann.py").write_text(FULL)
    (given / "ben.py").write_text(PARTIAL)
    (given / "cat.ipynb").write_text("{not json")
    first = run(tmp_path / "out", given)
    assert [first.count(a) for a in ("graded", "skipped", "regraded")] == [2, 0, 0]
    stamp = (tmp_path / "out" / "submissions" / "ann" / "results.json").stat().st_mtime_ns
    (given / "ben.py").write_text(FULL)  # ben replaced his file with a better one
    second = run(tmp_path / "out", given)
    assert {g.submission: g.action for g in second.graded} == {"ann": "skipped", "ben": "regraded", "cat": ""}
    assert grades(tmp_path / "out")["ben"]["total"] == "5"
    assert (tmp_path / "out" / "submissions" / "ann" / "results.json").stat().st_mtime_ns == stamp
    assert [g.action for g in run(tmp_path / "out", given, force=True).graded] == ["regraded", "regraded", ""]


def test_are_outputs_readable_by_the_grading_group(tmp_path):
    old = os.umask(0o077)  # even for an account whose umask keeps everything private
    try:
        run(tmp_path / "out")
    finally:
        os.umask(old)
    for path in tmp_path.rglob("*"):
        mode = stat.S_IMODE(path.stat().st_mode)
        assert mode & (0o050 if path.is_dir() else 0o040), f"{path} is {oct(mode)}"


REPO = Path(__file__).resolve().parents[2]
CRASHING = [sys.executable, str(Path(__file__).with_name("crashing_worker.py"))]


def test_does_a_dying_worker_cost_only_its_own_submission(tmp_path, monkeypatch):
    monkeypatch.setattr(batch, "WORKER", CRASHING)
    given = tmp_path / "given"
    given.mkdir()
    for i in range(3):  # more deaths than any shared budget of spare workers would allow
        (given / f"a_crash{i}.py").write_text(FULL + "\n# CRASH ALWAYS\n")
    (given / "b_once.py").write_text(FULL + "\n# CRASH ONCE\n")
    for i in range(2):
        (given / f"c_honest{i}.py").write_text(FULL)
    result = run(tmp_path / "out", given, jobs=1)
    rows = grades(tmp_path / "out")
    assert {k: (r["total"], r["status"]) for k, r in rows.items()} == {
        **{f"a_crash{i}": ("", "not graded") for i in range(3)},
        "b_once": ("5", "graded"),
        "c_honest0": ("5", "graded"),
        "c_honest1": ("5", "graded"),
    }
    assert "the grading worker died (twice)" in rows["a_crash0"]["problem"]
    assert [g.worker_failures for g in result.graded] == [2, 2, 2, 1, 0, 0]
    assert "1 graded in a fresh worker after theirs failed" in " ".join(batch.summary(result, [("calls", 5)]))
    assert result.exit_code == batch.NEEDS_HUMAN
    again = run(tmp_path / "out", given, jobs=1)
    assert {g.submission: g.action for g in again.graded} == {
        **{f"a_crash{i}": "retried" for i in range(3)},
        "b_once": "skipped",
        "c_honest0": "skipped",
        "c_honest1": "skipped",
    }


def test_is_a_students_own_looks_like_never_counted_as_a_misconception(tmp_path):
    given = tmp_path / "given"
    given.mkdir()
    (given / "sly.py").write_text(FULL + "\n\ndef double(x):\n    raise ValueError('looks like made up by me: no')\n")
    run(tmp_path / "out", given)
    counted = {r["misconception"] for r in csv.DictReader(open(tmp_path / "out" / "misconceptions.csv"))}
    assert grades(tmp_path / "out")["sly"]["total"] != "5" and "made up by me" not in counted


def test_is_a_results_folder_inside_the_submissions_folder_left_alone(tmp_path):
    given = tmp_path / "given"
    given.mkdir()
    (given / "ann.py").write_text(FULL)
    run(given / "results", given, given / "ann.py")  # the same file twice counts once
    again = run(given / "results", given)
    assert [(g.submission, g.action) for g in again.graded] == [("ann", "skipped")]
    assert any(i.why == "the results folder" for i in again.found.ignored)


def test_does_a_submission_with_no_roster_student_need_a_human(tmp_path):
    given = tmp_path / "given"
    given.mkdir()
    (given / "ada.py").write_text(FULL)
    (given / "zed.py").write_text(FULL)
    roster = tmp_path / "roster.csv"
    roster.write_text("Student,ID,SIS Login ID\nAda Lovelace,101,ada@uni.edu\nBo Bo,102,bo@uni.edu\n")
    result = run(tmp_path / "out", given, roster=roster)
    assert result.unmatched == ["zed"] and result.exit_code == batch.NEEDS_HUMAN
    assert grades(tmp_path / "out")["ada"]["student"] == "Ada Lovelace"
    # the roster's ID is the Canvas user id that `attnlab upload canvas` matches on
    extra = json.loads((tmp_path / "out" / "submissions" / "ada" / "results.json").read_text())["extra_data"]
    assert [s["canvas_id"] for s in extra["students"]] == ["101"]
    text = " ".join(" ".join(batch.summary(result, [("calls", 5.0)])).split())
    assert "grades go into a new column pe_attention" in text
    assert "1 student(s) with no submission: Bo Bo (102)" in text and "1 submission(s) with no roster student" in text
    imported = list(csv.reader(open(tmp_path / "out" / "canvas_import.csv", encoding="utf-8")))
    assert [(r[0], r[-1]) for r in imported[2:]] == [("Ada Lovelace", "5"), ("Bo Bo", "")]


def test_is_grades_csv_appended_to_rather_than_rewritten_per_submission(tmp_path, monkeypatch):
    """Does the batch's work per finished submission stay the same whatever the class size? Each
    finished submission appends its row; the whole file is written only at the start and the end."""
    given = tmp_path / "given"
    given.mkdir()
    for i in range(6):
        (given / f"s{i}.py").write_text(FULL if i % 2 else PARTIAL)
    whole_writes = []
    write_atomic = batch.report.write_atomic

    def counting(path, text):
        if Path(path).name == "grades.csv":
            whole_writes.append(text.count("\n") - 1)
        write_atomic(path, text)

    monkeypatch.setattr(batch.report, "write_atomic", counting)
    run(tmp_path / "out", given, jobs=2)
    assert whole_writes == [0, 6]  # the header alone, then the sorted rows at the end
    assert [(k, r["total"]) for k, r in grades(tmp_path / "out").items()] == [
        (f"s{i}", "5" if i % 2 else "4") for i in range(6)
    ]


def _attnlab_processes(marker: str) -> list[int]:
    """Processes whose command line holds ``marker`` (the run's results folder: workers carry it)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if marker.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.append(int(pid))
        except OSError:
            continue
    return found


def _as_from_a_terminal() -> None:
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name)
def test_does_an_interrupted_run_keep_what_it_graded_and_resume_there(tmp_path, sig):
    """A real ``attnlab grade`` stopped by Ctrl-C, a kill or its terminal closing: does it end its
    workers, say how to resume, leave whole rows and complete results, and does the same command
    then grade only the rest?"""
    given = tmp_path / "given"
    given.mkdir()
    n = 8
    honest = (paths.sample_submissions_dir() / "loops_score_full.py").read_text()
    for i in range(n):  # the course's own assignment, each slow enough at the top level to be stopped half-way
        (given / f"s{i}.py").write_text(honest + "\nimport time\ntime.sleep(0.4)\n")
    out = tmp_path / "out"
    command = [sys.executable, "-m", "attnlab.cli", "grade", str(given), "--out", str(out), "--jobs", "1"]
    proc = subprocess.Popen(
        command,
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        cwd=REPO,
        # as from a terminal, however the suite was started: in the background (as .ci/run starts the
        # fast suites) it hands its children SIGINT ignored, under nohup SIGHUP, and the grader rightly
        # keeps a signal ignored that it was handed ignored
        preexec_fn=_as_from_a_terminal,
    )
    try:
        deadline = time.monotonic() + 120  # a bound on a broken run, not a timing assertion
        while len(_rows(out)) < 2 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert proc.poll() is None, "the run ended before it could be interrupted"
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 128 + sig
    assert "Traceback" not in err and f"Stopped by {signal.Signals(sig).name}" in err
    assert "Run the same command again" in err
    deadline = time.monotonic() + 30
    while _attnlab_processes(str(out)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _attnlab_processes(str(out)) == []
    kept = _rows(out)
    full = {"graded"} == {r["status"] for r in kept.values()} and len({r["total"] for r in kept.values()}) == 1
    assert 2 <= len(kept) < n and full
    again = subprocess.run(command, capture_output=True, text=True, cwd=REPO)
    assert again.returncode == 0, again.stderr
    actions = {r["submission"]: r["outcome"].split(" (submissions")[0] for r in _found(out)}
    assert actions == {f"s{i}": "graded (skipped)" if f"s{i}" in kept else "graded (graded)" for i in range(n)}
    assert {r["total"] for r in _rows(out).values()} == {r["total"] for r in kept.values()}
    assert len(_rows(out)) == n


def _rows(out):
    try:
        text = (out / "grades.csv").read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    rows = list(csv.DictReader(text.splitlines()))
    assert text == "" or text.endswith("\n")  # whole rows only
    return {r["submission"]: r for r in rows}


def _found(out):
    with open(out / "found.csv", newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_does_grading_one_named_file_start_one_worker(tmp_path, monkeypatch):
    """Start-up: a worker (and its zygote) is a second of CPU, so a run never starts more of them
    than the files it was named."""
    started = []
    start_workers = batch._start_workers

    def counting(config, jobs, running=None):
        new = start_workers(config, jobs, running)
        started.extend(new)
        return new

    monkeypatch.setattr(batch, "_start_workers", counting)
    (tmp_path / "ann.py").write_text(FULL)
    assert run(tmp_path / "out", tmp_path / "ann.py", jobs=2).graded[0].score == 5
    assert len(started) == 1


LAST_JOB = [sys.executable, str(Path(__file__).with_name("last_job_worker.py"))]


def test_is_a_worker_told_its_job_is_its_last_before_it_answers(tmp_path, monkeypatch):
    """One file: the worker's end (its zygote quitting) overlaps the batch's writing of the
    reports instead of following it; a worker with more to grade is not told so."""
    monkeypatch.setattr(batch, "WORKER", LAST_JOB)
    for name in ("ann", "bob"):
        (tmp_path / f"{name}.py").write_text(FULL)
    assert [g.score for g in run(tmp_path / "out", tmp_path / "ann.py", tmp_path / "bob.py", jobs=1).graded] == [5, 5]
    told = {name: (tmp_path / "out" / "submissions" / name / "told.txt").read_text() for name in ("ann", "bob")}
    assert sorted(told.values()) == ["False", "True"]


def test_are_bob_and_a_file_named_like_bobs_results_folder_both_graded(tmp_path):
    """(issue 34.6: ``bob-<hash>.py`` beside ``Bob.py`` ended the run)"""
    from attnlab.grade.report import folder_name

    given = tmp_path / "given"
    given.mkdir()
    (given / "Bob.py").write_text(FULL)
    (given / f"{folder_name('Bob')}.py").write_text(PARTIAL)
    result = run(tmp_path / "out", given)
    assert {g.submission: g.score for g in result.graded} == {"Bob": 5, folder_name("Bob"): 4}
    assert len({g.results.parent for g in result.graded}) == 2 and result.exit_code == 0


def _roster(tmp_path, points):
    roster = tmp_path / "roster.csv"
    roster.write_text(CANVAS_ROSTER.replace("    Points Possible,,,,,10,5,", f"    Points Possible,,,,,10,{points},"))
    return roster


def test_is_a_roster_worth_other_points_refused_before_grading_with_the_uploads_words(tmp_path):
    args = ["grade", str(canvas_download(tmp_path)), "--out", str(tmp_path / "out")]
    result = CliRunner().invoke(cli.main, [*args, "--roster", str(_roster(tmp_path, 100))], catch_exceptions=False)
    text = " ".join(result.output.split())
    assert result.exit_code == 1 and not (tmp_path / "out").exists()
    assert "is worth 100 points in Canvas but the autograder's total is" in text and "--scale" in text


def test_does_scale_fill_the_import_with_totals_scaled_to_the_rosters_points(tmp_path):
    result = run(tmp_path / "out", canvas_download(tmp_path), roster=_roster(tmp_path, 100), scale=True)
    imported = list(csv.reader(open(tmp_path / "out" / "canvas_import.csv", encoding="utf-8")))
    assert imported[1][-1] == "100"  # Points Possible
    assert [(r[0], r[-1]) for r in imported[2:]] == [
        ("Doe, Jane", "100"),
        ("Smith, Bob", "80"),
        ("Lee, Ann", ""),
        ("Kim, Noh", ""),
    ]
    assert grades(tmp_path / "out")["doejane_4001"]["total"] == "5"  # grades.csv keeps the autograder's points
    assert result.exit_code == batch.NEEDS_HUMAN


def test_is_an_unreadable_submission_left_out_of_the_class_statistics(tmp_path):
    result = run(tmp_path / "out", canvas_download(tmp_path))
    text = " ".join(" ".join(batch.summary(result, [("calls", 5.0)])).split())
    assert "mean 4.50" in text and "(2 with a total)" in text  # Ann's unreadable notebook is no 0 in the mean


BROKEN = {
    "syntax.py": "def softmax(x):\n    return x +\n",
    "empty.py": "",
    "unrelated.py": "def fizzbuzz(n):\n    return n\n",
}


def test_is_each_upload_that_cannot_be_the_assignment_a_problem_not_a_silent_zero(tmp_path):
    """(issue 35.3) Graded with the course's own tests, whose solution says what the assignment defines."""
    from attnlab.quiz.notebook import notebook
    from attnlab.quiz import bank

    given = tmp_path / "given"
    given.mkdir()
    for name, text in BROKEN.items():
        (given / name).write_text(text)
    import nbformat

    quiz = notebook(list(bank.load().values()), answers={"pe-dim0": "sin(pos)", "pe-dim1": "cos(pos)"})
    (given / "quizzed.ipynb").write_text(nbformat.writes(quiz))
    roster = tmp_path / "roster.csv"
    roster.write_text(
        "Student,ID,SIS Login ID\nSyn Tax,1,syntax\nEm Pty,2,empty\nUn Related,3,unrelated\nQu Iz,4,quizzed\n"
    )
    result = main(submissions=[given], out=tmp_path / "out", roster=roster, progress=False)
    rows = grades(tmp_path / "out")
    assert "does not compile (SyntaxError on line 2" in rows["syntax"]["problem"]
    assert "is empty" in rows["empty"]["problem"]
    assert "defines none of the assignment's functions" in rows["unrelated"]["problem"]
    assert "looks like the quiz notebook" in rows["quizzed"]["problem"]
    assert len(result.problems) == 4 and result.exit_code == batch.NEEDS_HUMAN
    imported = list(csv.reader(open(tmp_path / "out" / "canvas_import.csv", encoding="utf-8")))
    assert [r[-1] for r in imported[2:]] == ["", "", "", ""]
    assert "moodle_import.csv" in result.not_written


def test_is_a_moodle_download_graded_into_moodles_grading_worksheet(tmp_path):
    from layouts import moodle_download

    result = run(tmp_path / "out", moodle_download(tmp_path))
    rows = list(csv.DictReader(open(tmp_path / "out" / "moodle_import.csv", encoding="utf-8")))
    assert sorted((r["Identifier"], r["Full name"], r["Grade"]) for r in rows) == [
        ("Participant 123456", "Jane Doe", "5"),
        ("Participant 123457", "Rémi Ångström", "4"),
    ]
    assert "report.pdf" in grades(tmp_path / "out")["Bo Li_123458"]["problem"]
    assert result.exit_code == batch.NEEDS_HUMAN  # Bo handed in only a PDF


def test_is_an_upload_defining_an_assignment_function_anywhere_graded_not_a_problem(tmp_path):
    """A function defined only under an ``if``, or in a notebook's cell after one that does not
    compile, still makes the file this assignment's code: graded, whatever it scores."""
    import nbformat

    given = tmp_path / "given"
    given.mkdir()
    (given / "guarded.py").write_text("if True:\n    def softmax(x):\n        return x\n")
    cells = [nbformat.v4.new_code_cell("x = (\n"), nbformat.v4.new_code_cell("def causal_mask(n):\n    return n\n")]
    (given / "later.ipynb").write_text(nbformat.writes(nbformat.v4.new_notebook(cells=cells)))
    main(submissions=[given], out=tmp_path / "out", progress=False)
    rows = grades(tmp_path / "out")
    assert {k: (r["status"], r["problem"]) for k, r in rows.items()} == {
        "guarded": ("graded", ""),
        "later": ("graded", ""),
    }


def test_does_the_summary_say_why_a_canvas_download_has_no_moodle_import(tmp_path):
    result = run(tmp_path / "out", canvas_download(tmp_path))
    assert not (tmp_path / "out" / "moodle_import.csv").exists()
    text = " ".join(" ".join(batch.summary(result, [("calls", 5.0)])).split())
    assert "[bold]Not written[/] moodle_import.csv: no graded student has an email or a student number" in text
    # where the numbers come from, true with or without a roster (one without the column was told
    # "give --roster", given already)
    assert "a --roster whose SIS User ID column holds them" in text


def test_does_any_failure_while_preparing_one_submission_cost_only_that_one(tmp_path, monkeypatch):
    """(issue 34.6: intake never stops the run, whatever it meets)"""
    from attnlab.grade import asked

    real = asked.Asked.problem

    def failing(self, path):
        if path.stem == "carol":
            raise RecursionError("planted")
        return real(self, path)

    monkeypatch.setattr(asked.Asked, "problem", failing)
    given = tmp_path / "given"
    given.mkdir()
    (given / "carol.py").write_text(FULL)
    (given / "dave.py").write_text(FULL)
    result = run(tmp_path / "out", given)
    rows = grades(tmp_path / "out")
    assert rows["dave"]["total"] == "5" and rows["dave"]["status"] == "graded"
    assert "RecursionError: planted" in rows["carol"]["problem"] and result.exit_code == batch.NEEDS_HUMAN


@pytest.mark.skipif(not (os.geteuid() == 0 and can_refuse_userns()), reason="as root: " + WHY_NOT_WITHOUT_USERNS)
def test_does_a_worker_that_fell_back_to_a_weaker_isolation_say_so(tmp_path, monkeypatch):
    """As root this machine offers sandboxes with namespaces; a worker whose namespaces are refused
    (``without_userns.py``) falls back to Landlock. Does the run record say which mode each worker
    had, and does the summary warn?"""
    monkeypatch.setattr(batch, "WORKER", [sys.executable, str(WITHOUT_USERNS), *batch.WORKER])
    given = tmp_path / "given"
    given.mkdir()
    (given / "full.py").write_text(FULL)
    result = run(tmp_path / "out", given, jobs=1)
    record = json.loads((tmp_path / "out" / "run.json").read_text())
    assert [w["mode"] for w in record["workers"]] == ["landlock"]
    assert record["strongest_offered"] == "root"
    assert "landlock" in record["warning"]
    assert "WARNING" in " ".join(batch.summary(result, [("calls", 5)]))
    assert grades(tmp_path / "out")["full"]["total"] == "5"


def test_does_a_run_at_full_strength_record_its_mode_without_a_warning(tmp_path):
    given = tmp_path / "given"
    given.mkdir()
    (given / "full.py").write_text(FULL)
    result = run(tmp_path / "out", given, jobs=1)
    record = json.loads((tmp_path / "out" / "run.json").read_text())
    assert [w["mode"] for w in record["workers"]] == [record["strongest_offered"]]
    assert record["warning"] is None
    assert "WARNING" not in " ".join(batch.summary(result, [("calls", 5)]))


def test_is_a_difference_between_workers_a_warning():
    """Two workers whose zygotes each found their own mode the strongest on offer still differ:
    one of them got less than the machine gives."""
    from attnlab.grade.runrecord import Isolation, warning

    same = [Isolation(1, "userns", "userns", ""), Isolation(2, "userns", "userns", "")]
    mixed = [Isolation(1, "userns", "userns", ""), Isolation(2, "landlock", "landlock", "")]
    assert warning(same) == ""
    assert "landlock (1 worker(s))" in warning(mixed) and "offers userns" in warning(mixed)


def test_is_a_run_with_no_isolation_at_all_a_warning_though_nothing_better_is_offered():
    """A machine with neither namespaces nor Landlock 3 offers only "none": no worker fell back, yet
    the run is weaker than grading should be. Does the warning of its record and summary say so?"""
    from attnlab.grade.runrecord import Isolation, warning

    bare = [Isolation(1, "none", "none", ""), Isolation(2, "none", "none", "")]
    assert "not isolated" in warning(bare) and "process limits only" in warning(bare)


def test_is_each_row_of_results_json_on_a_line_of_its_own(tmp_path):
    """results.json is written without json's slow pretty-printer, yet stays readable: can an
    instructor find each test case (and diff two runs) by its line?"""
    given = tmp_path / "given"
    given.mkdir()
    (given / "partial.py").write_text(PARTIAL)
    run(tmp_path / "out", given)
    text = next((tmp_path / "out" / "submissions").glob("*/results.json")).read_text()
    data = json.loads(text)
    one_line = []
    for line in text.splitlines():
        try:
            one_line.append(json.loads(line.strip().rstrip(",")))
        except ValueError:
            continue
    assert data["tests"] and all(row in one_line for row in data["tests"])


def test_may_every_worker_of_a_run_import_what_sandbox_yaml_allows(tmp_path):
    """The batch reads the assignment's sandbox.yaml once and hands it to its workers: does a
    submission that imports a package only sandbox.yaml allows still score what its twin scores,
    on each of two workers, and lose its points where sandbox.yaml allows nothing more?"""
    honest = (ENGINE / "submissions" / "honest_score_full.py").read_text()
    given = tmp_path / "given"
    given.mkdir()
    for name in ("ann", "bob", "cy", "dee"):
        (given / f"{name}.py").write_text("import matplotlib\n" + honest)
    kit = tmp_path / "kit"
    shutil.copytree(ENGINE / "tests", kit / "tests")
    (kit / "sandbox.yaml").write_text("packages: [numpy, matplotlib]\n")
    main(submissions=[given], out=tmp_path / "allowed", tests_dir=kit / "tests", jobs=2, progress=False)
    (kit / "sandbox.yaml").write_text("packages: [numpy]\n")
    main(submissions=[given], out=tmp_path / "refused", tests_dir=kit / "tests", jobs=2, progress=False)
    allowed, refused = grades(tmp_path / "allowed"), grades(tmp_path / "refused")
    assert {r["total"] for r in allowed.values()} == {"5"}
    assert {r["total"] for r in refused.values()} == {"0"}


def test_does_a_test_file_that_cannot_be_imported_still_stop_the_run_with_its_error(tmp_path):
    """The batch reads the questions' names and points from the test files' text and leaves running
    them to its workers: does a test file that imports a missing module still stop the run with that
    module's name, as when the batch itself imported the files?"""
    tests = tmp_path / "tests"
    shutil.copytree(ENGINE / "tests", tests)
    first = sorted(tests.glob("*.py"))[0]
    first.write_text("import no_such_module_for_attnlab\n" + first.read_text())
    given = sorted((ENGINE / "submissions").iterdir())[0]
    # (a BadTestFile: said in one line naming the file, the instructor's to fix, never a traceback)
    with pytest.raises(testfiles.BadTestFile, match="no_such_module_for_attnlab"):
        main(submissions=[given], out=tmp_path / "out", tests_dir=tests, progress=False)


def test_is_a_student_two_submissions_claim_in_no_import_file_and_named_in_the_summary(tmp_path):
    """(numbers5 finding 1) jdoe.py and 4001.py are both Jane: Canvas and Moodle get no total of hers."""
    given = tmp_path / "given"
    given.mkdir()
    (given / "jdoe.py").write_text(FULL)
    (given / "4001.py").write_text(PARTIAL)
    (given / "bsmith.py").write_text(PARTIAL)
    roster = tmp_path / "roster.csv"
    roster.write_text(CANVAS_ROSTER)
    result = run(tmp_path / "out", given, roster=roster)
    moodle_rows = list(csv.reader(open(tmp_path / "out" / "moodle_import.csv", encoding="utf-8")))
    assert [r[1] for r in moodle_rows[1:]] == ["S2"]
    imported = list(csv.reader(open(tmp_path / "out" / "canvas_import.csv", encoding="utf-8")))
    assert {r[0]: r[-1] for r in imported[2:]}["Doe, Jane"] == ""
    text = " ".join(" ".join(batch.summary(result, [("calls", 5.0)])).split())
    assert "Doe, Jane (S1) is claimed by several submissions[/]: 4001, jdoe" in text
    assert "moodle_import.csv" in text.split("claimed by several submissions")[1]
    assert result.exit_code == batch.NEEDS_HUMAN


def test_is_an_earlier_runs_canvas_import_gone_after_a_run_without_a_roster(tmp_path):
    """(numbers5 finding 3) the first run's canvas_import.csv (Jane 5) must not stay beside the
    second run's grades.csv (Jane 4), which no roster turned into an import."""
    given = tmp_path / "given"
    given.mkdir()
    (given / "jdoe.py").write_text(FULL)
    roster = tmp_path / "roster.csv"
    roster.write_text(CANVAS_ROSTER)
    run(tmp_path / "out", given, roster=roster)
    assert (tmp_path / "out" / "canvas_import.csv").exists()
    (given / "jdoe.py").write_text(PARTIAL)
    second = run(tmp_path / "out", given)
    assert grades(tmp_path / "out")["jdoe"]["total"] == "4"
    assert not (tmp_path / "out" / "canvas_import.csv").exists()
    assert tmp_path / "out" / "canvas_import.csv" not in second.written
