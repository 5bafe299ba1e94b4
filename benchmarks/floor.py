"""The floor of grading: submissions graded by the test files in one process, with no isolation, no
limits and no protocol (what any engine must at least spend: the students' code and the tests' own
work). A measurement for the other benchmarks (``grade_vs_otter.py``, ``crossing_floor.py``).

    python benchmarks/floor.py [--cross] TESTS_DIR SUPPORT_DIR FILE...

Every file's cells are executed into a namespace of its own (an erroring cell stops only itself, as
in otter; ``grader.check`` does nothing) and graded by the tests' own in-process driver
(``tests/in_process.py``), twice in the same process: the first pass meets everything cold, as a
small class does; the second warm, as most of a large class does. Prints one line per pass: the CPU
seconds it took, then the crossings per file and the echo's CPU seconds (both 0 without ``--cross``).

With ``--cross``, the process and an echo process share one core, as a worker and its sandbox do,
and the tests see each submission function through a wrapper that makes one bare socket round
trip to the echo (200 bytes each way) before the call, as does every function the tests hand to it,
before each of its calls. The submission's own calls of its own functions do not cross. So the
round trips are where the engine's crossings are, and cost what the kernel charges for them here,
with no protocol at all: the floor of any engine that crosses there.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
_MESSAGE = b"x" * 200


def seconds(
    *, files: list[Path], tests_dir: Path, support_dir: Path, cross: bool = False
) -> list[tuple[float, int, float]]:
    """This file run on ``files`` in a process of its own: per pass, (CPU seconds, crossings per
    file, the echo's CPU seconds)."""
    done = subprocess.run(
        [sys.executable, __file__, *(["--cross"] if cross else []), str(tests_dir), str(support_dir), *map(str, files)],
        capture_output=True,
        text=True,
        check=True,
        cwd=tempfile.gettempdir(),
        env=dict(os.environ, MPLBACKEND="Agg"),
    )
    return [
        (float(cpu), int(n), float(echo)) for cpu, n, echo in (line.split() for line in done.stdout.split("\n")[-3:-1])
    ]


class _Crossing:
    """The bare round trips to an echo process on this process's core."""

    def __init__(self) -> None:
        self.count = 0
        core = min(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {core})  # the echo, forked next, shares it
        self.sock, theirs = socket.socketpair()
        self.pid = os.fork()
        if self.pid == 0:
            self.sock.close()
            while data := theirs.recv(1 << 16):
                theirs.sendall(data)
            os._exit(0)
        theirs.close()

    def cpu(self) -> float:
        """The echo's CPU seconds so far."""
        return int(Path(f"/proc/{self.pid}/schedstat").read_text().split()[0]) / 1e9

    def trip(self) -> None:
        self.count += 1
        self.sock.sendall(_MESSAGE)
        self.sock.recv(1 << 16)

    def lent(self, value):
        if not callable(value):
            return value

        def lent(*args, **kwargs):
            self.trip()
            return value(*args, **kwargs)

        return lent

    def seen(self, fn):
        """``fn`` as the tests call it: a round trip, then the call, with what it is handed crossing too."""

        def seen(*args, **kwargs):
            self.trip()
            return fn(*(self.lent(a) for a in args), **{k: self.lent(v) for k, v in kwargs.items()})

        return seen


def main(argv: list[str]) -> None:
    cross = argv[:1] == ["--cross"]
    tests_dir, support_dir, *files = argv[1:] if cross else argv
    sys.path[:0] = [str(REPO / "tests"), support_dir]
    from in_process import grade_env

    from attnlab import testfiles
    from attnlab.grade import source

    tests = testfiles.load_dir(Path(tests_dir))
    otter = types.ModuleType("otter")
    otter.Notebook = type("Notebook", (), {"__init__": lambda self, *a, **k: None, "check": lambda self, *a, **k: None})
    sys.modules["otter"] = otter
    crossing = _Crossing() if cross else None
    for _ in range(2):
        start, count, echo = time.process_time(), crossing.count if crossing else 0, crossing.cpu() if crossing else 0.0
        for path in files:
            env: dict = {"__name__": "__main__"}
            for cell in source.cells(Path(path)):
                try:
                    exec(compile(cell, path, "exec"), env)
                except BaseException:  # noqa: BLE001 - a cell that fails stops only itself, as in otter
                    pass
            if crossing is not None:
                # the tests see the submission's functions through the crossing; the submission its own
                env = {k: crossing.seen(v) if _defined_in(v, path) else v for k, v in env.items()}
            grade_env(env, tests)
        spent = time.process_time() - start
        if crossing is None:
            print(spent, 0, 0.0)
        else:
            print(spent, round((crossing.count - count) / len(files)), crossing.cpu() - echo)
    if crossing is not None:
        crossing.sock.close()
        os.waitpid(crossing.pid, 0)


def _defined_in(value, path: str) -> bool:
    return isinstance(value, types.FunctionType) and value.__code__.co_filename == path


if __name__ == "__main__":
    main(sys.argv[1:])
