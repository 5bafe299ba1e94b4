"""The file to grade in what a student uploaded to Gradescope, by otter's rule.

Standard library only: the quiz's Gradescope package ships a copy of this module (see
``attnlab.quiz.notebook.SHARED``).
"""

from __future__ import annotations

from pathlib import Path


def find_submission(folder: Path, *, expected: str) -> Path:
    """The one notebook, or else the one ``.py`` file besides ``__init__.py``; a ValueError that
    ends by asking for ``expected`` (what the student should upload) when there is none or several."""
    notebooks = [p for p in sorted(Path(folder).rglob("*.ipynb")) if ".ipynb_checkpoints" not in p.parts]
    scripts = [p for p in sorted(Path(folder).rglob("*.py")) if p.name != "__init__.py"]
    for found in (notebooks, scripts):
        if len(found) == 1:
            return found[0]
        if len(found) > 1:
            raise ValueError(
                f"more than one {found[0].suffix} file was submitted ("
                + ", ".join(p.name for p in found)
                + f"); submit only {expected}"
            )
    raise ValueError(f"no notebook (.ipynb) or Python file (.py) was submitted; submit {expected}")
