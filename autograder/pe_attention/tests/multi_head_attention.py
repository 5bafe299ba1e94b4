OK_FORMAT = False

import numpy as np
from otter.test_files import test_case

import attnlab_oracle as oracle

name = "multi_head_attention"


@test_case(points=1, hidden=False)
def test_shape(multi_head_attention):
    out = multi_head_attention(np.zeros((3, 4)), np.ones((4, 4)), np.ones((4, 4)), np.ones((4, 4)), np.ones((4, 2)), 2)
    assert isinstance(out, np.ndarray), f"multi_head_attention should return a numpy array, got {type(out).__name__}"
    assert out.shape == (3, 2), f"output for X (3, 4) and W_O (4, 2) has shape {out.shape}, expected (3, 2)"


def _weights(n, d_model, width, d_out, seed):
    rng = np.random.default_rng(seed)
    return (rng.normal(size=(n, d_model)), rng.normal(size=(d_model, width)), rng.normal(size=(d_model, width)),
            rng.normal(size=(d_model, width)), rng.normal(size=(width, d_out)))


def _check(mha, X, W_Q, W_K, W_V, W_O, num_heads, mask, what):
    got = mha(X, W_Q, W_K, W_V, W_O, num_heads) if mask is None else mha(X, W_Q, W_K, W_V, W_O, num_heads, mask=mask)
    expected = oracle.multi_head_attention(X, W_Q, W_K, W_V, W_O, num_heads, mask)
    variants = oracle.multi_head_attention_variants(X, W_Q, W_K, W_V, W_O, num_heads, mask)
    arr = oracle.as_array(got, what)
    if arr.shape == (X.shape[0], W_O.shape[0]) != expected.shape:
        raise AssertionError(f"{what} has shape {arr.shape}, the width of the concatenated heads: looks like "
                             f"W_O forgotten: multiply the concatenated heads by W_O")
    oracle.assert_close(arr, expected, what, variants)


@test_case(points=2, hidden=True)
def test_values(multi_head_attention):
    X, W_Q, W_K, W_V, W_O = _weights(5, 6, 8, 3, 40)
    copies = [a.copy() for a in (X, W_Q, W_K, W_V, W_O)]
    _check(multi_head_attention, X, W_Q, W_K, W_V, W_O, 2, None,
           "2-head attention with X (5, 6), W_Q, W_K, W_V (6, 8) and W_O (8, 3)")
    assert all(np.array_equal(a, b) for a, b in zip((X, W_Q, W_K, W_V, W_O), copies)), (
        "multi_head_attention changed one of its inputs: compute into new arrays")
    _check(multi_head_attention, X, W_Q, W_K, W_V, W_O, 4, None,
           "4-head attention with X (5, 6), W_Q, W_K, W_V (6, 8) and W_O (8, 3)")


@test_case(points=1, hidden=True)
def test_output_projection(multi_head_attention):
    X, W_Q, W_K, W_V, W_O = _weights(4, 6, 6, 6, 41)
    _check(multi_head_attention, X, W_Q, W_K, W_V, W_O, 3, None,
           "3-head attention with X (4, 6), W_Q, W_K, W_V (6, 6) and W_O (6, 6)")


@test_case(points=1, hidden=True)
def test_mask_and_single_head(multi_head_attention):
    X, W_Q, W_K, W_V, W_O = _weights(4, 3, 4, 2, 42)
    _check(multi_head_attention, X, W_Q, W_K, W_V, W_O, 2, oracle.causal_mask(4),
           "causal 2-head attention on 4 tokens")
    _check(multi_head_attention, X, W_Q, W_K, W_V, W_O, 1, None,
           "1-head attention (self-attention followed by W_O)")
