"""Build the student's copies from the solution: the notebook and its ``.py`` twin."""

from __future__ import annotations

import copy

import jupytext
import nbformat

from ..grade import source
from . import solution

# otter's Notebook where otter is installed (Gradescope, `otter run`, the student tool's [otter] extra):
# grading behaves as with a plain `import otter`; elsewhere the kit's checker (attnlab.notebook)
GRADER_INIT = """\
# Initialize the checker: otter-grader's when installed, otherwise attnlab's (same public tests)
try:
    from otter import Notebook
except ImportError:
    from attnlab.notebook import Notebook
grader = Notebook(tests_dir="tests")"""


def notebook(
    sol: nbformat.NotebookNode, *, questions: set[str], banner: str, solved: bool = False
) -> nbformat.NotebookNode:
    """The student notebook: stubs for solution regions, a ``grader.check`` after each question.

    ``questions`` are the names with a test file; a check cell follows the cell defining each.
    ``solved`` keeps the solutions instead (the instructor's copy, used to test the notebook).
    """
    body = solution.unmark if solved else solution.strip_solutions
    nb = nbformat.v4.new_notebook(metadata=copy.deepcopy(sol.metadata))
    nb.metadata.pop("jupytext", None)
    nb.metadata["attnlab"] = {"generated": banner}
    first_code = True
    for cell in sol.cells:
        if cell.cell_type == "markdown":
            nb.cells.append(nbformat.v4.new_markdown_cell(cell.source))
            continue
        if first_code:
            nb.cells.append(nbformat.v4.new_code_cell(GRADER_INIT))
            first_code = False
        code = cell.source if solution.is_demo(cell) else body(cell.source)
        new = nbformat.v4.new_code_cell(code)
        if solution.is_demo(cell):
            # for the student's eyes only: otter's runner and ours skip it, so a demo can neither cost
            # points nor slow a grade or a check, and the notebook is graded on its .py twin's code
            new.metadata["tags"] = [solution.DEMO_TAG, source.SKIP_TAG]
        nb.cells.append(new)
        for name in solution.functions(cell.source):
            if name in questions:
                nb.cells.append(nbformat.v4.new_code_cell(f'grader.check("{name}")'))
    for n, cell in enumerate(nb.cells):
        cell.id = f"cell-{n}"  # stable ids keep the committed notebook reproducible
    return nb


def script(sol: nbformat.NotebookNode, *, banner: str) -> str:
    """The ``.py`` twin: the notebook's story as comments and its stubs, without demo cells."""
    nb = nbformat.v4.new_notebook(metadata={"jupytext": {"notebook_metadata_filter": "-all"}})
    for cell in sol.cells:
        if cell.cell_type == "markdown":
            nb.cells.append(nbformat.v4.new_markdown_cell(cell.source))
        elif not solution.is_demo(cell):
            nb.cells.append(nbformat.v4.new_code_cell(solution.strip_solutions(cell.source)))
    text = jupytext.writes(nb, fmt="py:percent")
    return "".join(f"# {line}\n" for line in banner.splitlines()) + "\n" + text
