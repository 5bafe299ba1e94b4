"""A file a user names is read only when it is a regular file within its limit: a pipe would wait
for a writer forever, a device would never end."""

import os

import pytest

from attnlab import userfiles


def test_is_a_regular_file_read_whole(tmp_path):
    path = tmp_path / "a.py"
    path.write_bytes(b"x = 1\n" * 1000)
    assert userfiles.read_bytes(path, limit=6000) == b"x = 1\n" * 1000


def test_is_a_named_pipe_refused_at_once_rather_than_waited_on(tmp_path):
    path = tmp_path / "sub.py"
    os.mkfifo(path)
    with pytest.raises(userfiles.NotAFile, match="not a regular file"):
        userfiles.read_bytes(path, limit=1 << 20)


def test_is_a_link_to_a_device_that_never_ends_refused(tmp_path):
    path = tmp_path / "zero.py"
    path.symlink_to("/dev/zero")
    with pytest.raises(userfiles.NotAFile, match="not a regular file"):
        userfiles.read_bytes(path, limit=1 << 20)


def test_is_a_file_over_the_limit_refused_with_its_size(tmp_path):
    path = tmp_path / "big.py"
    path.write_bytes(b"#" * (3 << 20))
    with pytest.raises(userfiles.NotAFile, match="3 MB, over the 2 MB"):
        userfiles.read_bytes(path, limit=2 << 20)


def test_is_a_missing_file_said_in_one_line(tmp_path):
    with pytest.raises(userfiles.NotAFile, match="cannot be read: No such file"):
        userfiles.read_bytes(tmp_path / "gone.py", limit=1)
