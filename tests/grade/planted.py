"""Files named like the modules the trusted side imports, planted where an instructor grades: each,
when imported as that module outside a sandbox, leaves a mark and hands over to the real module, so
that nothing else looks wrong (the attack of issue 20)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

# what the trusted side imports: the command, the grading batch and workers, the quiz grader, the
# Gradescope entry, and the test files with their oracle (loaded from the course's support folder)
TRUSTED = """
import json, sys
import attnlab.cli, attnlab.grade.batch, attnlab.grade.worker, attnlab.grade.runner, attnlab.grade.report
import attnlab.grade.analysis, attnlab.quiz.commands, attnlab.quiz.batch, attnlab.gradescope
from attnlab import paths, testfiles
testfiles.load_dir(paths.tests_dir())
import matplotlib.pyplot
names = {m.split(".")[0] for m in sys.modules} - set(sys.builtin_module_names) - {"__main__"}
print(json.dumps(sorted(names)))
"""
# imported by some commands only, or lazily
ALSO = ["otter", "rich", "nbformat", "nbclient", "IPython", "jupytext", "text2qti", "requests", "attnlab_quiz"]

PLANT = """
import os, sys
if __name__ == {name!r} and not any(m.startswith("_attnlab_sandbox") for m in sys.modules):
    with open(os.path.join({marks!r}, {name!r} + "." + str(os.getpid())), "w") as _f:
        _f.write(" ".join(sys.argv))
    # hand over to the real module with the import system's own parts: a planted importlib cannot
    _here = os.path.realpath(os.path.dirname(os.path.abspath(__file__)))
    _path = [p for p in sys.path if os.path.realpath(p or ".") != _here]
    _spec = sys.modules["_frozen_importlib_external"].PathFinder.find_spec(__name__, _path)
    if _spec is not None:
        _real = sys.modules["_frozen_importlib"].module_from_spec(_spec)
        sys.modules[__name__] = _real
        _spec.loader.exec_module(_real)
"""


def trusted_module_names() -> list[str]:
    """Top-level names of every module the trusted side imports, as this interpreter finds them."""
    done = subprocess.run([sys.executable, "-c", TRUSTED], capture_output=True, text=True, timeout=120, check=True)
    return sorted(set(json.loads(done.stdout.strip().splitlines()[-1])) | set(ALSO))


def plant(folder: Path, names: list[str], *, marks: Path) -> None:
    """One file per name in ``folder``; an import of one as its module leaves a file in ``marks``."""
    for name in names:
        (folder / f"{name}.py").write_text(PLANT.format(name=name, marks=str(marks)))


def marks_left(marks: Path) -> list[str]:
    """What was imported outside a sandbox, and by which command line."""
    return sorted(f"{p.name}: {p.read_text()}" for p in marks.iterdir())
