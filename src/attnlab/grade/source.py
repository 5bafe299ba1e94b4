"""A submission as the code cells to execute, in order.

Notebooks are read with nbformat and run cell by cell (an erroring cell stops only itself, as in
otter); cells tagged ``otter_ignore`` are skipped, as otter does, but keep their place as empty
cells: the student's notebook shows them, so "code cell n" in a message counts every code cell. A
``.py`` file is one cell, as otter runs it. The cells are passed on as written: the sandbox turns IPython syntax (``%magic``,
``!shell``, ``x?``) into ``get_ipython()`` calls under its own limits (``sandbox.python_source``),
since a crafted source can make that conversion slow, and a notebook's run starts with
``NOTEBOOK_PRELUDE``. No Jupyter kernel or kernelspec is involved.
"""

from __future__ import annotations

import io
import json
import tokenize
from pathlib import Path
from typing import Any

from .. import userfiles


MAX_BYTES = 100 * 2**20  # a notebook's outputs count too (``discover``'s limit)

# Run before a notebook's cells, in its sandbox: what IPython puts in every notebook's builtins and
# the sandbox's stand-in shell does not. ``display`` prints its objects, as IPython's own does where
# there is no notebook to show them in (the output is the instructor's log).
NOTEBOOK_PRELUDE = """\
import builtins as _builtins
_builtins.display = lambda *objs, **options: print(*objs)
del _builtins
"""


def cells(path: Path) -> list[str]:
    """The code to execute, one string per code cell, as written (a skipped cell's is empty).
    Raises ``userfiles.NotAFile`` for what is not a regular file within ``MAX_BYTES``, and
    ValueError (or RecursionError, for JSON nested too deep) for a notebook that cannot be read."""
    path = Path(path)
    data = userfiles.read_bytes(path, limit=MAX_BYTES)
    if path.suffix != ".ipynb":
        return [_python_text(data)]
    nb = json.loads(data.decode("utf-8-sig"))
    if not (isinstance(nb, dict) and nb.get("nbformat") == 4 and isinstance(nb.get("cells"), list)):
        # older formats need converting; nbformat (a third of a second to import) does that
        import nbformat

        nb = nbformat.reads(data.decode("utf-8-sig"), as_version=4)
    return ["" if skipped(c) else _source(c) for c in nb["cells"] if _code(c)]


def _python_text(data: bytes) -> str:
    """A ``.py`` file's text as Python reads it: a UTF-8 byte-order mark (as Windows editors write
    it) dropped, a ``# coding:`` line obeyed; bytes that do not decode replaced."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError:  # an unknown declared encoding: the sandbox's compile says what is wrong
        encoding = "utf-8"
    return data.decode(encoding, errors="replace")


SKIP_TAG = "otter_ignore"  # otter's tag for a cell its runner skips


def _code(cell: Any) -> bool:
    return isinstance(cell, dict) and cell.get("cell_type") == "code"


def skipped(cell: dict) -> bool:
    """A cell otter's runner skips: tagged ``otter_ignore``, or with ``metadata.otter.ignore`` set."""
    meta = cell.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    tags, otter = meta.get("tags"), meta.get("otter")
    return (isinstance(tags, list) and SKIP_TAG in tags) or (isinstance(otter, dict) and bool(otter.get("ignore")))


def _source(cell: dict) -> str:
    # nbformat 4 stores a cell's source as one string or as a list of lines
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else str(src)
