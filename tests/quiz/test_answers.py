"""Questions about reading quiz answers without running anything (attnlab.quiz.answers)."""

import ast
import builtins
import json
from contextlib import contextmanager
from unittest import mock

import pytest

from attnlab.quiz import answers


@contextmanager
def strictly_nothing_runs():
    """eval and exec raise; compile raises unless it only builds a syntax tree (as ast.parse does)."""
    real_compile = builtins.compile

    def refuse(*args, **kwargs):
        raise AssertionError("the reader ran code")

    def ast_only(source, filename, mode, flags=0, *args, **kwargs):
        if not flags & ast.PyCF_ONLY_AST:
            raise AssertionError("the reader compiled code")
        return real_compile(source, filename, mode, flags, *args, **kwargs)

    with mock.patch.multiple(builtins, eval=refuse, exec=refuse, compile=ast_only):
        yield


def read(path) -> answers.Answers:
    with strictly_nothing_runs():
        return answers.read(path)


def _texts(found: answers.Answers) -> dict[str, str | None]:
    return {name: a.text for name, a in found.variables.items()}


def test_reading_a_hostile_notebook_runs_nothing(tmp_path, write_quiz, key_answers, attack_cells):
    """Does reading a notebook full of attack cells run none of them, and read only the literals?"""
    marker = tmp_path / "pwned"
    path = write_quiz(tmp_path / "quiz.ipynb", {"pe-dim0": "cos(pos)"}, attack_cells(marker))
    found = read(path)
    assert not marker.exists()
    assert found.variables["pe_dim0"].text == "cos(pos)"  # the globals() trick is not an assignment
    assert found.variables["proof_z"].text == ""  # nor is exec(...)
    assert found.variables["pe_dim1"].text == "" and found.notes == []


def test_key_notebook_reads_every_key(tmp_path, write_quiz, key_answers, items):
    """Does the key-filled notebook give back every item's key, by answer variable?"""
    found = _texts(read(write_quiz(tmp_path / "quiz.ipynb", key_answers)))
    assert found == {i.variable: key_answers[i.id] for i in items.values()}


def test_py_file_literals_concatenation_and_last_assignment(tmp_path):
    """Are implicit concatenation, parentheses, annotations and unpacking read, the last one winning?"""
    path = tmp_path / "quiz.py"
    path.write_text(
        'proof_z = "P*A*V"\n'
        'pe_dim0 = ("sin"\n           "(pos)")\n'
        'wavelength: str = "2*pi*10000**(2*i/d_model)"\n'
        "pe_dim1, proof_q = \"cos(pos)\", 'P*Q'\n"
        'proof_z = """P*Z"""\n'
        'if True:\n    proof_kt = "nested blocks are not read"\n'
    )
    assert _texts(read(path)) == {
        "proof_z": "P*Z",
        "pe_dim0": "sin(pos)",
        "pe_dim1": "cos(pos)",
        "wavelength": "2*pi*10000**(2*i/d_model)",
        "proof_q": "P*Q",
    }


@pytest.mark.parametrize(
    "source, says",
    [
        ('pe_dim0 = f"sin({x})"', "it is an f-string"),
        ('pe_dim0 = str("sin(pos)")', "computed by code"),
        ('pe_dim0 = "sin" + "(pos)"', "computed by code"),
        ("pe_dim0 = answer", "computed by code"),
        ("pe_dim0 = 21.97", "it is not text"),
        ('pe_dim0 = b"sin(pos)"', "it is not text"),
        ('pe_dim0 = "sin(pos)"\npe_dim0 = pe_dim0.strip()', "computed by code"),
        ('pe_dim0 = "sin("\npe_dim0 += "pos)"', "changed with an operator"),
        ("pe_dim0, pe_dim1 = answers", "assigned by unpacking"),
    ],
)
def test_non_literal_answers_get_a_clear_message(tmp_path, source, says):
    """Does an answer that is not a plain string literal hold no text and say why, naming the variable?"""
    path = tmp_path / "quiz.py"
    path.write_text(source + "\n")
    answer = read(path).variables["pe_dim0"]
    assert answer.text is None
    assert says in answer.problem and "pe_dim0" in answer.problem


