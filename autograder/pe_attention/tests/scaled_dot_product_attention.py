OK_FORMAT = False

from functools import partial

import numpy as np
from otter.test_files import test_case

import attnlab_oracle as oracle



def _got(a):
    """The submission's own values, rounded (never the expected ones): what the message shows."""
    return str(np.round(np.asarray(a, dtype=np.float64), 3).tolist())
name = "scaled_dot_product_attention"
reference = oracle.attention  # lent to the callers of scaled_dot_product_attention when the student's own fails


def _pair(result, what):
    """(output, weights): a tuple (or a list) of two arrays."""
    assert isinstance(result, (tuple, list)) and len(result) == 2, (
        f"{what} should return the pair (output, weights), got {type(result).__name__}")
    return np.asarray(result[0]), np.asarray(result[1])


@test_case(points=1, hidden=False)
def test_shapes_scale_and_mask(scaled_dot_product_attention):
    out, weights = _pair(scaled_dot_product_attention(np.zeros((2, 3)), np.zeros((4, 3)), np.ones((4, 5))),
                         "scaled_dot_product_attention")
    assert out.shape == (2, 5), f"output for Q (2, 3), K (4, 3), V (4, 5) has shape {out.shape}, expected (2, 5)"
    assert weights.shape == (2, 4), f"weights for 2 queries and 4 keys have shape {weights.shape}, expected (2, 4)"
    assert np.allclose(weights, 0.25), (
        "Q and K all zeros give equal scores, so every weight must be 1/4; got weights from "
        f"{weights.min():.3g} to {weights.max():.3g}")
    assert np.allclose(out, 1.0), (
        "with every weight 1/4 (right) and V all ones, every output entry must be 1 (weights @ V); got entries "
        f"from {out.min():.3g} to {out.max():.3g}")
    K = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]])
    _, w = _pair(scaled_dot_product_attention(np.array([[1.0, 0.0]]), K, np.ones((3, 4))),
                 "scaled_dot_product_attention")
    e = np.exp(1 / np.sqrt(2))
    assert np.allclose(w, [[e / (e + 2), 1 / (e + 2), 1 / (e + 2)]]), (
        "with the query [1, 0] and the keys [1, 0], [0, 1], [0, 0] the scores are [1, 0, 0] / sqrt(2) and the weights "
        f"[0.505, 0.247, 0.247] (Q K^T divided by sqrt(d_k), d_k = 2 the width of a key, then the softmax over "
        f"the keys); got {_got(w)}")
    e = np.exp(1 / np.sqrt(2))
    mask = np.array([[True, False], [True, True]])
    _, w = _pair(scaled_dot_product_attention(np.eye(2), np.eye(2), np.eye(2), mask=mask),
                 "scaled_dot_product_attention")
    # the mask's meaning is explained only when the weights show it read the other way
    why = ""
    if w.shape == (2, 2) and np.allclose(w[0], [0.0, 1.0]):
        why = ": query 0 gave all its weight to key 1, which the mask blocks (True means may attend)"
    elif w.shape == (2, 2) and np.allclose(w, [[e / (e + 1), 1 / (e + 1)], [0.0, 1.0]]):
        why = ": these are the weights for the mask transposed (mask[i, j] is query i, key j)"
    assert np.allclose(w, [[1.0, 0.0], [1 / (e + 1), e / (e + 1)]]), (
        "with Q = K = eye(2) and a mask with rows [True, False] and [True, True], query 0 may attend to key 0 "
        f"only (weights [1, 0]) and query 1 to both ([0.330, 0.670]); got {_got(w)}{why}")


def _qkv(n, m, d_k, d_v, seed, lead=()):
    rng = np.random.default_rng(seed)
    return (rng.normal(size=lead + (n, d_k)), rng.normal(size=lead + (m, d_k)),
            rng.normal(size=lead + (m, d_v)))


def _mask(n, m, seed):
    """A random boolean mask with at least one True and one False in every row."""
    rng = np.random.default_rng(seed)
    mask = rng.random((n, m)) < 0.5
    mask[np.arange(n), rng.integers(0, m, n)] = True
    mask[np.arange(n), (np.argmax(mask, axis=1) + 1) % m] = False
    return mask


def _check(sdpa, Q, K, V, mask, what):
    expected_out, expected_w = oracle.attention(Q, K, V, mask)
    if mask is None:
        result, changed = oracle.call_noting_changes(sdpa, Q, K, V)
    else:
        result, changed = oracle.call_noting_changes(sdpa, Q, K, V, mask=mask)
    out, weights = oracle.assert_pair(result, (expected_out, expected_w), what, ("output", "weights"))
    # a mistake gives a pair: name the weights' mistake only when the output matches it too (one whose
    # output does not match is ruled out: None)
    variants = partial(oracle.attention_variants, Q, K, V, mask)
    blocked = () if mask is None else [("the blocked entries (mask False)", ~np.asarray(mask, dtype=bool))]
    oracle.assert_close(weights, expected_w, f"the weight matrix of {what}",
                        lambda: [(n, y, w if oracle.matches(out, o) else None) for n, y, o, w in variants()],
                        axes=("query", "key"), sums_to_one=-1, regions=blocked)
    oracle.assert_close(out, expected_out, f"the output of {what}", lambda: [(n, y, o) for n, y, o, _ in variants()],
                        axes=("query", "column"))
    return weights, changed  # what the call changed in place


