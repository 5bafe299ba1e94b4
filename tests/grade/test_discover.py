"""Finding submissions and their students in the layouts LMSs hand over (nothing is graded here)."""

import errno
import json
import os
import zipfile

import pytest

from attnlab import paths
from attnlab.grade.discover import discover, unreadable
from attnlab.lms.identity import Student

from layouts import FULL, canvas_download, gradescope_export


def found(tmp_path, *given, release=None):
    scratch = tmp_path / "scratch"
    scratch.mkdir(exist_ok=True)
    return discover(list(given), unpack=scratch, release=release)


def by_key(result):
    return {s.key: s for s in result.submissions}


def test_does_a_gradescope_export_give_each_submission_its_submitters(tmp_path):
    subs = by_key(found(tmp_path, gradescope_export(tmp_path)))
    assert set(subs) == {"submission_1001", "submission_1002"}
    assert subs["submission_1001"].students == (Student("Jane Doe", "jane@example.edu", "4001", number="4001"),)
    assert subs["submission_1001"].file.name == "pe_attention.py"
    group = subs["submission_1002"]
    assert [s.name for s in group.students] == ["Rémi Ångström", "Bo Li"]
    assert group.file.name == "pe_attention.py" and group.layout == "gradescope"


def test_is_a_zipped_gradescope_export_read_like_the_folder(tmp_path):
    folder = gradescope_export(tmp_path / "src")
    archive = tmp_path / "submissions.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for p in folder.rglob("*"):
            if p.is_file():
                zf.write(p, p.relative_to(folder.parent))
    subs = by_key(found(tmp_path, archive))
    assert subs["submission_1001"].students[0].email == "jane@example.edu"
    assert subs["submission_1002"].file is not None


def test_does_a_canvas_download_give_one_submission_per_user_id(tmp_path):
    result = found(tmp_path, canvas_download(tmp_path))
    subs = by_key(result)
    assert set(subs) == {"doejane_4001", "smithbob_4002", "leeann_4003"}
    assert (subs["doejane_4001"].students[0].id, subs["doejane_4001"].students[0].canvas_id) == ("4001", "4001")
    assert subs["smithbob_4002"].notes == ["late (Canvas)"]
    assert {s.layout for s in subs.values()} == {"canvas"}
    assert any(i.path.endswith("readme.txt") and "not a .py" in i.why for i in result.ignored)


def test_are_a_flat_folder_and_one_folder_per_student_named_as_given(tmp_path):
    (tmp_path / "given").mkdir()
    (tmp_path / "given" / "ada.py").write_text(FULL)
    (tmp_path / "given" / "bob").mkdir()
    (tmp_path / "given" / "bob" / "deep" / "er").mkdir(parents=True)
    (tmp_path / "given" / "bob" / "deep" / "er" / "pe_attention.py").write_text(FULL)
    (tmp_path / "given" / "notes.pdf").write_bytes(b"%PDF")
    (tmp_path / "given" / ".DS_Store").write_bytes(b"\0")
    result = found(tmp_path, tmp_path / "given")
    subs = by_key(result)
    assert subs["ada"].layout == "file" and subs["bob"].layout == "folder"
    assert subs["bob"].file.name == "pe_attention.py"
    assert {i.why for i in result.ignored} == {"not a .py, .ipynb or .zip file", "hidden or system file"}


def test_is_a_zip_in_a_folder_one_students_submission(tmp_path):
    (tmp_path / "given").mkdir()
    with zipfile.ZipFile(tmp_path / "given" / "cy.zip", "w") as zf:
        zf.writestr("pe_attention/pe_attention.py", FULL)
        zf.writestr("../escape.py", "x = 1")
        zf.writestr("/abs.py", "x = 1")
    result = found(tmp_path, tmp_path / "given")
    assert by_key(result)["cy"].file.read_text() == FULL
    assert sum(i.why == "a path outside the zip" for i in result.ignored) == 2
    assert not (tmp_path / "escape.py").exists() and not list(tmp_path.rglob("escape.py"))


