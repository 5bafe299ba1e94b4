OK_FORMAT = False

import numpy as np
from otter.test_files import test_case

import attnlab_oracle as oracle

name = "sinusoidal_pe"


@test_case(points=1, hidden=False)
def test_shape_and_dtype(sinusoidal_pe):
    pe = sinusoidal_pe(10, 16)
    assert isinstance(pe, np.ndarray), f"sinusoidal_pe should return a numpy array, got {type(pe).__name__}"
    assert pe.shape == (10, 16), f"sinusoidal_pe(10, 16) has shape {pe.shape}, expected (10, 16)"
    assert pe.dtype == np.float64, f"sinusoidal_pe should return float64, got {pe.dtype}"


@test_case(points=1, hidden=False)
def test_row_zero(sinusoidal_pe):
    row = np.asarray(sinusoidal_pe(3, 8))[0]
    assert np.allclose(row[0::2], 0.0) and np.allclose(row[1::2], 1.0), (
        "position 0 must encode as [sin 0, cos 0, ...] = [0, 1, 0, 1, ...]"
    )


@test_case(points=2, hidden=True)
def test_values(sinusoidal_pe):
    for seq_len, d_model in [(7, 8), (12, 20)]:
        oracle.assert_close(sinusoidal_pe(seq_len, d_model), oracle.pe(seq_len, d_model),
                            f"sinusoidal_pe({seq_len}, {d_model})",
                            oracle.pe_variants(seq_len, d_model))


@test_case(points=1, hidden=True)
def test_odd_d_model(sinusoidal_pe):
    oracle.assert_close(sinusoidal_pe(6, 7), oracle.pe(6, 7), "sinusoidal_pe(6, 7) (odd d_model: the last column is a sine)",
                        oracle.pe_variants(6, 7))


@test_case(points=1, hidden=True)
def test_custom_base(sinusoidal_pe):
    oracle.assert_close(sinusoidal_pe(9, 6, base=100.0), oracle.pe(9, 6, 100.0),
                        "sinusoidal_pe(9, 6, base=100.0)", oracle.pe_variants(9, 6, 100.0))


@test_case(points=1, hidden=True)
def test_large_positions(sinusoidal_pe):
    got = oracle.assert_shape(sinusoidal_pe(5001, 10), (5001, 10), "sinusoidal_pe(5001, 10)")
    positions = [1000, 2500, 4999, 5000]
    oracle.assert_close(got[positions], oracle.pe_rows(positions, 10),
                        "rows 1000, 2500, 4999, 5000 of sinusoidal_pe(5001, 10)")
