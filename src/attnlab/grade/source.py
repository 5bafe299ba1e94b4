"""A submission as the code cells to execute, in order.

Notebooks are read with nbformat and run cell by cell (an erroring cell stops only itself, as in
otter); cells tagged ``otter_ignore`` are skipped, as otter does. A ``.py`` file is one cell, as otter
runs it. The cells are passed on as written: the sandbox turns IPython syntax (``%magic``,
``!shell``, ``x?``) into ``get_ipython()`` calls under its own limits (``sandbox.python_source``),
since a crafted source can make that conversion slow. No Jupyter kernel or kernelspec is involved.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def cells(path: Path) -> list[str]:
    """The code to execute, one string per cell, as written."""
    path = Path(path)
    if path.suffix != ".ipynb":
        return [path.read_text(encoding="utf-8", errors="replace")]
    nb = json.loads(path.read_bytes().decode("utf-8-sig"))
    if not (isinstance(nb, dict) and nb.get("nbformat") == 4 and isinstance(nb.get("cells"), list)):
        # older formats need converting; nbformat (a third of a second to import) does that
        import nbformat

        nb = nbformat.read(path, as_version=4)
    return [_source(c) for c in nb["cells"] if _executed(c)]


SKIP_TAG = "otter_ignore"  # otter's tag for a cell its runner skips


def _executed(cell: Any) -> bool:
    return isinstance(cell, dict) and cell.get("cell_type") == "code" and not skipped(cell)


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
