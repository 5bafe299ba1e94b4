"""The student notebook's ``grader``: otter's where otter-grader is installed, the kit's checker
where it is not (the student tool without its ``[otter]`` extra).

Each test runs the notebook's cells in an IPython shell of a process of its own, as a kernel would.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from attnlab import notebook, release

SRC = Path(notebook.__file__).resolve().parents[1]

# runs the cells given as JSON in argv[1] with history, as a Jupyter kernel does
SHELL = """
import json, sys
{block}
from IPython.core.interactiveshell import InteractiveShell
shell = InteractiveShell.instance()
for cell in json.loads(sys.argv[1]):
    shell.run_cell(cell, store_history=True)
"""
WITHOUT_OTTER = 'sys.modules["otter"] = None  # as if otter-grader were not installed: importing it fails'


def _cells(nb) -> list[str]:
    return [c.source for c in nb.cells if c.cell_type == "code"]


def _defining(nb, name: str) -> str:
    return next(src for src in _cells(nb) if f"def {name}(" in src)


def _run(cells: list[str], *, cwd: Path, block: str = "") -> subprocess.CompletedProcess:
    (cwd / "tests").mkdir(exist_ok=True)
    for rel, text in release.files().items():
        if rel.startswith("tests/"):
            (cwd / rel).write_text(text, encoding="utf-8")
    return subprocess.run(
        [sys.executable, "-c", SHELL.format(block=block), json.dumps(cells)],
        cwd=cwd,
        env=dict(os.environ, PYTHONPATH=str(SRC), IPYTHONDIR=str(cwd / "ipython")),
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_does_grader_check_work_without_otter_and_check_the_definitions_in_place_now(tmp_path):
    """The stub fails, the same cell rewritten and run again passes: each check runs the kit's own
    checker on what the kernel ran, in order, and says that it is not otter's."""
    stub, solved = release.notebook(), release.notebook(solved=True)
    cells = [
        _cells(stub)[0],
        "import numpy as np",
        _defining(stub, "softmax"),
        'grader.check("softmax")',
        _defining(solved, "softmax"),
        'grader.check("softmax")',
    ]
    ran = _run(cells, cwd=tmp_path, block=WITHOUT_OTTER)
    assert "Traceback" not in ran.stdout + ran.stderr, ran.stdout + ran.stderr
    first, second = ran.stdout.split("attnlab's checker (otter-grader is not installed)")[1:]
    assert "FAIL softmax" in first and "ok   softmax" not in first
    assert "ok   softmax" in second and "FAIL" not in second
    assert "In [1] to In [6]" in second


@pytest.mark.slow  # imports otter: seconds
def test_does_the_first_cell_take_otters_notebook_where_otter_is_installed(tmp_path):
    """On Gradescope and under `otter run` the notebook's grader is otter's own, as with a plain
    `import otter`, so grading it is unchanged."""
    pytest.importorskip("otter")
    cells = [_cells(release.notebook())[0], "print(type(grader).__module__)"]
    ran = _run(cells, cwd=tmp_path)
    assert ran.stdout.split()[-1].startswith("otter."), ran.stdout + ran.stderr


@pytest.mark.parametrize(
    ("cell", "only"),
    [
        ('grader.check("softmax")', True),
        ('grader.check("softmax")\ngrader.check_all()', True),
        ('def f():\n    return 1\ngrader.check("f")', False),
        ("%matplotlib inline", False),
        ("", False),
    ],
)
def test_is_a_cell_left_out_of_the_rerun_only_when_it_does_nothing_but_check(cell, only):
    assert notebook.only_checks(cell) is only


def test_does_a_check_outside_a_notebook_or_without_tests_say_what_to_do(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    notebook.Notebook(tests_dir="tests").check("softmax")  # no IPython shell runs this test
    assert "elsewhere, run `attnlab check`" in capsys.readouterr().err
    monkeypatch.setattr(notebook, "history", lambda: ['grader.check("softmax")'])
    notebook.Notebook(tests_dir="tests").check("softmax")
    assert "open the notebook in the folder you unzipped" in capsys.readouterr().err
