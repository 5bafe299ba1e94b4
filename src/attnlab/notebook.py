"""``grader.check`` in the student notebook where otter-grader is not installed.

The notebook's first cell takes otter's ``Notebook`` when it can be imported (Gradescope, ``otter
run``, the student tool's ``[otter]`` extra) and this one otherwise, so that the student tool's
base install needs none of otter-grader's ~50 further packages. Its ``check`` is ``attnlab check``
(same public tests, messages, sandbox and limits) run on the cells this kernel has executed, in the
order they ran: IPython's input history, from which the kernel's functions were defined, saved to
disk or not. Cells that only call ``grader.check`` run as empty cells, so the definitions checked
are the ones in place now. Its output says that it is the kit's checker, not otter's.
"""

from __future__ import annotations

import ast
import sys
import tempfile
from pathlib import Path

HEADER = (
    "attnlab's checker (otter-grader is not installed) on In [1] to In [{last}] of this kernel"
    " (code cell n below is In [n]), with the public tests in {tests}"
)


class Notebook:
    """A stand-in for ``otter.Notebook`` with the calls the student notebook makes."""

    def __init__(self, nb_path: str | None = None, tests_dir: str = "tests", **_ignored: object):
        # resolved now: the kernel's working folder is the notebook's when the first cell runs
        self.tests_dir = Path(tests_dir).resolve()

    def check(self, question: str) -> None:
        """Run ``question``'s public tests (and those of the functions it calls) on this kernel's code."""
        _check(tests_dir=self.tests_dir, question=str(question))

    def check_all(self) -> None:
        """Run every public test on this kernel's code."""
        _check(tests_dir=self.tests_dir, question=None)


def only_checks(cell: str) -> bool:
    """Whether a cell does nothing but call ``<name>.check(...)`` or ``<name>.check_all(...)``."""
    try:
        body = ast.parse(cell).body
    except (SyntaxError, ValueError):  # IPython syntax (%magic), or not Python at all
        return False
    return bool(body) and all(
        isinstance(s, ast.Expr)
        and isinstance(s.value, ast.Call)
        and isinstance(s.value.func, ast.Attribute)
        and isinstance(s.value.func.value, ast.Name)
        and s.value.func.attr in ("check", "check_all")
        for s in body
    )


def history() -> list[str] | None:
    """The cells this kernel has run, in order (the one running now last); None outside IPython."""
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    shell = get_ipython()
    return None if shell is None else list(shell.history_manager.input_hist_raw[1:])


def _check(*, tests_dir: Path, question: str | None) -> None:
    cells = history()
    if cells is None:
        print("grader.check runs in a Jupyter notebook; elsewhere, run `attnlab check`", file=sys.stderr)
        return
    if not any(tests_dir.glob("*.py")):
        print(
            f"no public tests in {tests_dir}: open the notebook in the folder you unzipped (it holds tests/)",
            file=sys.stderr,
        )
        return
    import nbformat

    from . import check

    # a check cell becomes an empty one, so that "code cell n" in a message is the cell run as In [n]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("" if only_checks(c) else c) for c in cells])
    print(HEADER.format(last=len(cells), tests=tests_dir))
    with tempfile.TemporaryDirectory(prefix="attnlab-check-") as tmp:
        path = Path(tmp) / "notebook.ipynb"
        nbformat.write(nb, path)
        check.run(path=path, tests_dir=tests_dir, question=question, show_errors=False)