def test_is_the_notebook_graded_when_both_formats_were_submitted(tmp_path):
    folder = tmp_path / "given" / "dee"
    folder.mkdir(parents=True)
    (folder / "pe_attention.py").write_text(FULL)
    (folder / "pe_attention.ipynb").write_text(
        json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
    )
    result = found(tmp_path, tmp_path / "given")
    assert by_key(result)["dee"].file.suffix == ".ipynb"
    assert any("notebook beside it" in i.why for i in result.ignored)


def test_is_an_untouched_stub_set_aside_for_the_students_other_file(tmp_path):
    folder = tmp_path / "given" / "eve"
    (folder / "tests").mkdir(parents=True)
    release = paths.release_dir()
    (folder / "pe_attention.ipynb").write_bytes((release / "pe_attention.ipynb").read_bytes())
    (folder / "tests" / "softmax.py").write_bytes((release / "tests" / "softmax.py").read_bytes())
    (folder / "pe_attention.py").write_text(FULL)
    sub = by_key(found(tmp_path, tmp_path / "given", release=release))["eve"]
    assert sub.file.name == "pe_attention.py" and not sub.problem


def test_is_a_lone_untouched_stub_still_graded(tmp_path):
    folder = tmp_path / "given" / "fay"
    folder.mkdir(parents=True)
    (folder / "pe_attention.py").write_bytes((paths.release_dir() / "pe_attention.py").read_bytes())
    assert by_key(found(tmp_path, tmp_path / "given", release=paths.release_dir()))["fay"].file is not None


def test_is_a_student_folder_without_one_clear_file_a_problem(tmp_path):
    (tmp_path / "given" / "gus").mkdir(parents=True)
    (tmp_path / "given" / "gus" / "a.ipynb").write_text("{}")
    (tmp_path / "given" / "gus" / "b.ipynb").write_text("{}")
    (tmp_path / "given" / "hal").mkdir()
    (tmp_path / "given" / "hal" / "report.pdf").write_bytes(b"%PDF")
    subs = by_key(found(tmp_path, tmp_path / "given"))
    assert subs["gus"].file is None and "more than one notebook" in subs["gus"].problem
    assert subs["hal"].file is None and "no .ipynb or .py file" in subs["hal"].problem


def test_are_two_submissions_with_one_name_from_two_given_folders_each_a_problem(tmp_path):
    for folder in ("x", "y"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "a.py").write_text(folder)
    (tmp_path / "x" / "b.py").write_text(FULL)
    subs = found(tmp_path, tmp_path / "x", tmp_path / "y").submissions
    named_a = [s for s in subs if s.key != "b"]
    assert len(named_a) == 2 and len({s.key for s in named_a}) == 2
    assert all(s.file is None and "2 submissions are named 'a'" in s.problem for s in named_a)
    assert [s.file for s in subs if s.key == "b"] == [tmp_path / "x" / "b.py"]


def test_does_a_zip_holding_bob_py_named_beside_bob_py_cost_only_bob(tmp_path):
    """(issue 34.6: the whole run ended)"""
    with zipfile.ZipFile(tmp_path / "bob.zip", "w") as zf:
        zf.writestr("bob.py", FULL.replace("5", "6"))
    (tmp_path / "bob.py").write_text(FULL)
    (tmp_path / "eve.py").write_text(FULL)
    subs = found(tmp_path, tmp_path / "bob.zip", tmp_path / "bob.py", tmp_path / "eve.py").submissions
    assert [s.file for s in subs if s.key == "eve"] == [tmp_path / "eve.py"]
    bobs = [s for s in subs if s.key.startswith("bob")]
    assert len(bobs) == 2 and all(s.file is None and "named 'bob'" in s.problem for s in bobs)


DEEP = '{"cells": ' + "[" * 200_000 + "]" * 200_000 + "}"


def test_does_a_deep_notebook_beside_a_second_file_cost_only_its_student(tmp_path):
    """(issue 34.6: a RecursionError comparing it with the release ended the run)"""
    (tmp_path / "given").mkdir()
    (tmp_path / "given" / "carol.ipynb").write_text(DEEP)
    (tmp_path / "given" / "carol.py").write_text(FULL)
    (tmp_path / "given" / "dave.py").write_text(FULL)
    subs = by_key(found(tmp_path, tmp_path / "given", release=paths.release_dir()))
    assert subs["dave"].file == tmp_path / "given" / "dave.py"
    assert subs["carol"].file == tmp_path / "given" / "carol.ipynb"  # graded as the notebook: unreadable there
    assert unreadable(subs["carol"].file) == "not a notebook (JSON nested too deep)"


