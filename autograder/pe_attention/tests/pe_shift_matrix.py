OK_FORMAT = False

from functools import partial

import numpy as np
from otter.test_files import test_case

import attnlab_oracle as oracle

name = "pe_shift_matrix"
reference = oracle.references.pe_shift_matrix  # lent to the callers of pe_shift_matrix when the student's own fails


@test_case(points=1, hidden=False)
def test_shape_identity_and_one_block(pe_shift_matrix):
    M = pe_shift_matrix(0, 6)
    assert isinstance(M, np.ndarray), f"pe_shift_matrix should return a numpy array, got {type(M).__name__}"
    assert M.shape == (6, 6), f"pe_shift_matrix(0, 6) has shape {M.shape}, expected (6, 6)"
    assert np.allclose(M, np.eye(6)), "shifting by k = 0 positions must be the identity matrix"
    c, s = np.cos(1.0), np.sin(1.0)
    assert np.allclose(pe_shift_matrix(1, 2), [[c, s], [-s, c]]), (
        "pe_shift_matrix(1, 2) should have rows [cos 1, sin 1] and [-sin 1, cos 1]: it maps [sin p, cos p] to "
        "[sin(p + 1), cos(p + 1)]")


@test_case(points=2, hidden=True)
def test_blocks(pe_shift_matrix):
    # the same k and d_model with two bases in both orders: every call must use its own base
    calls = [(1, 4, 10000.0), (3, 8, 10000.0), (-2, 6, 10000.0), (5, 6, 64.0), (5, 6, 10000.0), (5, 6, 64.0)]
    oracle.assert_close_in_turn(pe_shift_matrix, [((k, d_model), {"base": base}, oracle.shift_matrix(k, d_model, base),
                                                   partial(oracle.shift_variants, k, d_model, base))
                                                  for k, d_model, base in calls])


@test_case(points=1, hidden=True)
def test_shifts_every_position(pe_shift_matrix):
    for d_model in (8, 12):
        # each row is worked out on its own: PE[pos] is pe_rows([pos], d_model)[0], bit for bit (a fresh
        # copy of it, as the memo hands out, for the product)
        PE = oracle.pe_rows(range(160), d_model)
        for k in (1, 4, 17, 100):
            what = f"pe_shift_matrix({k}, {d_model})"
            M = oracle.assert_shape(oracle.call(pe_shift_matrix, k, d_model), (d_model, d_model), what)
            for pos in range(0, 60, 7):
                oracle.assert_close(M @ PE[pos].copy(), PE[pos + k], f"{what} @ PE[{pos}] (should be PE[{pos + k}])")


@test_case(points=1, hidden=True)
def test_odd_d_model_rejected(pe_shift_matrix):
    oracle.assert_raises(ValueError, pe_shift_matrix, 1, 5, accepts=(1, 4),
                         why="with an odd d_model the last sine has no cosine partner",
                         returned=("an odd d_model accepted", "check d_model first and raise ValueError when it is odd"))
