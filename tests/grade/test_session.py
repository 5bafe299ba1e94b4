"""The trusted side's own pieces of a sandbox's life (``session.py``) that need no sandbox."""

import os

from attnlab.grade.session import Output


def test_does_the_log_hold_everything_a_sandbox_printed_before_it_is_read():
    """A sandbox's prints are in its pipe before its last reply; the log taken right after must hold
    them all, however late the thread that drains the pipe gets to run."""
    for _ in range(50):
        output = Output()
        read, write = os.pipe()
        output.drain(read)
        os.write(write, b"x" * 60_000)
        assert output.text() == "x" * 60_000
        os.close(write)


def test_does_the_log_keep_the_first_bytes_and_say_how_many_it_left_out():
    output = Output(cap=10)
    read, write = os.pipe()
    output.drain(read)
    os.write(write, b"0123456789abcdef")
    os.close(write)
    text = output.text()
    assert text.startswith("0123456789") and "abcdef" not in text and " 6 more bytes" in text
