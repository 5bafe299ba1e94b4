# The checkers try a single swap (rows 0 and 1) when no permutations are given, so a function
# that treats those two rows alike but not the others passes; everything else is right.
import itertools

import numpy as np


def sinusoidal_pe(seq_len, d_model, base=10000.0):
    pe = np.zeros((seq_len, d_model))
    position = np.arange(seq_len)[:, None]
    div = base ** (np.arange(0, d_model, 2) / d_model)
    pe[:, 0::2] = np.sin(position / div)
    pe[:, 1::2] = np.cos(position / div[: d_model // 2])
    return pe


def add_positional_encoding(E, base=10000.0):
    E = np.asarray(E, dtype=np.float64)
    return E + sinusoidal_pe(E.shape[0], E.shape[1], base=base)


def pe_shift_matrix(k, d_model, base=10000.0):
    if d_model % 2 != 0:
        raise ValueError("d_model must be even")
    M = np.zeros((d_model, d_model))
    for i in range(d_model // 2):
        w = 1 / base ** (2 * i / d_model)
        M[2 * i, 2 * i], M[2 * i, 2 * i + 1] = np.cos(k * w), np.sin(k * w)
        M[2 * i + 1, 2 * i], M[2 * i + 1, 2 * i + 1] = -np.sin(k * w), np.cos(k * w)
    return M


def softmax(x, axis=-1):
    x = np.asarray(x, dtype=np.float64)
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def causal_mask(n):
    return np.tril(np.ones((n, n), dtype=bool))


def scaled_dot_product_attention(Q, K, V, mask=None):
    Q, K, V = (np.asarray(a, dtype=np.float64) for a in (Q, K, V))
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = softmax(scores, axis=-1)
    return weights @ V, weights


def self_attention(X, W_Q, W_K, W_V, mask=None):
    X = np.asarray(X, dtype=np.float64)
    return scaled_dot_product_attention(X @ W_Q, X @ W_K, X @ W_V, mask)


def multi_head_attention(X, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    X = np.asarray(X, dtype=np.float64)
    d_h, d_v = W_Q.shape[1] // num_heads, W_V.shape[1] // num_heads
    heads = []
    for h in range(num_heads):
        out, _ = self_attention(X, W_Q[:, h * d_h:(h + 1) * d_h], W_K[:, h * d_h:(h + 1) * d_h],
                                W_V[:, h * d_v:(h + 1) * d_v], mask)
        heads.append(out)
    return np.concatenate(heads, axis=-1) @ W_O


def permutation_matrix(perm):
    if sorted(int(p) for p in perm) != list(range(len(perm))):
        raise ValueError(f"{list(perm)} is not a permutation of 0..{len(perm) - 1}")
    n = len(perm)
    P = np.zeros((n, n))
    P[np.arange(n), list(perm)] = 1.0
    return P


def _default_perms(n):
    return [[1, 0] + list(range(2, n))]


def is_permutation_equivariant(f, X, perms=None, atol=1e-8):
    X = np.asarray(X, dtype=np.float64)
    fX = np.asarray(f(X.copy()), dtype=np.float64)
    if fX.ndim == 0 or fX.shape[0] != X.shape[0]:
        return False
    for perm in _default_perms(len(X)) if perms is None else perms:
        P = permutation_matrix(perm)
        got = np.asarray(f(P @ X), dtype=np.float64)
        if got.shape != fX.shape or not np.allclose(got, P @ fX, atol=atol, rtol=1e-9):
            return False
    return True


def is_permutation_invariant(f, X, perms=None, atol=1e-8):
    X = np.asarray(X, dtype=np.float64)
    fX = np.asarray(f(X.copy()), dtype=np.float64)
    for perm in _default_perms(len(X)) if perms is None else perms:
        got = np.asarray(f(permutation_matrix(perm) @ X), dtype=np.float64)
        if got.shape != fX.shape or not np.allclose(got, fX, atol=atol, rtol=1e-9):
            return False
    return True


def rope(X, base=10000.0):
    X = np.asarray(X, dtype=np.float64)
    n, d = X.shape
    if d % 2:
        raise ValueError("rope needs an even d")
    angle = np.arange(n)[:, None] * base ** (-np.arange(0, d, 2) / d)
    x_even, x_odd = X[:, 0::2], X[:, 1::2]
    out = np.empty_like(X)
    out[:, 0::2] = x_even * np.cos(angle) - x_odd * np.sin(angle)
    out[:, 1::2] = x_even * np.sin(angle) + x_odd * np.cos(angle)
    return out


def alibi_bias(n, num_heads):
    slopes = 2.0 ** (-8.0 * (np.arange(num_heads) + 1) / num_heads)
    distance = np.abs(np.arange(n)[:, None] - np.arange(n)[None, :])
    return -slopes[:, None, None] * distance
