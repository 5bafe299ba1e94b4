"""Replacing otter's runner in the run_autograder that otter itself generates."""

import zipfile
from pathlib import Path

import pytest

from attnlab import otterzip

COMMAND = "cd /autograder/source && exec python -m attnlab.gradescope"
TEST_FILE = """OK_FORMAT = False

from otter.test_files import test_case

name = "q1"


@test_case(points=1)
def test_one(env):
    assert env["x"] == 1
"""


@pytest.fixture(scope="module")
def otter_zip(tmp_path_factory) -> Path:
    """A zip made by ``otter generate`` through attnlab's own wrapper, before any change."""
    stage = tmp_path_factory.mktemp("stage")
    (stage / "tests").mkdir()
    (stage / "tests" / "q1.py").write_text(TEST_FILE)
    requirements = stage / "requirements.txt"
    requirements.write_text("numpy\n")
    return otterzip.generate(
        stage=stage, target=stage.parent / "autograder.zip", points_possible=1.0, requirements=requirements, support=[]
    )


def _script(path: Path) -> str:
    with zipfile.ZipFile(path) as z:
        return z.read("run_autograder").decode()


@pytest.mark.slow
def test_is_only_otters_runner_line_replaced(otter_zip, tmp_path):
    """Does the patched run_autograder keep every line otter wrote but the one that starts its runner,
    which now runs our command, and stay executable with every other file of the zip unchanged?"""
    patched = tmp_path / "autograder.zip"
    patched.write_bytes(otter_zip.read_bytes())
    extra = tmp_path / "sandbox.yaml"
    extra.write_text("packages: []\n")
    otterzip.run_with(patched, command=COMMAND, why="a test", extra=[(extra, "sandbox.yaml")])

    before, after = _script(otter_zip).splitlines(), _script(patched).splitlines()
    runner = [line for line in before if "run_otter.py" in line]
    assert len(runner) == 1, before  # otter's own script starts its runner on one line
    at = before.index(runner[0])
    assert after[:at] == before[:at] and after[at + 2 :] == before[at + 1 :]
    assert after[at] == "# attnlab build replaced otter's runner here: a test" and after[at + 1] == COMMAND
    with zipfile.ZipFile(otter_zip) as old, zipfile.ZipFile(patched) as new:
        assert new.getinfo("run_autograder").external_attr >> 16 & 0o111
        assert set(new.namelist()) == set(old.namelist()) | {"sandbox.yaml"}
        assert all(new.read(n) == old.read(n) for n in old.namelist() if n != "run_autograder")


def test_is_a_script_without_one_runner_line_refused_and_the_zip_kept(tmp_path):
    """When otter's script no longer starts its runner on one recognisable line, does run_with refuse
    with a message that says so, leaving the zip as it was?"""
    path = tmp_path / "autograder.zip"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("run_autograder", "#!/bin/bash\nexec otter-runner --new-layout\n")
    before = path.read_bytes()
    with pytest.raises(ValueError, match="starts its runner on 0 lines, not one"):
        otterzip.run_with(path, command=COMMAND, why="a test")
    assert path.read_bytes() == before and [p.name for p in tmp_path.iterdir()] == ["autograder.zip"]
