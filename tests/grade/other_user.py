"""Running the grader with another interpreter or as another user: a virtual environment under /tmp
that anyone can read, holding a copy of this numpy and of the attnlab sources. Shared by the isolation
and hostile tests, which run the same attacks as root and as an unprivileged user."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path
from typing import Any

ROOT = os.geteuid() == 0
SRC = Path(__file__).resolve().parents[2] / "src"
SYSTEM_PYTHON = "/usr/bin/python3"  # readable by every user, unlike a pyenv under /root
NOBODY = 65534


def same_version(python: str) -> bool:
    """Whether ``python`` is this interpreter's version (the copied numpy is built for it)."""
    try:
        out = subprocess.run(
            [python, "-c", "import sys; print(sys.version_info[:2])"], capture_output=True, text=True, timeout=30
        )
    except OSError:
        return False
    return out.stdout.strip() == str(tuple(sys.version_info[:2]))


def can_run_as_nobody() -> bool:
    return ROOT and same_version(SYSTEM_PYTHON)


WHY_NOT_AS_NOBODY = "starts the grader as an unprivileged user: needs root and a system Python of this version"


def readable_folder(prefix: str) -> Path:
    """A fresh folder under /tmp that every user can read."""
    folder = Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))
    os.chmod(folder, 0o755)
    return folder


def make_readable(folder: Path) -> None:
    for p in [folder, *folder.rglob("*")]:
        if not p.is_symlink():  # a venv's python points at the system's, which is not ours to change
            os.chmod(p, 0o755 if p.is_dir() or os.access(p, os.X_OK) else 0o644)


def _with_requirements(names: tuple[str, ...]) -> set[str]:
    """The distributions ``names`` and everything they require (extras aside) that is installed here."""
    found: set[str] = set()
    todo = list(names)
    while todo:
        name = re.split(r"[\s;<>=!~\[(]", todo.pop(), maxsplit=1)[0].lower().replace("_", "-")
        if name in found:
            continue
        try:
            requires = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue
        found.add(name)
        todo += [r for r in requires if "extra ==" not in r]
    return found


def venv_under_tmp(python: str, packages: tuple[str, ...] = ("numpy",)) -> Path:
    """A folder under /tmp with ``venv/`` (``python``'s virtual environment holding copies of
    ``packages`` as installed here, with what they require) and ``src/attnlab``; anyone can read
    it. The caller removes it."""
    folder = readable_folder("attnlab-venv-")
    subprocess.run([python, "-m", "venv", "--without-pip", str(folder / "venv")], check=True)
    site = next((folder / "venv" / "lib").glob("python3*/site-packages"))
    for name in _with_requirements(packages):
        dist = metadata.distribution(name)
        for file in dist.files or []:
            source = Path(str(dist.locate_file(file)))
            if ".." not in file.parts and source.is_file() and "__pycache__" not in file.parts:
                (site / file).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, site / file)
    shutil.copytree(SRC / "attnlab", folder / "src" / "attnlab")
    make_readable(folder)
    return folder


def kit_for_nobody(folder: Path, *, packages: tuple[str, ...]) -> Path:
    """In ``folder``: ``kit/`` (``venv_under_tmp`` with ``packages``), the course's test files and
    support folder, and the call graph beside them as the autograder zip carries it, all readable by
    user nobody, and ``out/``, which nobody may write; returns the tests folder."""
    from attnlab import paths
    from attnlab.grade import calls

    shutil.move(str(venv_under_tmp(SYSTEM_PYTHON, packages=packages)), folder / "kit")
    shutil.copytree(paths.tests_dir(), folder / "tests")
    shutil.copytree(paths.support_dir(), folder / "support")
    calls.write(folder / calls.FILE, calls.for_course(paths.current_assignment()))
    (folder / "out").mkdir()
    make_readable(folder)
    os.chown(folder / "out", NOBODY, NOBODY)
    return folder / "tests"


def json_from(
    args: list[str],
    *,
    cwd: Path,
    timeout: float,
    user: int | None = None,
    home: Path | None = None,
    env: dict[str, str] | None = None,
) -> Any:
    """Run ``args`` (as ``user``, with a bare environment and ``env``) and parse its last line of
    output as JSON."""
    env = {"PATH": "/usr/bin:/bin", **({"HOME": str(home)} if home else {}), **(env or {})}
    done = subprocess.run(
        args, capture_output=True, text=True, timeout=timeout, cwd=cwd, user=user, group=user, env=env
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])
