OK_FORMAT = False

from functools import partial

import numpy as np
from otter.test_files import test_case

import attnlab_oracle as oracle



def _got(a):
    """The submission's own values, rounded (never the expected ones): what the message shows."""
    return str(np.round(np.asarray(a, dtype=np.float64), 3).tolist())
name = "multi_head_attention"
reference = oracle.multi_head_attention  # lent to the callers of multi_head_attention when the student's own fails


@test_case(points=1, hidden=False)
def test_shapes_and_example(multi_head_attention):
    out = multi_head_attention(np.zeros((3, 4)), np.ones((4, 4)), np.ones((4, 4)), np.ones((4, 4)), np.ones((4, 2)), 2)
    assert isinstance(out, np.ndarray), f"multi_head_attention should return a numpy array, got {type(out).__name__}"
    assert out.shape == (3, 2), f"output for X (3, 4) and W_O (4, 2) has shape {out.shape}, expected (3, 2)"
    out = np.asarray(multi_head_attention(np.zeros((3, 4)), np.ones((4, 4)), np.ones((4, 4)), np.ones((4, 6)),
                                          np.ones((6, 2)), 2))
    assert out.shape == (3, 2), (
        f"output for W_Q, W_K (4, 4), W_V (4, 6) and W_O (6, 2) with 2 heads has shape {out.shape}, expected "
        "(3, 2): each head takes W_V.shape[1] // num_heads = 3 value columns")
    out = np.asarray(multi_head_attention(np.eye(2), np.eye(2), np.eye(2), np.eye(2), np.eye(2), num_heads=2))
    e = np.e
    assert np.allclose(out, [[e / (e + 1), 0.5], [0.5, e / (e + 1)]]), (
        "multi_head_attention(eye(2), eye(2), eye(2), eye(2), eye(2), num_heads=2) should be "
        f"rows [0.731, 0.5] and [0.5, 0.731] (each head is 1 column wide, so its scores are divided by sqrt(1)); "
        f"got {_got(out)}")
    out = np.asarray(multi_head_attention(np.eye(2), np.eye(2), np.eye(2), np.eye(2), np.eye(2), num_heads=1))
    e = np.exp(1 / np.sqrt(2))
    assert np.allclose(out, [[e / (e + 1), 1 / (e + 1)], [1 / (e + 1), e / (e + 1)]]), (
        "multi_head_attention(eye(2), eye(2), eye(2), eye(2), eye(2), num_heads=1) should have rows "
        f"[0.670, 0.330] and [0.330, 0.670] (one head 2 columns wide divides its scores by sqrt(2)); got {_got(out)}")


def _weights(n, d_model, width, d_out, seed, v_width=None):
    rng = np.random.default_rng(seed)
    v_width = v_width or width
    return (rng.normal(size=(n, d_model)), rng.normal(size=(d_model, width)), rng.normal(size=(d_model, width)),
            rng.normal(size=(d_model, v_width)), rng.normal(size=(v_width, d_out)))


def _check(mha, X, W_Q, W_K, W_V, W_O, num_heads, mask, what):
    expected = oracle.multi_head_attention(X, W_Q, W_K, W_V, W_O, num_heads, mask)
    args = (X, W_Q, W_K, W_V, W_O, num_heads)
    raising = partial(oracle.multi_head_attention_raising, X=X, W_Q=W_Q, W_K=W_K, W_V=W_V, W_O=W_O,
                      num_heads=num_heads, mask=mask)
    try:
        got = (oracle.call_refused(raising, mha, *args) if mask is None
               else oracle.call_refused(raising, mha, *args, mask=mask))
    except AssertionError as e:
        pair = f"they agree up to shape ({num_heads}, 2, {len(X)})"
        if pair in str(e):  # what numpy found: two items per head, each with a row per token
            raise AssertionError(f"{e} (two items per head, each with {len(X)} rows: a pair such as the (Z, A) "
                                 "that self_attention returns, kept per head where one array per head is needed)"
                                 ) from None
        # nothing added from the test's shapes alone: the error names the student's own line that
        # raised, and a slip known to raise the same (W_V sliced with W_Q's head width) is named there
        raise
    oracle.assert_close(got, expected, what,
                        partial(oracle.multi_head_attention_variants, X, W_Q, W_K, W_V, W_O, num_heads, mask),
                        relation=oracle.mha_reading(X, W_Q, W_K, W_V, W_O, num_heads, mask))


