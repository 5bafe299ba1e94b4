"""Starting a zygote's interpreter (``sandbox.py``): the one step of a worker's start that needs
neither numpy nor the tests, so that a worker takes it first and the zygote gets ready while the
worker imports the rest and loads the tests (``session.Zygote`` drives it from there).

A zygote gets what it needs in two parts: what its interpreter starts with (``start``), and, while
it imports numpy, what a worker only knows after more work of its own (``Launched.allow``: the
sandboxes' user id, which a worker claims, and the assignment's packages, from its sandbox.yaml).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

SANDBOX = Path(__file__).with_name("sandbox.py")
THREAD_VARS = (
    "OPENBLAS_NUM_THREADS",
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "NUMEXPR_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
)


# what a zygote takes from the grader's environment: the locale and the paths the dynamic loader
# needs to start this interpreter. Nothing else: a zygote's environment stays in its memory, and so
# in every sandbox it forks, whatever a sandbox deletes from ``os.environ`` (the strings stay on the
# stack, where libc's ``program_invocation_name`` points), and an instructor's shell may hold tokens.
PASSED = ("LANG", "LANGUAGE", "TZ", "LD_LIBRARY_PATH")


def environment() -> dict[str, str]:
    """The environment a zygote starts with: built from ``PASSED``, never the grader's own with
    parts removed, plus what the kit sets itself (one thread per numeric library, matplotlib
    without a display, the temporary folder where the zygote puts its sandboxes' scratch folders)."""
    env = {k: v for k, v in os.environ.items() if k in PASSED or k.startswith("LC_")}
    env.update({k: "1" for k in THREAD_VARS})
    env.update(PATH="/usr/local/bin:/usr/bin:/bin", MPLBACKEND="Agg", TMPDIR=tempfile.gettempdir())
    return env


class Launched:
    """A zygote's process and this side's end of its control socket."""

    def __init__(self, proc: subprocess.Popen, ctl: socket.socket, memory_mb: int):
        self.proc, self.ctl, self.memory_mb = proc, ctl, memory_mb
        self.preload: tuple[str, ...] = ()

    def allow(
        self, *, uid: int | None, gid: int | None, packages: tuple[str, ...] = (), preload: tuple[str, ...] = ()
    ) -> None:
        """The rest of the zygote's options (``session.Zygote`` says what they mean); it waits for
        them once it has imported numpy."""
        self.preload = tuple(preload)
        message = dict(uid=uid, gid=gid, packages=list(packages), preload=list(preload))
        self.ctl.sendall(json.dumps(message).encode())

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait()
        self.ctl.close()


def start(
    *, memory_mb: int, cpu_seconds: int, nproc: int = 64, isolate: bool = True, cpu: int | None = None
) -> Launched:
    """Start a zygote's interpreter; ``Launched.allow`` gives it the rest."""
    ctl, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    config = dict(
        cpu=cpu,
        memory_mb=memory_mb,
        cpu_seconds=cpu_seconds,
        nproc=nproc,
        isolate=isolate,
        ctl_fd=theirs.fileno(),
        parent=os.getpid(),
        scratch_mb=min(256, max(memory_mb // 8, 16)),
    )
    try:
        proc = subprocess.Popen(
            [sys.executable, "-I", str(SANDBOX), json.dumps(config)],
            pass_fds=(theirs.fileno(),),
            stdin=subprocess.DEVNULL,
            env=environment(),
        )
    except BaseException:
        ctl.close()
        raise
    finally:
        theirs.close()
    ctl.settimeout(60)
    return Launched(proc, ctl, memory_mb)


def sandbox_config(tests_dir: Path) -> dict[str, tuple[str, ...]]:
    """What the assignment lets a submission import (``sandbox.yaml`` beside its tests folder):
    ``packages``, distributions (numpy and IPython always, dependencies included), and
    ``preload``, slow modules the zygote imports once a submission is going to import one."""
    path = tests_dir.parent / "sandbox.yaml"
    data: dict = {}
    if path.is_file():
        import yaml

        data = yaml.safe_load(path.read_text()) or {}
    return {key: tuple(str(x) for x in data.get(key) or ()) for key in ("packages", "preload")}


def zygote(
    *,
    uid: int | None,
    gid: int | None,
    memory_mb: int,
    cpu_seconds: int,
    packages: tuple[str, ...] = (),
    preload: tuple[str, ...] = (),
    nproc: int = 64,
    isolate: bool = True,
    cpu: int | None = None,
) -> Launched:
    """Start a zygote with all its options at once (``session.Zygote`` says what they mean)."""
    launched = start(memory_mb=memory_mb, cpu_seconds=cpu_seconds, nproc=nproc, isolate=isolate, cpu=cpu)
    try:
        launched.allow(uid=uid, gid=gid, packages=packages, preload=preload)
    except BaseException:
        launched.kill()
        raise
    return launched
