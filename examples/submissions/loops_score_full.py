# A correct submission written with plain Python loops and the math module.
import math

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