def test_does_a_deep_notebook_inside_a_zip_named_on_the_command_line_cost_only_that_zip(tmp_path):
    with zipfile.ZipFile(tmp_path / "carol.zip", "w") as zf:
        zf.writestr("carol/pe_attention.ipynb", DEEP)
        zf.writestr("carol/extra.py", FULL)
    (tmp_path / "dave.py").write_text(FULL)
    subs = by_key(found(tmp_path, tmp_path / "carol.zip", tmp_path / "dave.py", release=paths.release_dir()))
    assert subs["dave"].file == tmp_path / "dave.py"
    assert subs["carol"].file is not None and subs["carol"].file.name == "pe_attention.ipynb"


def test_is_any_failure_while_searching_one_students_files_only_that_students_problem(tmp_path, monkeypatch):
    from attnlab.grade import discover as module

    real = module._fingerprint

    def failing(path):
        if "carol" in str(path):
            raise MemoryError("planted")
        return real(path)

    monkeypatch.setattr(module, "_fingerprint", failing)
    (tmp_path / "given").mkdir()
    for name in ("carol", "dave"):
        (tmp_path / "given" / f"{name}.py").write_text(FULL)
        (tmp_path / "given" / f"{name}.ipynb").write_text("{}")
    subs = by_key(found(tmp_path, tmp_path / "given"))
    assert subs["dave"].file == tmp_path / "given" / "dave.ipynb"
    assert subs["carol"].file is None and "MemoryError: planted" in subs["carol"].problem
    with zipfile.ZipFile(tmp_path / "carol.zip", "w") as zf:  # named on the command line
        zf.writestr("carol/a.py", FULL)
        zf.writestr("carol/a.ipynb", "{}")
    subs = by_key(found(tmp_path, tmp_path / "carol.zip", tmp_path / "given" / "dave.py"))
    assert subs["dave"].file == tmp_path / "given" / "dave.py"
    assert subs["carol"].file is None and "MemoryError: planted" in subs["carol"].problem


def test_is_a_moodle_download_one_submission_per_participant_with_name_and_id(tmp_path):
    from layouts import moodle_download

    subs = by_key(found(tmp_path, moodle_download(tmp_path)))
    assert sorted(subs) == ["Bo Li_123458", "Jane Doe_123456", "Rémi Ångström_123457"]
    jane = subs["Jane Doe_123456"]
    assert jane.layout == "moodle" and jane.file.name == "pe_attention.py"
    assert jane.students == (Student(name="Jane Doe", id="123456", participant="123456"),)
    assert subs["Rémi Ångström_123457"].file.name == "attention.py"
    assert subs["Bo Li_123458"].file is None and "report.pdf" in subs["Bo Li_123458"].problem


def test_is_a_canvas_student_with_only_a_pdf_a_submission_with_that_problem(tmp_path):
    folder = canvas_download(tmp_path)
    (folder / "parkmin_4005_5550009_essay.pdf").write_bytes(b"%PDF-1.7")
    subs = by_key(found(tmp_path, folder))
    pdf_only = subs["parkmin_4005"]
    assert pdf_only.file is None and "only files that are not code (essay.pdf)" in pdf_only.problem
    assert pdf_only.students[0].canvas_id == "4005"


def test_are_a_students_py_and_ipynb_in_a_flat_folder_one_submission(tmp_path):
    (tmp_path / "given").mkdir()
    (tmp_path / "given" / "bob.py").write_text(FULL)
    (tmp_path / "given" / "bob.ipynb").write_bytes((paths.release_dir() / "pe_attention.ipynb").read_bytes())
    (tmp_path / "given" / "cy.py").write_text(FULL)
    result = found(tmp_path, tmp_path / "given")
    subs = by_key(result)
    assert set(subs) == {"bob", "cy"} and subs["bob"].file.name == "bob.ipynb" and not subs["bob"].problem
    assert any(i.path.endswith("bob.py") and "notebook beside it" in i.why for i in result.ignored)


