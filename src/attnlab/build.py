"""``attnlab build``: the student release zip, the otter autograder zip and the quiz exports."""

from __future__ import annotations

import os
import shutil
import tempfile
import zipfile
from pathlib import Path

from . import otterzip, paths, release, testfiles


def student_zip(*, out: Path, assignment: str = paths.ASSIGNMENT) -> Path:
    """Zip a fresh release (notebook, ``.py`` twin, public tests) and the quiz notebook."""
    import nbformat

    from .quiz import bank, notebook

    target = out / "student.zip"
    tmp = target.with_suffix(".tmp")  # a failed build leaves the previous zip, not half of one
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:
        for rel, text in sorted(release.files(assignment=assignment).items()):
            zf.writestr(f"{assignment}/{rel}", text)
        zf.writestr("quiz/quiz.ipynb", nbformat.writes(notebook.notebook(list(bank.load().values()))))
    os.replace(tmp, target)
    return target


def points_possible(*, assignment: str = paths.ASSIGNMENT) -> float:
    return sum(tf.points for tf in testfiles.load_dir(paths.tests_dir(assignment)))


def autograder_zip(*, out: Path, assignment: str = paths.ASSIGNMENT) -> Path:
    """An otter-grader autograder zip made by ``otter generate`` from the hand-written tests."""
    support_dir = paths.support_dir(assignment)
    with tempfile.TemporaryDirectory() as tmp:
        stage = Path(tmp)
        shutil.copytree(paths.tests_dir(assignment), stage / "tests")
        support = sorted(p.name for p in support_dir.iterdir()
                         if p.is_dir() and not p.name.startswith(("_", ".")))
        for name in support:
            shutil.copytree(support_dir / name, stage / name, ignore=shutil.ignore_patterns("__pycache__"))
        target = otterzip.generate(stage=stage, target=out / "autograder.zip", support=support,
                                   points_possible=points_possible(assignment=assignment),
                                   requirements=paths.autograder_dir(assignment) / "requirements.txt")
    otterzip.run_with(target, extra=_package_files(),
                      why="grade with attnlab's isolated engine instead of otter's in-process runner "
                          "(the student's code never shares a process with the tests).",
                      command="cd /autograder/source && PYTHONPATH=/autograder/source "
                              "exec python -m attnlab.gradescope")
    return target


def _package_files() -> list[tuple[Path, str]]:
    """The attnlab package's source files, as (path, name in the zip), without the bundled kit."""
    package = Path(__file__).resolve().parent
    return [(p, f"attnlab/{p.relative_to(package).as_posix()}") for p in sorted(package.rglob("*.py"))
            if "kit" not in p.relative_to(package).parts]


def main(*, out: Path = Path("dist"), assignment: str = paths.ASSIGNMENT) -> list[Path]:
    """Write ``student.zip``, ``autograder.zip``, the quiz notebook with its autograder, and the
    Canvas/Moodle quiz exports into ``out``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    built = [student_zip(out=out, assignment=assignment), autograder_zip(out=out, assignment=assignment)]
    from .quiz import export, notebook

    return built + list(export.main(out=out)) + list(notebook.main(out=out))
