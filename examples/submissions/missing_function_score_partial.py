# Correct encoding, but the student never wrote pe_shift_matrix; Parts B-D are right.
import numpy as np


def sinusoidal_pe(seq_len, d_model, base=10000.0):
    angles = np.arange(seq_len)[:, None] * np.exp(-np.log(base) * (np.arange(d_model) // 2 * 2) / d_model)
    return np.where(np.arange(d_model) % 2 == 0, np.sin(angles), np.cos(angles))


def add_positional_encoding(E, base=10000.0):
    return np.asarray(E, dtype=float) + sinusoidal_pe(len(E), len(E[0]), base)


def softmax(x, axis=-1):
    z = np.asarray(x, dtype=np.float64)
    z = z - np.amax(z, axis=axis, keepdims=True)
    p = np.exp(z)
    return p / np.sum(p, axis=axis, keepdims=True)


def causal_mask(n):
    return ~np.triu(np.ones((n, n), dtype=bool), k=1)


def scaled_dot_product_attention(Q, K, V, mask=None):
    d_k = np.shape(Q)[-1]
    scores = np.matmul(Q, np.swapaxes(K, -2, -1)) / np.sqrt(d_k)
    if mask is not None:
        scores = np.where(np.asarray(mask, dtype=bool), scores, -np.inf)
    weights = softmax(scores)
    return np.matmul(weights, np.asarray(V, dtype=np.float64)), weights


def self_attention(X, W_Q, W_K, W_V, mask=None):
    X = np.asarray(X, dtype=np.float64)
    return scaled_dot_product_attention(X @ W_Q, X @ W_K, X @ W_V, mask=mask)


def multi_head_attention(X, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    X = np.asarray(X, dtype=np.float64)
    d_h = W_Q.shape[1] // num_heads
    d_v = W_V.shape[1] // num_heads
    outs = [self_attention(X, W_Q[:, h * d_h:(h + 1) * d_h], W_K[:, h * d_h:(h + 1) * d_h],
                           W_V[:, h * d_v:(h + 1) * d_v], mask)[0] for h in range(num_heads)]
    return np.concatenate(outs, axis=1) @ W_O


def permutation_matrix(perm):
    if sorted(int(p) for p in perm) != list(range(len(perm))):
        raise ValueError(f"{list(perm)} is not a permutation of 0..{len(perm) - 1}")
    return np.identity(len(perm))[np.asarray(perm)]


def _perms(n):
    import itertools

    if n <= 5:
        return itertools.permutations(range(n))
    base = list(range(n))
    out = [base[::-1], base[1:] + base[:1], base[-1:] + base[:-1]]
    out += [base[:i] + [base[i + 1], base[i]] + base[i + 2:] for i in range(n - 1)]
    out += [base[:i] + [base[i + 1], base[i + 2], base[i]] + base[i + 3:] for i in range(n - 2)]
    out += [list(np.random.RandomState(0).permutation(n)) for _ in range(3)]
    return out


def is_permutation_equivariant(f, X, perms=None, atol=1e-8):
    X = np.asarray(X, dtype=np.float64)
    fX = np.asarray(f(X.copy()), dtype=np.float64)
    for perm in _perms(len(X)) if perms is None else perms:
        P = permutation_matrix(perm)
        lhs = np.asarray(f(P @ X), dtype=np.float64)
        if fX.ndim == 0 or fX.shape[0] != len(X) or lhs.shape != fX.shape:
            return False
        if not np.allclose(lhs, P @ fX, atol=atol, rtol=1e-9):
            return False
    return True


def is_permutation_invariant(f, X, perms=None, atol=1e-8):
    X = np.asarray(X, dtype=np.float64)
    fX = np.asarray(f(X.copy()), dtype=np.float64)
    for perm in _perms(len(X)) if perms is None else perms:
        lhs = np.asarray(f(permutation_matrix(perm) @ X), dtype=np.float64)
        if lhs.shape != fX.shape or not np.allclose(lhs, fX, atol=atol, rtol=1e-9):
            return False
    return True


def rope(X, base=10000.0):
    X = np.asarray(X, dtype=np.float64)
    n, d = X.shape
    if d % 2:
        raise ValueError("rope needs even d")
    theta = np.exp(-np.log(base) * np.arange(0, d, 2) / d)
    ang = np.outer(np.arange(n), theta)
    c, s = np.repeat(np.cos(ang), 2, axis=1), np.repeat(np.sin(ang), 2, axis=1)
    partner = np.empty_like(X)  # (-x1, x0) for every pair: the vector turned by 90 degrees
    partner[:, 0::2], partner[:, 1::2] = -X[:, 1::2], X[:, 0::2]
    return X * c + partner * s


def alibi_bias(n, num_heads):
    m = np.power(2.0, -8.0 * np.arange(1, num_heads + 1) / num_heads)
    i, j = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    return -m.reshape(-1, 1, 1) * np.abs(i - j)
