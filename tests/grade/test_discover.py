"""Finding submissions and their students in the layouts LMSs hand over (nothing is graded here)."""

import json
import zipfile

import pytest

from attnlab import paths
from attnlab.grade.discover import Student, discover, unreadable

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
    assert subs["submission_1001"].students == (Student("Jane Doe", "jane@example.edu", "4001"),)
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


def test_are_two_submissions_with_one_name_refused(tmp_path):
    (tmp_path / "a.py").write_text("")
    (tmp_path / "a.ipynb").write_text("{}")
    with pytest.raises(ValueError, match="two submissions are named 'a'"):
        found(tmp_path, tmp_path)


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
