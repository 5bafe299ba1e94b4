"""Trusted versions of the graded functions that the reference solution calls none of, for a test
file's ``reference``: a student's own function may call them (``multi_head_attention`` through their
``self_attention``, ``rope`` through their ``pe_shift_matrix``), and where theirs fails its own tests
the grader lends one of these in its place. Each takes the SPEC's arguments and does what the SPEC
says, its errors included; the oracle's own versions take more keywords, to build the variants."""

import numpy as np

from . import extensions, positional

__all__ = ["add_positional_encoding", "pe_shift_matrix", "rope"]


def add_positional_encoding(E, base=10000.0):
    E = np.asarray(E, dtype=np.float64)
    return E + positional.pe(E.shape[0], E.shape[1], base)


def pe_shift_matrix(k, d_model, base=10000.0):
    if d_model % 2:
        raise ValueError(f"d_model must be even, got {d_model}")
    return positional.shift_matrix(k, d_model, base)


def rope(X, base=10000.0):
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[1] % 2:
        raise ValueError(f"rope needs X of shape (n, d) with an even d, got {X.shape}")
    return extensions.rope(X, base)
