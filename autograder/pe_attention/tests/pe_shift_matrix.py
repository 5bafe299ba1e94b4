OK_FORMAT = False

import numpy as np
from otter.test_files import test_case

import attnlab_oracle as oracle

name = "pe_shift_matrix"


@test_case(points=1, hidden=False)
def test_shape_and_identity(pe_shift_matrix):
    M = pe_shift_matrix(0, 6)
    assert isinstance(M, np.ndarray), f"pe_shift_matrix should return a numpy array, got {type(M).__name__}"
    assert M.shape == (6, 6), f"pe_shift_matrix(0, 6) has shape {M.shape}, expected (6, 6)"
    assert np.allclose(M, np.eye(6)), "shifting by k = 0 positions must be the identity matrix"


@test_case(points=2, hidden=True)
def test_blocks(pe_shift_matrix):
    for k, d_model, base in [(1, 4, 10000.0), (3, 8, 10000.0), (-2, 6, 10000.0), (5, 6, 64.0)]:
        oracle.assert_close(pe_shift_matrix(k, d_model, base=base), oracle.shift_matrix(k, d_model, base),
                            f"pe_shift_matrix({k}, {d_model}, base={base})",
                            oracle.shift_variants(k, d_model, base))


@test_case(points=1, hidden=True)
def test_shifts_every_position(pe_shift_matrix):
    for d_model in (8, 12):
        for k in (1, 4, 17, 100):
            M = oracle.as_array(pe_shift_matrix(k, d_model), f"pe_shift_matrix({k}, {d_model})")
            for pos in range(0, 60, 7):
                oracle.assert_close(M @ oracle.pe_rows([pos], d_model)[0], oracle.pe_rows([pos + k], d_model)[0],
                                    f"pe_shift_matrix({k}, {d_model}) @ PE[{pos}] (should be PE[{pos + k}])")


@test_case(points=1, hidden=True)
def test_odd_d_model_rejected(pe_shift_matrix):
    try:
        pe_shift_matrix(1, 5)
    except ValueError:
        return
    raise AssertionError("pe_shift_matrix(1, 5) should raise ValueError: with an odd d_model the last sine has no cosine partner")
