"""``attnlab build``: the student release zip, the otter autograder zip and the quiz exports."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
import zipfile
from pathlib import Path

from . import paths, release, testfiles


@contextlib.contextmanager
def _cwd(path: Path):
    # otter generate takes support files relative to the working directory
    old = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


def student_zip(*, out: Path, assignment: str = paths.ASSIGNMENT) -> Path:
    """Zip a fresh release: notebook, ``.py`` twin and public tests, under ``<assignment>/``."""
    target = out / "student.zip"
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as zf:
        for rel, text in sorted(release.files(assignment=assignment).items()):
            zf.writestr(f"{assignment}/{rel}", text)
    return target


def points_possible(*, assignment: str = paths.ASSIGNMENT) -> float:
    return sum(tf.points for tf in testfiles.load_dir(paths.tests_dir(assignment)))


def autograder_zip(*, out: Path, assignment: str = paths.ASSIGNMENT) -> Path:
    """An otter-grader autograder zip made by ``otter generate`` from the hand-written tests."""
    from otter.generate import main as otter_generate  # a second to import: only when building

    target = (out / "autograder.zip").resolve()
    source = paths.autograder_dir(assignment)
    with tempfile.TemporaryDirectory() as tmp:
        stage = Path(tmp)
        shutil.copytree(paths.tests_dir(assignment), stage / "tests")
        support = sorted(p.name for p in paths.support_dir(assignment).iterdir()
                         if p.is_dir() and not p.name.startswith(("_", ".")))
        for name in support:
            shutil.copytree(paths.support_dir(assignment) / name, stage / name,
                            ignore=shutil.ignore_patterns("__pycache__"))
        config = {"lang": "python", "points_possible": points_possible(assignment=assignment)}
        (stage / "otter_config.json").write_text(json.dumps(config, indent=2))
        with _cwd(stage):
            otter_generate(
                tests_dir="tests",
                output_path=str(target),
                config="otter_config.json",
                requirements=str(source / "requirements.txt"),
                no_environment=True,
                files=support,
            )
    return target


def main(*, out: Path = Path("dist"), assignment: str = paths.ASSIGNMENT) -> list[Path]:
    """Write ``student.zip``, ``autograder.zip`` and the quiz exports into ``out``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    built = [student_zip(out=out, assignment=assignment), autograder_zip(out=out, assignment=assignment)]
    try:
        from .quiz import export
    except ImportError:
        return built
    return built + list(export.main(out=out))
