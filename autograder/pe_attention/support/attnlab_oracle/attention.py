"""Part B: softmax, masks and (multi-head) attention.

The expected values come from plain Python loops with ``math.exp`` and ``math.fsum`` over one query
at a time. The ``*_variants`` functions build the known wrong versions with numpy: they only have to
match a wrong answer, never to be right.
"""

import math

import numpy as np

__all__ = [
    "softmax",
    "softmax_variants",
    "softmax_overflow_variants",
    "causal_mask",
    "causal_mask_variants",
    "attention",
    "attention_variants",
    "self_attention",
    "self_attention_variants",
    "multi_head_attention",
    "multi_head_attention_variants",
]


def _softmax_row(row):
    finite = [v for v in row if v != -math.inf]
    top = max(finite)
    exps = [0.0 if v == -math.inf else math.exp(v - top) for v in row]
    total = math.fsum(exps)
    return [e / total for e in exps]


def softmax(x, axis=-1):
    """Softmax along ``axis``, one row at a time; ``-inf`` gets weight 0."""
    x = np.array(x, dtype=np.float64)
    moved = np.moveaxis(x, axis, -1)
    rows = moved.reshape(-1, moved.shape[-1])
    out = np.array([_softmax_row([float(v) for v in row]) for row in rows])
    return np.moveaxis(out.reshape(moved.shape), -1, axis)


def _np_softmax(x, axis=-1):
    x = np.asarray(x, dtype=np.float64)
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def softmax_variants(x, axis=-1):
    """Known wrong versions of ``softmax(x, axis)``: (name, explanation, array)."""
    x = np.asarray(x, dtype=np.float64)
    variants = []
    for wrong_axis in range(-x.ndim, 0):
        if wrong_axis != (axis if axis < 0 else axis - x.ndim):
            variants.append(
                (
                    f"softmax over axis {wrong_axis + x.ndim}",
                    f"normalise along the axis you are given (axis={axis}); here the weights "
                    f"sum to 1 along axis {wrong_axis + x.ndim}",
                    _np_softmax(x, wrong_axis),
                )
            )
    if x.ndim > 1:
        e = np.exp(x - x.max())
        variants.append(
            ("softmax over the whole array", "normalise each slice along `axis`, not all entries together", e / e.sum())
        )
    return variants


