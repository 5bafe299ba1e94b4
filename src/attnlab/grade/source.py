"""A submission as the code cells to execute, in order.

Notebooks are read with nbformat and run cell by cell (an erroring cell stops only itself, as in
otter); cells tagged ``otter_ignore`` are skipped, as otter does. A ``.py`` file is one cell, as otter
runs it. IPython syntax (``%magic``, ``!shell``, ``x?``) becomes ``get_ipython()`` calls, which the
sandbox answers with a harmless stand-in: no Jupyter kernel or kernelspec is involved.
"""

from __future__ import annotations

from pathlib import Path


def cells(path: Path) -> list[str]:
    """The code to execute, one string per cell, with IPython syntax turned into Python."""
    path = Path(path)
    if path.suffix == ".ipynb":
        import nbformat

        nb = nbformat.read(path, as_version=4)
        sources = [
            c.source for c in nb.cells
            if c.cell_type == "code" and "otter_ignore" not in c.get("metadata", {}).get("tags", [])
            and not c.get("metadata", {}).get("otter", {}).get("ignore", False)
        ]
    else:
        sources = [path.read_text(encoding="utf-8", errors="replace")]
    return [_python(s) for s in sources]


def _python(source: str) -> str:
    if not any(ch in source for ch in "%!?"):
        return source
    from IPython.core.inputtransformer2 import TransformerManager

    try:
        return TransformerManager().transform_cell(source)
    except Exception:  # noqa: BLE001 - leave it to the sandbox to report the syntax error
        return source
