OK_FORMAT = False

import numpy as np
from otter.test_files import test_case

import attnlab_oracle as oracle

name = "self_attention"


@test_case(points=1, hidden=False)
def test_shapes(self_attention):
    result = self_attention(np.zeros((3, 2)), np.ones((2, 4)), np.ones((2, 4)), np.ones((2, 5)))
    assert isinstance(result, tuple) and len(result) == 2, "self_attention should return (Z, A)"
    Z, A = (np.asarray(r) for r in result)
    assert Z.shape == (3, 5), f"Z for X (3, 2) and W_V (2, 5) has shape {Z.shape}, expected (3, 5)"
    assert A.shape == (3, 3), f"A for 3 tokens has shape {A.shape}, expected (3, 3)"


def _weights(n, d_model, d_k, d_v, seed):
    rng = np.random.default_rng(seed)
    return (rng.normal(size=(n, d_model)), rng.normal(size=(d_model, d_k)), rng.normal(size=(d_model, d_k)),
            rng.normal(size=(d_model, d_v)))


def _check(self_attention, X, W_Q, W_K, W_V, mask, what):
    result = self_attention(X, W_Q, W_K, W_V) if mask is None else self_attention(X, W_Q, W_K, W_V, mask=mask)
    if not (isinstance(result, (tuple, list)) and len(result) == 2):
        raise AssertionError(f"{what} should return a pair (Z, A), got {type(result).__name__}")
    Z, A = oracle.self_attention(X, W_Q, W_K, W_V, mask)
    variants = oracle.self_attention_variants(X, W_Q, W_K, W_V, mask)
    oracle.assert_close(result[1], A, f"the weights A of {what}", [(n, y, a) for n, y, _, a in variants])
    oracle.assert_close(result[0], Z, f"the output Z of {what}", [(n, y, z) for n, y, z, _ in variants])


@test_case(points=2, hidden=True)
def test_values(self_attention):
    X, W_Q, W_K, W_V = _weights(5, 6, 4, 3, 30)
    copies = [a.copy() for a in (X, W_Q, W_K, W_V)]
    _check(self_attention, X, W_Q, W_K, W_V, None,
           "self-attention with X (5, 6), W_Q and W_K (6, 4), W_V (6, 3)")
    assert all(np.array_equal(a, b) for a, b in zip((X, W_Q, W_K, W_V), copies)), (
        "self_attention changed one of its inputs: compute into new arrays")
    X, W_Q, W_K, W_V = _weights(3, 2, 2, 2, 31)
    _check(self_attention, X, W_Q, W_K, W_V, None, "self-attention with X (3, 2) and (2, 2) weights")


@test_case(points=1, hidden=True)
def test_mask(self_attention):
    X, W_Q, W_K, W_V = _weights(4, 3, 2, 5, 32)
    _check(self_attention, X, W_Q, W_K, W_V, oracle.causal_mask(4), "causal self-attention on 4 tokens")


@test_case(points=1, hidden=True)
def test_notes_example(self_attention):
    X = np.array([[0.10, 1.30], [1.74, 0.64]])
    W_Q, W_K, W_V = np.array([[1.0, 2.0], [3.0, 1.0]]), np.array([[2.0, 1.0], [1.0, 3.0]]), np.array([[0.5, 1.5], [1.0, 0.5]])
    _check(self_attention, X, W_Q, W_K, W_V, None, "the notes' two-word example (scaled by sqrt(2))")
