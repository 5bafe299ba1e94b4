"""Part B: permutation matrices, built entry by entry."""

import numpy as np

__all__ = ["permutation_matrix", "permutation_matrix_variants"]


def permutation_matrix(perm):
    """P with (P @ X)[i] = X[perm[i]]: row i has its 1 in column perm[i]."""
    perm = [int(p) for p in perm]
    P = np.zeros((len(perm), len(perm)))
    for i, p in enumerate(perm):
        P[i][p] = 1.0
    return P


def permutation_matrix_variants(perm):
    perm = [int(p) for p in perm]
    inverse = np.zeros((len(perm), len(perm)))
    for i, p in enumerate(perm):
        inverse[p][i] = 1.0
    return [
        (
            "the inverse permutation (P transposed)",
            "row i of P must pick row perm[i] of X, so P[i, perm[i]] = 1, not P[perm[i], i] = 1",
            inverse,
        )
    ]
