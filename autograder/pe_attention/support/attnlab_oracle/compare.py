"""Comparing a submission's result with the oracle's, and naming known wrong variants."""

import numpy as np

ATOL = 1e-8
RTOL = 1e-6

__all__ = ["ATOL", "RTOL", "as_array", "assert_shape", "assert_close"]


def as_array(value, what):
    """The submission's result as a plain float array, or a clear AssertionError."""
    if value is None:
        raise AssertionError(f"{what} returned None: did you forget `return`?")
    try:
        arr = np.array(value, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise AssertionError(f"{what} returned {type(value).__name__}, not an array of numbers ({e})")
    return arr


def assert_shape(value, shape, what):
    arr = as_array(value, what)
    if arr.shape != tuple(shape):
        raise AssertionError(f"{what} has shape {arr.shape}, expected {tuple(shape)}")
    return arr


def assert_close(value, expected, what, variants=(), atol=ATOL, rtol=RTOL):
    """Fail with the first differing index, or with the name of a matching known wrong variant.

    ``variants`` is a sequence of ``(name, explanation, array)``.
    """
    expected = np.asarray(expected, dtype=np.float64)
    got = assert_shape(value, expected.shape, what)
    if np.allclose(got, expected, atol=atol, rtol=rtol):
        return
    for name, why, wrong in variants:
        wrong = np.asarray(wrong, dtype=np.float64)
        if wrong.shape == got.shape and np.allclose(got, wrong, atol=atol, rtol=rtol):
            raise AssertionError(f"{what} looks like {name}: {why}")
    if not np.all(np.isfinite(got)):
        idx = tuple(int(i) for i in np.argwhere(~np.isfinite(got))[0])
        raise AssertionError(f"{what} has a non-finite value (nan or inf) at index {idx}")
    err = np.abs(got - expected)
    idx = tuple(int(i) for i in np.unravel_index(np.argmax(err), err.shape))
    raise AssertionError(f"{what} is wrong at index {idx} (off by {err[idx]:.3g})")
