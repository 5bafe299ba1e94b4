# A missing colon on the first def: the file does not parse, so every function scores zero.
import numpy as np


def sinusoidal_pe(seq_len, d_model, base=10000.0)
    return np.zeros((seq_len, d_model))


def softmax(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def causal_mask(n):
    return np.tril(np.ones((n, n), dtype=bool))
