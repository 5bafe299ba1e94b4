"""What one crossing of the grading channel costs, as ratios against a bare socket ping-pong measured
in the same run. A measurement, not a test.

    python benchmarks/round_trip.py [-n 20000] [--repeat 5]

Two processes pinned to one core, as a worker and its sandbox are; for each kind of round trip, the
CPU time both spend per round trip (``/proc/PID/schedstat``: exact, where wall time on a shared
machine mostly measures the neighbours), the median of ``--repeat`` runs, interleaved:

1. bare: 200 bytes each way over a socket pair, the least two Python processes can do;
2. probe: a student function calls a lent probe on one 5x4 array, ``n`` times in one ``call``, each
   answered from the probe's table (a checker's call: ``Endpoint.caller`` on the student's side,
   the table loop on the trusted side);
3. call: ``StudentFunction`` calls a student function that returns its array argument (a test's
   call: ``session.Sandbox.call`` and ``sandbox.Runtime.do_call``).

The student's side is ``sandbox.Runtime`` in a plain forked process: the protocol's cost alone, with
no isolation (namespaces, cgroup, system-call filter) around it. Prints the core count and the load.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import socket
import statistics
import sys
from pathlib import Path

import numpy as np

SRC = Path(__file__).resolve().parents[1] / "src"
sys.path.insert(0, str(SRC))

from attnlab.grade import session  # noqa: E402

STUDENT = """
def probe_calls(f, x, k):
    for _ in range(k):
        f(x)

def ident(x):
    return x
"""


def _cpu(pid: int) -> float:
    with open(f"/proc/{pid}/schedstat") as f:
        return int(f.read().split()[0]) / 1e9


def _pin() -> None:
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})


def bare(n: int) -> float:
    """CPU seconds per round trip of 200 bytes each way."""
    mine, theirs = socket.socketpair()
    pid = os.fork()
    if pid == 0:
        mine.close()
        while data := theirs.recv(1 << 16):
            theirs.sendall(data)
        os._exit(0)
    theirs.close()
    message = b"x" * 200
    before = _cpu(os.getpid()) + _cpu(pid)
    for _ in range(n):
        mine.sendall(message)
        mine.recv(1 << 16)
    spent = _cpu(os.getpid()) + _cpu(pid) - before
    mine.close()
    os.waitpid(pid, 0)
    return spent / n


class _Probe:
    """A pure function with its known answers, as ``attnlab_oracle.probes`` lends one: two ways of
    answering (the same for a pure function) and ``pick`` choosing between them."""

    def __init__(self, x: np.ndarray):
        self.x = x

    def __call__(self, x: np.ndarray) -> np.ndarray:
        return 2 * x

    def known_answers(self) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]:
        y = (2 * self.x)[None]
        return self.x[None], (y, y)

    def pick(self, i: int) -> int:
        return 0


def channel(n: int) -> tuple[float, float]:
    """CPU seconds per probe round trip and per call, against sandbox.Runtime in a forked process."""
    mine, theirs = socket.socketpair()
    pid = os.fork()
    if pid == 0:
        mine.close()
        spec = importlib.util.spec_from_file_location("_round_trip_sandbox", SRC / "attnlab/grade/sandbox.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
        try:
            module.Runtime(theirs).endpoint.serve_forever()
        finally:
            os._exit(0)
    theirs.close()
    sandbox = session.Sandbox(None, pid, mine, None)  # type: ignore[arg-type]  # never killed: no zygote
    cells = sandbox.request("load", [STUDENT], 10, "load")
    for i in range(len(cells[0])):
        sandbox.request("exec", (0, i), 10, "exec")
    x = np.random.default_rng(0).normal(size=(5, 4))
    probe_calls = session.StudentFunction(sandbox, "probe_calls", None, 60.0)
    ident = session.StudentFunction(sandbox, "ident", None, 10.0)
    before = _cpu(os.getpid()) + _cpu(pid)
    probe_calls(_Probe(x), x, n)
    probe = (_cpu(os.getpid()) + _cpu(pid) - before) / n
    calls = max(n // 10, 1)
    before = _cpu(os.getpid()) + _cpu(pid)
    for _ in range(calls):
        ident(x)
    call = (_cpu(os.getpid()) + _cpu(pid) - before) / calls
    mine.close()
    os.waitpid(pid, 0)
    return probe, call


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=20000, help="probe round trips per run (calls: a tenth)")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    _pin()
    load = os.getloadavg()[0]
    bares, probes, calls = [], [], []
    for _ in range(args.repeat):
        bares.append(bare(args.n))
        probe, call = channel(args.n)
        probes.append(probe)
        calls.append(call)
    b, p, c = (statistics.median(v) * 1e6 for v in (bares, probes, calls))
    print(f"{os.cpu_count()} cores, load {load:.1f} -> {os.getloadavg()[0]:.1f}; CPU per round trip, both sides:")
    print(f"  bare ping-pong  {b:6.1f} us")
    print(f"  probe (table)   {p:6.1f} us  {p / b:.2f}x bare")
    print(f"  call            {c:6.1f} us  {c / b:.2f}x bare")


if __name__ == "__main__":
    main()
