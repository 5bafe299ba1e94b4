OK_FORMAT = False

from functools import partial

import numpy as np
from otter.test_files import test_case

import attnlab_oracle as oracle




def _got(a):
    """The submission's own values, rounded (never the expected ones): what the message shows."""
    return str(np.round(np.asarray(a, dtype=np.float64), 3).tolist())
name = "alibi_bias"
reference = oracle.alibi_bias  # lent to the callers of alibi_bias when the student's own fails


@test_case(points=1, hidden=False)
def test_shape_diagonal_and_odd_head_count(alibi_bias):
    B = alibi_bias(3, 2)
    assert isinstance(B, np.ndarray), f"alibi_bias should return a numpy array, got {type(B).__name__}"
    assert B.shape == (2, 3, 3), f"alibi_bias(3, 2) has shape {B.shape}, expected (num_heads, n, n) = (2, 3, 3)"
    assert np.allclose(B[:, np.arange(3), np.arange(3)], 0.0), "a token's bias towards itself (distance 0) is 0"
    B = np.asarray(alibi_bias(2, 3))
    slopes = 2.0 ** (-8.0 * np.arange(1, 4) / 3)
    # the slope formula is explained only when the sizes are wrong, not for a sign or a shape
    got = f"; got shape {B.shape}"
    if B.shape == (3, 2, 2):
        got = f"; got {_got(B[:, 0, 1])}"
        if np.allclose(B[:, 0, 1], slopes):
            got += ": the right sizes with the opposite sign"
        elif not np.allclose(np.abs(B[:, 0, 1]), slopes):
            got += ": m_h = 2**(-8 (h+1) / num_heads) for any number of heads, h counting from 0"
    assert B.shape == (3, 2, 2) and np.allclose(B[:, 0, 1], -slopes), (
        "alibi_bias(2, 3)[:, 0, 1] should be -[2**(-8/3), 2**(-16/3), 2**(-8)]" + got)


@test_case(points=2, hidden=True)
def test_values(alibi_bias):
    for n, num_heads in [(5, 8), (4, 3), (1, 2), (3, 6)]:
        oracle.assert_close(oracle.call(alibi_bias, n, num_heads), oracle.alibi_bias(n, num_heads),
                            f"alibi_bias({n}, {num_heads})", partial(oracle.alibi_variants, n, num_heads), axes=("head", "query", "key"))
