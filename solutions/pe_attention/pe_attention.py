# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Positional encoding, self-attention and permutation equivariance
#
# Self-attention compares every token with every other token, but nothing in it says *where* a
# token stands. In this assignment you build the pieces of a transformer's input and attention
# layer with numpy, and check with your own functions why attention needs positions at all.
#
# Conventions used throughout (the notes' row-vector convention): a sequence of `n` tokens is a
# matrix `X` of shape `(n, d_model)`, one token per **row**; positions count from 0. Every
# function takes numpy arrays and returns new float64 arrays; none changes its inputs.
#
# Run `grader.check("<function name>")` after each function to run the public tests.

# %%
import numpy as np

# %% [markdown]
# ## Part A: sinusoidal positional encoding
#
# A word embedding `E` says what a token means; a positional encoding `PE` says where it is. The
# original transformer adds a fixed, non-learned encoding built from sines and cosines:
#
# $$PE_{(pos,\,2i)} = \sin\!\left(\frac{pos}{10000^{2i/d_{model}}}\right), \qquad
#   PE_{(pos,\,2i+1)} = \cos\!\left(\frac{pos}{10000^{2i/d_{model}}}\right)$$
#
# Column `2i` holds the sine and column `2i+1` the cosine of the same angle (they are
# *interleaved*, not two halves). Pair `i` turns at the angular frequency
# $\omega_i = 1 / 10000^{2i/d_{model}}$: pair `i = 0` is the **fastest** (wavelength $2\pi$) and
# the last pair the slowest (wavelength $2\pi \cdot 10000^{(d_{model}-2)/d_{model}}$). Fast pairs
# tell neighbours apart; slow pairs keep telling positions apart far along the sequence.
#
# If `d_model` is odd the last column is a sine with no cosine partner. `base` replaces 10000.
#
# Example: `sinusoidal_pe(2, 4)[1]` is `[sin 1, cos 1, sin 0.01, cos 0.01]`.

# %%
def sinusoidal_pe(seq_len, d_model, base=10000.0):
    """Sinusoidal positional encoding, shape (seq_len, d_model).

    PE[pos, 2i] = sin(pos / base**(2i/d_model)), PE[pos, 2i+1] = cos(pos / base**(2i/d_model)).
    """
    # BEGIN SOLUTION
    pos = np.arange(seq_len, dtype=np.float64)[:, None]
    two_i = np.arange(0, d_model, 2, dtype=np.float64)
    angles = pos / base ** (two_i / d_model)
    pe = np.zeros((seq_len, d_model))
    pe[:, 0::2] = np.sin(angles)
    pe[:, 1::2] = np.cos(angles[:, : d_model // 2])
    return pe
    # END SOLUTION


# %% tags=["demo"]
import matplotlib.pyplot as plt

pe = sinusoidal_pe(64, 32)
fig, ax = plt.subplots(figsize=(8, 3.5))
image = ax.imshow(pe, aspect="auto", cmap="RdBu", vmin=-1, vmax=1)
ax.set_xlabel("dimension (2i: sin, 2i+1: cos)")
ax.set_ylabel("position")
ax.set_title("Sinusoidal PE: the left columns (small i) turn fastest")
fig.colorbar(image, ax=ax)
plt.show()

# %% [markdown]
# ### X = E + PE
#
# The encoder's input is the element-wise sum of each token's embedding and its position's
# encoding: row `j` of `X` is `E[j] + PE(j)`. Addition (rather than concatenation) keeps `d_model`
# unchanged; the learned weights later learn to read both parts.

# %%
def add_positional_encoding(E, base=10000.0):
    """X = E + PE for embeddings E of shape (n, d); returns a new array."""
    # BEGIN SOLUTION
    E = np.asarray(E, dtype=np.float64)
    n, d = E.shape
    return E + sinusoidal_pe(n, d, base=base)
    # END SOLUTION


# %% [markdown]
# ### Relative positions are a rotation
#
# Because $\sin(a+b)$ and $\cos(a+b)$ expand into sines and cosines of $a$ and $b$, moving `k`
# positions ahead is the same linear map for every position:
# $PE_{pos+k} = M(k)\, PE_{pos}$. With $\omega_i$ as above, $M(k)$ is block diagonal and its
# block for pair `i` is
#
# $$\begin{pmatrix} PE_{(pos+k,\,2i)} \\ PE_{(pos+k,\,2i+1)} \end{pmatrix} =
#   \begin{pmatrix} \cos k\omega_i & \sin k\omega_i \\ -\sin k\omega_i & \cos k\omega_i \end{pmatrix}
#   \begin{pmatrix} PE_{(pos,\,2i)} \\ PE_{(pos,\,2i+1)} \end{pmatrix}$$
#
# `M(k)` does not depend on `pos`: this is what lets attention learn "three tokens back"
# once for every position. The construction needs sine/cosine pairs, so `d_model` must be even.

# %%
def pe_shift_matrix(k, d_model, base=10000.0):
    """The (d_model, d_model) matrix M with PE[pos + k] = M @ PE[pos] for every pos.

    Raises ValueError for odd d_model.
    """
    # BEGIN SOLUTION
    if d_model % 2:
        raise ValueError(f"d_model must be even to pair sines with cosines, got {d_model}")
    M = np.zeros((d_model, d_model))
    for i in range(d_model // 2):
        angle = k / base ** (2 * i / d_model)
        c, s = np.cos(angle), np.sin(angle)
        M[2 * i : 2 * i + 2, 2 * i : 2 * i + 2] = [[c, s], [-s, c]]
    return M
    # END SOLUTION


# %% tags=["demo"]
pe = sinusoidal_pe(128, 64)
similarity = pe @ pe[10]
fig, ax = plt.subplots(figsize=(7, 3))
ax.plot(np.arange(128) - 10, similarity)
ax.set_xlabel("offset k")
ax.set_ylabel("PE(10) · PE(10 + k)")
ax.set_title("The dot product of two encodings depends on their distance")
plt.show()
