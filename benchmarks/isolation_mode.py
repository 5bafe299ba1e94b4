"""What the benchmarks check before they report a figure: the isolation mode they measured. A
zygote whose trial sandbox fails falls back to a weaker mode (down to "none"), which is cheaper:
a benchmark that did not check would report the fallback's speed as the engine's."""

from __future__ import annotations

import argparse
import os

MODES = ("root", "userns", "landlock", "none")


def strongest_expected() -> str:
    """The strongest mode this machine should give: namespaces as root, else a user namespace."""
    return "root" if os.geteuid() == 0 else "userns"


def add_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--expect-mode",
        choices=MODES,
        default=strongest_expected(),
        help="the isolation mode every sandbox must have had; any other fails the run (default: %(default)s)",
    )


def check(measured: set[str], expected: str) -> None:
    """Exit with a message unless every mode ``measured`` is ``expected``."""
    if measured != {expected}:
        got = ", ".join(sorted(measured)) or "no mode reported"
        raise SystemExit(f"measured isolation mode {got}, expected {expected}: the figures would not be the engine's")
