"""Part B: softmax, masks and (multi-head) attention.

The expected values come from plain Python loops with ``math.exp`` and ``math.fsum`` over one query
at a time. The ``*_variants`` functions build the known wrong versions with numpy: they only have to
match a wrong answer, never to be right.
"""

import math

import numpy as np

from .mistakes import UNNORMALISED, Mistake, family, raising, variants

__all__ = [
    "softmax",
    "softmax_variants",
    "causal_mask",
    "causal_mask_variants",
    "causal_mask_kind",
    "attention",
    "attention_variants",
    "self_attention",
    "self_attention_variants",
    "multi_head_attention",
    "multi_head_attention_variants",
    "multi_head_attention_raising",
]


def _softmax_row(row):
    finite = [v for v in row if v != -math.inf]
    if not finite:  # nothing to attend to: a row of 0s, as the notebook says the reference gives
        return [0.0] * len(row)
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


SOFTMAX_MISTAKES = [
    Mistake(
        "softmax over axis 0",
        "normalise along the axis you are given; here the weights sum to 1 along axis 0",
        dict(fixed_axis=0),
    ),
    Mistake(
        "softmax over the last axis whatever `axis` is",
        "normalise along the axis you are given, not always the last one",
        dict(fixed_axis=-1),
    ),
    Mistake(
        "the maximum taken along the last axis",
        "subtract the maximum along `axis` (keepdims=True): a shift that differs within a slice changes its weights",
        dict(shift_axis=-1),
    ),
    Mistake(
        "softmax over the whole array",
        "normalise each slice along `axis`, not all entries together",
        dict(shift="global max", total="all"),
        UNNORMALISED,
    ),
    Mistake(
        "a sum over every entry",
        "divide by the sum along `axis` (keepdims=True), not by the sum of the whole array",
        dict(total="all"),
        UNNORMALISED,
    ),
    Mistake("no max-subtraction", "exp(1000) overflows; subtract each row's maximum before exp", dict(shift="none")),
    Mistake(
        "a global instead of a row maximum",
        "subtracting the largest entry of the whole array underflows every exp of the other rows; "
        "subtract each row's own maximum",
        dict(shift="global max"),
    ),
    Mistake(
        "the row mean subtracted instead of the maximum",
        "a row spanning -1e4 to 1e4 still overflows: only the row's own maximum keeps every exp in range",
        dict(shift="mean"),
    ),
    Mistake(
        "the row minimum subtracted instead of the maximum",
        "exp(x - min) overflows where the row is wide: subtract the row's maximum",
        dict(shift="min"),
    ),
    Mistake(
        "the maximum without keepdims=True",
        "np.max(x, axis=axis, keepdims=True) keeps the reduced axis, so the maximum lines up with its own slice",
        dict(keepdims=False),
    ),
    Mistake(
        "the maximum subtracted in the numerator only",
        "subtract the maximum inside both exps, exp(x - max) / sum(exp(x - max)), or the sum overflows",
        dict(shift_sum=False),
    ),
    Mistake("the log-softmax", "return the weights exp(x - max) / sum, not their logarithms", dict(log=True)),
    Mistake(
        "a division by the maximum instead of the sum",
        "divide each exp by the sum along `axis`, so that the weights sum to 1",
        dict(total="max"),
        UNNORMALISED,
    ),
]


def _softmax_elsewhere():
    rng = np.random.default_rng(92)
    blocked = 2.0 * rng.normal(size=(3, 4))
    blocked[1, 2] = -np.inf
    return [
        ((2.0 * rng.normal(size=(3, 4)),), {}),
        ((rng.normal(size=(2, 3, 4)),), {"axis": 0}),
        ((rng.normal(size=(2, 3, 4)),), {"axis": 1}),
        ((30.0 * rng.normal(size=(4, 3)),), {}),
        ((blocked,), {}),
    ]


