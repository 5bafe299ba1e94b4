import json
import subprocess
import sys

import numpy as np
import pytest

from attnlab.grade import messages, source
from attnlab.grade.session import StudentTimeout, student_exception


def test_are_ignored_cells_skipped_and_magics_left_to_the_sandbox(tmp_path):
    nb = {
        "cells": [
            {
                "cell_type": "code",
                "metadata": {},
                "source": "%matplotlib inline\nx = 1",
                "outputs": [],
                "execution_count": None,
                "id": "a",
            },
            {
                "cell_type": "code",
                "metadata": {"tags": ["otter_ignore"]},
                "source": "y = 2",
                "outputs": [],
                "execution_count": None,
                "id": "b",
            },
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path = tmp_path / "s.ipynb"
    path.write_text(json.dumps(nb))
    # the skipped cell keeps its place, empty: messages count code cells as the student's notebook shows them
    assert source.cells(path) == ["%matplotlib inline\nx = 1", ""]


def test_is_a_version_4_notebook_read_without_importing_nbformat(tmp_path):
    """Start-up of ``attnlab check`` and of every worker: nbformat takes a third of a second to
    import, and a version 4 notebook (lines stored as a list) needs only JSON."""
    nb = {"cells": [{"cell_type": "code", "metadata": {}, "source": ["x = 1\n", "y = 2"]}], "nbformat": 4}
    path = tmp_path / "s.ipynb"
    path.write_text(json.dumps(nb))
    code = "import sys; from attnlab.grade import source; print(source.cells(sys.argv[1]), 'nbformat' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True)
    assert done.stdout.split("]")[1].strip() == "False" and source.cells(path) == ["x = 1\ny = 2"]


def test_is_an_older_notebook_still_read(tmp_path):
    nb = {
        "nbformat": 3,
        "nbformat_minor": 0,
        "metadata": {},
        "worksheets": [{"cells": [{"cell_type": "code", "input": "x = 1", "language": "python", "outputs": []}]}],
    }
    path = tmp_path / "old.ipynb"
    path.write_text(json.dumps(nb))
    assert source.cells(path) == ["x = 1"]


def test_is_a_python_file_read_as_python_reads_it(tmp_path):
    """A Windows editor's byte-order mark is not code (the sandbox's compile would reject U+FEFF and
    score the file 0), and a declared encoding is obeyed."""
    bom = tmp_path / "bom.py"
    bom.write_bytes(b"\xef\xbb\xbfdef f():\n    return 1\n")
    assert source.cells(bom) == ["def f():\n    return 1\n"]
    latin = tmp_path / "latin.py"
    latin.write_bytes(b"# -*- coding: latin-1 -*-\nname = '\xe9'\n")
    assert "name = '\u00e9'" in source.cells(latin)[0]


def test_is_a_pipe_named_as_a_submission_refused_rather_than_read(tmp_path):
    import os

    from attnlab import userfiles

    os.mkfifo(tmp_path / "sub.ipynb")
    with pytest.raises(userfiles.NotAFile):
        source.cells(tmp_path / "sub.ipynb")


def test_do_magics_become_get_ipython_calls_in_the_sandbox():
    from attnlab.grade.sandbox import python_source

    assert python_source("%matplotlib inline\nx = 1") == "get_ipython().run_line_magic('matplotlib', 'inline')\nx = 1\n"


@pytest.mark.parametrize(
    "cell",
    [
        "x = 7 % 3 != 1\nprint(f'{x!r}?')\n",
        "s = '%d items' % 3  # %matplotlib inline\n",
        "def f(a):\n    return a if a != 0 else -a\n",
    ],
)
def test_is_plain_python_with_percent_or_bang_read_as_ipython_reads_it(cell):
    import ast

    from IPython.core.inputtransformer2 import TransformerManager

    from attnlab.grade.sandbox import python_source

    assert ast.dump(ast.parse(python_source(cell))) == ast.dump(ast.parse(TransformerManager().transform_cell(cell)))


def test_does_a_numpy_testing_dump_never_reach_the_student():
    try:
        np.testing.assert_allclose(np.zeros(3), np.array([0.123456, 0.654321, 0.5]))
    except AssertionError as e:
        message = messages.failure_message(e, [])
    assert "0.654321" not in message and "0.123456" not in message


def test_is_a_named_variant_counted_as_a_misconception():
    assert (
        messages.misconception("sinusoidal_pe(7, 8) looks like sin and cos swapped: even ...") == "sin and cos swapped"
    )
    assert messages.misconception("is wrong at index (1, 2)") is None


def test_does_a_student_exception_keep_its_standard_type():
    exc = student_exception("ValueError", "ValueError", "d_model must be even")
    assert type(exc) is ValueError and str(exc) == "d_model must be even"
    sub = student_exception("LinAlgError", "ValueError", "singular")
    assert isinstance(sub, ValueError) and type(sub).__name__ == "LinAlgError"
    exit_ = student_exception("SystemExit", "", "0")
    assert not isinstance(exit_, SystemExit) and isinstance(exit_, Exception)
    assert messages.failure_message(exit_, []) == "your code raised SystemExit: 0"
    assert "timed out" in messages.failure_message(StudentTimeout("f(...) timed out after 1 s"), [])


def test_does_a_relayed_error_name_the_submissions_line():
    """The engine reads the line from the sandbox's traceback (``student_line``); a public test's
    plain call gets it in its message, in a notebook with its code cell."""
    error = ValueError("operands could not be broadcast together with shapes (2,3) (4,5) ")
    error.from_student = True  # type: ignore[attr-defined]
    error.student_call = "softmax(x=array of shape (2, 3))"  # type: ignore[attr-defined]
    error.student_line = (1, 7, "return e / e.sum()")  # type: ignore[attr-defined]
    text = messages.failure_message(error, [])
    assert text.endswith("(4,5). It raised at your line 7: return e / e.sum()"), text
    error.student_line = (3, 2, "")  # type: ignore[attr-defined]
    assert messages.failure_message(error, []).endswith("It raised at your code cell 3, line 2")


def test_does_a_public_tests_relayed_numpy_error_read_as_a_plain_sentence():
    """A public test calls the student's function directly: the error it relays says what the code
    was doing, with numpy's sizes, not numpy's own words."""
    try:
        np.ones((3, 4)) @ np.ones((6, 2))
    except ValueError as e:
        error = e
    error.from_student = True  # type: ignore[attr-defined]
    error.student_call = "multi_head_attention(X=array of shape (3, 4))"  # type: ignore[attr-defined]
    text = messages.failure_message(error, [])
    assert "gufunc" not in text and "core dimension" not in text, text
    assert "inner sizes differ (4 columns on the left, 6 rows on the right)" in text, text
