"""Part A: sinusoidal positional encoding and its shift matrix, in plain Python loops."""

import math

import numpy as np

__all__ = ["pe_rows", "pe", "pe_variants", "shift_matrix", "shift_variants"]


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


def _pe_halves(seq_len, d_model, base):
    half = (d_model + 1) // 2
    out = np.zeros((seq_len, d_model))
    for pos in range(seq_len):
        for i in range(half):
            out[pos, i] = math.sin(pos / base ** (2 * i / d_model))
        for i in range(d_model - half):
            out[pos, half + i] = math.cos(pos / base ** (2 * i / d_model))
    return out


def pe_variants(seq_len, d_model, base=10000.0):
    """Known wrong versions of ``sinusoidal_pe``: (name, explanation, array)."""
    interleave = "columns 2i and 2i+1 hold the sin and cos of the same angle, side by side"
    variants = [
        ("concatenated [sin | cos] halves", interleave, _pe_halves(seq_len, d_model, base)),
        (
            "exponent i/d_model instead of 2i/d_model",
            "pair i uses base**(2i/d_model) in the denominator",
            pe_rows(range(seq_len), d_model, base, exponent=lambda j, d: (j // 2) / d),
        ),
        (
            "exponent j/d_model with the column index j",
            "both columns of pair i share the exponent 2i/d_model",
            pe_rows(range(seq_len), d_model, base, exponent=lambda j, d: j / d),
        ),
        (
            "sin and cos swapped",
            "even columns are sines, odd columns cosines",
            pe_rows(range(seq_len), d_model, base, swap=True),
        ),
        (
            "positions counted from 1",
            "the first row is position 0",
            pe_rows(range(seq_len), d_model, base, first_pos=1),
        ),
    ]
    if base != 10000.0:
        variants.append(
            ("base ignored (10000 used)", "use the `base` argument", pe_rows(range(seq_len), d_model, 10000.0))
        )
    return variants


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


def shift_variants(k, d_model, base=10000.0):
    variants = [
        (
            "the transposed rotation block",
            "[[cos, -sin], [sin, cos]] shifts by -k; row 2i must be [cos kw, sin kw]",
            shift_matrix(k, d_model, base, transposed=True),
        )
    ]
    if base != 10000.0:
        variants.append(("base ignored (10000 used)", "use the `base` argument", shift_matrix(k, d_model, 10000.0)))
    return variants
