"""Atomic writes: a reader sees the old file or the whole new one, and a failure leaves the old one."""

import os
import stat

import pytest

from attnlab import atomic


class Boom(Exception):
    pass


def test_does_a_write_replace_the_file_whole_with_the_mode_asked_for(tmp_path):
    """Does write_atomic replace the file's content (text as UTF-8, bytes as they are) and set its mode?"""
    path = tmp_path / "results.json"
    path.write_text("old")
    atomic.write_atomic(path, "naïve", mode=0o640)
    assert path.read_bytes() == "naïve".encode() and stat.S_IMODE(path.stat().st_mode) == 0o640
    atomic.write_atomic(path, b"\x00\x01")
    assert path.read_bytes() == b"\x00\x01" and os.listdir(tmp_path) == ["results.json"]


def test_does_a_failed_write_leave_the_old_file_and_no_temporary(tmp_path):
    """When the data cannot be written, are the old file and nothing else left?"""
    path = tmp_path / "grades.csv"
    path.write_text("old")
    with pytest.raises(TypeError):
        atomic.write_atomic(path, 42)  # type: ignore[arg-type]
    assert path.read_text() == "old" and os.listdir(tmp_path) == ["grades.csv"]


def test_does_a_failed_replacing_block_leave_the_old_file_and_no_partial(tmp_path):
    """Is the partial file removed, and the target kept, when the block that writes it fails?"""
    target = tmp_path / "autograder.zip"
    target.write_text("old")
    with pytest.raises(Boom), atomic.replacing(target) as tmp:
        tmp.write_text("half")
        raise Boom
    assert target.read_text() == "old" and os.listdir(tmp_path) == ["autograder.zip"]
    with atomic.replacing(target) as tmp:
        tmp.write_text("new")
    assert target.read_text() == "new" and os.listdir(tmp_path) == ["autograder.zip"]
