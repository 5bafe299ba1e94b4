"""The extension part: rotary embeddings (RoPE) and ALiBi biases, in plain Python loops."""

import math

import numpy as np

from .mistakes import Mistake, family, variants

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


ROPE_MISTAKES = [
    Mistake(
        "the rotate-half layout", "rotate the interleaved pairs (2i, 2i+1), not (i, i + d/2)", dict(layout="halves")
    ),
    Mistake(
        "a clockwise rotation",
        "x'_2i = x_2i cos - x_2i+1 sin and x'_2i+1 = x_2i sin + x_2i+1 cos",
        dict(clockwise=True),
    ),
    Mistake("positions counted from 1", "the first row is position 0 and is not rotated", dict(first_pos=1)),
    Mistake(
        "theta_i = base**(-i/d)",
        "pair i turns by m * base**(-2i/d): the exponent counts columns, two per pair",
        dict(exponent="i/d"),
    ),
    Mistake(
        "theta_i = base**(-(2i+1)/d)",
        "pair i turns by m * base**(-2i/d): take the exponent from the pair's even column",
        dict(exponent="(2i+1)/d"),
    ),
    Mistake(
        "angles multiplied by base**(2i/d)",
        "pair i turns by m * base**(-2i/d): the frequency falls with i",
        dict(divide=False),
    ),
    Mistake("base ignored (10000 used)", "use the `base` argument", dict(base_used=10000.0)),
    Mistake(
        "the rotated pair written in swapped places",
        "x'_2i = x_2i cos - x_2i+1 sin goes to column 2i, x'_2i+1 = x_2i sin + x_2i+1 cos to column 2i+1",
        dict(swap_outputs=True),
    ),
]


def _rope_elsewhere():
    rng = np.random.default_rng(90)
    return [((rng.normal(size=shape),), {}) for shape in ((3, 4), (5, 6), (2, 10))]


@family("rope", ROPE_MISTAKES, _rope_elsewhere)
def rope_family(
    X,
    base=10000.0,
    *,
    layout="pairs",
    clockwise=False,
    first_pos=0,
    exponent="2i/d",
    divide=True,
    base_used=None,
    swap_outputs=False,
):
    """RoPE with its mistakes as parameters (numpy; the defaults give ``rope``)."""
    X = np.asarray(X, dtype=np.float64)
    n, d = X.shape
    if d % 2:
        raise ValueError("rope needs an even d")
    b = base if base_used is None else base_used
    i = np.arange(d // 2)
    e = {"2i/d": 2 * i, "i/d": i, "(2i+1)/d": 2 * i + 1}[exponent] / d
    theta = b**-e if divide else b**e
    angles = (np.arange(n)[:, None] + first_pos) * theta
    c, s = np.cos(angles), np.sin(angles) * (-1.0 if clockwise else 1.0)
    first, second = (slice(0, d // 2), slice(d // 2, d)) if layout == "halves" else (slice(0, d, 2), slice(1, d, 2))
    out = np.empty_like(X)
    to_first, to_second = (second, first) if swap_outputs else (first, second)
    out[:, to_first] = X[:, first] * c - X[:, second] * s
    out[:, to_second] = X[:, first] * s + X[:, second] * c
    return out


def rope_variants(X, base=10000.0):
    return variants(rope_family, ROPE_MISTAKES, X, base)


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


_SLOPES = "m_h = 2**(-8 (h+1) / num_heads)"
ALIBI_MISTAKES = [
    Mistake(
        "the ALiBi paper's slopes for a head count that is not a power of two",
        "here m_h = 2**(-8 (h+1) / num_heads) for every head count, without the paper's interleaving",
        dict(slopes="paper"),
    ),
    Mistake(
        "slopes starting at h = 0",
        _SLOPES + ": the first head's slope is 2**(-8/num_heads), not 1",
        dict(slopes="from 0"),
    ),
    Mistake(
        "slopes 2**-(h+1) whatever the number of heads",
        _SLOPES + ": the 8 in the exponent is shared out among the heads (2**-(h+1) is right only for 8 heads)",
        dict(slopes="2**-(h+1)"),
    ),
    Mistake(
        "slopes divided by num_heads + 1",
        _SLOPES + ": the exponent is divided by num_heads itself",
        dict(slopes="over H+1"),
    ),
    Mistake(
        "2**(-8/num_heads)**(h+1) without parentheses",
        "** binds right to left: write (2**(-8/num_heads))**(h+1), or 2**(-8 (h+1) / num_heads)",
        dict(slopes="precedence"),
    ),
    Mistake(
        "slopes spaced linearly",
        "the slopes form a geometric sequence, m_h = 2**(-8 (h+1) / num_heads): each is the previous one times "
        "2**(-8/num_heads)",
        dict(slopes="linear"),
    ),
    Mistake(
        "the slopes in reverse head order",
        _SLOPES + ": head 0 has the steepest slope, 2**(-8/num_heads)",
        dict(slopes="reversed"),
    ),
    Mistake("the wrong sign", "the bias is a penalty, -m_h |i - j|: farther keys get lower scores", dict(sign=1.0)),
    Mistake("i - j without the absolute value", "the bias uses the distance |i - j|", dict(distance="i - j")),
    Mistake("j - i without the absolute value", "the bias uses the distance |i - j|", dict(distance="j - i")),
    Mistake(
        "a bias for past keys only (0 for future keys)",
        "the bias is -m_h |i - j| for every key, before and after i: use the absolute distance",
        dict(distance="past only"),
    ),
    Mistake(
        "the head axis last",
        "the result has shape (num_heads, n, n): bias[h] is head h's (n, n) matrix",
        dict(heads_last=True),
    ),
]


def _alibi_elsewhere():
    # head counts that are powers of two and not, where an integer 8 // num_heads, a num_heads + 1 and
    # the paper's interleaving part ways
    return [((n, num_heads), {}) for n, num_heads in ((3, 1), (3, 2), (4, 3), (3, 5), (3, 6), (2, 7), (3, 8), (2, 16))]


@family("alibi_bias", ALIBI_MISTAKES, _alibi_elsewhere)
def alibi_family(n, num_heads, *, slopes="2**(-8(h+1)/H)", sign=-1.0, distance="|i - j|", heads_last=False):
    """ALiBi biases with their mistakes as parameters (numpy; the defaults give ``alibi_bias``)."""
    h = np.arange(num_heads)
    m = {
        "2**(-8(h+1)/H)": lambda: 2.0 ** (-8.0 * (h + 1) / num_heads),
        "paper": lambda: np.array(_paper_slopes(num_heads)),
        "from 0": lambda: 2.0 ** (-8.0 * h / num_heads),
        "2**-(h+1)": lambda: 2.0 ** -(h + 1.0),
        "over H+1": lambda: 2.0 ** (-8.0 * (h + 1) / (num_heads + 1)),
        "reversed": lambda: 2.0 ** (-8.0 * (num_heads - h) / num_heads),
        "precedence": lambda: 2.0 ** ((-8.0 / num_heads) ** (h + 1)),
        "linear": lambda: np.linspace(2.0 ** (-8.0 / num_heads), 2.0**-8, num_heads),
    }[slopes]()
    i, j = np.arange(n)[:, None], np.arange(n)[None, :]
    dist = {"|i - j|": np.abs(i - j), "i - j": i - j, "j - i": j - i, "past only": np.maximum(i - j, 0)}[distance]
    bias = sign * m[:, None, None] * dist
    return np.moveaxis(bias, 0, -1) if heads_last else bias


def alibi_variants(n, num_heads):
    return variants(alibi_family, ALIBI_MISTAKES, n, num_heads)