def test_is_a_zip_named_on_the_command_line_its_students_own(tmp_path):
    for name in ("ann", "ben"):
        with zipfile.ZipFile(tmp_path / f"{name}.zip", "w") as zf:
            zf.writestr("pe_attention/pe_attention.py", FULL)
            zf.writestr("pe_attention/notes.txt", "mine")
    both = by_key(found(tmp_path, tmp_path / "ann.zip", tmp_path / "ben.zip"))
    assert set(both) == {"ann", "ben"} and both["ann"].file.read_text() == FULL
    assert both["ann"].layout == "zip" and both["ann"].students[0].login == "ann"
    assert set(by_key(found(tmp_path, tmp_path / "ben.zip"))) == {"ben"}


def test_does_a_folder_with_nothing_to_grade_say_what_it_ignored(tmp_path):
    (tmp_path / "given").mkdir()
    (tmp_path / "given" / "essay.docx").write_bytes(b"PK")
    with pytest.raises(FileNotFoundError, match="no .ipynb or .py submissions.*essay.docx"):
        found(tmp_path, tmp_path / "given")


def test_does_broken_gradescope_metadata_stop_before_grading(tmp_path):
    folder = gradescope_export(tmp_path)
    (folder / "submission_metadata.yml").write_text("submission_1: [unclosed")
    with pytest.raises(ValueError, match="submission_metadata.yml cannot be read"):
        found(tmp_path, folder)


@pytest.mark.parametrize(
    "name, data, reason",
    [
        ("nb.ipynb", b"not json at all", "not a notebook (not JSON"),
        ("nb.ipynb", b'{"cells": 3}', "without a list of cells"),
        ("zip.py", b"PK\x03\x04rest-of-a-zip", "a zip archive"),
        ("bin.py", b"x = 1\n\x00\x01\x02", "binary data"),
        ("latin.py", "x = 'café'\n".encode("latin-1"), "not UTF-8 text (byte 0xe9 on line 1)"),
    ],
)
def test_is_an_unreadable_submission_named_with_its_reason(tmp_path, name, data, reason):
    path = tmp_path / name
    path.write_bytes(data)
    assert reason in unreadable(path)


def test_are_readable_submissions_not_flagged(tmp_path):
    declared = tmp_path / "declared.py"
    declared.write_bytes("# -*- coding: latin-1 -*-\nx = 'café'\n".encode("latin-1"))
    plain = tmp_path / "plain.py"
    plain.write_text(FULL)
    notebook = paths.release_dir() / "pe_attention.ipynb"
    assert [unreadable(p) for p in (declared, plain, notebook)] == [None, None, None]


