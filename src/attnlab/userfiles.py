"""Reading a file that a user names (a submission to check, a roster): a regular file only, and
no more of it than a limit. Opening a named pipe for reading waits for a writer that may never come,
and a device such as /dev/zero never ends: either would hang the command or fill the memory."""

from __future__ import annotations

import os
import stat
from pathlib import Path


class NotAFile(ValueError):
    """``path`` is not a regular file of at most the limit; the message says which, in one line."""


def read_bytes(path: Path, *, limit: int) -> bytes:
    """The bytes of ``path`` (links followed) when it is a regular file of at most ``limit`` bytes."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)  # a pipe opens without a writer
    except OSError as e:
        raise NotAFile(f"{path} cannot be read: {e.strerror or e}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotAFile(f"{path} is not a regular file (a pipe, a device or a folder)")
        if info.st_size > limit:
            raise NotAFile(f"{path} is {info.st_size / 2**20:.0f} MB, over the {limit / 2**20:.0f} MB a file may be")
        chunks, left = [], limit + 1
        while left > 0 and (chunk := os.read(fd, min(left, 1 << 20))):
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        if len(data) > limit:  # it grew while it was read
            raise NotAFile(f"{path} is over the {limit / 2**20:.0f} MB a file may be")
        return data
    except OSError as e:
        raise NotAFile(f"{path} cannot be read: {e.strerror or e}") from None
    finally:
        os.close(fd)