def softmax_overflow_variants(x):
    """The unstable softmaxes (name, explanation, array), nan where they overflow or underflow."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(all="ignore"):
        e = np.exp(x)
        g = np.exp(x - x.max())
        return [
            (
                "no max-subtraction",
                "exp(1000) overflows; subtract each row's maximum before exp",
                e / e.sum(axis=-1, keepdims=True),
            ),
            (
                "a global instead of a row maximum",
                "subtracting the largest entry of the whole array "
                "underflows every exp of the other rows; subtract each row's own maximum",
                g / g.sum(axis=-1, keepdims=True),
            ),
        ]


def causal_mask(n):
    return np.array([[j <= i for j in range(n)] for i in range(n)], dtype=bool).reshape(n, n)


def causal_mask_variants(n):
    return [
        (
            "an upper-triangular (triu) mask",
            "query i may attend to keys j <= i (the past), not j >= i",
            np.array([[j >= i for j in range(n)] for i in range(n)], dtype=bool).reshape(n, n),
        ),
        (
            "a strict causal mask",
            "a token may attend to itself: the diagonal is True",
            np.array([[j < i for j in range(n)] for i in range(n)], dtype=bool).reshape(n, n),
        ),
    ]


def _attention_2d(Q, K, V, mask):
    n, d_k = len(Q), len(Q[0])
    m, d_v = len(K), len(V[0])
    scale = math.sqrt(d_k)
    weights, out = [], []
    for i in range(n):
        scores = []
        for j in range(m):
            if mask is not None and not mask[i][j]:
                scores.append(-math.inf)
            else:
                scores.append(math.fsum(Q[i][t] * K[j][t] for t in range(d_k)) / scale)
        w = _softmax_row(scores)
        weights.append(w)
        out.append([math.fsum(w[j] * V[j][c] for j in range(m)) for c in range(d_v)])
    return np.array(out).reshape(n, d_v), np.array(weights).reshape(n, m)


def attention(Q, K, V, mask=None):
    """softmax(Q K^T / sqrt(d_k)) V and the weights; leading axes broadcast; mask True = may attend."""
    Q, K, V = (np.asarray(a, dtype=np.float64) for a in (Q, K, V))
    mask = None if mask is None else np.asarray(mask, dtype=bool)
    n, m = Q.shape[-2], K.shape[-2]
    shapes = [Q.shape[:-2], K.shape[:-2], V.shape[:-2]] + ([] if mask is None else [mask.shape[:-2]])
    lead = np.broadcast_shapes(*shapes)
    Qb = np.broadcast_to(Q, lead + Q.shape[-2:])
    Kb = np.broadcast_to(K, lead + K.shape[-2:])
    Vb = np.broadcast_to(V, lead + V.shape[-2:])
    Mb = None if mask is None else np.broadcast_to(mask, lead + (n, m))
    out = np.zeros(lead + (n, V.shape[-1]))
    weights = np.zeros(lead + (n, m))
    for idx in np.ndindex(*lead):
        out[idx], weights[idx] = _attention_2d(
            Qb[idx].tolist(), Kb[idx].tolist(), Vb[idx].tolist(), None if Mb is None else Mb[idx].tolist()
        )
    return out, weights


def _np_attention(Q, K, V, *, scale, mask=None, mask_mode="scores", axis=-1, swap_qk=False, transpose_k=True):
    scores = (K @ np.swapaxes(Q, -1, -2)) if swap_qk else (Q @ (np.swapaxes(K, -1, -2) if transpose_k else K))
    scores = scores / scale
    if mask is not None and mask_mode == "scores":
        scores = np.where(mask, scores, -np.inf)
    elif mask is not None and mask_mode == "inverted":
        scores = np.where(mask, -np.inf, scores)
    elif mask is not None and mask_mode == "multiply":
        scores = scores * mask
    w = _np_softmax(scores, axis)
    if mask is not None and mask_mode == "after":
        w = w * mask
    return w @ V, w


def attention_variants(Q, K, V, mask=None):
    """Known wrong versions of scaled dot-product attention: (name, explanation, output, weights).

    Only variants whose shapes work out for these inputs are returned.
    """
    Q, K, V = (np.asarray(a, dtype=np.float64) for a in (Q, K, V))
    d_k, d_v = Q.shape[-1], V.shape[-1]
    root = math.sqrt(d_k)
    specs = [
        ("no 1/sqrt(d_k) scaling", "divide the scores Q K^T by sqrt(d_k) before the softmax", dict(scale=1.0)),
        ("scores divided by d_k", "the scale is sqrt(d_k), not d_k", dict(scale=float(d_k))),
        (
            "softmax over queries",
            "your weights sum to 1 over queries, not keys: take the softmax along the last (key) axis",
            dict(scale=root, axis=-2),
        ),
    ]
    if d_v != d_k:
        specs.append(
            (
                "scaling by sqrt(d_v)",
                "the scale comes from the key width d_k = Q.shape[-1], not from V",
                dict(scale=math.sqrt(d_v)),
            )
        )
    if K.shape[-2] != d_k:
        specs.append(
            (
                "d_k taken from the number of keys",
                "d_k is the width of a key, K.shape[-1], not K.shape[0] (how many keys there are)",
                dict(scale=math.sqrt(K.shape[-2])),
            )
        )
    if Q.shape[-2] == K.shape[-2]:
        specs.append(
            (
                "Q and K swapped",
                "scores are Q K^T (row i: query i against every key), not K Q^T; "
                "in self-attention Q = X W_Q and K = X W_K",
                dict(scale=root, swap_qk=True),
            )
        )
    if K.shape[-2] == d_k:
        specs.append(
            (
                "K not transposed",
                "scores are Q K^T: query i dotted with key j, so transpose K (its last two axes)",
                dict(scale=root, transpose_k=False),
            )
        )
    if mask is not None:
        mask = np.asarray(mask, dtype=bool)
        specs += [
            (
                "mask applied after the softmax without renormalising",
                "zeroing weights after the softmax leaves rows that no longer sum to 1: set blocked scores "
                "to -inf before the softmax (or renormalise)",
                dict(scale=root, mask=mask, mask_mode="after"),
            ),
            (
                "an inverted mask",
                "True means may attend (the PyTorch convention): block the entries where the mask is False",
                dict(scale=root, mask=mask, mask_mode="inverted"),
            ),
            (
                "a multiplicative mask",
                "multiplying the scores by the mask gives blocked keys a score of 0, "
                "not -inf, so they still get weight",
                dict(scale=root, mask=mask, mask_mode="multiply"),
            ),
        ]
        for spec in specs[:-3]:
            spec[2].setdefault("mask", mask)
    variants = []
    with np.errstate(all="ignore"):
        for name, why, kwargs in specs:
            try:
                out, w = _np_attention(Q, K, V, **kwargs)
            except ValueError:
                continue
            variants.append((name, why, out, w))
    return variants


def self_attention(X, W_Q, W_K, W_V, mask=None):
    X, W_Q, W_K, W_V = (np.asarray(a, dtype=np.float64) for a in (X, W_Q, W_K, W_V))
    rows = X.tolist()

    def project(W):
        W = W.tolist()
        return [[math.fsum(r[t] * W[t][c] for t in range(len(r))) for c in range(len(W[0]))] for r in rows]

    return attention(project(W_Q), project(W_K), project(W_V), mask)


def self_attention_variants(X, W_Q, W_K, W_V, mask=None):
    """Known wrong versions of self-attention: (name, explanation, Z, A)."""
    X, W_Q, W_K, W_V = (np.asarray(a, dtype=np.float64) for a in (X, W_Q, W_K, W_V))
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    mask = None if mask is None else np.asarray(mask, dtype=bool)
    variants = [(name, why, z, a) for name, why, z, a in attention_variants(Q, K, V, mask)]
    with np.errstate(all="ignore"):
        if X.shape[1] != Q.shape[1]:
            z, a = _np_attention(Q, K, V, scale=math.sqrt(X.shape[1]), mask=mask)
            variants.append(
                (
                    "scaling by sqrt(d_model)",
                    "the scale is sqrt(d_k), the width of the keys (W_K.shape[1]), not of the input X",
                    z,
                    a,
                )
            )
        if mask is not None:
            z, a = _np_attention(Q, K, V, scale=math.sqrt(Q.shape[1]))
            variants.append(("the mask ignored", "pass `mask` on to the attention", z, a))
    return variants


def multi_head_attention(X, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    """Head h: columns h*d_h:(h+1)*d_h of W_Q and W_K (d_h = W_Q.shape[1] // num_heads) and columns
    h*d_v:(h+1)*d_v of W_V (d_v = W_V.shape[1] // num_heads), scaled by sqrt(d_h); heads concatenated
    in order; then W_O."""
    X, W_Q, W_K, W_V, W_O = (np.asarray(a, dtype=np.float64) for a in (X, W_Q, W_K, W_V, W_O))
    d_h, d_v = W_Q.shape[1] // num_heads, W_V.shape[1] // num_heads
    heads = []
    for h in range(num_heads):
        qk, v = slice(h * d_h, (h + 1) * d_h), slice(h * d_v, (h + 1) * d_v)
        z, _ = self_attention(X, W_Q[:, qk], W_K[:, qk], W_V[:, v], mask)
        heads.append(z.tolist())
    concat = [sum((heads[h][i] for h in range(num_heads)), []) for i in range(X.shape[0])]
    W = W_O.tolist()
    out = [[math.fsum(row[t] * W[t][c] for t in range(len(row))) for c in range(len(W[0]))] for row in concat]
    return np.array(out).reshape(X.shape[0], W_O.shape[1])


def _np_heads(X, W_Q, W_K, W_V, num_heads, *, scale, strided=False, mask=None, axis=-1, qk_width=None, v_width=None):
    d_h = qk_width or W_Q.shape[1] // num_heads
    d_v = v_width or W_V.shape[1] // num_heads
    outs = []
    for h in range(num_heads):
        if strided:
            qk = v = slice(h, None, num_heads)
        else:
            qk, v = slice(h * d_h, (h + 1) * d_h), slice(h * d_v, (h + 1) * d_v)
        z, _ = _np_attention(X @ W_Q[:, qk], X @ W_K[:, qk], X @ W_V[:, v], scale=scale, mask=mask, axis=axis)
        outs.append(z)
    return outs


def multi_head_attention_variants(X, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    """Known wrong versions of multi-head attention: (name, explanation, output).

    A variant whose shapes do not work out for these inputs is left out.
    """
    X, W_Q, W_K, W_V, W_O = (np.asarray(a, dtype=np.float64) for a in (X, W_Q, W_K, W_V, W_O))
    mask = None if mask is None else np.asarray(mask, dtype=bool)
    n, d_h, d_v = X.shape[0], W_Q.shape[1] // num_heads, W_V.shape[1] // num_heads
    root = math.sqrt(d_h)

    def merged(heads):
        return np.concatenate(heads, axis=1)

    specs = [
        (
            "heads split strided",
            "head h takes the contiguous columns h*d_h:(h+1)*d_h, not every num_heads-th column",
            lambda: merged(_np_heads(X, W_Q, W_K, W_V, num_heads, scale=root, strided=True, mask=mask)) @ W_O,
        ),
        (
            "heads merged without transposing back",
            "reshaping (heads, n, d_v) straight to (n, heads*d_v) mixes tokens: move the head axis next to d_v first",
            lambda: np.stack(_np_heads(X, W_Q, W_K, W_V, num_heads, scale=root, mask=mask)).reshape(n, -1) @ W_O,
        ),
        (
            "no 1/sqrt(d_h) scaling",
            "scale each head's scores by sqrt(d_h)",
            lambda: merged(_np_heads(X, W_Q, W_K, W_V, num_heads, scale=1.0, mask=mask)) @ W_O,
        ),
        (
            "W_O forgotten",
            "the concatenated heads are multiplied by W_O",
            lambda: merged(_np_heads(X, W_Q, W_K, W_V, num_heads, scale=root, mask=mask)),
        ),
        (
            "softmax over queries",
            "each head's weights sum to 1 over queries, not keys: take the softmax along the key axis",
            lambda: merged(_np_heads(X, W_Q, W_K, W_V, num_heads, scale=root, mask=mask, axis=-2)) @ W_O,
        ),
    ]
    for width, label in [
        (X.shape[1], "d_model"),
        (W_Q.shape[1], "the full width W_Q.shape[1]"),
        (d_v, "d_v, the value width"),
    ]:
        if width != d_h:
            specs.append(
                (
                    f"scaling by sqrt({label}) inside the heads",
                    "each head is scaled by sqrt(d_h), its own key width W_Q.shape[1] // num_heads",
                    lambda width=width: (
                        merged(_np_heads(X, W_Q, W_K, W_V, num_heads, scale=math.sqrt(width), mask=mask)) @ W_O
                    ),
                )
            )
    if d_v != d_h:
        specs += [
            (
                "W_V sliced with W_Q's head width",
                "each head takes W_V.shape[1] // num_heads value columns, "
                "which differs from the query/key width d_h here",
                lambda: merged(_np_heads(X, W_Q, W_K, W_V, num_heads, scale=root, mask=mask, v_width=d_h)) @ W_O,
            ),
            (
                "W_Q and W_K sliced with W_V's head width",
                "query and key heads are W_Q.shape[1] // num_heads columns wide, value heads W_V.shape[1] // num_heads",
                lambda: (
                    merged(_np_heads(X, W_Q, W_K, W_V, num_heads, scale=math.sqrt(d_v), mask=mask, qk_width=d_v)) @ W_O
                ),
            ),
        ]
    if mask is not None:
        specs.append(
            (
                "the mask ignored",
                "apply `mask` in every head",
                lambda: merged(_np_heads(X, W_Q, W_K, W_V, num_heads, scale=root)) @ W_O,
            )
        )
    variants = []
    with np.errstate(all="ignore"):
        for name, why, build in specs:
            try:
                variants.append((name, why, build()))
            except ValueError:
                continue
    return variants
