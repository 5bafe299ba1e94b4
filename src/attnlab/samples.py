"""The bundled known-outcome submissions, named by what they must score.

A sample's name ends in ``_score_full``, ``_score_partial`` or ``_score_zero``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from . import paths

OUTCOMES = ("full", "partial", "zero")


def expected_outcome(name: str) -> str | None:
    """The outcome a sample's name promises, or None for a name without one."""
    for outcome in OUTCOMES:
        if name.endswith(f"_score_{outcome}"):
            return outcome
    return None


def outcome(total: float, possible: float) -> str:
    if total >= possible:
        return "full"
    return "zero" if total <= 0 else "partial"


def bundled() -> list[Path]:
    """The sample files in the course's ``examples/submissions/``."""
    return sorted(p for p in paths.sample_submissions_dir().iterdir() if p.suffix in (".py", ".ipynb"))


def copy_all(*, into: Path) -> list[Path]:
    """Copy the samples, plus the untouched student notebook of the release, into ``into``."""
    into.mkdir(parents=True, exist_ok=True)
    copied = [Path(shutil.copy(src, into / src.name)) for src in bundled()]
    assignment = paths.current_assignment()
    stub = paths.release_dir(assignment) / f"{assignment}.ipynb"
    copied.append(Path(shutil.copy(stub, into / "untouched_stub_score_zero.ipynb")))
    return copied
