"""A submission as the code cells to execute, in order.

Notebooks are read with nbformat and run cell by cell (an erroring cell stops only itself, as in
otter); cells tagged ``otter_ignore`` are skipped, as otter does. A ``.py`` file is one cell, as otter
runs it. The cells are passed on as written: the sandbox turns IPython syntax (``%magic``,
``!shell``, ``x?``) into ``get_ipython()`` calls under its own limits (``sandbox.python_source``),
since a crafted source can make that conversion slow. No Jupyter kernel or kernelspec is involved.
"""

from __future__ import annotations

from pathlib import Path


def cells(path: Path) -> list[str]:
    """The code to execute, one string per cell, as written."""
    path = Path(path)
    if path.suffix == ".ipynb":
        import nbformat

        nb = nbformat.read(path, as_version=4)
        sources = [
            c.source
            for c in nb.cells
            if c.cell_type == "code"
            and "otter_ignore" not in c.get("metadata", {}).get("tags", [])
            and not c.get("metadata", {}).get("otter", {}).get("ignore", False)
        ]
    else:
        sources = [path.read_text(encoding="utf-8", errors="replace")]
    return sources
