"""Making an otter-grader autograder zip with ``otter generate`` from a staged folder."""

from __future__ import annotations

import contextlib
import json
import os
import re
import zipfile
from collections.abc import Sequence
from pathlib import Path

from . import atomic


@contextlib.contextmanager
def _cwd(path: Path):
    old = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


def generate(*, stage: Path, target: Path, points_possible: float, requirements: Path, support: list[str]) -> Path:
    """Zip ``stage/tests`` and the support folders ``stage/<support>`` into ``target``.

    otter writes a top-level ``score`` only when ``points_possible`` is set, and takes support
    files relative to the working directory, hence the staging folder.
    """
    from otter.generate import main as otter_generate  # a second to import: only when building

    target = Path(target).resolve()
    (stage / "otter_config.json").write_text(
        json.dumps({"lang": "python", "points_possible": points_possible}, indent=2), encoding="utf-8"
    )
    # the old zip survives a failed build
    with atomic.replacing(target) as partial, _cwd(stage):
        otter_generate(
            tests_dir="tests",
            output_path=str(partial),
            config="otter_config.json",
            requirements=str(requirements),
            no_environment=True,
            files=support,
        )
    return target


def run_with(zip_path: Path, *, command: str, why: str, extra: Sequence[tuple[Path, str]] = ()) -> None:
    """Make Gradescope's ``run_autograder`` in ``zip_path`` run ``command`` instead of otter's runner.

    Only the line of otter's script that starts its runner is replaced (see :func:`patch_runner`), so
    the zip keeps whatever set-up otter's image needs. ``extra`` files (path, name in the zip) are
    added; ``otter run -a`` ignores ``run_autograder`` and keeps using otter's runner on the same tests.
    """
    zip_path = Path(zip_path)
    with (
        atomic.replacing(zip_path) as tmp,
        zipfile.ZipFile(zip_path) as src,
        zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as dst,
    ):
        for entry in src.infolist():
            if entry.filename == "run_autograder":
                script = patch_runner(src.read(entry).decode("utf-8"), command=command, why=why)
                info = zipfile.ZipInfo("run_autograder", date_time=entry.date_time)
                info.external_attr = 0o755 << 16
                dst.writestr(info, script)
            else:
                dst.writestr(entry, src.read(entry))
        for path, name in extra:
            dst.write(path, name)


# otter's run_autograder activates its environment, then starts the runner with this one line
_RUNNER_LINE = re.compile(r"\s*python3?\s+\S*run_otter\.py\s*")


def patch_runner(script: str, *, command: str, why: str) -> str:
    """``script`` (otter's ``run_autograder``) with the line that starts otter's runner replaced by
    ``command``, under a comment saying ``why``. A script without exactly one such line is refused:
    otter's layout has changed and the zip must not silently grade with otter's runner."""
    lines = script.splitlines(keepends=True)
    found = [i for i, line in enumerate(lines) if _RUNNER_LINE.fullmatch(line)]
    if len(found) != 1:
        raise ValueError(
            f"otter's run_autograder starts its runner on {len(found)} lines, not one; "
            "this otter version lays it out differently, so attnlab cannot replace it:\n" + script
        )
    at = found[0]
    lines[at : at + 1] = [f"# attnlab build replaced otter's runner here: {why}\n", f"{command}\n"]
    return "".join(lines)
