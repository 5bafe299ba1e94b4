# A correct submission written with plain Python loops and the math module: -1e9 instead of
# -inf for masked scores, one loop per attention head.
import itertools
import math
import random

import numpy as np


def sinusoidal_pe(seq_len, d_model, base=10000.0):
    pe = np.empty((seq_len, d_model))
    for pos in range(seq_len):
        for col in range(d_model):
            pair = col // 2
            angle = pos / (base ** (2 * pair / d_model))
            pe[pos, col] = math.sin(angle) if col % 2 == 0 else math.cos(angle)
    return pe


def add_positional_encoding(E, base=10000.0):
    rows, cols = len(E), len(E[0])
    pe = sinusoidal_pe(rows, cols, base)
    out = np.empty((rows, cols))
    for r in range(rows):
        for c in range(cols):
            out[r, c] = E[r][c] + pe[r, c]
    return out


def pe_shift_matrix(k, d_model, base=10000.0):
    if d_model % 2 != 0:
        raise ValueError("d_model must be even")
    M = [[0.0] * d_model for _ in range(d_model)]
    for pair in range(d_model // 2):
        w = 1.0 / base ** (2 * pair / d_model)
        a, b = 2 * pair, 2 * pair + 1
        M[a][a] = math.cos(k * w)
        M[a][b] = math.sin(k * w)
        M[b][a] = -math.sin(k * w)
        M[b][b] = math.cos(k * w)
    return np.array(M)


def softmax(x, axis=-1):
    x = np.asarray(x, dtype=float)
    moved = np.moveaxis(x, axis, -1)
    out = np.empty(moved.shape)
    for idx in np.ndindex(*moved.shape[:-1]):
        row = [float(v) for v in moved[idx]]
        biggest = max(row)
        exps = [math.exp(v - biggest) for v in row]
        total = sum(exps)
        out[idx] = [e / total for e in exps]
    return np.moveaxis(out, -1, axis)


def causal_mask(n):
    return np.array([[j <= i for j in range(n)] for i in range(n)], dtype=bool)


def _attend_2d(Q, K, V, mask):
    """One (n, d_k) x (m, d_k) x (m, d_v) attention with plain loops; a blocked key gets weight 0."""
    n, m, d_k = len(Q), len(K), len(Q[0])
    weights, output = [], []
    for i in range(n):
        scores = []
        for j in range(m):
            s = sum(Q[i][t] * K[j][t] for t in range(d_k)) / math.sqrt(d_k)
            scores.append(None if mask is not None and not mask[i][j] else s)
        top = max((s for s in scores if s is not None), default=0.0)
        exps = [0.0 if s is None else math.exp(s - top) for s in scores]
        total = sum(exps) or 1.0  # a query that may attend to no key keeps weight 0 everywhere
        w = [e / total for e in exps]
        weights.append(w)
        output.append([sum(w[j] * V[j][c] for j in range(m)) for c in range(len(V[0]))])
    return output, weights


def scaled_dot_product_attention(Q, K, V, mask=None):
    Q, K, V = (np.asarray(a, dtype=float) for a in (Q, K, V))
    lead = np.broadcast_shapes(Q.shape[:-2], K.shape[:-2], V.shape[:-2],
                               () if mask is None else np.shape(mask)[:-2])
    n, m, d_v = Q.shape[-2], K.shape[-2], V.shape[-1]
    Qb = np.broadcast_to(Q, lead + Q.shape[-2:])
    Kb = np.broadcast_to(K, lead + K.shape[-2:])
    Vb = np.broadcast_to(V, lead + V.shape[-2:])
    Mb = None if mask is None else np.broadcast_to(np.asarray(mask, dtype=bool), lead + (n, m))
    output = np.empty(lead + (n, d_v))
    weights = np.empty(lead + (n, m))
    for idx in np.ndindex(*lead):
        out, w = _attend_2d(Qb[idx].tolist(), Kb[idx].tolist(), Vb[idx].tolist(),
                            None if Mb is None else Mb[idx].tolist())
        output[idx] = np.array(out).reshape(n, d_v)
        weights[idx] = np.array(w).reshape(n, m)
    return output, weights


def _matmul(A, B):
    return [[sum(A[i][t] * B[t][j] for t in range(len(B))) for j in range(len(B[0]))]
            for i in range(len(A))]


def self_attention(X, W_Q, W_K, W_V, mask=None):
    X = np.asarray(X, dtype=float).tolist()
    Q = _matmul(X, np.asarray(W_Q, dtype=float).tolist())
    K = _matmul(X, np.asarray(W_K, dtype=float).tolist())
    V = _matmul(X, np.asarray(W_V, dtype=float).tolist())
    return scaled_dot_product_attention(Q, K, V, mask)


def multi_head_attention(X, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    X = np.asarray(X, dtype=float).tolist()
    W_Q, W_K, W_V, W_O = (np.asarray(W, dtype=float) for W in (W_Q, W_K, W_V, W_O))
    d_h = W_Q.shape[1] // num_heads
    d_vh = W_V.shape[1] // num_heads
    concat = [[] for _ in X]
    for h in range(num_heads):
        Q = _matmul(X, W_Q[:, h * d_h:(h + 1) * d_h].tolist())
        K = _matmul(X, W_K[:, h * d_h:(h + 1) * d_h].tolist())
        V = _matmul(X, W_V[:, h * d_vh:(h + 1) * d_vh].tolist())
        out, _ = _attend_2d(Q, K, V, None if mask is None else np.asarray(mask, dtype=bool).tolist())
        for i, row in enumerate(out):
            concat[i].extend(row)
    return np.array(_matmul(concat, W_O.tolist()), dtype=float).reshape(len(X), W_O.shape[1])


def permutation_matrix(perm):
    if sorted(int(p) for p in perm) != list(range(len(perm))):
        raise ValueError(f"{list(perm)} is not a permutation of 0..{len(perm) - 1}")
    n = len(perm)
    P = np.zeros((n, n))
    for i in range(n):
        P[i, perm[i]] = 1.0
    return P


def _perms_to_try(n):
    if n <= 5:
        return list(itertools.permutations(range(n)))
    found = []
    for i in range(n - 1):
        p = list(range(n))
        p[i], p[i + 1] = p[i + 1], p[i]
        found.append(p)
    for i in range(n - 2):
        p = list(range(n))
        p[i], p[i + 1], p[i + 2] = p[i + 1], p[i + 2], p[i]
        found.append(p)
    found.append(list(range(n))[::-1])
    found.append([(i + 1) % n for i in range(n)])
    shuffler = random.Random(7)
    for _ in range(4):
        p = list(range(n))
        shuffler.shuffle(p)
        found.append(p)
    return found


def _same(a, b, atol):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape:
        return False
    return all(abs(x - y) <= atol + 1e-9 * abs(y) for x, y in zip(a.ravel().tolist(), b.ravel().tolist()))


def is_permutation_equivariant(f, X, perms=None, atol=1e-8):
    X = np.asarray(X, dtype=float)
    fX = np.asarray(f(X.copy()), dtype=float)
    if fX.ndim == 0 or fX.shape[0] != X.shape[0]:
        return False
    for perm in perms if perms is not None else _perms_to_try(len(X)):
        shuffled_in = np.array([X[k] for k in perm])
        shuffled_out = np.array([fX[k] for k in perm])
        if not _same(f(shuffled_in), shuffled_out, atol):
            return False
    return True


def is_permutation_invariant(f, X, perms=None, atol=1e-8):
    X = np.asarray(X, dtype=float)
    fX = f(X.copy())
    for perm in perms if perms is not None else _perms_to_try(len(X)):
        if not _same(f(np.array([X[k] for k in perm])), fX, atol):
            return False
    return True


def rope(X, base=10000.0):
    X = np.asarray(X, dtype=float)
    n, d = X.shape
    if d % 2:
        raise ValueError("rope needs an even number of columns")
    out = np.empty((n, d))
    for m in range(n):
        for i in range(d // 2):
            angle = m * base ** (-2 * i / d)
            x0, x1 = X[m, 2 * i], X[m, 2 * i + 1]
            out[m, 2 * i] = x0 * math.cos(angle) - x1 * math.sin(angle)
            out[m, 2 * i + 1] = x0 * math.sin(angle) + x1 * math.cos(angle)
    return out


def alibi_bias(n, num_heads):
    bias = np.zeros((num_heads, n, n))
    for h in range(num_heads):
        slope = 2 ** (-8 * (h + 1) / num_heads)
        for i in range(n):
            for j in range(n):
                bias[h, i, j] = -slope * abs(i - j)
    return bias
