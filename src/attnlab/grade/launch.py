"""Starting a zygote's interpreter (``sandbox.py``): the one step of a worker's start that needs
neither numpy nor the tests, so that a worker takes it first and the zygote gets ready while the
worker imports the rest and loads the tests (``session.Zygote`` drives it from there)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

SANDBOX = Path(__file__).with_name("sandbox.py")
THREAD_VARS = (
    "OPENBLAS_NUM_THREADS",
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "NUMEXPR_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
)


@dataclass
class Launched:
    """A zygote's process and this side's end of its control socket."""

    proc: subprocess.Popen
    ctl: socket.socket


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
    """Start a zygote (``session.Zygote`` says what the options mean)."""
    ctl, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    config = dict(
        cpu=cpu,
        uid=uid,
        gid=gid,
        memory_mb=memory_mb,
        cpu_seconds=cpu_seconds,
        nproc=nproc,
        isolate=isolate,
        ctl_fd=theirs.fileno(),
        parent=os.getpid(),
        packages=list(packages),
        preload=list(preload),
        thread_vars=list(THREAD_VARS),
        scratch_mb=min(256, max(memory_mb // 8, 16)),
    )
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env.update({k: "1" for k in THREAD_VARS}, MPLBACKEND="Agg")
    try:
        proc = subprocess.Popen(
            [sys.executable, "-I", str(SANDBOX), json.dumps(config)],
            pass_fds=(theirs.fileno(),),
            stdin=subprocess.DEVNULL,
            env=env,
        )
    except BaseException:
        ctl.close()
        raise
    finally:
        theirs.close()
    ctl.settimeout(60)
    return Launched(proc, ctl)
