"""Read the hand-written solution (a jupytext percent-format script) and cut its solution regions.

A solution region is the lines between ``# BEGIN SOLUTION`` and ``# END SOLUTION``; the student
copy gets ``raise NotImplementedError`` at the region's indentation instead. Code cells tagged
``demo`` (plots, worked examples) belong to the notebook only; the other code cells are the
definitions a submission must provide.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import jupytext
import nbformat

_BEGIN = re.compile(r"^(\s*)# BEGIN SOLUTION\s*$")
_END = re.compile(r"^\s*# END SOLUTION\s*$")
DEMO_TAG = "demo"


def read(path: Path) -> nbformat.NotebookNode:
    return jupytext.read(path, fmt="py:percent")


def is_demo(cell: nbformat.NotebookNode) -> bool:
    return DEMO_TAG in cell.metadata.get("tags", [])


def definition_cells(nb: nbformat.NotebookNode) -> list[nbformat.NotebookNode]:
    return [c for c in nb.cells if c.cell_type == "code" and not is_demo(c)]


def strip_solutions(code: str) -> str:
    """Replace every solution region with a stub that raises ``NotImplementedError``."""
    out: list[str] = []
    indent: str | None = None
    for line in code.splitlines():
        begin = _BEGIN.match(line)
        if begin and indent is None:
            indent = begin.group(1)
            out += [f"{indent}# YOUR CODE HERE", f"{indent}raise NotImplementedError"]
        elif indent is not None and _END.match(line):
            indent = None
        elif indent is None:
            out.append(line)
    if indent is not None:
        raise ValueError("a '# BEGIN SOLUTION' has no matching '# END SOLUTION'")
    return "\n".join(out)


def unmark(code: str) -> str:
    """The solution code without its region markers."""
    return "\n".join(line for line in code.splitlines() if not (_BEGIN.match(line) or _END.match(line)))


def functions(code: str) -> list[str]:
    """Names of the top-level functions a code cell defines, in order."""
    return [n.name for n in ast.parse(code).body if isinstance(n, ast.FunctionDef)]


def parts(nb: nbformat.NotebookNode) -> list[tuple[str, list[str]]]:
    """The assignment's parts (markdown headings ``## Part ...``) with the functions each defines."""
    found: list[tuple[str, list[str]]] = []
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("## Part "):
                    found.append((line[3:].strip(), []))
        elif found and not is_demo(cell):
            found[-1][1].extend(functions(cell.source))
    return found


def reference_source(path: Path) -> str:
    """The reference implementation as one module: every definition cell, markers removed."""
    return "\n\n\n".join(unmark(c.source) for c in definition_cells(read(path))) + "\n"
