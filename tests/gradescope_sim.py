"""A faithful stand-in for Gradescope's grading container, for the kit's tests.

``run(zip, files)`` builds a root file system in a private mount namespace: the host's system
folders and this Python read-only, a fresh ``/tmp``, ``/proc`` and ``/dev``, an ``/autograder`` with
``source/`` (the unzipped autograder), ``submission/`` (the student's files), ``results/`` and
``submission_metadata.json``, and a ``/root`` of mode 0700 as in the image. It then runs the zip's
own ``run_autograder`` there under ``chroot``, with a stand-in ``mamba`` whose ``activate`` leaves
this Python on the PATH, and returns ``results.json``. The kit's source tree is not mounted: the
zip must carry all it runs. Needs root and ``unshare``; ``available()``
says whether this machine can.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

SYSTEM = ["/usr", "/bin", "/sbin", "/lib", "/lib64", "/etc"]

MAMBA = """#!/bin/sh
# stand-in for mamba: `shell hook` defines nothing, `activate` is a no-op (python is on PATH)
exit 0
"""

INNER = r"""
set -eu
root="$1"; shift
mount --make-rprivate /
mount -t tmpfs -o mode=0755 tmpfs "$root"
mkdir -p "$root/proc" "$root/dev" "$root/tmp" "$root/autograder" "$root/root/miniforge3/bin"
mount -t proc proc "$root/proc"
mount --rbind /dev "$root/dev"
mount -t tmpfs -o mode=1777 tmpfs "$root/tmp"
for link in $LINKS; do
    ln -s "$(readlink "$link")" "$root$link"
done
for dir in "$@"; do
    mkdir -p "$root$dir"
    mount --rbind "$dir" "$root$dir"
    mount -o remount,bind,ro "$root$dir"
done
mount --bind "$STAGE/autograder" "$root/autograder"
cp "$STAGE/mamba" "$root/root/miniforge3/bin/mamba"
chmod 0700 "$root/root"
exec chroot "$root" /usr/bin/env -i PATH="$PYBIN:/usr/bin:/bin" HOME=/root \
    /bin/bash /autograder/source/run_autograder
"""


def available() -> bool:
    return os.geteuid() == 0 and shutil.which("unshare") is not None and shutil.which("chroot") is not None


def _python_dirs() -> list[str]:
    """Folders this Python needs: its installation and its environment."""
    dirs = {sys.base_prefix, sys.prefix, sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    return sorted(d for d in dirs if not any(d != o and d.startswith(o + "/") for o in dirs))


def run(autograder_zip: Path, files: dict[str, str | bytes], *, work: Path, timeout: float = 600) -> dict:
    """Grade ``files`` (name -> content) with the zip's ``run_autograder`` in a simulated container."""
    stage = work / "stage"
    ag = stage / "autograder"
    for sub in ("source", "submission", "results"):
        (ag / sub).mkdir(parents=True)
    with zipfile.ZipFile(autograder_zip) as zf:
        zf.extractall(ag / "source")
    (ag / "source" / "run_autograder").chmod(0o755)
    (ag / "submission_metadata.json").write_text(json.dumps({"id": 1, "users": [{"name": "Student"}]}))
    for name, content in files.items():
        target = ag / "submission" / name
        target.write_bytes(content if isinstance(content, bytes) else content.encode())
    (stage / "mamba").write_text(MAMBA)
    (stage / "mamba").chmod(0o755)
    rootfs = work / "rootfs"
    rootfs.mkdir()
    mounts = [d for d in SYSTEM if os.path.isdir(d) and not os.path.islink(d)] + _python_dirs()
    links = [d for d in SYSTEM if os.path.islink(d)]  # /bin -> usr/bin on merged-/usr systems
    env = dict(os.environ, STAGE=str(stage), PYBIN=str(Path(sys.executable).parent), LINKS=" ".join(links))
    proc = subprocess.run(
        ["unshare", "--mount", "--fork", "bash", "-c", INNER, "inner", str(rootfs), *mounts],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    results = ag / "results" / "results.json"
    if not results.exists():
        raise RuntimeError(
            f"run_autograder wrote no results ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
        )
    return json.loads(results.read_text())