@test_case(points=2, hidden=True)
def test_values(scaled_dot_product_attention):
    Q, K, V = _qkv(3, 5, 4, 2, 20)
    _, changed = _check(scaled_dot_product_attention, Q, K, V, None, "attention with Q (3, 4), K (5, 4), V (5, 2)")
    oracle.assert_not_changed(changed, scaled_dot_product_attention, Q, K, V)
    Q, K, V = _qkv(4, 2, 6, 5, 21)
    _check(scaled_dot_product_attention, 2.0 * Q, K, V, None, "attention with Q (4, 6), K (2, 6), V (2, 5)")


@test_case(points=1, hidden=True)
def test_square_scores(scaled_dot_product_attention):
    Q, K, V = _qkv(4, 4, 4, 3, 22)
    _check(scaled_dot_product_attention, 1.5 * Q, K, V, None, "attention with Q, K (4, 4) and V (4, 3)")
    # a fifth column of 60 in Q and K adds 3600 / sqrt(5) to every score: far beyond where exp overflows,
    # while the weights stay those of the first four columns (softmax ignores a shift of its whole row)
    Q, K = (np.hstack([A, np.full((4, 1), 60.0)]) for A in (Q, K))
    _check(scaled_dot_product_attention, Q, K, V, None, "attention with scores near 1600 (Q, K (4, 5), V (4, 3))")
    # only queries 0 and 1 get the column of 60: their scores are near 1600 and those of queries 2 and 3
    # are small, so that each row's softmax must stand on its own row's scores
    Q[2:, -1] = 0.0
    _check(scaled_dot_product_attention, Q, K, V, None,
           "attention where queries 0 and 1 have scores near 1600 and queries 2 and 3 scores near 0")


@test_case(points=1, hidden=True)
def test_mask(scaled_dot_product_attention):
    for n, m, seed in [(4, 5, 23), (3, 3, 24)]:
        Q, K, V = _qkv(n, m, 3, 2, seed)
        mask = _mask(n, m, seed)
        what = f"attention with a boolean ({n}, {m}) mask"
        weights, _ = _check(scaled_dot_product_attention, 2.0 * Q, K, V, mask, what)
        assert np.all(weights[~mask] == 0.0), f"in {what}, a blocked entry (mask False) must get weight exactly 0"
        oracle.assert_unchanged(scaled_dot_product_attention, Q, K, V, mask=mask)
    Q, K, V = _qkv(5, 5, 3, 3, 25)
    _check(scaled_dot_product_attention, Q, K, V, oracle.causal_mask(5), "attention with a (5, 5) causal mask")
    # key 0, which the mask blocks, has a score near 1800 above the others: blocked, it may take no
    # weight however large its score, and the keys left share every query's weight
    Q, K = (np.hstack([A, np.full((5, 1), 60.0)]) for A in (Q, K))
    K[1:, -1] = 0.0
    mask = np.ones((5, 5), dtype=bool)
    mask[:, 0] = False
    _check(scaled_dot_product_attention, Q, K, V, mask,
           "attention with key 0 blocked for every query (its score near 1800, far above the others)")
    # a query the mask lets attend to no key: no key may take any of its weight. Its row is 0; nan (a
    # softmax dividing 0 by 0) or an error for this degenerate query is let pass, as the stubs leave it open
    Q, K, V = _qkv(4, 5, 3, 2, 30)
    mask = _mask(4, 5, 30)
    mask[2] = False
    what = "attention with a (4, 5) mask whose row 2 is all False"
    try:
        result = oracle.call(scaled_dot_product_attention, Q, K, V, mask=mask)
    except AssertionError:  # the student's code raised (the engine's own errors are not AssertionErrors)
        result = None
    weights = None if result is None else _pair(result, what)[1]
    if weights is not None and weights.shape == (4, 5):
        row = weights[2]
        assert np.all((row == 0.0) | np.isnan(row)), (
            f"in {what}, query 2 may attend to no key, so every weight in its row must be 0; got {_got(row)}")


@test_case(points=1, hidden=True)
def test_batched(scaled_dot_product_attention):
    Q, K, V = _qkv(3, 5, 4, 2, 26, lead=(2,))
    _check(scaled_dot_product_attention, Q, K, V, _mask(3, 5, 26),
           "batched attention with Q (2, 3, 4), K (2, 5, 4), V (2, 5, 2) and a (3, 5) mask")
    Q, K, V = _qkv(3, 4, 2, 3, 27, lead=(2, 2))
    _check(scaled_dot_product_attention, Q, K, V, None,
           "attention over batch and head axes: Q (2, 2, 3, 2), K (2, 2, 4, 2), V (2, 2, 4, 3)")
    Q, (_, K, V) = _qkv(3, 4, 2, 3, 28, lead=(2,))[0], _qkv(3, 4, 2, 3, 29)
    _check(scaled_dot_product_attention, Q, K, V, None,
           "attention of a batch Q (2, 3, 2) against shared K (4, 2) and V (4, 3)")
