"""A cap on the CPU time of work that may not finish (sympy's simplify, big expansions).

The cap counts the CPU time this process spends (``ITIMER_PROF``: user and system time), never
the wall clock: another process competing for the cores slows the work down but does not use up
its budget, so the same answer gets the same verdict on a quiet and on a loaded machine.
"""

from __future__ import annotations

import signal
import sys
import threading
import time
from contextlib import contextmanager
from typing import Iterator


class OutOfTime(Exception):
    """The capped work used up its CPU budget."""


# Once the budget is spent the timer keeps firing at this interval: an OutOfTime raised where
# Python cannot pass it on (a garbage-collector callback, a __del__) is raised again soon after.
REPEAT_SECONDS = 0.05
_ends: list[float] = []  # CPU-time budgets' ends (process CPU seconds) of the caps open, outermost first


def can_interrupt() -> bool:
    """Only the main thread of a POSIX process can be interrupted by a timer signal."""
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


def cpu_seconds() -> float:
    """CPU time (user and system) this process has used so far."""
    return time.process_time()


def _fire(signum, frame):
    raise OutOfTime("out of CPU time")


def _quiet_hook(previous):
    """An unraisable-exception hook that drops OutOfTime: one raised in a finaliser or a garbage
    collector callback is swallowed by Python and raised again by the next repeat, so reporting it
    would only print noise (and a hook that formats a traceback would itself be interrupted)."""

    def hook(unraisable):
        if not isinstance(unraisable.exc_value, OutOfTime):
            previous(unraisable)

    return hook


@contextmanager
def cap(seconds: float) -> Iterator[None]:
    """Raise :class:`OutOfTime` inside the block once it has used ``seconds`` of CPU time.

    A cap never outlives the caps around it, and entering one after an outer cap has run out
    fails at once. Where no timer can interrupt (another thread, Windows) the block is refused
    with :class:`OutOfTime`, so callers fall back to a cheaper verdict instead of risking a hang.
    """
    if not can_interrupt():
        raise OutOfTime("no timer available in this thread")
    now = cpu_seconds()
    end = min([now + seconds, *_ends])
    if end <= now:
        raise OutOfTime("out of CPU time")
    previous = signal.signal(signal.SIGPROF, _fire)
    previous_hook = sys.unraisablehook
    sys.unraisablehook = _quiet_hook(previous_hook)
    _ends.append(end)
    signal.setitimer(signal.ITIMER_PROF, end - now, REPEAT_SECONDS)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        _ends.pop()
        signal.signal(signal.SIGPROF, previous)
        sys.unraisablehook = previous_hook
        if _ends:  # re-arm the enclosing cap with what is left of it
            signal.setitimer(signal.ITIMER_PROF, max(_ends[-1] - cpu_seconds(), 1e-4), REPEAT_SECONDS)
