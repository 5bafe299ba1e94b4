"""``attnlab check``: the student's local run of the public tests."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from attnlab import check, paths

from known_outcomes import FIXTURES
from without_userns import WHY_NOT_WITHOUT_USERNS, WRAPPER, can_refuse_userns


def test_does_a_correct_part_pass_and_a_missing_one_fail(tmp_path, capsys, monkeypatch):
    shutil.copy(FIXTURES / "twin.py", tmp_path / f"{paths.ASSIGNMENT}.py")
    monkeypatch.chdir(tmp_path)
    assert check.main(question="sinusoidal_pe") == 0
    assert "sinusoidal_pe" in capsys.readouterr().out
    assert check.main() == 1
    out = capsys.readouterr().out
    assert "FAIL" in out and "ok   pe_shift_matrix" in out


def test_is_a_missing_submission_reported_not_raised(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert check.main() == 2
    assert "found neither" in capsys.readouterr().err


def test_does_check_pick_the_file_the_student_worked_in(tmp_path, monkeypatch, capsys):
    """The release ships the notebook and the .py twin: the one changed last is checked."""
    import os

    notebook = shutil.copy(paths.release_dir() / f"{paths.ASSIGNMENT}.ipynb", tmp_path)
    twin = shutil.copy(FIXTURES / "twin.py", tmp_path / f"{paths.ASSIGNMENT}.py")
    os.utime(notebook, (1, 1))
    monkeypatch.chdir(tmp_path)
    assert check.main(question="sinusoidal_pe") == 0
    assert f"checking {paths.ASSIGNMENT}.py" in capsys.readouterr().out
    os.utime(twin, (0, 0))
    assert check.main(question="sinusoidal_pe") == 1
    assert f"checking {paths.ASSIGNMENT}.ipynb" in capsys.readouterr().out


def test_do_check_and_grade_word_a_failure_the_same(tmp_path, capsys):
    import json

    from attnlab.grade import main

    sub = tmp_path / "mine.py"
    sub.write_text("def sinusoidal_pe(seq_len, d_model, base=10000.0):\n    return [[0.0]]\n")
    assert check.main(submission=sub, question="sinusoidal_pe") == 1
    printed = capsys.readouterr().out
    main(submissions=[sub], out=tmp_path / "out", tests_dir=paths.public_tests_dir(), progress=False)
    rows = json.loads((tmp_path / "out" / "submissions" / "mine" / "results.json").read_text())["tests"]
    failed = [r for r in rows if r["status"] == "failed" and r["extra_data"]["question"] == "sinusoidal_pe"]
    assert failed and all(f"{r['name']}: {r['output']}" in printed for r in failed)


def test_does_a_top_level_loop_end_with_a_message_within_the_statement_limit(tmp_path, capsys, monkeypatch):
    from attnlab import check

    monkeypatch.setattr(check, "CALL_TIMEOUT", 0.5)
    release = paths.release_dir()
    sub = tmp_path / "pe_attention"
    shutil.copytree(release, sub)
    (sub / "pe_attention.py").write_text((sub / "pe_attention.py").read_text() + "\nwhile True:\n    pass\n")
    assert check.main(submission=sub / "pe_attention.py") == 1
    assert "timed out" in capsys.readouterr().out


def test_does_the_zygote_import_pyplot_meanwhile_when_a_submission_plots(tmp_path, monkeypatch, capsys):
    """Half of checking a notebook that plots is importing pyplot: the zygote is asked for it before
    the tests load, and imports it meanwhile; a submission that imports no matplotlib never pays
    for it (``%matplotlib inline`` imports nothing)."""
    from attnlab.grade.session import Zygote

    asked = []
    expect = Zygote.expect

    def recording(self, wants):
        asked.append(sorted(wants))
        return expect(self, wants)

    monkeypatch.setattr(Zygote, "expect", recording)
    twin = (FIXTURES / "twin.py").read_text()
    (tmp_path / "plots.py").write_text(twin + "\nimport matplotlib.pyplot as plt\nplt.plot([1, 2])\n")
    (tmp_path / "plain.py").write_text(twin + "\n# %matplotlib inline, in a comment\n")
    shutil.copytree(paths.public_tests_dir(paths.ASSIGNMENT), tmp_path / "tests")
    assert check.main(submission=tmp_path / "plots.py", question="sinusoidal_pe") == 0
    assert check.main(submission=tmp_path / "plain.py", question="sinusoidal_pe") == 0
    assert asked == [["matplotlib.pyplot"], []]


@pytest.mark.skipif(not can_refuse_userns(), reason=WHY_NOT_WITHOUT_USERNS)
def test_does_check_work_where_user_namespaces_are_refused(tmp_path):
    """The student's machine may be a stock Ubuntu: check runs there as anywhere else."""
    sub = shutil.copy(FIXTURES / "twin.py", tmp_path / f"{paths.ASSIGNMENT}.py")
    attnlab = str(Path(sys.executable).with_name("attnlab"))
    done = subprocess.run(
        [sys.executable, str(WRAPPER), attnlab, "check", str(sub), "-q", "sinusoidal_pe"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "sinusoidal_pe" in done.stdout


SOFTMAX_OVER_AXIS_0 = """
import numpy as np

def softmax(x, axis=-1):
    x = np.asarray(x, dtype=float)
    e = np.exp(x - x.max(axis=0, keepdims=True))  # axis 0, whatever `axis` says
    return e / e.sum(axis=0, keepdims=True)

def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(K.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = softmax(scores, axis=-1)
    return weights @ V, weights
"""


def test_does_a_failure_caused_by_a_callee_point_at_the_callee(tmp_path, capsys):
    """The public tests have no reference to lend: a function that fails only through its callee
    is told to fix the callee first, on each failing row (each is a box of its own on Gradescope:
    none may point to another), and no misconception of its own is guessed."""
    sub = tmp_path / "mine.py"
    sub.write_text(SOFTMAX_OVER_AXIS_0)
    hint = "`scaled_dot_product_attention` uses your `softmax`, which fails its own public test: fix `softmax` first"
    for question in (None, "scaled_dot_product_attention"):
        assert check.main(submission=sub, question=question) == 1
        printed = capsys.readouterr().out
        rows = [line for line in printed.splitlines() if line.startswith("    scaled_dot_product_attention")]
        assert rows and all(row.endswith(hint) for row in rows), printed
        assert "looks like" not in "".join(rows)
    assert "softmax: 0 / 1" not in printed  # asked for one question: its callee is checked, not shown


@pytest.mark.parametrize("kind", ["pipe", "device"])
def test_is_a_pipe_or_a_device_named_as_the_submission_refused_rather_than_read(tmp_path, capsys, kind):
    """A named pipe waits for a writer forever; /dev/zero fills the memory (a red-team check on it
    grew to 24 GB)."""
    shutil.copytree(paths.public_tests_dir(paths.ASSIGNMENT), tmp_path / "tests")
    sub = tmp_path / "mine.py"
    if kind == "pipe":
        os.mkfifo(sub)
    else:
        sub.symlink_to("/dev/zero")
    assert check.main(submission=sub) == 2
    assert "not a regular file" in capsys.readouterr().err


def test_is_a_notebook_of_any_malformed_shape_reported_not_raised(tmp_path, capsys):
    shutil.copytree(paths.public_tests_dir(paths.ASSIGNMENT), tmp_path / "tests")
    for text in ("{}", "[1, 2, 3]", '{"nbformat": 4, "cells": [{"cell_type": "code", "source": 7}]}', "[" * 100_000):
        sub = tmp_path / "mine.ipynb"
        sub.write_text(text)
        assert check.main(submission=sub) == 1
        assert "Traceback" not in capsys.readouterr().err