@family("softmax", SOFTMAX_MISTAKES, _softmax_elsewhere)
def softmax_family(
    x,
    axis=-1,
    *,
    fixed_axis=None,
    shift_axis=None,
    shift="max",
    total="axis",
    log=False,
    shift_sum=True,
    keepdims=True,
):
    """Softmax with its mistakes as parameters (numpy; the defaults give ``softmax``)."""
    x = np.asarray(x, dtype=np.float64)
    axis = axis if fixed_axis is None else fixed_axis
    along = axis if shift_axis is None else shift_axis
    if shift == "none":
        top = 0.0
    elif shift == "global max":
        top = np.max(x)
    else:
        top = {"max": np.max, "mean": np.mean, "min": np.min}[shift](x, axis=along, keepdims=keepdims)
    e = np.exp(x - top)
    summed = e if shift_sum else np.exp(x)
    if total == "all":
        norm = np.sum(summed)
    else:
        norm = (np.max if total == "max" else np.sum)(summed, axis=axis, keepdims=True)
    return np.log(e / norm) if log else e / norm


def softmax_variants(x, axis=-1):
    """Known wrong versions of ``softmax(x, axis)``: (name, explanation, array), nan where they overflow."""
    return variants(softmax_family, SOFTMAX_MISTAKES, x, axis)


def causal_mask(n):
    return np.array([[j <= i for j in range(n)] for i in range(n)], dtype=bool).reshape(n, n)


CAUSAL_MISTAKES = [
    Mistake(
        "an upper-triangular (triu) mask",
        "query i may attend to keys j <= i (the past), not j >= i",
        dict(orientation="triu"),
    ),
    Mistake("a strict causal mask", "a token may attend to itself: the diagonal is True", dict(offset=-1)),
    Mistake(
        "a mask that blocks nothing",
        "query i may attend to keys j <= i only: the future (j > i) is False",
        dict(orientation="none"),
    ),
    Mistake(
        "the diagonal only",
        "query i may attend to every key j <= i, its own position and all earlier ones",
        dict(orientation="diagonal"),
    ),
    Mistake(
        "a mask one step ahead",
        "query i may attend to keys j <= i; np.tril(..., k=1) also lets it see key i + 1",
        dict(offset=1),
    ),
    Mistake(
        "True marking the blocked entries",
        "True means may attend (the PyTorch convention for boolean masks in this kit): the past and the "
        "diagonal are True, the future False",
        dict(meaning="blocked"),
    ),
]


def _causal_elsewhere():
    return [((n,), {}) for n in (3, 4, 6)]


@family("causal_mask", CAUSAL_MISTAKES, _causal_elsewhere)
def causal_mask_family(n, *, orientation="tril", offset=0, meaning="may attend"):
    """The causal mask with its mistakes as parameters (the defaults give ``causal_mask``)."""
    i, j = np.arange(n)[:, None], np.arange(n)[None, :]
    allowed = {"tril": j - i <= offset, "triu": i - j <= offset, "diagonal": i == j, "none": i + j >= 0}[orientation]
    return allowed if meaning == "may attend" else ~allowed


def causal_mask_variants(n):
    return variants(causal_mask_family, CAUSAL_MISTAKES, n)


def causal_mask_kind(m, n):
    """A mask of numbers that holds the causal mask's pattern: (mistake, what to do), or None."""
    m = np.asarray(m)
    right = causal_mask(n)
    if m.shape != (n, n) or m.dtype.kind not in "iuf":
        return None
    with np.errstate(invalid="ignore"):
        if np.array_equal(m, right.astype(m.dtype)):
            return "a mask of 0s and 1s", "return booleans: np.tril(np.ones((n, n), dtype=bool))"
        if np.array_equal(m, np.where(right, 0.0, -np.inf)):
            return "an additive mask (0 and -inf)", "return booleans, True where query i may attend to key j"
    return None


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


def _mistakes(rows):
    return [Mistake(name, why, knobs) for name, why, knobs in rows]


