# Puts all the sines in the first half of the columns and all the cosines in the second half
# (a common layout in blog posts), so the encoding and X = E + PE are wrong; the shift matrix is
# right.
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
