"""Making an otter-grader autograder zip with ``otter generate`` from a staged folder."""

from __future__ import annotations

import contextlib
import json
import os
import zipfile
from pathlib import Path


@contextlib.contextmanager
def _cwd(path: Path):
    old = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


def generate(*, stage: Path, target: Path, points_possible: float, requirements: Path,
             support: list[str]) -> Path:
    """Zip ``stage/tests`` and the support folders ``stage/<support>`` into ``target``.

    otter writes a top-level ``score`` only when ``points_possible`` is set, and takes support
    files relative to the working directory, hence the staging folder.
    """
    from otter.generate import main as otter_generate  # a second to import: only when building

    target = Path(target).resolve()
    (stage / "otter_config.json").write_text(
        json.dumps({"lang": "python", "points_possible": points_possible}, indent=2), encoding="utf-8")
    partial = target.with_name(f".{target.name}.partial")  # the old zip survives a failed build
    with _cwd(stage):
        otter_generate(tests_dir="tests", output_path=str(partial), config="otter_config.json",
                       requirements=str(requirements), no_environment=True, files=support)
    os.replace(partial, target)
    return target


def run_with(zip_path: Path, *, command: str, why: str, extra: list[tuple[Path, str]] = ()) -> None:
    """Make Gradescope's ``run_autograder`` in ``zip_path`` run ``command`` instead of otter's runner.

    ``extra`` files (path, name in the zip) are added; ``otter run -a`` ignores ``run_autograder``
    and keeps using otter's own runner on the same test files.
    """
    script = (f"#!/usr/bin/env bash\n# Written by `attnlab build`: {why}\n"
              "# `otter run -a` ignores this file.\n"
              "export PATH=/root/miniforge3/bin:$PATH\n"
              'eval "$(mamba shell hook --shell bash)"\n'
              "mamba activate otter-env\n"
              f"{command}\n")
    tmp = zip_path.with_suffix(".tmp")
    with zipfile.ZipFile(zip_path) as src, zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as dst:
        for entry in src.infolist():
            if entry.filename == "run_autograder":
                info = zipfile.ZipInfo("run_autograder", date_time=entry.date_time)
                info.external_attr = 0o755 << 16
                dst.writestr(info, script)
            else:
                dst.writestr(entry, src.read(entry))
        for path, name in extra:
            dst.write(path, name)
    os.replace(tmp, zip_path)