_MASKING = [
    (
        "mask applied after the softmax without renormalising",
        "zeroing weights after the softmax leaves rows that no longer sum to 1: set blocked scores "
        "to -inf before the softmax (or renormalise)",
        dict(mask_at="weights"),
    ),
    (
        "an inverted mask",
        "True means may attend (the PyTorch convention): block the entries where the mask is False",
        dict(mask_as="inverted"),
    ),
    (
        "a transposed mask",
        "mask[..., i, j] is query i and key j: apply it as it is, not transposed",
        dict(mask_as="transposed"),
    ),
    (
        "the mask ignored",
        "pass `mask` on to the attention and block the entries where it is False",
        dict(mask_as="ignored"),
    ),
    (
        "a multiplicative mask or a fill of 0",
        "a blocked score of 0 (from multiplying by the mask, or filling with 0) still gets weight: fill with -inf",
        dict(fill=0.0),
    ),
]
_AXIS = (
    "softmax over queries",
    "your weights sum to 1 over queries, not keys: take the softmax along the last (key) axis",
    dict(axis=-2),
)
_SCALE_WHY = "divide the scores Q K^T by sqrt(d_k), d_k = K.shape[-1] the width of a key, before the softmax"
ATTENTION_MISTAKES = _mistakes(
    [
        ("no 1/sqrt(d_k) scaling", "divide the scores Q K^T by sqrt(d_k) before the softmax", dict(scale="1")),
        ("scores divided by d_k", "the scale is sqrt(d_k), not d_k", dict(scale="d_k")),
        ("scores multiplied by sqrt(d_k)", _SCALE_WHY, dict(scale="1/sqrt(d_k)")),
        (
            "scaling by sqrt(d_v)",
            "the scale comes from the key width d_k = Q.shape[-1], not from V",
            dict(scale="sqrt(d_v)"),
        ),
        (
            "d_k taken from the number of keys",
            "d_k is the width of a key, K.shape[-1], not K.shape[-2] (how many keys there are)",
            dict(scale="sqrt(m)"),
        ),
        (
            "d_k taken from the number of queries",
            "d_k is the width of a key, K.shape[-1], not Q.shape[-2] (how many queries there are)",
            dict(scale="sqrt(n)"),
        ),
        (
            "the output divided by sqrt(d_k) instead of the scores",
            "the scale belongs inside the softmax: softmax(Q K^T / sqrt(d_k)) V",
            dict(scale_at="output"),
        ),
        (
            "the weights divided by sqrt(d_k) after the softmax",
            "the scale belongs inside the softmax: softmax(Q K^T / sqrt(d_k)); weights must sum to 1",
            dict(scale_at="weights"),
        ),
        (
            "Q and K swapped",
            "scores are Q K^T (row i: query i against every key), not K Q^T; in self-attention Q = X W_Q and K = X W_K",
            dict(scores="K Q^T"),
        ),
        (
            "K not transposed",
            "scores are Q K^T: query i dotted with key j, so transpose K (its last two axes)",
            dict(scores="Q K"),
        ),
        _AXIS,
        (
            "the weights transposed in the output",
            "the output is A V: row i mixes the values with query i's weights (row i of A)",
            dict(output="A^T V"),
        ),
    ]
    + _MASKING
)


def _mixed_mask(n):
    """A causal mask with key 0 blocked for the last query: every row and column, as given,
    inverted or transposed, holds a True and a False, so no query is left without a key (a case the
    contract leaves open, which implementations answer differently)."""
    mask = np.tri(n) > 0
    mask[n - 1, 0] = False
    return mask


def _attention_elsewhere():
    rng = np.random.default_rng(93)
    mask = rng.random(size=(3, 5)) < 0.6
    mask[:, 0], mask[:, -1] = True, False  # every query has a key it may and one it may not attend to
    return [
        ((rng.normal(size=(3, 4)), rng.normal(size=(5, 4)), rng.normal(size=(5, 2))), {}),
        ((rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 5, 4)), rng.normal(size=(2, 5, 3))), {"mask": mask}),
        ((rng.normal(size=(4, 3)), rng.normal(size=(4, 3)), rng.normal(size=(4, 2))), {"mask": _mixed_mask(4)}),
    ]


