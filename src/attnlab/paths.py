"""Where the kit's content lives: the source checkout, or the copy inside an installed wheel."""

from __future__ import annotations

from pathlib import Path

ASSIGNMENT = "pe_attention"

_PACKAGE = Path(__file__).resolve().parent
_CHECKOUT = _PACKAGE.parent.parent


def kit_root() -> Path:
    """The folder holding solutions/, autograder/, assignments/, quiz/ and examples/."""
    if (_CHECKOUT / "pyproject.toml").is_file() and (_CHECKOUT / "solutions").is_dir():
        return _CHECKOUT
    return _PACKAGE / "kit"


def solution_file(assignment: str = ASSIGNMENT) -> Path:
    return kit_root() / "solutions" / assignment / f"{assignment}.py"


def tests_dir(assignment: str = ASSIGNMENT) -> Path:
    """The hand-written otter test files, public and hidden cases together."""
    return kit_root() / "autograder" / assignment / "tests"


def autograder_dir(assignment: str = ASSIGNMENT) -> Path:
    return kit_root() / "autograder" / assignment


def release_dir(assignment: str = ASSIGNMENT) -> Path:
    """The generated student release (committed)."""
    return kit_root() / "assignments" / assignment


def public_tests_dir(assignment: str = ASSIGNMENT) -> Path:
    return release_dir(assignment) / "tests"


def quiz_dir() -> Path:
    return kit_root() / "quiz"


def sample_submissions_dir() -> Path:
    return kit_root() / "examples" / "submissions"


def support_dir(assignment: str = ASSIGNMENT) -> Path:
    """Helper modules the test files import (shipped as otter support files, never to students)."""
    return kit_root() / "autograder" / assignment / "support"
