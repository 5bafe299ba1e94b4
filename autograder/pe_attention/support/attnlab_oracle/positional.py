"""Part A: sinusoidal positional encoding and its shift matrix, in plain Python loops."""

import math

import numpy as np

from .mistakes import Mistake, family, variants

__all__ = ["pe_rows", "pe", "pe_variants", "add_pe_variants", "shift_matrix", "shift_variants"]


def pe_rows(positions, d_model, base=10000.0, *, exponent=lambda j, d: 2 * (j // 2) / d, first_pos=0, swap=False):
    """PE rows for the given positions; the keyword arguments build the wrong variants."""
    rows = []
    for pos in positions:
        row = []
        for j in range(d_model):
            angle = (pos + first_pos) / base ** exponent(j, d_model)
            use_sin = (j % 2 == 0) != swap
            row.append(math.sin(angle) if use_sin else math.cos(angle))
        rows.append(row)
    return np.array(rows, dtype=np.float64).reshape(len(rows), d_model)


def pe(seq_len, d_model, base=10000.0):
    return pe_rows(range(seq_len), d_model, base)


INTERLEAVE = "columns 2i and 2i+1 hold the sin and cos of the same angle, side by side"
BASE_IGNORED = Mistake("base ignored (10000 used)", "use the `base` argument", dict(base_used=10000.0))

PE_MISTAKES = [
    Mistake("concatenated [sin | cos] halves", INTERLEAVE, dict(layout="sin|cos halves")),
    Mistake("concatenated [cos | sin] halves", INTERLEAVE + ", sine first", dict(layout="cos|sin halves")),
    Mistake("sin and cos swapped", "even columns are sines, odd columns cosines", dict(layout="cos sin")),
    Mistake(
        "exponent i/d_model instead of 2i/d_model",
        "pair i uses base**(2i/d_model) in the denominator",
        dict(exponent="i/d"),
    ),
    Mistake(
        "exponent j/d_model with the column index j",
        "both columns of pair i share the exponent 2i/d_model",
        dict(exponent="j/d"),
    ),
    Mistake(
        "exponent 2j/d_model with the column index j",
        "pair i (columns 2i and 2i+1) uses the exponent 2i/d_model: count pairs, not columns",
        dict(exponent="2j/d"),
    ),
    Mistake(
        "pos / (base**(2i) / d_model)",
        "the whole exponent is 2i/d_model: pos / base**(2i / d_model), with the parentheses around 2i / d_model",
        dict(exponent="precedence"),
    ),
    Mistake(
        "exponent i/(d_model // 2)",
        "the exponent is 2i/d_model: with an odd d_model, d_model // 2 is not d_model / 2",
        dict(exponent="i/(d//2)"),
    ),
    Mistake(
        "positions multiplied by base**(2i/d_model)",
        "the angle is pos / base**(2i/d_model): pair 0 is the fastest and the frequency falls with i",
        dict(divide=False),
    ),
    Mistake("positions counted from 1", "the first row is position 0", dict(first_pos=1)),
    Mistake(
        "the table transposed",
        "row pos is the encoding of position pos: the result has shape (seq_len, d_model)",
        dict(transposed=True),
    ),
    Mistake(
        "the last column of an odd d_model left at 0",
        "with an odd d_model the last column is a sine of its own pair, sin(pos / base**((d_model-1)/d_model))",
        dict(odd_last="zero"),
    ),
    BASE_IGNORED,
]


# Other sizes, odd widths among them, with the default base only: a function that caches its table
# by size would keep a table made here for a test's later call with another base
def _pe_elsewhere():
    return [((n, d), {}) for n, d in ((5, 6), (4, 7), (3, 10), (9, 4))]


@family("sinusoidal_pe", PE_MISTAKES, _pe_elsewhere)
def pe_family(
    seq_len,
    d_model,
    base=10000.0,
    *,
    layout="sin cos",
    exponent="2i/d",
    divide=True,
    first_pos=0,
    base_used=None,
    transposed=False,
    odd_last="sin",
):
    """The encoding with its mistakes as parameters (numpy; the defaults give ``pe``)."""
    b = base if base_used is None else base_used
    j = np.arange(d_model)
    if layout.endswith("halves"):
        half = (d_model + 1) // 2
        pair, first = np.where(j < half, j, j - half), j < half
    else:
        pair, first = j // 2, j % 2 == 0
    if exponent in ("i/(d//2)", "precedence"):
        e = pair / max(d_model // 2, 1)
    else:
        e = {"2i/d": 2 * pair, "i/d": pair, "j/d": j, "2j/d": 2 * j}[exponent] / d_model
    pos = np.arange(seq_len)[:, None] + first_pos
    if exponent == "precedence":
        angles = pos / (b ** (2.0 * pair) / d_model)
    else:
        angles = pos / b**e if divide else pos * b**e
    sin_first = layout in ("sin cos", "sin|cos halves")
    out = np.where(first == sin_first, np.sin(angles), np.cos(angles)).reshape(seq_len, d_model)
    if odd_last == "zero" and d_model % 2:
        out[:, -1] = 0.0
    return out.T if transposed else out


def pe_variants(seq_len, d_model, base=10000.0):
    """Known wrong versions of ``sinusoidal_pe``: (name, explanation, array)."""
    return variants(pe_family, PE_MISTAKES, seq_len, d_model, base)


ADD_PE_MISTAKES = [
    Mistake(f"E + PE with {m.name}", m.why, m.knobs) for m in PE_MISTAKES if "transposed" not in m.knobs
] + [
    Mistake("PE without E", "return E + PE, not PE alone", dict(combine="PE")),
    Mistake(
        "E scaled by sqrt(d) before adding PE", "add the encoding to E as it is: X = E + PE", dict(combine="sqrt(d) E")
    ),
    Mistake(
        "[E | PE] concatenated",
        "add PE to E entry by entry: the result has E's shape",
        dict(combine="concatenate"),
    ),
    Mistake("E - PE", "add the encoding: X = E + PE", dict(combine="subtract")),
    Mistake(
        "sinusoidal_pe(d, n) transposed",
        "E has n positions of width d: add sinusoidal_pe(n, d), seq_len first",
        dict(combine="swapped arguments"),
    ),
]


def _add_pe_elsewhere():
    rng = np.random.default_rng(91)
    return [((rng.normal(size=shape),), {}) for shape in ((5, 6), (4, 7), (3, 10))]


@family("add_positional_encoding", ADD_PE_MISTAKES, _add_pe_elsewhere)
def add_pe_family(E, base=10000.0, *, combine="add", **knobs):
    """E + PE with its mistakes as parameters: how the two meet, or any mistake of the encoding."""
    E = np.asarray(E, dtype=np.float64)
    if combine == "swapped arguments":
        return E + pe_family(E.shape[1], E.shape[0], base, **knobs).T
    PE = pe_family(*E.shape, base, **knobs)
    if combine == "concatenate":
        return np.concatenate([E, PE], axis=1)
    return {"add": E + PE, "PE": PE, "sqrt(d) E": math.sqrt(E.shape[1]) * E + PE, "subtract": E - PE}[combine]


def add_pe_variants(E, base=10000.0):
    return variants(add_pe_family, ADD_PE_MISTAKES, E, base)


SHIFT_MISTAKES = [
    Mistake(
        "the transposed rotation block",
        "[[cos, -sin], [sin, cos]] shifts by -k; row 2i must be [cos kw, sin kw]",
        dict(transposed=True),
    ),
    Mistake(
        "w_i = 1/base**(i/d_model)",
        "pair i turns with w_i = 1 / base**(2i/d_model), the frequency of columns 2i and 2i+1 of PE",
        dict(exponent="i/d"),
    ),
    Mistake(
        "w_i = 1/base**((2i+1)/d_model)",
        "both columns of pair i share the frequency w_i = 1 / base**(2i/d_model)",
        dict(exponent="(2i+1)/d"),
    ),
    Mistake(
        "k ignored (a shift by 1)",
        "the angles are k * w_i: the matrix shifts by k positions",
        dict(k_used=1),
    ),
    Mistake(
        "blocks on the pairs (i, i + d_model/2)",
        "PE interleaves its pairs: block i acts on columns 2i and 2i+1",
        dict(layout="halves"),
    ),
    Mistake(
        "a symmetric block [[cos, sin], [sin, cos]]",
        "the block is a rotation: row 2i+1 is [-sin kw, cos kw]",
        dict(lower_sign=1.0),
    ),
    Mistake(
        "w_i = 1/base**(4i/d_model) from the column index 2i",
        "pair i (columns 2i and 2i+1) turns with w_i = 1 / base**(2i/d_model): count pairs, not columns",
        dict(exponent="4i/d"),
    ),
    Mistake(
        "w_i = base**(2i/d_model)",
        "w_i = 1 / base**(2i/d_model): divide by the power, do not multiply",
        dict(divide=False),
    ),
    BASE_IGNORED,
]


def shift_matrix(k, d_model, base=10000.0, *, transposed=False):
    M = np.zeros((d_model, d_model))
    for i in range(d_model // 2):
        w = 1.0 / base ** (2 * i / d_model)
        c, s = math.cos(k * w), math.sin(k * w)
        if transposed:
            s = -s
        M[2 * i][2 * i], M[2 * i][2 * i + 1] = c, s
        M[2 * i + 1][2 * i], M[2 * i + 1][2 * i + 1] = -s, c
    return M


def _shift_elsewhere():
    return [((k, d_model), {}) for k, d_model in ((1, 6), (3, 4), (-2, 8), (5, 10))]


@family("pe_shift_matrix", SHIFT_MISTAKES, _shift_elsewhere)
def shift_family(
    k,
    d_model,
    base=10000.0,
    *,
    transposed=False,
    exponent="2i/d",
    divide=True,
    base_used=None,
    k_used=None,
    layout="pairs",
    lower_sign=-1.0,
):
    """The shift matrix with its mistakes as parameters (numpy; the defaults give ``shift_matrix``)."""
    if d_model % 2:
        raise ValueError("d_model must be even")
    b = base if base_used is None else base_used
    i = np.arange(d_model // 2)
    e = {"2i/d": 2 * i, "i/d": i, "(2i+1)/d": 2 * i + 1, "4i/d": 4 * i}[exponent] / d_model
    w = 1.0 / b**e if divide else b**e
    k = k if k_used is None else k_used
    c, s = np.cos(k * w), np.sin(k * w) * (-1.0 if transposed else 1.0)
    a, b = (i, i + d_model // 2) if layout == "halves" else (2 * i, 2 * i + 1)
    M = np.zeros((d_model, d_model))
    M[a, a], M[a, b], M[b, a], M[b, b] = c, s, lower_sign * s, c
    return M


def shift_variants(k, d_model, base=10000.0):
    return variants(shift_family, SHIFT_MISTAKES, k, d_model, base)
