"""The extension part: rotary embeddings (RoPE) and ALiBi biases, in plain Python loops."""

import math

import numpy as np

__all__ = ["rope", "rope_variants", "alibi_bias", "alibi_variants"]


def rope(X, base=10000.0, *, clockwise=False, first_pos=0):
    """Row m, pair (2i, 2i+1) rotated counter-clockwise by m * base**(-2i/d)."""
    X = np.asarray(X, dtype=np.float64)
    n, d = X.shape
    out = np.zeros((n, d))
    sign = -1.0 if clockwise else 1.0
    for m in range(n):
        for i in range(d // 2):
            angle = (m + first_pos) * base ** (-2 * i / d)
            c, s = math.cos(angle), sign * math.sin(angle)
            a, b = float(X[m][2 * i]), float(X[m][2 * i + 1])
            out[m][2 * i] = a * c - b * s
            out[m][2 * i + 1] = a * s + b * c
    return out


def _rope_half(X, base):
    X = np.asarray(X, dtype=np.float64)
    n, d = X.shape
    half = d // 2
    theta = base ** (-2 * np.arange(half) / d)
    angles = np.arange(n)[:, None] * theta
    c, s = np.cos(angles), np.sin(angles)
    a, b = X[:, :half], X[:, half:]
    return np.concatenate([a * c - b * s, a * s + b * c], axis=1)


def rope_variants(X, base=10000.0):
    variants = [
        ("the rotate-half layout", "rotate the interleaved pairs (2i, 2i+1), not (i, i + d/2)", _rope_half(X, base)),
        (
            "a clockwise rotation",
            "x'_2i = x_2i cos - x_2i+1 sin and x'_2i+1 = x_2i sin + x_2i+1 cos",
            rope(X, base, clockwise=True),
        ),
        ("positions counted from 1", "the first row is position 0 and is not rotated", rope(X, base, first_pos=1)),
    ]
    if base != 10000.0:
        variants.append(("base ignored (10000 used)", "use the `base` argument", rope(X)))
    return variants


def alibi_bias(n, num_heads, *, first_h=1, sign=-1.0, absolute=True):
    out = np.zeros((num_heads, n, n))
    for h in range(num_heads):
        slope = 2.0 ** (-8.0 * (h + first_h) / num_heads)
        for i in range(n):
            for j in range(n):
                out[h][i][j] = sign * slope * (abs(i - j) if absolute else i - j)
    return out


def _paper_slopes(num_heads):
    """The ALiBi paper's code: geometric slopes for the nearest power of two below num_heads, topped up
    with every other slope of twice that many heads."""

    def geometric(k):
        return [2.0 ** (-8.0 * (h + 1) / k) for h in range(k)]

    low = 2 ** int(math.floor(math.log2(num_heads)))
    return geometric(low) + geometric(2 * low)[0::2][: num_heads - low]


def alibi_variants(n, num_heads):
    distance = np.abs(np.subtract.outer(np.arange(n), np.arange(n)))
    paper = -np.array(_paper_slopes(num_heads))[:, None, None] * distance
    return [
        (
            "the ALiBi paper's slopes for a head count that is not a power of two",
            "here m_h = 2**(-8 (h+1) / num_heads) for every head count, without the paper's interleaving",
            paper,
        ),
        (
            "slopes starting at h = 0",
            "m_h = 2**(-8 (h+1) / num_heads): the first head's slope is 2**(-8/num_heads), not 1",
            alibi_bias(n, num_heads, first_h=0),
        ),
        (
            "slopes 2**-(h+1) whatever the number of heads",
            "m_h = 2**(-8 (h+1) / num_heads): the 8 in the "
            "exponent is shared out among the heads (2**-(h+1) is right only for 8 heads)",
            -(2.0 ** -np.arange(1.0, num_heads + 1))[:, None, None] * distance,
        ),
        (
            "the wrong sign",
            "the bias is a penalty, -m_h |i - j|: farther keys get lower scores",
            alibi_bias(n, num_heads, sign=1.0),
        ),
        (
            "i - j without the absolute value",
            "the bias uses the distance |i - j|",
            alibi_bias(n, num_heads, absolute=False),
        ),
    ]
