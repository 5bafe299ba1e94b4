# Puts all the sines in the first half of the columns and all the cosines in the second half
# (a common layout in blog posts), so the encoding and X = E + PE are wrong; the shift matrix and
# everything after Part A are right.
import numpy as np


def sinusoidal_pe(seq_len, d_model, base=10000.0):
    half = (d_model + 1) // 2
    pos = np.arange(seq_len)[:, None]
    freqs = base ** (-2 * np.arange(half) / d_model)
    angles = pos * freqs
    return np.concatenate([np.sin(angles), np.cos(angles[:, : d_model - half])], axis=1)


def add_positional_encoding(E, base=10000.0):
    E = np.array(E, dtype=float)
    return E + sinusoidal_pe(*E.shape, base=base)


def pe_shift_matrix(k, d_model, base=10000.0):
    if d_model % 2:
        raise ValueError("odd d_model")
    M = np.zeros((d_model, d_model))
    for i in range(d_model // 2):
        t = k * base ** (-2 * i / d_model)
        M[2 * i : 2 * i + 2, 2 * i : 2 * i + 2] = [[np.cos(t), np.sin(t)], [-np.sin(t), np.cos(t)]]
    return M


def softmax(x, axis=-1):
    x = np.array(x, dtype=float)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def causal_mask(n):
    return np.tri(n, dtype=bool)


def scaled_dot_product_attention(Q, K, V, mask=None):
    Q, K, V = np.asarray(Q, float), np.asarray(K, float), np.asarray(V, float)
    scores = Q @ K.swapaxes(-1, -2) / np.sqrt(K.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = softmax(scores, axis=-1)
    return weights @ V, weights


def self_attention(X, W_Q, W_K, W_V, mask=None):
    return scaled_dot_product_attention(X @ W_Q, X @ W_K, X @ W_V, mask)


def multi_head_attention(X, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    X = np.asarray(X, float)
    heads = []
    for Wq, Wk, Wv in zip(np.split(W_Q, num_heads, axis=1), np.split(W_K, num_heads, axis=1),
                          np.split(W_V, num_heads, axis=1)):
        heads.append(scaled_dot_product_attention(X @ Wq, X @ Wk, X @ Wv, mask)[0])
    return np.hstack(heads) @ W_O


def permutation_matrix(perm):
    if sorted(int(p) for p in perm) != list(range(len(perm))):
        raise ValueError(f"{list(perm)} is not a permutation of 0..{len(perm) - 1}")
    n = len(perm)
    P = np.zeros((n, n))
    P[np.arange(n), perm] = 1
    return P


def _tries(n):
    rng = np.random.default_rng(2024)
    tries = [np.roll(np.arange(n), s) for s in range(1, n)]
    for i in range(n - 1):
        t = np.arange(n)
        t[[i, i + 1]] = [i + 1, i]
        tries.append(t)
    tries += [rng.permutation(n) for _ in range(20)]
    return tries


def is_permutation_equivariant(f, X, perms=None, atol=1e-8):
    X = np.array(X, dtype=float)
    Y = np.asarray(f(X.copy()))
    for p in _tries(len(X)) if perms is None else perms:
        p = np.asarray(p)
        got = np.asarray(f(X[p]))
        if Y.ndim == 0 or len(Y) != len(X) or got.shape != Y.shape:
            return False
        if not np.allclose(got, Y[p], atol=atol, rtol=1e-8):
            return False
    return True


def is_permutation_invariant(f, X, perms=None, atol=1e-8):
    X = np.array(X, dtype=float)
    Y = np.asarray(f(X.copy()))
    for p in _tries(len(X)) if perms is None else perms:
        got = np.asarray(f(X[np.asarray(p)]))
        if got.shape != Y.shape or not np.allclose(got, Y, atol=atol, rtol=1e-8):
            return False
    return True


def rope(X, base=10000.0):
    X = np.array(X, dtype=float)
    n, d = X.shape
    if d % 2:
        raise ValueError("odd d")
    angles = np.arange(n)[:, None] * base ** (-np.arange(0, d, 2) / d)
    x, y = X[:, ::2], X[:, 1::2]
    out = np.empty_like(X)
    out[:, ::2] = x * np.cos(angles) - y * np.sin(angles)
    out[:, 1::2] = x * np.sin(angles) + y * np.cos(angles)
    return out


def alibi_bias(n, num_heads):
    i = np.arange(n)
    dist = np.abs(i[:, None] - i[None, :])
    return np.stack([-(2.0 ** (-8 * (h + 1) / num_heads)) * dist for h in range(num_heads)])