@test_case(points=2, hidden=True)
def test_values(multi_head_attention):
    X, W_Q, W_K, W_V, W_O = _weights(5, 6, 8, 3, 40)
    _check(multi_head_attention, X, W_Q, W_K, W_V, W_O, 2, None,
           "2-head attention with X (5, 6), W_Q, W_K, W_V (6, 8) and W_O (8, 3)")
    oracle.assert_unchanged(multi_head_attention, X, W_Q, W_K, W_V, W_O, 2)
    _check(multi_head_attention, X, W_Q, W_K, W_V, W_O, 4, None,
           "4-head attention with X (5, 6), W_Q, W_K, W_V (6, 8) and W_O (8, 3)")
    # X's last column is 60 and reaches only the first column of each head's Q and K, which is 60 for
    # every key: each head's scores of query i grow by about 3600 / sqrt(2), far beyond where exp
    # overflows, while the weights stay those of the other columns
    first = np.isin(np.arange(8), [0, 2, 4, 6])
    X[:, -1], W_K[:, first], W_Q[-1], W_K[-1] = 60.0, 0.0, first, first
    _check(multi_head_attention, X, W_Q, W_K, W_V, W_O, 4, None,
           "4-head attention with scores near 2500 (X (5, 6) with a column of 60)")


@test_case(points=1, hidden=True)
def test_output_projection_and_value_width(multi_head_attention):
    X, W_Q, W_K, W_V, W_O = _weights(4, 6, 6, 6, 41)
    _check(multi_head_attention, X, W_Q, W_K, W_V, W_O, 3, None,
           "3-head attention with X (4, 6), W_Q, W_K, W_V (6, 6) and W_O (6, 6)")
    X, W_Q, W_K, W_V, W_O = _weights(5, 6, 4, 3, 43, v_width=6)
    _check(multi_head_attention, X, W_Q, W_K, W_V, W_O, 2, None,
           "2-head attention with X (5, 6), W_Q and W_K (6, 4), W_V (6, 6) and W_O (6, 3)")
    # a width 2 heads do not divide: the docstring's heads take width // 2 columns each and leave the last
    # unused. An error is let pass (a split written with reshape needs a width the heads divide, as many
    # libraries require); a result must be the docstring's
    X, W_Q, W_K, W_V, W_O = _weights(4, 6, 5, 3, 44, v_width=6)
    try:
        got = oracle.call(multi_head_attention, X, W_Q, W_K, W_V, W_O, 2)
    except AssertionError:  # the student's code raised (the engine's own errors are not AssertionErrors)
        got = None
    if got is not None:
        oracle.assert_close(
            got, oracle.multi_head_attention(X, W_Q, W_K, W_V, W_O, 2),
            "2-head attention with X (4, 6), W_Q and W_K (6, 5), W_V (6, 6) and W_O (6, 3) (each head takes "
            "W_Q.shape[1] // 2 = 2 columns of W_Q and W_K; the fifth is unused)",
            partial(oracle.multi_head_attention_variants, X, W_Q, W_K, W_V, W_O, 2, None))


@test_case(points=1, hidden=True)
def test_mask_and_single_head(multi_head_attention):
    X, W_Q, W_K, W_V, W_O = _weights(4, 3, 4, 2, 42)
    _check(multi_head_attention, X, W_Q, W_K, W_V, W_O, 2, oracle.causal_mask(4),
           "causal 2-head attention on 4 tokens")
    _check(multi_head_attention, X, W_Q, W_K, W_V, W_O, 1, None,
           "1-head attention (self-attention followed by W_O)")