def test_is_an_oversized_zip_member_never_unpacked(tmp_path, monkeypatch):
    from attnlab.grade import discover as module

    monkeypatch.setattr(module, "MAX_FILE", 1000)
    (tmp_path / "given").mkdir()
    with zipfile.ZipFile(tmp_path / "given" / "big.zip", "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("pe_attention.py", "x = 0\n" * 10_000)  # compresses to far below the limit
    result = found(tmp_path, tmp_path / "given")
    assert by_key(result)["big"].file is None
    assert any("too large" in i.why for i in result.ignored)
    assert sum(p.stat().st_size for p in (tmp_path / "scratch").rglob("*") if p.is_file()) <= 1000


def test_does_a_canvas_name_with_accents_still_give_the_user_id(tmp_path):
    (tmp_path / "dl").mkdir()
    (tmp_path / "dl" / "ångströmrémi_LATE_4010_77_pe_attention.py").write_text(FULL)
    sub = by_key(found(tmp_path, tmp_path / "dl"))["ångströmrémi_4010"]
    assert sub.students[0].id == "4010" and sub.notes == ["late (Canvas)"]


def fifo(path):
    os.mkfifo(path)  # (nothing ever writes to it: reading it would wait for ever)
    return path


def test_is_a_fifo_named_like_a_zip_skipped_with_its_reason(tmp_path):
    (tmp_path / "given" / "alice").mkdir(parents=True)
    (tmp_path / "given" / "bob").mkdir()
    fifo(tmp_path / "given" / "alice" / "sub.zip")
    (tmp_path / "given" / "bob" / "pe_attention.py").write_text(FULL)
    result = found(tmp_path, tmp_path / "given")
    subs = by_key(result)
    assert subs["bob"].file is not None and subs["alice"].file is None
    assert "sub.zip: a FIFO (named pipe), not a regular file" in subs["alice"].problem


def test_are_fifos_in_a_flat_folder_listed_with_a_reason(tmp_path):
    (tmp_path / "given").mkdir()
    (tmp_path / "given" / "good.py").write_text(FULL)
    fifo(tmp_path / "given" / "sub.py")
    fifo(tmp_path / "given" / "dl.zip")
    result = found(tmp_path, tmp_path / "given")
    assert set(by_key(result)) == {"good"}
    assert {i.path.rsplit("/", 1)[1]: i.why for i in result.ignored} == {
        "sub.py": "a FIFO (named pipe), not a regular file",
        "dl.zip": "a FIFO (named pipe), not a regular file",
    }


def test_is_a_device_never_read_as_a_file():
    from attnlab.grade.discover import read_regular, reason

    with pytest.raises(OSError) as caught:
        read_regular(os.devnull)
    assert reason(caught.value) == "a device file, not a regular file"


def results_folder(folder):
    """What ``attnlab grade --out folder`` leaves there (its store holds alice's graded copy)."""
    (folder / "submissions" / "alice").mkdir(parents=True)
    (folder / "submissions" / "alice" / "alice.py").write_text(FULL)
    (folder / "submissions" / "alice" / "results.json").write_text("{}")
    (folder / "grades.csv").write_text("submission,total\nalice,5\n")
    (folder / "found.csv").write_text("path,submission\n")
    return folder


def test_is_the_results_folder_given_as_the_submissions_never_a_submission(tmp_path):
    given = tmp_path / "given"
    results_folder(given)
    (given / "alice.py").write_text(FULL)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    result = discover([given], unpack=scratch, exclude=given)
    assert set(by_key(result)) == {"alice"} and by_key(result)["alice"].file == given / "alice.py"
    assert any(i.path.endswith("/submissions") and "written by attnlab grade" in i.why for i in result.ignored)


def test_is_an_old_results_folder_among_the_submissions_never_a_submission(tmp_path):
    given = tmp_path / "given"
    given.mkdir()
    (given / "bob.py").write_text(FULL)
    results_folder(given / "old results")
    result = found(tmp_path, given)
    assert set(by_key(result)) == {"bob"}
    assert any(i.path.endswith("old results") and "results folder" in i.why for i in result.ignored)


@pytest.fixture
def unreadable_paths(monkeypatch):
    """Paths that raise PermissionError as they would for user nobody (the tests may run as root)."""
    denied: set[str] = set()

    def guard(real):
        def call(path, *args, **kwargs):
            if os.fspath(path) in denied:
                raise PermissionError(errno.EACCES, "Permission denied", os.fspath(path))
            return real(path, *args, **kwargs)

        return call

    for name in ("open", "listdir", "scandir"):
        monkeypatch.setattr(os, name, guard(getattr(os, name)))
    return denied


def test_is_an_unreadable_file_or_folder_a_students_problem_not_the_runs(tmp_path, unreadable_paths):
    given = tmp_path / "given"
    (given / "dan").mkdir(parents=True)
    (given / "dan" / "pe_attention.py").write_text(FULL)
    (given / "ann.py").write_text(FULL)
    (given / "cal.py").write_text(FULL)
    unreadable_paths.update({str(given / "ann.py"), str(given / "dan")})
    subs = by_key(found(tmp_path, given))
    assert subs["cal"].file is not None
    assert subs["ann"].file is None and "ann.py: cannot be read (Permission denied)" in subs["ann"].problem
    assert subs["dan"].file is None and "dan: cannot be read (Permission denied)" in subs["dan"].problem


@pytest.fixture
def greedy_zip(tmp_path, monkeypatch):
    """aaa.zip unpacking to more than the run's small limit (3000 bytes), beside three small zips."""
    from attnlab.grade import discover as module

    monkeypatch.setattr(module, "MAX_FILE", 900)
    monkeypatch.setattr(module, "MAX_UNPACKED", 3000)
    monkeypatch.setattr(module, "MAX_SHARE", 1000, raising=False)
    (tmp_path / "given").mkdir()
    with zipfile.ZipFile(tmp_path / "given" / "aaa.zip", "w", zipfile.ZIP_DEFLATED) as zf:
        for i in range(4):
            zf.writestr(f"small{i}.py", "#" * 899)
    for name in ("bob", "cat", "dee"):
        with zipfile.ZipFile(tmp_path / "given" / f"{name}.zip", "w") as zf:
            zf.writestr("pe_attention.py", "x = 1\n" * 100)
    return tmp_path / "given"


def test_does_one_students_zip_spend_only_its_own_share(tmp_path, greedy_zip):
    subs = by_key(found(tmp_path, greedy_zip))
    assert [k for k in ("bob", "cat", "dee") if subs[k].file is None] == []
    assert subs["aaa"].file is None and "aaa.zip: unpacks to more than 1000 bytes" in subs["aaa"].problem


def test_does_a_zip_named_on_the_command_line_spend_only_its_share(tmp_path, greedy_zip):
    subs = by_key(found(tmp_path, *sorted(greedy_zip.glob("*.zip"))))
    assert [k for k in ("bob", "cat", "dee") if subs[k].file is None] == []
    assert subs["aaa"].file is None and "unpacks to more than 750 bytes" in subs["aaa"].problem


def encrypted_zip(path):
    """A zip whose one member is marked encrypted (zipfile cannot write a password-protected zip)."""
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("pe_attention.py", FULL)
    data = bytearray(path.read_bytes())
    for signature, flags in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):  # the local and the central header
        data[data.index(signature) + flags] |= 0x1  # what a password-protected zip marks a member with
    path.write_bytes(bytes(data))


