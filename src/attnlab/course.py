"""``attnlab new``: a course folder of the instructor's own, copied from the bundled course.

The copy is made next to its destination and renamed into place, so a failed copy leaves nothing
half-made, and an existing folder with anything in it is never touched.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from . import paths, release

README = """\
# {name}

An Attention Lab course folder, created by `attnlab new`: yours to edit. Run `attnlab` commands
in this folder (or pass `--course {name}`); they read and write the files here.

- `solutions/<assignment>/<assignment>.py`: the reference, with `# BEGIN SOLUTION` / `# END SOLUTION`
  regions. `autograder/<assignment>/tests/`: one test file per function; points live only there.
- `attnlab release` regenerates `assignments/` and the points table below; `attnlab build --out dist`
  writes each assignment's `<assignment>_student.zip` (hand this out) and `<assignment>_autograder.zip`
  (Gradescope), the student tool and the quiz files.
- `quiz/`: the question bank; an item with `practice: true` ships its key in the student tool, any
  other item is graded by the quiz autograder only.
- A new assignment is a folder `solutions/<name>/<name>.py` with its tests in
  `autograder/<name>/tests/`; `attnlab release --assignment <name>` and `attnlab build` find it.
"""


def new(*, dest: Path) -> Path:
    """Copy the bundled course into ``dest`` (absent or empty) and return it."""
    dest = Path(dest).resolve()
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise paths.CourseError(f"{dest} already exists and is not an empty folder; choose a new folder for the course")
    kit = paths.kit_root()
    if any(dest.is_relative_to(kit / part) for part in paths.COURSE_PARTS):
        raise paths.CourseError(
            f"{dest} is inside the bundled course's {dest.relative_to(kit).parts[0]}/; choose a folder outside it"
        )
    dest.parent.mkdir(parents=True, exist_ok=True)
    partial = dest.with_name(f".{dest.name}.partial")
    shutil.rmtree(partial, ignore_errors=True)
    try:
        partial.mkdir()
        skip = shutil.ignore_patterns("__pycache__", ".ipynb_checkpoints")
        for part in paths.COURSE_PARTS:
            if (kit / part).is_dir():
                shutil.copytree(kit / part, partial / part, ignore=skip)
            else:
                shutil.copy2(kit / part, partial / part)
        readme = README.format(name=dest.name)
        with paths.use(course=partial):
            for name in paths.assignments():
                readme += f"\n## Points: {name}\n\n" + release.points_block(assignment=name) + "\n"
        (partial / "README.md").write_text(readme, encoding="utf-8")
        if dest.exists():
            dest.rmdir()
        os.replace(partial, dest)
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    return dest
