OK_FORMAT = False

from functools import partial

import numpy as np
from otter.test_files import test_case

import attnlab_oracle as oracle



def _got(a):
    """The submission's own values, rounded (never the expected ones): what the message shows."""
    return str(np.round(np.asarray(a, dtype=np.float64), 3).tolist())
name = "self_attention"
reference = oracle.self_attention  # lent to the callers of self_attention when the student's own fails


def _pair(result, what):
    """(Z, A): a tuple (or a list) of two arrays."""
    assert isinstance(result, (tuple, list)) and len(result) == 2, (
        f"{what} should return the pair (Z, A), got {type(result).__name__}")
    return np.asarray(result[0]), np.asarray(result[1])


@test_case(points=1, hidden=False)
def test_shapes_scale_and_mask(self_attention):
    Z, A = _pair(self_attention(np.zeros((3, 2)), np.ones((2, 4)), np.ones((2, 4)), np.ones((2, 5))), "self_attention")
    assert Z.shape == (3, 5), f"Z for X (3, 2) and W_V (2, 5) has shape {Z.shape}, expected (3, 5)"
    assert A.shape == (3, 3), f"A for 3 tokens has shape {A.shape}, expected (3, 3)"
    e = np.exp(1 / np.sqrt(2))
    X = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    W_Q, W_K = np.array([[1.0, 0.0], [0.0, 0.0], [0.0, 0.0]]), np.array([[0.0, 1.0], [1.0, 0.0], [0.0, 0.0]])
    _, A = _pair(self_attention(X, W_Q, W_K, np.ones((3, 4))), "self_attention")
    assert np.allclose(A, [[1 / (e + 1), e / (e + 1)], [0.5, 0.5]]), (
        "with X rows [1, 0, 0] and [0, 1, 0], W_Q rows [1, 0], [0, 0], [0, 0] and W_K rows [0, 1], [1, 0], [0, 0] "
        "the scores Q K^T have rows [0, 1] and [0, 0], divided by sqrt(d_k) = sqrt(2), so A has rows [0.330, 0.670] "
        f"and [0.5, 0.5] (Q = X W_Q, K = X W_K, scaled by the key width); got {_got(A)}"
        + (": A[0, 1] is 0 though no mask was given, and with mask=None every key may be attended to"
           if np.asarray(A).shape == (2, 2) and np.asarray(A)[0, 1] == 0 else ""))
    mask = np.array([[True, False], [True, True]])
    _, A = _pair(self_attention(np.eye(2), np.eye(2), np.eye(2), np.eye(2), mask=mask), "self_attention")
    assert np.allclose(A[0], [1.0, 0.0]), (
        f"with a mask with rows [True, False] and [True, True] the first token may attend only to itself: A[0] = [1, 0]; "
        f"got {_got(A[0])}")


def _weights(n, d_model, d_k, d_v, seed):
    rng = np.random.default_rng(seed)
    return (rng.normal(size=(n, d_model)), rng.normal(size=(d_model, d_k)), rng.normal(size=(d_model, d_k)),
            rng.normal(size=(d_model, d_v)))


def _check(self_attention, X, W_Q, W_K, W_V, mask, what):
    Z, A = oracle.self_attention(X, W_Q, W_K, W_V, mask)
    args = (X, W_Q, W_K, W_V)
    if mask is None:
        result, changed = oracle.call_noting_changes(self_attention, *args)
    else:
        result, changed = oracle.call_noting_changes(self_attention, *args, mask=mask)
    got_Z, got_A = oracle.assert_pair(result, (Z, A), what, ("Z", "A"))
    # a mistake gives a pair: name the weights' mistake only when Z matches it too (one whose Z does
    # not match is ruled out: None)
    variants = partial(oracle.self_attention_variants, X, W_Q, W_K, W_V, mask)
    blocked = () if mask is None else [("the blocked entries (mask False)", ~np.asarray(mask, dtype=bool))]
    oracle.assert_close(got_A, A, f"the weight matrix A of {what}",
                        lambda: [(n, y, a if oracle.matches(got_Z, z) else None) for n, y, z, a in variants()],
                        axes=("query", "key"), sums_to_one=-1, regions=blocked)
    oracle.assert_close(got_Z, Z, f"the output Z of {what}", lambda: [(n, y, z) for n, y, z, _ in variants()],
                        axes=("token", "column"))
    return changed  # what the call changed in place


@test_case(points=2, hidden=True)
def test_values(self_attention):
    X, W_Q, W_K, W_V = _weights(5, 6, 4, 3, 30)
    changed = _check(self_attention, X, W_Q, W_K, W_V, None,
                     "self-attention with X (5, 6), W_Q and W_K (6, 4), W_V (6, 3)")
    oracle.assert_not_changed(changed, self_attention, X, W_Q, W_K, W_V)
    X, W_Q, W_K, W_V = _weights(3, 2, 2, 2, 31)
    _check(self_attention, X, W_Q, W_K, W_V, None, "self-attention with X (3, 2) and (2, 2) weights")
    # X's last column is 60 and reaches only the first column of Q and of K, which is 60 for every key:
    # each score of query i grows by 60 * Q[i, 0] / 2, about 1800, far beyond where exp overflows, and
    # the weights stay those of the other columns (softmax ignores a shift of its whole row)
    X, W_Q, W_K, W_V = _weights(4, 5, 4, 3, 33)
    X[:, -1], W_K[:, 0], W_Q[-1], W_K[-1] = 60.0, 0.0, np.eye(4)[0], np.eye(4)[0]
    _check(self_attention, X, W_Q, W_K, W_V, None, "self-attention with scores near 1800 (X (4, 5), a column of 60)")


@test_case(points=1, hidden=True)
def test_mask(self_attention):
    X, W_Q, W_K, W_V = _weights(4, 3, 2, 5, 32)
    _check(self_attention, X, W_Q, W_K, W_V, oracle.causal_mask(4), "causal self-attention on 4 tokens")


@test_case(points=1, hidden=True)
def test_notes_example(self_attention):
    X = np.array([[0.10, 1.30], [1.74, 0.64]])
    W_Q, W_K, W_V = np.array([[1.0, 2.0], [3.0, 1.0]]), np.array([[2.0, 1.0], [1.0, 3.0]]), np.array([[0.5, 1.5], [1.0, 0.5]])
    _check(self_attention, X, W_Q, W_K, W_V, None, "the notes' two-word example (scaled by sqrt(2))")
