"""Writing a file so that readers see the old file or the whole new one, never a part of it.

Standard library only: the quiz's Gradescope package ships a copy of this module (see
``attnlab.quiz.notebook.SHARED``).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path


def write_atomic(path: Path, data: str | bytes, *, mode: int | None = None) -> None:
    """Write ``data`` (text as UTF-8) to ``path``, whose folder exists, with permissions ``mode``
    (else mkstemp's private 0o600)."""
    path = Path(path)
    # the name is cut so that the temporary name stays within the file system's limit
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name[:200]}.")
    try:
        if mode is not None:
            os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as f:
            f.write(data.encode("utf-8") if isinstance(data, str) else data)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


@contextlib.contextmanager
def replacing(target: Path) -> Iterator[Path]:
    """A path beside ``target`` for a writer that needs a file name (a zip, a figure): it replaces
    ``target`` when the block ends and is removed if the block fails, leaving the old ``target``."""
    target = Path(target)
    tmp = target.with_name(f".{target.name}.partial")
    try:
        yield tmp
        os.replace(tmp, target)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
