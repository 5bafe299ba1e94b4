"""The oracle's values computed once per process. Every submission's tests ask for the same
expected arrays and variants (the oracle's plain loops are most of a test's own work), so a grading
worker serving a class computes each once. Entries are keyed by the arguments' exact bytes and
types, and every caller gets a fresh copy: no test can change what a later one sees. Arguments
that have no such key (a function) skip the memo."""

import functools

import numpy as np

__all__ = ["memoised"]

LIMIT = 4096  # entries per function; the tests ask for a few dozen, so this only bounds a misuse


class _NoKey(Exception):
    pass


def _key(value):
    if isinstance(value, np.ndarray):
        return ("array", value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, np.generic):
        return ("scalar", value.dtype.str, value.tobytes())
    if isinstance(value, float):
        return ("float", value.hex())  # -0.0 and 0.0 differ, a nan equals itself
    if value is None or isinstance(value, (bool, int, str)):
        return (type(value).__name__, value)
    if isinstance(value, range):
        return ("range", value.start, value.stop, value.step)
    if isinstance(value, (tuple, list)):
        return (type(value).__name__, tuple(_key(v) for v in value))
    raise _NoKey


def _copy(value):
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, (tuple, list)):
        return type(value)(_copy(v) for v in value)
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    return value


def memoised(fn):
    """``fn`` with its results kept per arguments (``LIMIT`` of them, oldest dropped first)."""
    kept = {}

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            key = (_key(args), tuple(sorted((k, _key(v)) for k, v in kwargs.items())))
        except _NoKey:
            return fn(*args, **kwargs)
        if key not in kept:
            if len(kept) >= LIMIT:
                del kept[next(iter(kept))]
            kept[key] = _copy(fn(*args, **kwargs))
        return _copy(kept[key])

    return wrapper