@family("scaled_dot_product_attention", ATTENTION_MISTAKES, _attention_elsewhere)
def attention_family(
    Q,
    K,
    V,
    mask=None,
    *,
    scale="sqrt(d_k)",
    scale_at="scores",
    scores="Q K^T",
    axis=-1,
    mask_as="given",
    mask_at="scores",
    fill=-np.inf,
    output="A V",
):
    """Scaled dot-product attention with its mistakes as parameters (numpy; the defaults give
    ``attention``). ``scale`` is a number or the name of one."""
    Q, K, V = (np.asarray(a, dtype=np.float64) for a in (Q, K, V))
    d_k, d_v, n, m = Q.shape[-1], V.shape[-1], Q.shape[-2], K.shape[-2]
    if isinstance(scale, str):
        scale = {
            "sqrt(d_k)": math.sqrt(d_k),
            "1": 1.0,
            "d_k": float(d_k),
            "1/sqrt(d_k)": 1 / math.sqrt(d_k),
            "sqrt(d_v)": math.sqrt(d_v),
            "sqrt(m)": math.sqrt(m),
            "sqrt(n)": math.sqrt(n),
        }[scale]
    S = {
        "Q K^T": lambda: Q @ np.swapaxes(K, -1, -2),
        "K Q^T": lambda: K @ np.swapaxes(Q, -1, -2),
        "Q K": lambda: Q @ K,
    }[scores]()
    if scale_at == "scores":
        S = S / scale
    if mask is not None and mask_as != "ignored":
        mask = np.asarray(mask, dtype=bool)
        if mask_as == "transposed":
            if mask.shape[-1] != mask.shape[-2]:
                raise ValueError("only a square mask can be transposed")
            mask = np.swapaxes(mask, -1, -2)
        keep = ~mask if mask_as == "inverted" else mask
        if mask_at == "scores":
            S = np.where(keep, S, fill)
    else:
        keep = None
    w = _np_softmax(S, axis)
    if keep is not None and mask_at == "weights":
        w = w * keep
    if scale_at == "weights":
        w = w / scale
    out = (np.swapaxes(w, -1, -2) if output == "A^T V" else w) @ V
    return (out / scale if scale_at == "output" else out), w


def attention_variants(Q, K, V, mask=None):
    """Known wrong versions of scaled dot-product attention: (name, explanation, output, weights).

    Only variants whose shapes work out for these inputs are returned.
    """
    return [
        (name, why, out, w) for name, why, (out, w) in variants(attention_family, ATTENTION_MISTAKES, Q, K, V, mask)
    ]


def self_attention(X, W_Q, W_K, W_V, mask=None):
    X, W_Q, W_K, W_V = (np.asarray(a, dtype=np.float64) for a in (X, W_Q, W_K, W_V))
    rows = X.tolist()

    def project(W):
        W = W.tolist()
        return [[math.fsum(r[t] * W[t][c] for t in range(len(r))) for c in range(len(W[0]))] for r in rows]

    return attention(project(W_Q), project(W_K), project(W_V), mask)


SELF_ATTENTION_MISTAKES = [
    m
    for m in ATTENTION_MISTAKES
    # in self-attention there are as many queries as keys: one mistake, named below
    if m.knobs.get("scale") not in ("sqrt(m)", "sqrt(n)")
] + _mistakes(
    [
        (
            "scaling by sqrt(d_model)",
            "the scale is sqrt(d_k), the width of the keys (W_K.shape[1]), not of the input X",
            dict(scale="sqrt(d_model)"),
        ),
        (
            "d_k taken from the number of tokens",
            "d_k is the width of a key, W_K.shape[1], not the number of tokens X.shape[0]",
            dict(scale="sqrt(n)"),
        ),
        ("V = X, W_V unused", "the values are V = X W_V", dict(values="X")),
        ("K computed with W_Q", "the keys are K = X W_K", dict(keys="X W_Q")),
        ("Q computed with W_K", "the queries are Q = X W_Q", dict(queries="X W_K")),
        (
            "a residual X added to Z",
            "self-attention returns Z = A V; the residual belongs to a later layer",
            dict(residual=True),
        ),
    ]
)


def _self_attention_elsewhere():
    rng = np.random.default_rng(94)
    return [
        ((rng.normal(size=(4, 5)), *(rng.normal(size=(5, w)) for w in (3, 3, 2))), {}),
        ((rng.normal(size=(5, 3)), *(rng.normal(size=(3, w)) for w in (4, 4, 3))), {"mask": _mixed_mask(5)}),
        # values as wide as X: where a residual X + Z can be formed
        ((rng.normal(size=(3, 4)), *(rng.normal(size=(4, w)) for w in (2, 2, 4))), {}),
    ]


