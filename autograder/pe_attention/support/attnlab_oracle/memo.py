"""The oracle's values computed once per process. Every submission's tests ask for the same
expected arrays and variants (the oracle's plain loops are most of a test's own work), so a grading
worker serving a class computes each once. Entries are keyed by the arguments' exact bytes and
types, and every caller gets a fresh copy: no test can change what a later one sees. Arguments
that have no such key (a function) skip the memo.

What is kept is bounded in bytes, for the whole process: a reference lent to a student's code is
one of these functions, called on whatever the student passes it, and what a student asks for must
not stay in the grading worker (for the next student) beyond ``BUDGET``. The tests' own entries
take about 0.1 MB; once the budget is full the oldest entries go first, and an entry larger than
the budget is computed and not kept."""

import functools

import numpy as np

__all__ = ["memoised"]

BUDGET = 32 << 20  # bytes kept by every memoised function together
_held = [0]  # bytes kept now
_order: dict = {}  # (id of a function's dict, key) -> that dict: every entry kept, oldest first


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


def _size(value):
    """Bytes an entry's key or value holds, near enough: its arrays and byte strings, and a little
    for everything else."""
    if isinstance(value, np.ndarray):
        return value.nbytes + 128
    if isinstance(value, (bytes, str)):
        return len(value) + 64
    if isinstance(value, (tuple, list)):
        return sum(map(_size, value)) + 64
    if isinstance(value, dict):
        return sum(_size(k) + _size(v) for k, v in value.items()) + 64
    return 64


def _keep(kept, key, value):
    """Keep ``value`` under ``key`` in ``kept`` within the process's ``BUDGET``, dropping the oldest
    entries of any function first; not at all if it alone is over the budget."""
    size = _size(key) + _size(value)
    if size > BUDGET or key in kept:  # (kept meanwhile by a call it made itself)
        return
    while _held[0] + size > BUDGET:
        (_, old), owner = next(iter(_order.items()))
        del _order[(id(owner), old)]
        _held[0] -= owner.pop(old)[1]
    kept[key] = (value, size)
    _order[(id(kept), key)] = kept
    _held[0] += size


def memoised(fn):
    """``fn`` with its results kept per arguments, within the process's ``BUDGET`` of bytes."""
    kept = {}

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            key = (_key(args), tuple(sorted((k, _key(v)) for k, v in kwargs.items())))
        except _NoKey:
            return fn(*args, **kwargs)
        entry = kept.get(key)
        if entry is None:
            value = _copy(fn(*args, **kwargs))
            _keep(kept, key, value)
            return _copy(value)
        return _copy(entry[0])

    return wrapper
