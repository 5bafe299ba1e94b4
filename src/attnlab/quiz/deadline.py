"""A cap on the CPU time of work that may not finish (sympy's simplify, big expansions).

The cap counts the CPU time that the work itself spends, never the wall clock: the time of the
thread doing it (``time.thread_time``), less any full garbage collection on the way. So neither
another process competing for the cores, nor another thread of this process, nor a collection of
this process's whole heap (whose cost is the heap's size, not the work's) uses up its budget, and
the same answer gets the same verdict on a quiet and on a loaded machine, in a small process and
in a large one.

The process-wide CPU timer (``ITIMER_PROF``) only wakes the cap: process time is never less than
the thread's, so it never wakes it late; on waking, the cap raises only once its own budget is
spent, and otherwise sleeps again for what is left.
"""

from __future__ import annotations

import gc
import signal
import sys
import threading
import time
from contextlib import contextmanager
from typing import Any, Iterator, cast


class OutOfTime(Exception):
    """The capped work used up its CPU budget."""


# Once the budget is spent the timer keeps firing at this interval: an OutOfTime raised where
# Python cannot pass it on (a garbage-collector callback, a __del__) is raised again soon after.
REPEAT_SECONDS = 0.05
_ends: list[float] = []  # budgets' ends (in ``cpu_seconds``) of the caps open, outermost first
_excluded = [0.0]  # CPU time of full collections while a cap was open (taken off cpu_seconds)
_collecting: list[float] = []  # thread time when the full collection under way started


def can_interrupt() -> bool:
    """Only the main thread of a POSIX process can be interrupted by a timer signal."""
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


def cpu_seconds() -> float:
    """CPU time (user and system) the calling thread has spent so far, less full collections while
    a cap was open."""
    return time.thread_time() - _excluded[0]


def _count_collections(phase: str, info: dict) -> None:
    # generation 2 is the whole heap; collections in another thread are not this thread's time
    if info.get("generation") != 2 or threading.current_thread() is not threading.main_thread():
        return
    if phase == "start":
        _collecting[:] = [time.thread_time()]
    elif _collecting:
        _excluded[0] += time.thread_time() - _collecting.pop()


def _fire(signum, frame):
    if not _ends or _closing(frame):
        return  # a late signal of a cap that is closing: its budget no longer matters
    left = _ends[-1] - cpu_seconds()
    if left > 0:  # the process's time ran out before the work's (other threads, a collection)
        signal.setitimer(signal.ITIMER_PROF, left, REPEAT_SECONDS)
        return
    raise OutOfTime("out of CPU time")


def _closing(frame) -> bool:
    """Is ``frame`` (or one of its callers, a few levels up) a cap opening or closing? An exception
    there would leave the cap's state half undone, and every later cap out of time."""
    for _ in range(4):
        if frame is None:
            return False
        if frame.f_code in _GUARDED:
            return True
        frame = frame.f_back
    return False


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
    if not _ends:
        gc.callbacks.append(_count_collections)
    previous = signal.signal(signal.SIGPROF, _fire)
    previous_hook = sys.unraisablehook
    sys.unraisablehook = _quiet_hook(previous_hook)
    _ends.append(end)
    signal.setitimer(signal.ITIMER_PROF, end - now, REPEAT_SECONDS)
    try:
        yield
    finally:
        _close(previous, previous_hook)


def _close(previous, previous_hook) -> None:
    signal.setitimer(signal.ITIMER_PROF, 0)
    _ends.pop()
    signal.signal(signal.SIGPROF, previous)
    sys.unraisablehook = previous_hook
    if _ends:  # re-arm the enclosing cap with what is left of it
        signal.setitimer(signal.ITIMER_PROF, max(_ends[-1] - cpu_seconds(), 1e-4), REPEAT_SECONDS)
    else:
        gc.callbacks.remove(_count_collections)


_GUARDED = {cast(Any, cap).__wrapped__.__code__, _close.__code__}
