OK_FORMAT = False

import numpy as np
from otter.test_files import test_case

import attnlab_oracle as oracle

name = "permutation_matrix"


@test_case(points=1, hidden=False)
def test_identity(permutation_matrix):
    P = np.asarray(permutation_matrix([0, 1, 2]))
    assert P.shape == (3, 3), f"permutation_matrix([0, 1, 2]) has shape {P.shape}, expected (3, 3)"
    assert np.allclose(P, np.eye(3)), "the identity permutation [0, 1, 2] gives the identity matrix"


@test_case(points=2, hidden=True)
def test_cycles(permutation_matrix):
    X = np.random.default_rng(60).normal(size=(5, 3))
    for perm in ([1, 2, 0], (2, 0, 1), np.array([3, 0, 4, 1, 2]), [0, 2, 1]):
        n = len(perm)
        what = f"permutation_matrix({list(int(p) for p in perm)})"
        oracle.assert_close(permutation_matrix(perm), oracle.permutation_matrix(perm), what,
                            oracle.permutation_matrix_variants(perm))
        P = oracle.as_array(permutation_matrix(perm), what)
        oracle.assert_close(P @ X[:n], X[:n][list(perm)], f"{what} @ X (row i must be X[perm[i]])")
