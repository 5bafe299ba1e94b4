"""``RESULTS/run.json``: how a run graded (the engine's version, the limits, and how each worker's
sandboxes were isolated), and the warning the summary gives when a worker's sandboxes were isolated
more weakly than this machine offers, or differently from another worker's (a zygote whose trial
sandbox fails falls back to a weaker mode, and the grades alone would not show it), or not isolated
at all (a machine that offers nothing better: the run is still a weaker one than it should be)."""

from __future__ import annotations

import json
import sys
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path

from .. import __version__
from . import report

STRENGTH = ("root", "userns", "landlock", "none")  # the zygote's modes, strongest first
NO_ISOLATION = (
    "the sandboxes were not isolated: this machine gives neither namespaces nor Landlock (ABI 3 or "
    "newer), so each submission ran with process limits only and could read what the grading user can "
    "(see run.json)"
)


@dataclass
class Isolation:
    """What one worker said when ready (and again if it restarted into another mode)."""

    worker: int  # its pid
    mode: str
    strongest: str  # the strongest mode its zygote found this machine offers
    isolation: str  # the mode in a sentence


def reported(msg: dict, worker: int) -> Isolation:
    """The worker's ready message, read defensively: an unknown mode counts as the weakest."""
    mode = str(msg.get("ready"))
    return Isolation(worker, mode, str(msg.get("strongest", mode)), str(msg.get("isolation", mode)))


def _rank(mode: str) -> int:
    return STRENGTH.index(mode) if mode in STRENGTH else len(STRENGTH)


def _offered(workers: list[Isolation]) -> str:
    """The strongest mode any worker's zygote found offered here or got (workers that differ: one
    of them got less than the machine gives)."""
    return min([w.strongest for w in workers] + [w.mode for w in workers], key=_rank)


def warning(workers: list[Isolation]) -> str:
    """A sentence when any worker's mode is weaker than the strongest this machine offers, or than
    another worker's, or when no worker's sandboxes are isolated at all; "" otherwise."""
    if not workers:
        return ""
    offered = _offered(workers)
    modes = Counter(w.mode for w in workers)
    if all(m == offered for m in modes):
        return NO_ISOLATION if offered == "none" else ""
    said = ", ".join(f"{m} ({n} worker(s))" for m, n in sorted(modes.items(), key=lambda kv: _rank(kv[0])))
    return f"the sandboxes' isolation fell back: {said}, where this machine offers {offered} (see run.json)"


def write(out: Path, *, workers: list[Isolation], limits: dict) -> Path:
    """Write ``out/run.json``; its path."""
    record = {
        "engine": __version__,
        "python": sys.version.split()[0],
        "limits": limits,
        "strongest_offered": _offered(workers) if workers else None,
        "workers": [asdict(w) for w in workers],
        "warning": warning(workers) or None,
    }
    path = out / "run.json"
    report.write_atomic(path, json.dumps(record, indent=1) + "\n")
    return path
