"""Part B: permutation matrices, built entry by entry."""

import numpy as np

from .mistakes import Mistake, family, variants

__all__ = ["permutation_matrix", "permutation_matrix_variants", "rejection_mistake"]


def permutation_matrix(perm):
    """P with (P @ X)[i] = X[perm[i]]: row i has its 1 in column perm[i]."""
    perm = [int(p) for p in perm]
    P = np.zeros((len(perm), len(perm)))
    for i, p in enumerate(perm):
        P[i][p] = 1.0
    return P


PERMUTATION_MISTAKES = [
    Mistake(
        "the inverse permutation (P transposed)",
        "row i of P must pick row perm[i] of X, so P[i, perm[i]] = 1, not P[perm[i], i] = 1",
        dict(transposed=True),
    )
]


def _permutation_elsewhere():
    return [((perm,), {}) for perm in ([2, 0, 1], [1, 3, 0, 2], [3, 0, 4, 1, 2])]


@family("permutation_matrix", PERMUTATION_MISTAKES, _permutation_elsewhere)
def permutation_family(perm, *, transposed=False):
    """P with its mistakes as parameters (numpy; the defaults give ``permutation_matrix``)."""
    perm = [int(p) for p in perm]
    if sorted(perm) != list(range(len(perm))):
        raise ValueError(f"{perm} is not a permutation")
    P = np.eye(len(perm))[perm]
    return P.T if transposed else P


def permutation_matrix_variants(perm):
    return variants(permutation_family, PERMUTATION_MISTAKES, perm)


def rejection_mistake(raised):
    """What a permutation_matrix that raises ``raised[perm]`` (an exception type, or None where it
    returned) for these three non-permutations got wrong, when that is certain:
    [0, 0, 1] repeats an index, [1, 2, 3] runs out of range by one, [0, 1, 5] by more."""
    repeat, out_of_range = raised[(0, 0, 1)], raised[(1, 2, 3)]
    far = raised.get((0, 1, 5))
    if (
        repeat is not None
        and issubclass(repeat, ValueError)
        and far is not None
        and issubclass(far, ValueError)
        and (out_of_range is None or not issubclass(out_of_range, ValueError))
    ):
        return (
            "a range check that lets perm[i] == n through",
            "the largest index is n - 1: check 0 <= p < n (or sorted(perm) == list(range(n)))",
        )
    if repeat is None and out_of_range is not None and issubclass(out_of_range, ValueError):
        return (
            "a range check without a check for repeats",
            "an index that appears twice is in range too: check sorted(perm) == list(range(n))",
        )
    if (
        repeat is not None
        and issubclass(repeat, ValueError)
        and out_of_range is not None
        and not issubclass(out_of_range, ValueError)
    ):
        return (
            "a check for repeats without a range check",
            "n distinct indices can still run past n - 1: check sorted(perm) == list(range(n))",
        )
    if repeat is None and (out_of_range is None or not issubclass(out_of_range, ValueError)):
        return (
            "no check that perm is a permutation",
            "before building P, raise ValueError unless sorted(perm) == list(range(n))",
        )
    return None
