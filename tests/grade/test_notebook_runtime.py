"""A notebook is graded as Jupyter runs it: what IPython gives every notebook (``display``,
``get_ipython()`` and its magics, ``%magic`` and ``!command`` lines) does no harm in the sandbox."""

import re

import nbformat

from attnlab import paths
from attnlab.grade.runner import Grader, Limits
from attnlab.grade.session import Zygote

FULL = paths.sample_submissions_dir() / "loops_score_full.py"
# what a student's notebook does beside its definitions, cell by cell, as Jupyter and IPython allow it
JUPYTER_LINES = [
    "%matplotlib inline",
    "!echo installing",
    "%load_ext autoreload",
    "get_ipython().run_line_magic('autoreload', '2')",
    "get_ipython().system('ls')",
    "files = !ls",
    "display(np.zeros(2), 'shown')",
    "from IPython.display import display as shown, Markdown\nshown(Markdown('**done**'))",
]


def _notebook_twin(tmp_path):
    """``FULL`` as a notebook: one cell per top-level definition, each followed in its own cell by
    one of ``JUPYTER_LINES``, and then a ``%%time`` cell that defines nothing new."""
    text = FULL.read_text()
    chunks = re.split(r"\n(?=def |class )", text)
    cells = []
    for i, chunk in enumerate(chunks):
        extra = JUPYTER_LINES[i % len(JUPYTER_LINES)]
        cells.append(nbformat.v4.new_code_cell(f"{chunk}\n{extra}" if i else chunk))
    cells.append(nbformat.v4.new_code_cell("%%time\nchecked = sinusoidal_pe(4, 6).shape"))
    nb = nbformat.v4.new_notebook(cells=cells)
    path = tmp_path / "loops_notebook.ipynb"
    nbformat.write(nb, str(path))
    return path


def test_does_a_notebook_that_displays_and_uses_magics_score_what_its_py_twin_scores(tmp_path):
    """Every cell but the first defines a function and then displays, runs a magic or a shell
    command: nothing of it may cost a definition."""
    notebook = _notebook_twin(tmp_path)
    zygote = Zygote(uid=None, gid=None, memory_mb=1024, cpu_seconds=60)
    try:
        grader = Grader(zygote, paths.tests_dir(), paths.autograder_dir() / "support", Limits())
        as_py, as_notebook = grader.grade(FULL), grader.grade(notebook)
    finally:
        zygote.close()
    assert as_py.score == as_py.possible
    assert as_notebook.errors == []
    assert as_notebook.score == as_py.score


def test_does_a_message_number_code_cells_as_the_student_sees_them_with_skipped_cells_counted(tmp_path):
    """A demo cell that grading skips (``otter_ignore``) still shows in the student's notebook: is
    the cell a message names counted among every code cell, as the student counts them?"""
    skipped = nbformat.v4.new_code_cell("demo = 1")
    skipped.metadata["tags"] = ["otter_ignore"]
    cells = [
        nbformat.v4.new_code_cell(FULL.read_text()),  # code cell 1
        skipped,  # code cell 2
        nbformat.v4.new_code_cell("def causal_mask(n):\n    raise ValueError('no mask today')"),  # code cell 3
        nbformat.v4.new_code_cell("x = 1\ny = 1 / 0"),  # code cell 4
    ]
    path = tmp_path / "with_a_demo_cell.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=cells), str(path))
    zygote = Zygote(uid=None, gid=None, memory_mb=1024, cpu_seconds=60)
    try:
        report = Grader(zygote, paths.tests_dir(), paths.autograder_dir() / "support", Limits()).grade(path)
    finally:
        zygote.close()
    raised = [c.message for q in report.questions if q.name == "causal_mask" for c in q.cases if not c.passed]
    assert raised and all("code cell 3, line 2" in m for m in raised), raised
    assert any("code cell 4, line 2" in e for e in report.errors), report.errors