def test_does_an_encrypted_zips_reason_reach_the_submission(tmp_path):
    (tmp_path / "given").mkdir()
    encrypted_zip(tmp_path / "given" / "eve.zip")
    sub = by_key(found(tmp_path, tmp_path / "given"))["eve"]
    assert sub.file is None and "eve.zip:pe_attention.py: encrypted" in sub.problem


def test_is_an_encrypted_zip_named_on_the_command_line_a_problem_with_its_reason(tmp_path):
    (tmp_path / "given").mkdir()
    encrypted_zip(tmp_path / "given" / "eve.zip")
    (tmp_path / "ann.py").write_text(FULL)
    subs = by_key(found(tmp_path, tmp_path / "given" / "eve.zip", tmp_path / "ann.py"))
    assert subs["ann"].file is not None
    assert subs["eve"].file is None and "eve.zip:pe_attention.py: encrypted" in subs["eve"].problem


def test_does_a_stray_file_keep_a_canvas_download_canvas(tmp_path):
    folder = canvas_download(tmp_path)
    (folder / "pe_attention.py").write_text(FULL)
    result = found(tmp_path, folder)
    assert set(by_key(result)) == {"doejane_4001", "smithbob_4002", "leeann_4003"}
    assert {s.layout for s in result.submissions} == {"canvas"}
    assert any(i.path.endswith("/pe_attention.py") and "not named as Canvas" in i.why for i in result.ignored)


def test_is_a_py_too_large_to_be_code_refused_while_a_notebook_of_that_size_is_read(tmp_path, monkeypatch):
    """A .py over MAX_CODE would reach the sandbox as one message over the channel's limit, and the
    student would be blamed for breaking the protocol; a notebook's size is mostly its outputs."""
    from attnlab.grade import discover as module

    monkeypatch.setattr(module, "MAX_CODE", 1000)
    (tmp_path / "given").mkdir()
    (tmp_path / "given" / "ada.py").write_text("x = 0\n" * 1000)
    notebook = json.loads((paths.release_dir() / "pe_attention.ipynb").read_text())
    notebook["cells"][0]["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "y" * 5000}]
    (tmp_path / "given" / "bob.ipynb").write_text(json.dumps(notebook))
    result = found(tmp_path, tmp_path / "given")
    assert by_key(result)["ada"].file is None and by_key(result)["bob"].file is not None
    assert any("larger than 1000 bytes" in i.why for i in result.ignored)
