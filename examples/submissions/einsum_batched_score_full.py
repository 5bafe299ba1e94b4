# A correct submission built on np.einsum, with every attention function taking leading batch axes
# (multi-head attention too), exp/log frequencies and a log-sum-exp softmax.
from itertools import permutations

import numpy as np


def _inv_freq(d, base):
    return np.exp(-np.log(base) * np.arange(0, d, 2) / d)


def sinusoidal_pe(seq_len, d_model, base=10000.0):
    angles = np.einsum("p,f->pf", np.arange(seq_len, dtype=float), _inv_freq(d_model, base))
    pe = np.stack([np.sin(angles), np.cos(angles)], axis=-1).reshape(seq_len, -1)
    return pe[:, :d_model]


def add_positional_encoding(E, base=10000.0):
    E = np.asarray(E, dtype=float)
    return E + sinusoidal_pe(E.shape[-2], E.shape[-1], base)


def pe_shift_matrix(k, d_model, base=10000.0):
    if d_model % 2:
        raise ValueError("pe_shift_matrix needs an even d_model")
    t = k * _inv_freq(d_model, base)
    blocks = np.einsum("ab,i->iab", [[1.0, 0.0], [0.0, 1.0]], np.cos(t)) + \
        np.einsum("ab,i->iab", [[0.0, 1.0], [-1.0, 0.0]], np.sin(t))
    M = np.zeros((d_model, d_model))
    for i, block in enumerate(blocks):
        M[2 * i:2 * i + 2, 2 * i:2 * i + 2] = block
    return M


def softmax(x, axis=-1):
    x = np.asarray(x, dtype=float)
    top = np.max(x, axis=axis, keepdims=True)
    lse = top + np.log(np.exp(x - top).sum(axis=axis, keepdims=True))
    return np.exp(x - lse)


def causal_mask(n):
    return np.greater_equal.outer(np.arange(n), np.arange(n))


def scaled_dot_product_attention(Q, K, V, mask=None):
    Q, K, V = (np.asarray(a, dtype=float) for a in (Q, K, V))
    scores = np.einsum("...id,...jd->...ij", Q, K) / np.sqrt(Q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = softmax(scores)
    return np.einsum("...ij,...jv->...iv", weights, V), weights


def self_attention(X, W_Q, W_K, W_V, mask=None):
    X = np.asarray(X, dtype=float)
    Q, K, V = (np.einsum("...nd,dk->...nk", X, W) for W in (W_Q, W_K, W_V))
    return scaled_dot_product_attention(Q, K, V, mask)


def multi_head_attention(X, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    X = np.asarray(X, dtype=float)
    # W (d_model, heads * d_h) -> (d_model, heads, d_h): head h is columns h*d_h:(h+1)*d_h
    Q, K, V = (np.einsum("...nd,dhk->...hnk", X, np.reshape(W, (W.shape[0], num_heads, -1)))
               for W in (W_Q, W_K, W_V))
    if mask is not None:
        mask = np.expand_dims(mask, -3)  # the same mask for every head
    heads, _ = scaled_dot_product_attention(Q, K, V, mask)
    W_O = np.reshape(W_O, (num_heads, -1, np.shape(W_O)[-1]))
    return np.einsum("...hnv,hvo->...no", heads, W_O)


def permutation_matrix(perm):
    if sorted(int(p) for p in perm) != list(range(len(perm))):
        raise ValueError(f"{list(perm)} is not a permutation of 0..{len(perm) - 1}")
    perm = np.asarray(perm)
    return (perm[:, None] == np.arange(len(perm))[None, :]).astype(float)


def _permutations(n):
    if n <= 5:
        return list(permutations(range(n)))
    ident = np.arange(n)
    found = [ident[::-1], np.roll(ident, 1), np.roll(ident, -1), np.roll(ident, n // 2)]
    for i in range(n - 1):
        p = ident.copy()
        p[i], p[i + 1] = i + 1, i
        found.append(p)
    for i in range(n - 2):
        p = ident.copy()
        p[i:i + 3] = [i + 1, i + 2, i]
        found.append(p)
    rng = np.random.default_rng(31)
    return found + [rng.permutation(n) for _ in range(8)]


def _close(a, b, atol):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return a.shape == b.shape and np.allclose(a, b, rtol=1e-9, atol=atol)


def is_permutation_equivariant(f, X, perms=None, atol=1e-8):
    X = np.asarray(X, dtype=float)
    Y = np.asarray(f(X.copy()), dtype=float)
    if Y.ndim == 0 or Y.shape[0] != X.shape[0]:
        return False
    for p in _permutations(len(X)) if perms is None else perms:
        P = permutation_matrix(p)
        if not _close(f(np.einsum("ij,j...->i...", P, X)), np.einsum("ij,j...->i...", P, Y), atol):
            return False
    return True


def is_permutation_invariant(f, X, perms=None, atol=1e-8):
    X = np.asarray(X, dtype=float)
    Y = f(X.copy())
    candidates = _permutations(len(X)) if perms is None else perms
    return all(_close(f(np.einsum("ij,j...->i...", permutation_matrix(p), X)), Y, atol) for p in candidates)


def rope(X, base=10000.0):
    X = np.asarray(X, dtype=float)
    n, d = X.shape[-2:]
    if d % 2:
        raise ValueError("rope needs an even d")
    a = np.einsum("m,i->mi", np.arange(n, dtype=float), _inv_freq(d, base))
    cos, sin = np.cos(a), np.sin(a)
    R = np.stack([np.stack([cos, -sin], -1), np.stack([sin, cos], -1)], -2)  # (n, d/2, 2, 2)
    pairs = X.reshape(X.shape[:-1] + (d // 2, 2))
    return np.einsum("mirc,...mic->...mir", R, pairs).reshape(X.shape)


def alibi_bias(n, num_heads):
    slopes = 2.0 ** (-8.0 * np.arange(1, num_heads + 1) / num_heads)
    dist = np.abs(np.subtract.outer(np.arange(n), np.arange(n)))
    return np.einsum("h,ij->hij", -slopes, dist.astype(float))
