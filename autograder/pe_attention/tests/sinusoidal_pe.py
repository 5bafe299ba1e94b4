OK_FORMAT = False

from functools import partial

import numpy as np
from otter.test_files import test_case

import attnlab_oracle as oracle

AXES = ("position", "column")  # what the feedback calls the result's axes


def _got(a):
    """The submission's own values, rounded (never the expected ones): what the message shows."""
    return str(np.round(np.asarray(a, dtype=np.float64), 3).tolist())
name = "sinusoidal_pe"
reference = oracle.pe  # lent to the callers of sinusoidal_pe when the student's own fails


@test_case(points=1, hidden=False)
def test_shape_and_dtype(sinusoidal_pe):
    for seq_len, d_model in [(10, 16), (3, 5)]:
        pe = sinusoidal_pe(seq_len, d_model)
        assert isinstance(pe, np.ndarray), f"sinusoidal_pe should return a numpy array, got {type(pe).__name__}"
        assert pe.shape == (seq_len, d_model), (
            f"sinusoidal_pe({seq_len}, {d_model}) has shape {pe.shape}, expected ({seq_len}, {d_model})")
        assert pe.dtype == np.float64, f"sinusoidal_pe should return float64, got {pe.dtype}"


@test_case(points=1, hidden=False)
def test_rows_zero_and_one(sinusoidal_pe):
    pe = np.asarray(sinusoidal_pe(2, 4))
    assert np.allclose(pe[0], [0.0, 1.0, 0.0, 1.0]), (
        f"position 0 must encode as [sin 0, cos 0, sin 0, cos 0] = [0, 1, 0, 1]; got {_got(pe[0])}")
    assert np.allclose(pe[1], [np.sin(1.0), np.cos(1.0), np.sin(0.01), np.cos(0.01)], rtol=1e-6, atol=1e-8), (
        "sinusoidal_pe(2, 4)[1] should be [sin 1, cos 1, sin 0.01, cos 0.01]: columns 2i and 2i+1 hold the sin "
        f"and cos of pos / 10000**(2i/d_model), side by side; got {_got(pe[1])}")


@test_case(points=2, hidden=True)
def test_values(sinusoidal_pe):
    for seq_len, d_model in [(7, 8), (12, 20)]:
        oracle.assert_close(oracle.call(sinusoidal_pe, seq_len, d_model), oracle.pe(seq_len, d_model),
                            f"sinusoidal_pe({seq_len}, {d_model})", partial(oracle.pe_variants, seq_len, d_model), axes=AXES,
                            relation=oracle.pe_reading(seq_len, d_model))


@test_case(points=1, hidden=True)
def test_odd_d_model(sinusoidal_pe):
    refused = {ValueError: ("an odd d_model not handled", "an odd d_model works: its last column is a sine without a cosine partner")}
    oracle.assert_close(oracle.call_refused(refused, sinusoidal_pe, 6, 7), oracle.pe(6, 7),
                        "sinusoidal_pe(6, 7) (odd d_model: the last column is a sine)", partial(oracle.pe_variants, 6, 7), axes=AXES,
                        relation=oracle.pe_reading(6, 7))


@test_case(points=1, hidden=True)
def test_custom_base(sinusoidal_pe):
    # one process, several bases and sizes in both orders: whatever the function keeps between calls,
    # every call must give its own arguments' table
    calls = [(9, 6, 100.0), (9, 6, 10000.0), (9, 6, 100.0), (4, 6, 100.0), (9, 4, 100.0), (9, 4, 10000.0)]
    oracle.assert_close_in_turn(sinusoidal_pe, [((n, d), {"base": b}, oracle.pe(n, d, b),
                                                 partial(oracle.pe_variants, n, d, b)) for n, d, b in calls], axes=AXES,
                                relation=oracle.pe_reading)


@test_case(points=1, hidden=True)
def test_large_positions(sinusoidal_pe):
    positions = [1000, 2500, 4999, 5000]
    expected = oracle.pe_rows(positions, 10)
    got = oracle.assert_shape(oracle.call(sinusoidal_pe, 5001, 10), (5001, 10), "sinusoidal_pe(5001, 10)")
    oracle.assert_close(got[positions], expected, "sinusoidal_pe(5001, 10) at rows 1000, 2500, 4999, 5000", axes=AXES,
                        relation=oracle.pe_reading(5001, 10, positions=positions))
