# Correct encoding, but the student never wrote pe_shift_matrix.
import numpy as np


def sinusoidal_pe(seq_len, d_model, base=10000.0):
    angles = np.arange(seq_len)[:, None] * np.exp(-np.log(base) * (np.arange(d_model) // 2 * 2) / d_model)
    return np.where(np.arange(d_model) % 2 == 0, np.sin(angles), np.cos(angles))


def add_positional_encoding(E, base=10000.0):
    return np.asarray(E, dtype=float) + sinusoidal_pe(len(E), len(E[0]), base)
