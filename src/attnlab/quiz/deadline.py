"""A hard time cap for work that may not finish (sympy's simplify, big expansions)."""

from __future__ import annotations

import signal
import threading
import time
from contextlib import contextmanager
from typing import Iterator


class OutOfTime(Exception):
    """The capped work did not finish in time."""


_ends: list[float] = []  # monotonic deadlines of the caps currently open, outermost first


def can_interrupt() -> bool:
    """Only the main thread of a POSIX process can be interrupted by a timer signal."""
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


def _fire(signum, frame):
    raise OutOfTime("out of time")


@contextmanager
def cap(seconds: float) -> Iterator[None]:
    """Raise :class:`OutOfTime` inside the block once ``seconds`` have passed.

    A cap never outlives the caps around it, and entering one after an outer cap has expired
    fails at once. Where no timer can interrupt (another thread, Windows) the block is refused
    with :class:`OutOfTime`, so callers fall back to a cheaper verdict instead of risking a hang.
    """
    if not can_interrupt():
        raise OutOfTime("no timer available in this thread")
    now = time.monotonic()
    end = min([now + seconds, *_ends])
    if end <= now:
        raise OutOfTime("out of time")
    previous = signal.signal(signal.SIGALRM, _fire)
    _ends.append(end)
    signal.setitimer(signal.ITIMER_REAL, end - now)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        _ends.pop()
        signal.signal(signal.SIGALRM, previous)
        if _ends:  # re-arm the enclosing cap with what is left of it
            signal.setitimer(signal.ITIMER_REAL, max(_ends[-1] - time.monotonic(), 1e-4))