def test_magics_are_dropped_and_broken_cells_skipped_with_a_note(tmp_path, write_quiz):
    """Is a cell with IPython magics read without them, and a cell that is not Python skipped with a note?"""
    path = write_quiz(
        tmp_path / "quiz.ipynb",
        {},
        [
            "%matplotlib inline\n!pip list\npe_dim0 = 'sin(pos)'\ntext = '''\n%not a magic\n'''",
            "pe_dim1 = 'cos(pos)'\ndef broken(:",
        ],
    )
    found = read(path)
    assert found.variables["pe_dim0"].text == "sin(pos)"
    assert found.variables["text"].text == "\n%not a magic\n"  # a string that parses keeps its lines
    assert found.variables["pe_dim1"].text == ""  # the broken cell's answer is not read
    assert len(found.notes) == 1 and "is not valid Python and was skipped" in found.notes[0]


def test_cells_otter_ignores_are_not_read(tmp_path, write_quiz):
    """Is a cell tagged otter_ignore skipped, as otter's runner skips it?"""
    path = write_quiz(tmp_path / "quiz.ipynb", {}, ["pe_dim0 = 'sin(pos)'"])
    nb = json.loads(path.read_text())
    nb["cells"][-1]["metadata"]["tags"] = ["otter_ignore"]
    path.write_text(json.dumps(nb))
    assert read(path).variables["pe_dim0"].text == ""


@pytest.mark.parametrize(
    "name, content, says",
    [
        ("quiz.ipynb", "{not json", "not JSON"),
        ("quiz.ipynb", '{"cells": 3}', "no list of cells"),
        ("quiz.ipynb", b"\xff\xfe", "not UTF-8"),
        ("quiz.txt", "pe_dim0 = 'x'", "not a notebook"),
        ("quiz.ipynb", "[" * 100_000, "nested too deep"),
    ],
)
def test_unreadable_files_raise_the_kits_error(tmp_path, name, content, says):
    """Does a file that is not a notebook or Python give a clear UnreadableFile, not a traceback?"""
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(answers.UnreadableFile, match=says):
        answers.read(path)


def test_deeply_nested_cell_is_skipped(tmp_path):
    """Is a cell nested too deeply for the parser skipped with a note instead of crashing?"""
    path = tmp_path / "quiz.py"
    path.write_text("x = " + "(" * 40_000 + ")" * 40_000 + "\n")
    assert "skipped" in read(path).notes[0]


MEMORY_SAFETY = 2 * 1024**3  # a runaway reader fails here instead of taking the machine's memory

GRADE_AND_MEASURE = """
import resource, subprocess, sys
limit = lambda: resource.setrlimit(resource.RLIMIT_DATA, ({safety}, {safety}))
done = subprocess.run(sys.argv[1:], capture_output=True, text=True, preexec_fn=limit)
print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024)
"""


def test_a_20_mb_notebook_is_graded_within_ten_times_its_size_in_memory(tmp_path):
    """Does `quiz grade` read a notebook just under the size cap, one long cell of it an expression
    (the parser's worst case), with a peak memory of at most 10x the file and its answer graded?"""
    import subprocess
    import sys
    from pathlib import Path

    nb = tmp_path / "s1.ipynb"
    cells = [
        {
            "cell_type": "code",
            "metadata": {},
            "source": 'wavelength = "2*pi*10000^(2*i/d_model)"',
            "outputs": [],
            "execution_count": None,
        },
        {"cell_type": "code", "metadata": {}, "source": "", "outputs": [], "execution_count": None},
    ]
    cells[1]["source"] = "(1)+" * ((answers.MAX_BYTES - 1000) // 4) + "1"
    nb.write_text(json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": cells}))
    size = nb.stat().st_size
    assert answers.MAX_BYTES - 2000 < size <= answers.MAX_BYTES
    course = Path(__file__).resolve().parents[2]
    command = [sys.executable, "-m", "attnlab.cli", "quiz", "--course", str(course), "grade", str(nb)]
    script = GRADE_AND_MEASURE.format(safety=MEMORY_SAFETY)
    out = subprocess.run(
        [sys.executable, "-c", script, *command, "--out", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    ).stdout.split()
    code, peak = int(out[0]), int(out[1])
    assert code == 0
    assert peak <= 10 * size
    import csv

    with open(tmp_path / "out" / "quiz_grades.csv", newline="") as f:
        (row,) = list(csv.DictReader(f))
    assert row["wavelength"] == "1"  # (a graded item: practice ones score nothing)
