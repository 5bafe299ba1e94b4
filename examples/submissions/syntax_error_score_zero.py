import numpy as np


def sinusoidal_pe(seq_len, d_model, base=10000.0)
    return np.zeros((seq_len, d_model))
