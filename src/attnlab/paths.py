"""Where a course's content lives.

A course folder is what an instructor owns: ``solutions/``, ``autograder/`` (tests and oracle),
``quiz/`` (the bank), ``assignments/`` (the generated student release) and ``examples/`` (samples),
marked by an ``attnlab-course.toml`` at its top. The installed package is only the tool; its bundled
course (``attnlab/kit`` in the wheel) is copied by ``attnlab new`` and ``attnlab demo`` and never used
in place. A source checkout is itself a course folder (the template the wheel bundles).

Every function below answers for the *active* course and assignment: the ones a command chose
(``use``, which never falls back), else the course found by walking up from the working directory,
else, for library calls from a source checkout (the kit's own tests), the checkout. An assignment is
a folder ``solutions/<name>/`` holding ``<name>.py``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MARKER = "attnlab-course.toml"
ASSIGNMENT = "pe_attention"  # the bundled course's assignment
# What `attnlab new` copies from the bundled course
COURSE_PARTS = (MARKER, "solutions", "autograder", "assignments", "quiz", "examples")
RESERVED = ("quiz",)  # the quiz's files (quiz_autograder.zip) would collide with an assignment's
NO_COURSE = (
    f"no course folder here (a folder with {MARKER}, here or above): run the command inside "
    "your course folder or pass --course DIR; `attnlab new DIR` creates one"
)

_PACKAGE = Path(__file__).resolve().parent
_CHECKOUT = _PACKAGE.parent.parent


@dataclass
class _Active:
    """What the running command chose (``use``); None: find it."""

    course: Path | None = None
    assignment: str | None = None


_active = _Active()


class CourseError(ValueError):
    """No course folder, or no such assignment: the user's mistake, said in one line."""


class MarkerError(CourseError):
    """The course's marker file is there but cannot be used: the instructor's to fix, never to be
    taken as no course (which would grade without the course's settings)."""


def kit_root() -> Path:
    """The bundled course template: the source checkout, or the copy inside the installed wheel."""
    if (_CHECKOUT / MARKER).is_file() and (_CHECKOUT / "solutions").is_dir():
        return _CHECKOUT
    return _PACKAGE / "kit"


def find_course(start: Path) -> Path | None:
    """The course folder holding ``start`` (the nearest folder with the marker at or above it)."""
    start = Path(start).resolve()
    for folder in (start, *start.parents):
        if (folder / MARKER).is_file():
            return folder
    return None


def check_course(folder: Path) -> Path:
    """``folder`` resolved, or a ``CourseError`` saying it is not a course folder."""
    folder = Path(folder).resolve()
    if not (folder / MARKER).is_file():
        raise CourseError(f"{folder} is not a course folder (it has no {MARKER}); `attnlab new DIR` creates one")
    return folder


def current_course() -> Path | None:
    """The active course, or None where there is none (e.g. inside a Gradescope autograder)."""
    if _active.course is not None:
        return _active.course
    found = find_course(Path.cwd())
    if found is not None:
        return found
    return _CHECKOUT if kit_root() == _CHECKOUT else None


def course_root() -> Path:
    """The active course; ``CourseError`` when there is none."""
    course = current_course()
    if course is None:
        raise CourseError(NO_COURSE)
    return course


@contextlib.contextmanager
def use(*, course: Path | None = None, assignment: str | None = None) -> Iterator[Path]:
    """Make ``course`` (default: the one holding the working directory, never a fallback) and
    ``assignment`` the active ones inside the block; both are checked first."""
    root = check_course(course) if course is not None else find_course(Path.cwd())
    if root is None:
        raise CourseError(NO_COURSE)
    if assignment is not None and assignment not in assignments(root):
        raise CourseError(f"no assignment {assignment!r} in {root}; it has: {', '.join(assignments(root)) or 'none'}")
    saved = dataclasses.replace(_active)
    _active.course, _active.assignment = root, assignment
    try:
        yield root
    finally:
        _active.course, _active.assignment = saved.course, saved.assignment


def assignments(course: Path | None = None) -> list[str]:
    """The course's assignments: every ``solutions/<name>/<name>.py``; a new folder is a new one."""
    root = Path(course) if course is not None else course_root()
    solutions = root / "solutions"
    if not solutions.is_dir():
        return []
    found = sorted(p.name for p in solutions.iterdir() if (p / f"{p.name}.py").is_file())
    for name in found:
        # the name becomes file names (<name>_autograder.zip) and the notebook's module name
        if not name.isidentifier() or name in RESERVED:
            raise CourseError(
                f"solutions/{name}/: an assignment's name is letters, digits and '_' "
                f"and not {' or '.join(RESERVED)}; rename the folder"
            )
    return found


def current_assignment(name: str | None = None) -> str:
    """``name``, else the chosen assignment, else the course's only one."""
    if name is not None:
        return name
    if _active.assignment is not None:
        return _active.assignment
    found = assignments()
    if len(found) == 1:
        return found[0]
    if not found:
        raise CourseError(f"{course_root()} has no assignment (a solutions/<name>/<name>.py)")
    raise CourseError(f"this course has several assignments ({', '.join(found)}): choose one with --assignment NAME")


def setting(section: str, key: str, default: Any) -> Any:
    """A course setting from the marker file's ``[section]`` table (``default`` where it is not set);
    a marker that is not valid TOML is the instructor's mistake, said in one line."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib  # type: ignore[import-not-found]  # only installed on 3.10

    marker = course_root() / MARKER
    try:
        table = tomllib.loads(marker.read_text(encoding="utf-8")).get(section, {})
    except tomllib.TOMLDecodeError as e:
        raise MarkerError(f"{marker} is not valid TOML ({e})") from None
    except UnicodeDecodeError:
        raise MarkerError(f"{marker} is not UTF-8 text: save it as UTF-8") from None
    except OSError as e:
        raise MarkerError(f"{marker} cannot be read: {e.strerror or e}") from None
    return table.get(key, default) if isinstance(table, dict) else default


def solution_file(assignment: str | None = None) -> Path:
    name = current_assignment(assignment)
    return course_root() / "solutions" / name / f"{name}.py"


def autograder_dir(assignment: str | None = None) -> Path:
    return course_root() / "autograder" / current_assignment(assignment)


def tests_dir(assignment: str | None = None) -> Path:
    """The hand-written otter test files, public and hidden cases together."""
    return autograder_dir(assignment) / "tests"


def support_dir(assignment: str | None = None) -> Path:
    """Helper modules the test files import (shipped as otter support files, never to students)."""
    return autograder_dir(assignment) / "support"


def release_dir(assignment: str | None = None) -> Path:
    """The generated student release (committed)."""
    return course_root() / "assignments" / current_assignment(assignment)


def public_tests_dir(assignment: str | None = None) -> Path:
    return release_dir(assignment) / "tests"


def quiz_dir() -> Path:
    return course_root() / "quiz"


def sample_submissions_dir() -> Path:
    """The course's known-outcome samples, named by what they must score."""
    return course_root() / "examples" / "submissions"