@family("self_attention", SELF_ATTENTION_MISTAKES, _self_attention_elsewhere)
def self_attention_family(
    X,
    W_Q,
    W_K,
    W_V,
    mask=None,
    *,
    queries="X W_Q",
    keys="X W_K",
    values="X W_V",
    scale="sqrt(d_k)",
    residual=False,
    **knobs,
):
    """Self-attention with its mistakes as parameters: the projections, then ``attention_family``."""
    X, W_Q, W_K, W_V = (np.asarray(a, dtype=np.float64) for a in (X, W_Q, W_K, W_V))
    Q = X @ (W_K if queries == "X W_K" else W_Q)
    K = X @ (W_Q if keys == "X W_Q" else W_K)
    V = X if values == "X" else X @ W_V
    if scale == "sqrt(d_model)":
        scale = math.sqrt(X.shape[1])
    Z, A = attention_family(Q, K, V, mask, scale=scale, **knobs)
    if residual and Z.shape != X.shape:
        raise ValueError("no residual without X's width")
    return (Z + X if residual else Z), A


def self_attention_variants(X, W_Q, W_K, W_V, mask=None):
    """Known wrong versions of self-attention: (name, explanation, Z, A)."""
    found = variants(self_attention_family, SELF_ATTENTION_MISTAKES, X, W_Q, W_K, W_V, mask)
    return [(name, why, z, a) for name, why, (z, a) in found]


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


_HEAD_SCALE = "each head is scaled by sqrt(d_h), its own key width W_Q.shape[1] // num_heads"
MULTI_HEAD_MISTAKES = _mistakes(
    [
        (
            "heads split strided",
            "head h takes the contiguous columns h*d_h:(h+1)*d_h, not every num_heads-th column",
            dict(split="strided"),
        ),
        (
            "heads split by reshaping without transposing",
            "reshape (n, heads*d_h) to (n, heads, d_h), then move the head axis first: "
            "reshaping straight to (heads, n, d_h) mixes tokens",
            dict(split="reshape"),
        ),
        (
            "heads merged without transposing back",
            "reshaping (heads, n, d_v) straight to (n, heads*d_v) mixes tokens: move the head axis next to d_v first",
            dict(merge="reshape"),
        ),
        (
            "heads concatenated in reverse order",
            "concatenate head 0 first, then head 1, ...: W_O's rows are ordered by head",
            dict(merge="reversed"),
        ),
        ("no 1/sqrt(d_h) scaling", "scale each head's scores by sqrt(d_h)", dict(scale="1")),
        ("scaling by sqrt(d_model) inside the heads", _HEAD_SCALE, dict(scale="sqrt(d_model)")),
        ("scaling by sqrt(the full width W_Q.shape[1]) inside the heads", _HEAD_SCALE, dict(scale="sqrt(width)")),
        ("scaling by sqrt(d_v, the value width) inside the heads", _HEAD_SCALE, dict(scale="sqrt(d_v)")),
        ("W_O forgotten", "the concatenated heads are multiplied by W_O", dict(project=False)),
        (
            "softmax over queries",
            "each head's weights sum to 1 over queries, not keys: take the softmax along the key axis",
            dict(axis=-2),
        ),
        (
            "W_V sliced with W_Q's head width",
            "each head takes W_V.shape[1] // num_heads value columns, which differs from the query/key width d_h here",
            dict(v_width="d_h"),
        ),
        (
            "W_Q and W_K sliced with W_V's head width",
            "query and key heads are W_Q.shape[1] // num_heads columns wide, value heads W_V.shape[1] // num_heads",
            dict(qk_width="d_v"),
        ),
        (
            "every head with head 0's query and key columns",
            "head h takes columns h*d_h:(h+1)*d_h of W_Q and W_K, as it does of W_V",
            dict(qk_head=0),
        ),
        (
            "the head width taken from d_model",
            "d_h = W_Q.shape[1] // num_heads, the projections' width, not X.shape[1] // num_heads",
            dict(qk_width="d_model"),
        ),
        ("the mask ignored", "apply `mask` in every head", dict(mask_as="ignored")),
        (
            "a single head over the full width",
            "split the projections into num_heads heads, each with its own softmax, then concatenate them",
            dict(one_head=True),
        ),
        (
            "an inverted mask",
            "True means may attend: block the entries where the mask is False",
            dict(mask_as="inverted"),
        ),
    ]
)


