OK_FORMAT = False

from functools import partial

import numpy as np
from otter.test_files import test_case

import attnlab_oracle as oracle


def _got(P):
    """The submission's result, in words when it is the identity (what [0, 1, 2] gave just before)."""
    if np.shape(P) == (3, 3) and np.array_equal(P, np.eye(3)):
        return "the identity matrix, as for [0, 1, 2]"
    return str(np.round(np.asarray(P, dtype=np.float64), 3).tolist())
name = "permutation_matrix"
reference = oracle.permutation_matrix  # lent to the callers of permutation_matrix when the student's own fails


@test_case(points=1, hidden=False)
def test_identity_and_example(permutation_matrix):
    P = np.asarray(permutation_matrix([0, 1, 2]))
    assert P.shape == (3, 3), f"permutation_matrix([0, 1, 2]) has shape {P.shape}, expected (3, 3)"
    assert np.allclose(P, np.eye(3)), "the identity permutation [0, 1, 2] gives the identity matrix"
    P = np.asarray(permutation_matrix([1, 2, 0]))
    assert np.allclose(P, [[0, 1, 0], [0, 0, 1], [1, 0, 0]]), (
        "permutation_matrix([1, 2, 0]) should have rows [0, 1, 0], [0, 0, 1], [1, 0, 0]: row i has its 1 in "
        f"column perm[i], so (P @ X)[i] = X[perm[i]]; got {_got(P)}")


@test_case(points=1, hidden=True)
def test_cycles(permutation_matrix):
    X = np.random.default_rng(60).normal(size=(5, 3))
    perms = ([1, 2, 0], (2, 0, 1), np.array([3, 0, 4, 1, 2]), [0, 2, 1])
    identity = oracle.same_whatever(permutation_matrix, perms, lambda shape: np.eye(shape[0]),
                                    "the identity matrix (the right result for the identity permutation only)", "perms")
    for perm in perms:
        n = len(perm)
        what = f"permutation_matrix({[int(p) for p in perm]})"
        P = oracle.call(permutation_matrix, perm)
        oracle.assert_close(P, oracle.permutation_matrix(perm), what, partial(oracle.permutation_matrix_variants, perm),
                            relation=identity)
        oracle.assert_close(oracle.as_array(P, what) @ X[:n], X[:n][list(perm)],
                            f"{what} @ X (row i must be X[perm[i]])")
    oracle.assert_unchanged(permutation_matrix, np.array([3, 0, 4, 1, 2]))


@test_case(points=1, hidden=True)
def test_rejects_what_is_not_a_permutation(permutation_matrix):
    raised = {tuple(perm): oracle.raised_by(permutation_matrix, perm) for perm in ([0, 0, 1], [1, 2, 3], [0, 1, 5])}
    mistake = oracle.rejection_mistake(raised)
    for perm in ([0, 0, 1], [1, 2, 3], [0, 2, 2, 1], [-1, 0, 1]):
        oracle.assert_raises(ValueError, permutation_matrix, perm, accepts=([2, 0, 1],),
                             why="every index 0..n-1 must appear exactly once, or P would drop or repeat rows",
                             mistake=mistake)