def _multi_head_elsewhere():
    rng = np.random.default_rng(95)

    def weights(n, d_model, width, v_width, d_out):
        shapes = ((n, d_model), (d_model, width), (d_model, width), (d_model, v_width), (v_width, d_out))
        return tuple(rng.normal(size=shape) for shape in shapes)

    return [
        ((*weights(4, 6, 6, 6, 5), 3), {}),
        ((*weights(5, 4, 4, 6, 3), 2), {"mask": _mixed_mask(5)}),
        ((*weights(3, 6, 8, 8, 2), 4), {}),
    ]


@family("multi_head_attention", MULTI_HEAD_MISTAKES, _multi_head_elsewhere)
def multi_head_family(
    X,
    W_Q,
    W_K,
    W_V,
    W_O,
    num_heads,
    mask=None,
    *,
    split="contiguous",
    qk_width="d_h",
    v_width="d_v",
    scale="sqrt(d_h)",
    merge="in order",
    project=True,
    one_head=False,
    qk_head=None,
    **knobs,
):
    """Multi-head attention with its mistakes as parameters (numpy; the defaults give
    ``multi_head_attention``). The scale follows the width a head's queries really have, as it does
    when each head calls scaled dot-product attention."""
    X, W_Q, W_K, W_V, W_O = (np.asarray(a, dtype=np.float64) for a in (X, W_Q, W_K, W_V, W_O))
    n = X.shape[0]
    if one_head:
        num_heads = 1
    widths = {"d_h": W_Q.shape[1] // num_heads, "d_v": W_V.shape[1] // num_heads, "d_model": X.shape[1] // num_heads}
    d_h, d_v = widths[qk_width], widths[v_width]

    def heads(W, width):
        if split == "strided":
            return [W[:, h::num_heads] for h in range(num_heads)]
        if split == "reshape":
            P = (X @ W).reshape(num_heads, n, -1)
            return [P[h] for h in range(num_heads)]
        if width * num_heads > W.shape[1]:
            raise ValueError("the heads need more columns than W has")
        return [W[:, h * width : (h + 1) * width] for h in range(num_heads)]

    project_in = (lambda P: P) if split == "reshape" else (lambda W: X @ W)
    Qs, Ks, Vs = heads(W_Q, d_h), heads(W_K, d_h), heads(W_V, d_v)
    if qk_head is not None:
        Qs, Ks = [Qs[qk_head]] * num_heads, [Ks[qk_head]] * num_heads
    outs = []
    for q, k, v in zip(Qs, Ks, Vs):
        q, k, v = project_in(q), project_in(k), project_in(v)
        by = {
            "sqrt(d_h)": math.sqrt(q.shape[1]),
            "1": 1.0,
            "sqrt(d_model)": math.sqrt(X.shape[1]),
            "sqrt(width)": math.sqrt(W_Q.shape[1]),
            "sqrt(d_v)": math.sqrt(v.shape[1]),
        }[scale]
        outs.append(attention_family(q, k, v, mask, scale=by, **knobs)[0])
    if merge == "reshape":
        merged = np.stack(outs).reshape(n, -1)
    else:
        merged = np.concatenate(outs[::-1] if merge == "reversed" else outs, axis=1)
    return merged @ W_O if project else merged


def multi_head_attention_variants(X, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    """Known wrong versions of multi-head attention: (name, explanation, output).

    A variant whose shapes do not work out for these inputs is left out.
    """
    return variants(multi_head_family, MULTI_HEAD_MISTAKES, X, W_Q, W_K, W_V, W_O, num_heads, mask)


def multi_head_attention_raising(error, X, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    """The known mistake that raises ``error`` (same type and message) on these inputs, as
    (name, explanation), or None: a slip that breaks the shapes leaves no output to compare."""
    return raising(multi_head_family, MULTI_HEAD_MISTAKES, error, X, W_Q, W_K, W_V, W_O, num_heads, mask)
