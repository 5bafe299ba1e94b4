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
# How answers are checked: each value must match the expected one as `np.allclose(yours,
# expected, rtol=1e-6, atol=1e-8)` does. Compute in float64 (numpy's default): float32
# arithmetic is off by about 1e-7 of the values, and by 1e-5 and more in the encodings of far
# positions, where the slow pairs change by less than float32 can resolve. Functions that return
# two results return them as a tuple, e.g. `(output, weights)` (a list of the two also passes).
# A function that should reject its input raises `ValueError`. Each function's first public test
# checks the type and dtype of what it returns (a numpy array, float64 or, for masks, bool); the
# other tests check shapes and values.
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
    """Sinusoidal positional encoding, shape (seq_len, d_model), float64.

    PE[pos, 2i] = sin(pos / base**(2i/d_model)), PE[pos, 2i+1] = cos(pos / base**(2i/d_model)).
    An odd d_model works: the last column is a sine.
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
    """X = E + PE for embeddings E of shape (n, d), PE = sinusoidal_pe(n, d, base); returns a new array."""
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
    """The (d_model, d_model) matrix M with PE[pos + k] = M @ PE[pos] for every pos (PE with this base).

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


# %% [markdown]
# ## Part B: attention
#
# ### Attention is a soft dictionary lookup
#
# A Python dictionary maps a query to the value whose key equals it. Attention does the same with
# vectors: it scores the query against every key with a dot product, turns the scores into weights
# that sum to 1, and returns the weighted sum of the values. With one-hot keys the dot product is
# 1 for the matching key and 0 for the others, so a sharp enough weighting recovers the dictionary
# exactly; a query that sits between two keys gets a blend of their values.
#
# ### Softmax
#
# The weights come from the softmax of a row of scores $x$:
#
# $$\text{softmax}(x)_j = \frac{e^{x_j}}{\sum_k e^{x_k}} = \frac{e^{x_j - c}}{\sum_k e^{x_k - c}}
#   \quad\text{for any constant } c$$
#
# `np.exp(1000.0)` overflows to `inf`, so subtract $c = \max_k x_k$ first: the largest exponent is
# then $e^0 = 1$ and nothing overflows. Take the max **along `axis`** (each row its own max), not
# over the whole array. A score of $-\infty$ gets weight exactly 0; that is how masks are applied
# below. (A row that is all $-\infty$ has nothing to attend to; returning 0s or `nan` there is
# your call, nothing later depends on it. The reference returns 0s.)
#
# Example: `softmax(np.array([0.0, np.log(3.0)]))` is `[0.25, 0.75]`.

# %%
def softmax(x, axis=-1):
    """Numerically stable softmax of x along axis; -inf entries get weight 0.

    >>> softmax(np.array([[0.0, np.log(3.0)], [5.0, -np.inf]]))
    array([[0.25, 0.75],
           [1.  , 0.  ]])
    """
    # BEGIN SOLUTION
    x = np.asarray(x, dtype=np.float64)
    shift = np.max(x, axis=axis, keepdims=True)
    # a row that is all -inf has max -inf; shifting by 0 instead keeps exp() at 0 rather than nan
    shift = np.where(np.isneginf(shift), 0.0, shift)
    e = np.exp(x - shift)
    total = np.sum(e, axis=axis, keepdims=True)
    return np.divide(e, total, out=np.zeros_like(e), where=total > 0)
    # END SOLUTION


# %% [markdown]
# ### Scaled dot-product attention
#
# Stack the queries as the rows of $Q$ (shape `(n, d_k)`), the keys as the rows of $K$
# (`(m, d_k)`) and the values as the rows of $V$ (`(m, d_v)`):
#
# $$\text{Attention}(Q, K, V) = \underbrace{\text{softmax}\!\left(\frac{Q K^T}{\sqrt{d_k}}\right)}_{\text{weights } (n,\, m)} V$$
#
# Row `i` of the weights says how much query `i` takes from each of the `m` keys, so the softmax
# runs over the **key** axis (the last one) and each row sums to 1. Dividing by $\sqrt{d_k}$ keeps
# the scores' spread independent of the key size: a dot product of `d_k` unit-variance terms has
# variance `d_k`, and large scores would push the softmax into a one-hot corner.
#
# `mask`, if given, is a boolean array of shape `(n, m)`: `True` where query `i` **may** attend to
# key `j` (the PyTorch convention). A masked entry's score becomes $-\infty$ *before* the softmax,
# so it gets weight exactly 0 and the other weights still sum to 1. A query whose mask row is all
# `False` may attend to no key: no key may take any of its weight (the reference gives a row of 0).
#
# Return `(output, weights)`. Any leading axes (a batch, attention heads) broadcast:
# `Q` of shape `(..., n, d_k)`, `K` `(..., m, d_k)`, `V` `(..., m, d_v)`, `mask` `(..., n, m)`.
#
# Example: with one query and two keys, `Q = [[1, 0]]`, `K = [[1, 0], [0, 1]]` gives scores
# `[1/√2, 0]` and weights `softmax([0.707, 0]) = [0.670, 0.330]`.

# %%
def scaled_dot_product_attention(Q, K, V, mask=None):
    """Return the tuple (output, weights): weights = softmax(Q K^T / sqrt(d_k)) over keys, output = weights V.

    Q (..., n, d_k), K (..., m, d_k), V (..., m, d_v); d_k is the width of a key (the last axis).
    mask: None, or boolean (..., n, m) with True where query i may attend to key j (the other
    weights are exactly 0).

    >>> out, w = scaled_dot_product_attention(np.eye(2), np.eye(2), np.array([[1.0], [3.0]]))
    >>> w.round(3)
    array([[0.67, 0.33],
           [0.33, 0.67]])
    """
    # BEGIN SOLUTION
    Q = np.asarray(Q, dtype=np.float64)
    K = np.asarray(K, dtype=np.float64)
    V = np.asarray(V, dtype=np.float64)
    d_k = Q.shape[-1]
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)
    if mask is not None:
        scores = np.where(np.asarray(mask, dtype=bool), scores, -np.inf)
    weights = softmax(scores, axis=-1)
    return weights @ V, weights
    # END SOLUTION


# %% tags=["demo"]
# Attention as a dictionary lookup: one-hot keys for three French words, one-hot values for
# their English translations.
french, english = ["chat", "chien", "maison"], ["cat", "dog", "house"]
keys, values = np.eye(3), np.eye(3)
lookup = keys[1] @ keys.T @ values  # no softmax: q K^T picks the matching key exactly
print(f'q K^T V for "chien" = {lookup} -> "{english[int(np.argmax(lookup))]}"')
queries = {
    'exact key "chien"': keys[1],
    '"chien", 10x sharper': 10 * keys[1],
    'half "chat", half "chien"': 3 * (keys[0] + keys[1]) / 2,
}
fig, axes = plt.subplots(1, len(queries), figsize=(10, 2.6), sharey=True)
for ax, (label, q) in zip(axes, queries.items()):
    _, w = scaled_dot_product_attention(q[None, :], keys, values)
    ax.bar(english, w[0], color="tab:blue")
    ax.set_title(label, fontsize=10)
    ax.set_ylim(0, 1)
axes[0].set_ylabel("weight on each value")
fig.suptitle("Softmax turns an exact lookup into a soft one; a sharper query makes it harder")
plt.tight_layout()
plt.show()

# %% [markdown]
# ### The causal mask
#
# A decoder that predicts the next token must not look ahead: query `i` may attend to key `j`
# only when `j <= i`. The mask is `True` on and below the diagonal (the lower triangle).
#
# Example: `causal_mask(3)` is
# `[[True, False, False], [True, True, False], [True, True, True]]`.

# %%
def causal_mask(n):
    """Boolean (n, n) mask, True where query i may attend to key j, i.e. j <= i.

    >>> causal_mask(2)
    array([[ True, False],
           [ True,  True]])
    """
    # BEGIN SOLUTION
    return np.tril(np.ones((n, n), dtype=bool))
    # END SOLUTION


# %% [markdown]
# ### Self-attention
#
# In *self*-attention the queries, keys and values all come from the same sequence `X`
# (shape `(n, d_model)`), through three learned matrices (row-vector convention, as in the notes):
#
# $$Q = X W_Q, \quad K = X W_K, \quad V = X W_V, \qquad
#   Z = \text{softmax}\!\left(\frac{Q K^T}{\sqrt{d_k}}\right) V$$
#
# `W_Q` and `W_K` have shape `(d_model, d_k)`, `W_V` `(d_model, d_v)`. Return `(Z, A)` with the
# output `Z` `(n, d_v)` and the attention weights `A` `(n, n)`.
#
# Example: the notes' two words `X = [[0.10, 1.30], [1.74, 0.64]]` with their $W_Q, W_K$ give the
# raw scores `Score(1, 1) = 12.00` and `Score(1, 2) = 21.97` (before dividing by $\sqrt{2}$).

# %%
def self_attention(X, W_Q, W_K, W_V, mask=None):
    """Return the tuple (Z, A) for Q = X W_Q, K = X W_K, V = X W_V and A = softmax(Q K^T / sqrt(d_k)).

    X (n, d_model), W_Q and W_K (d_model, d_k), W_V (d_model, d_v); Z (n, d_v), A (n, n).
    mask: None, or boolean (n, n), True where token i may attend to token j, as for
    scaled_dot_product_attention.

    >>> Z, A = self_attention(np.eye(2), np.eye(2), np.eye(2), np.eye(2))
    >>> A.round(3)
    array([[0.67, 0.33],
           [0.33, 0.67]])
    """
    # BEGIN SOLUTION
    X = np.asarray(X, dtype=np.float64)
    Q, K, V = X @ np.asarray(W_Q), X @ np.asarray(W_K), X @ np.asarray(W_V)
    return scaled_dot_product_attention(Q, K, V, mask=mask)
    # END SOLUTION


# %% [markdown]
# #### The notes' numeric illustration, recomputed
#
# The cell below recomputes the notes' 2-D example with your functions. The raw scores are
# `Score(1, 1) = 12.00`, `Score(1, 2) = 21.97`, `Score(2, 2) = 30.1584`. The notes round the
# softmax of the second row to 0.00027 / 0.99973; the correct values are **0.00028 / 0.99972**
# ($e^{-8.1884} \approx 0.000278$). The transformer itself also divides by $\sqrt{d_k} = \sqrt 2$,
# which softens both rows.
#
# Notice that $QK^T$ comes out symmetric: here $W_Q W_K^T = \begin{pmatrix} 4 & 7 \\ 7 & 6\end{pmatrix}$
# happens to be symmetric. In general $\text{Score}(i, j) \ne \text{Score}(j, i)$: how much "I"
# attends to "really" need not equal how much "really" attends to "I".

# %% tags=["demo"]
X_notes = np.array([[0.10, 1.30], [1.74, 0.64]])  # "I" at pos 0, "really" at pos 1 (E + PE)
W_Q_notes = np.array([[1.0, 2.0], [3.0, 1.0]])
W_K_notes = np.array([[2.0, 1.0], [1.0, 3.0]])
W_V_notes = np.array([[0.5, 1.5], [1.0, 0.5]])

Q_notes, K_notes = X_notes @ W_Q_notes, X_notes @ W_K_notes
raw_scores = Q_notes @ K_notes.T
print("Q =", Q_notes.round(2).tolist(), "  K =", K_notes.round(2).tolist())
print("raw scores Q K^T =", raw_scores.round(4).tolist())
print("softmax of the raw scores, row 1:", softmax(raw_scores)[0].round(6).tolist())
print("softmax of the raw scores, row 2:", softmax(raw_scores)[1].round(5).tolist(),
      "(the notes' 0.00027 / 0.99973 is a rounding slip)")
Z_notes, A_notes = self_attention(X_notes, W_Q_notes, W_K_notes, W_V_notes)
print("scaled by sqrt(d_k): A =", A_notes.round(5).tolist())
print("Z = A V =", Z_notes.round(4).tolist())

# %% [markdown]
# ### Multi-head attention
#
# One head computes one weighting of the values. Multi-head attention runs `num_heads` smaller
# heads side by side, each free to attend to something different, and mixes their outputs:
#
# $$\text{head}_h = \text{Attention}(X W_Q^{(h)}, X W_K^{(h)}, X W_V^{(h)}), \qquad
#   \text{MultiHead}(X) = [\text{head}_0, \dots, \text{head}_{H-1}]\, W_O$$
#
# Head `h` uses the columns `h*d_h:(h+1)*d_h` of `W_Q` and `W_K` with $d_h$ =
# `W_Q.shape[1] // num_heads`, and the columns `h*d_v:(h+1)*d_v` of `W_V` with its own head width
# $d_v$ = `W_V.shape[1] // num_heads`, which may differ from $d_h$ (e.g. `W_Q` of shape `(6, 4)`
# and `W_V` of shape `(6, 6)` with 2 heads: $d_h = 2$, $d_v = 3$). Each head is scaled by
# $\sqrt{d_h}$ (its own key size, not `d_model`). The heads' outputs are concatenated in order,
# giving `(n, num_heads * d_v)`, then multiplied by `W_O` to give `(n, d_out)`. The same `mask`
# applies to every head.
#
# Example: with `num_heads=1` this is `self_attention(X, W_Q, W_K, W_V)[0] @ W_O`.

# %%
def multi_head_attention(X, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    """Concatenate num_heads scaled dot-product heads (column slices of W_Q, W_K, W_V), then @ W_O.

    Head h: columns h*d_h:(h+1)*d_h of W_Q and W_K (d_h = W_Q.shape[1] // num_heads), columns
    h*d_v:(h+1)*d_v of W_V (d_v = W_V.shape[1] // num_heads), scores divided by sqrt(d_h).
    W_O (num_heads * d_v, d_out); returns (n, d_out). mask: as for self_attention, in every head.

    >>> X, W = np.eye(2), np.eye(2)
    >>> multi_head_attention(X, W, W, W, W, num_heads=2).round(3)
    array([[0.731, 0.5  ],
           [0.5  , 0.731]])
    """
    # BEGIN SOLUTION
    X = np.asarray(X, dtype=np.float64)
    Q, K, V = X @ np.asarray(W_Q), X @ np.asarray(W_K), X @ np.asarray(W_V)
    d_h = Q.shape[-1] // num_heads
    d_v = V.shape[-1] // num_heads
    heads = []
    for h in range(num_heads):
        qk = slice(h * d_h, (h + 1) * d_h)
        v = slice(h * d_v, (h + 1) * d_v)
        out, _ = scaled_dot_product_attention(Q[..., qk], K[..., qk], V[..., v], mask=mask)
        heads.append(out)
    return np.concatenate(heads, axis=-1) @ np.asarray(W_O, dtype=np.float64)
    # END SOLUTION


# %% [markdown]
# ## Part C: permutation equivariance, or why attention needs positions
#
# Nothing in self-attention looks at *where* a row of `X` sits. Shuffle the tokens and the layer
# computes the same numbers, shuffled the same way. Write the shuffle as a **permutation matrix**
# $P$ (one 1 in every row and column), so that $X' = PX$ is `X` with its rows reordered. Then
#
# $$Q' = PXW_Q = PQ,\quad K' = PK,\quad V' = PV,\qquad
#   A' = \text{softmax}\!\left(\frac{PQK^TP^T}{\sqrt{d_k}}\right) = PAP^T,\qquad
#   Z' = PAP^TPV = PZ$$
#
# because a row-wise softmax commutes with reordering rows and columns, and $P^TP = I$. This is
# **permutation equivariance**: $f(PX) = P f(X)$, the output is permuted exactly like the input.
# (Some notes call self-attention "permutation-invariant"; that is not right. Only a *pooled*
# output, such as the mean of the rows, is **invariant**: $g(PX) = g(X)$.)
#
# So without positions, "the cat chased the dog" and "the dog chased the cat" give "cat" exactly
# the same output vector: the layer sees a bag of words. Adding $PE$ to the embeddings breaks
# the symmetry, because $PE$ stays in place while the words move: $P E + PE \ne P(E + PE)$.

# %% tags=["demo"]
# Toy embeddings and weights from a fixed seed: only the structure matters, not the values.
rng = np.random.default_rng(0)
d_model = 8
vocab = {word: rng.normal(size=d_model) for word in ["the", "cat", "chased", "dog"]}
W_Q_toy, W_K_toy, W_V_toy = (rng.normal(size=(d_model, d_model)) / np.sqrt(d_model) for _ in range(3))
sentences = ["the cat chased the dog".split(), "the dog chased the cat".split()]
E_toy = [np.array([vocab[w] for w in s]) for s in sentences]

results = {}
for label, make_input in [("no PE", lambda E: E), ("with PE", add_positional_encoding)]:
    for col, E in enumerate(E_toy):
        results[label, col] = self_attention(make_input(E), W_Q_toy, W_K_toy, W_V_toy)
top = max(A.max() for _, A in results.values())  # one colour scale for all four panels
fig, axes = plt.subplots(2, 2, figsize=(9, 8))
for ax, ((label, col), (_, A)) in zip(axes.flat, results.items()):
    ax.imshow(A, cmap="viridis", vmin=0, vmax=top)
    ax.set_xticks(range(5), sentences[col])
    ax.set_yticks(range(5), sentences[col])
    ax.set_title(f'"{" ".join(sentences[col])}", {label}', fontsize=10)
fig.suptitle("Attention weights (row = query, column = key)")
plt.tight_layout()
plt.show()

# The second sentence is the first with rows 1 and 4 swapped: "cat" is row 1 of the first and
# row 4 of the second. Without PE its weights are the same numbers, reordered the same way, and
# its output is identical: the layer cannot tell who chased whom.
swap = [0, 4, 2, 3, 1]
for label in ["no PE", "with PE"]:
    (Z1, A1), (Z2, A2) = results[label, 0], results[label, 1]
    print(f"{label}: cat's weights just reordered? {np.allclose(A2[4], A1[1][swap])}; "
          f"cat's output identical in both sentences? {np.allclose(Z2[4], Z1[1])}")


# %% [markdown]
# ### Permutation matrices
#
# Build $P$ from an index sequence `perm` so that row `i` of $PX$ is row `perm[i]` of `X`:
# $P_{i,\,perm[i]} = 1$ and every other entry is 0. (Putting the 1 at $P_{perm[i],\,i}$ instead
# builds the inverse permutation, $P^T$.) An index sequence that is not a permutation of
# `0 .. n-1` (an index repeated or out of range) raises `ValueError`.
#
# Example: `permutation_matrix([2, 0, 1]) @ X` is `X[[2, 0, 1]]`: rows 2, 0, 1 of `X`.

# %%
def permutation_matrix(perm):
    """The (n, n) matrix P with (P @ X)[i] = X[perm[i]]; ValueError if perm is not a permutation.

    >>> permutation_matrix([1, 2, 0])
    array([[0., 1., 0.],
           [0., 0., 1.],
           [1., 0., 0.]])
    """
    # BEGIN SOLUTION
    perm = np.asarray(perm)
    n = len(perm)
    if perm.ndim != 1 or sorted(perm.tolist()) != list(range(n)):
        raise ValueError(f"{perm.tolist()} is not a permutation of 0..{n - 1}")
    P = np.zeros((n, n))
    P[np.arange(n), perm] = 1.0
    return P
    # END SOLUTION


# %% [markdown]
# ### Which permutations to try
#
# A proof covers every input and every permutation; a numerical check tries some. Trying one swap
# proves little: a function can be symmetric under some permutations and not under others, and a
# swap is its own inverse, so it cannot tell $P$ from $P^T$. For `n <= 5` try every permutation
# (at most 120). For longer sequences try every swap of neighbours, every 3-cycle of neighbours
# (`(i, i+1, i+2) -> (i+1, i+2, i)`), the reversal, rolls by 1, -1 and `n // 2`, and a few random
# permutations from a fixed seed, so that the answer is the same every time. Leave out the
# identity, which every function passes.
#
# `default_permutations` below builds that set; it is written for you. Use it in the two checkers
# when `perms` is None (or build a set of your own that is at least as strong).
#
# Example: `default_permutations(3)` is the five permutations of `(0, 1, 2)` other than itself.

# %%
def default_permutations(n):
    """Permutations of range(n), as tuples, that catch a function that is not equivariant.

    >>> default_permutations(2)
    [(1, 0)]
    """
    from itertools import permutations

    identity = tuple(range(n))
    if n <= 5:
        return [p for p in permutations(identity) if p != identity]
    perms = []
    for i in range(n - 1):
        swap = list(identity)
        swap[i], swap[i + 1] = swap[i + 1], swap[i]
        perms.append(tuple(swap))
    for i in range(n - 2):
        cycle = list(identity)
        cycle[i : i + 3] = [i + 1, i + 2, i]
        perms.append(tuple(cycle))
    perms.append(identity[::-1])
    perms += [identity[shift:] + identity[:shift] for shift in (1, n - 1, n // 2)]
    rng = np.random.default_rng(0)
    perms += [tuple(rng.permutation(n).tolist()) for _ in range(5)]
    # dict.fromkeys drops repeats but keeps the order
    return [p for p in dict.fromkeys(perms) if p != identity]


# %% [markdown]
# ### Checking equivariance and invariance
#
# `f` takes an `(n, d)` array. It is
#
# - **equivariant** if $f(PX) \approx P f(X)$ and
# - **invariant** if $f(PX) \approx f(X)$
#
# for **every** permutation in `perms` (index sequences, as for `permutation_matrix`), or, when
# `perms` is None, for every permutation of `default_permutations(n)`. Compare with
# `np.allclose(..., atol=atol)` plus a tiny relative tolerance: sums taken in a different order
# differ in their last bits, which must not count as a failure, and a larger `atol` makes larger
# differences count as equal. Every permutation must pass, not just one. A result of a different
# shape is a failure (`False`), not an error. Return a `bool`. Do not change `X` or rely on `f`
# leaving it unchanged.
#
# Example: `is_permutation_equivariant(lambda X: 2 * X, X)` is `True`, and
# `is_permutation_equivariant(lambda X: np.cumsum(X, axis=0), X)` is `False` for
# `X = np.arange(6.0).reshape(3, 2)`.

# %%
def is_permutation_equivariant(f, X, perms=None, atol=1e-8):
    """Whether f(P X) ≈ P f(X) for every permutation in perms (default: default_permutations(n)).

    perms: index sequences, as for permutation_matrix; atol: the absolute tolerance of the comparison,
    entry by entry: |a - b| <= atol + rtol * |b|, with a small rtol (e.g. 1e-9) for the round-off of
    large outputs. A result of a different shape is not equivariant (False).

    >>> is_permutation_equivariant(lambda X: X - X.mean(axis=0), np.arange(6.0).reshape(3, 2))
    True
    """
    # BEGIN SOLUTION
    X = np.asarray(X, dtype=np.float64)
    fX = np.asarray(f(X.copy()), dtype=np.float64)
    if fX.ndim == 0 or len(fX) != len(X):
        return False  # P f(X) needs one output row per input row
    for perm in default_permutations(len(X)) if perms is None else perms:
        P = permutation_matrix(perm)
        # X[perm] is P @ X without the round-off of multiplying by zeros
        fPX = np.asarray(f(X[np.asarray(perm)]), dtype=np.float64)
        # rtol absorbs round-off on large outputs; a real mismatch is far larger
        if fPX.shape != fX.shape or not np.allclose(fPX, P @ fX, atol=atol, rtol=1e-9):
            return False
    return True
    # END SOLUTION


# %%
def is_permutation_invariant(f, X, perms=None, atol=1e-8):
    """Whether f(P X) ≈ f(X) for every permutation in perms (default: default_permutations(n)).

    perms and atol as for is_permutation_equivariant; a result of a different shape is False.

    >>> is_permutation_invariant(lambda X: X.sum(axis=0), np.arange(6.0).reshape(3, 2))
    True
    """
    # BEGIN SOLUTION
    X = np.asarray(X, dtype=np.float64)
    fX = np.asarray(f(X.copy()), dtype=np.float64)
    for perm in default_permutations(len(X)) if perms is None else perms:
        permutation_matrix(perm)  # rejects an index sequence that is not a permutation
        fPX = np.asarray(f(X[np.asarray(perm)]), dtype=np.float64)
        if fPX.shape != fX.shape or not np.allclose(fPX, fX, atol=atol, rtol=1e-9):
            return False
    return True
    # END SOLUTION


# %% [markdown]
# Your checkers on the toy sentence: self-attention alone is equivariant (and therefore not
# invariant); adding $PE$ inside the function breaks equivariance; averaging the outputs over the
# tokens (mean pooling, as a sentence classifier might) makes the result invariant, which is
# exactly the bag-of-words problem: a classifier on top cannot tell the two sentences apart.

# %% tags=["demo"]
X_toy = E_toy[0]
attend = lambda X: self_attention(X, W_Q_toy, W_K_toy, W_V_toy)[0]
attend_with_pe = lambda X: attend(add_positional_encoding(X))
mean_pooled = lambda X: attend(X).mean(axis=0)
print("self-attention without PE, equivariant:", is_permutation_equivariant(attend, X_toy))
print("self-attention without PE, invariant:", is_permutation_invariant(attend, X_toy))
print("self-attention with PE added, equivariant:", is_permutation_equivariant(attend_with_pe, X_toy))
print("mean-pooled self-attention, invariant:", is_permutation_invariant(mean_pooled, X_toy))
print("the two sentences' pooled outputs equal:", np.allclose(mean_pooled(E_toy[0]), mean_pooled(E_toy[1])))
# %% [markdown]
# ### Where does a decoder get its positions? The causal mask
#
# A causal mask breaks the symmetry too: the first token can see only itself, the last one sees
# everything. Even with no positional encoding at all (the "NoPE" models of the notes), masked
# self-attention is not permutation-equivariant, so a decoder can work out positions from what
# each token is allowed to see.

# %% tags=["demo"]
n_toy = len(X_toy)
masked = lambda X: self_attention(X, W_Q_toy, W_K_toy, W_V_toy, mask=causal_mask(len(X)))[0]
print("causal self-attention without PE, equivariant:", is_permutation_equivariant(masked, X_toy))
_, A_causal = self_attention(X_toy, W_Q_toy, W_K_toy, W_V_toy, mask=causal_mask(n_toy))
fig, axes = plt.subplots(1, 2, figsize=(8, 3.6))
axes[0].imshow(causal_mask(n_toy), cmap="Greys_r")
axes[0].set_title("causal_mask(5): True (white) = may attend")
axes[1].imshow(A_causal, cmap="viridis", vmin=0, vmax=1)
axes[1].set_title("masked weights: zero above the diagonal")
for ax in axes:
    ax.set_xticks(range(n_toy), sentences[0])
    ax.set_yticks(range(n_toy), sentences[0])
plt.tight_layout()
plt.show()

# %% [markdown]
# ## Part D (extension): positions inside attention
#
# Sinusoidal encodings are added once, at the input. Recent models put position information
# into the attention scores themselves, where only the *distance* between two tokens matters:
# relative position encodings (T5 learns a bias per distance bucket), rotary embeddings (RoPE) and
# linear biases (ALiBi), which both generalise to sequences longer than those seen in training.
#
# ### Rotary position embedding (RoPE)
#
# RoPE rotates each pair of coordinates `(2i, 2i+1)` of the query or key at position `m` by the
# angle $m\theta_i$ with $\theta_i = \text{base}^{-2i/d}$, the same frequencies as the sinusoidal
# encoding (pair 0 turns fastest). Counter-clockwise:
#
# $$\begin{pmatrix} x'_{2i} \\ x'_{2i+1} \end{pmatrix} =
#   \begin{pmatrix} \cos m\theta_i & -\sin m\theta_i \\ \sin m\theta_i & \cos m\theta_i \end{pmatrix}
#   \begin{pmatrix} x_{2i} \\ x_{2i+1} \end{pmatrix}$$
#
# Rotating the query at position $m$ and the key at position $n$ leaves their dot product
# depending on $m - n$ only, because $R(m\theta)^T R(n\theta) = R((n - m)\theta)$: the score sees
# the relative position, with nothing added to the embeddings. The pairs are interleaved
# (columns `2i`, `2i+1`), as in Part A; `d` must be even (`ValueError` otherwise).
#
# Example: `rope(np.array([[1.0, 0.0], [1.0, 0.0]]))` is `[[1, 0], [cos 1, sin 1]]`.

# %%
def rope(X, base=10000.0):
    """Rotary position embedding of the rows of X (n, d): pair (2i, 2i+1) of row m turned by m * base**(-2i/d).

    Raises ValueError for an odd d.

    >>> rope(np.array([[1.0, 0.0], [0.0, 1.0]])).round(3)
    array([[ 1.   ,  0.   ],
           [-0.841,  0.54 ]])
    """
    # BEGIN SOLUTION
    X = np.asarray(X, dtype=np.float64)
    n, d = X.shape[-2], X.shape[-1]
    if d % 2:
        raise ValueError(f"rope rotates pairs of coordinates, so d must be even, got {d}")
    theta = base ** (-np.arange(0, d, 2) / d)
    angles = np.arange(n)[:, None] * theta
    cos, sin = np.cos(angles), np.sin(angles)
    even, odd = X[..., 0::2], X[..., 1::2]
    out = np.empty_like(X)
    out[..., 0::2] = even * cos - odd * sin
    out[..., 1::2] = even * sin + odd * cos
    return out
    # END SOLUTION


# %% tags=["demo"]
# Put the same query q and the same key k at every position: with RoPE, their score depends only
# on the offset, so the score matrix is constant along each diagonal.
rng = np.random.default_rng(1)
q, k = rng.normal(size=16), rng.normal(size=16)
L = 24
scores_rope = rope(np.tile(q, (L, 1))) @ rope(np.tile(k, (L, 1))).T
offsets = np.subtract.outer(np.arange(L), np.arange(L))
spread = max(np.ptp(scores_rope[offsets == off]) for off in range(-L + 1, L))
print(f"largest spread of RoPE scores at one offset m - n: {spread:.1e}")
fig, ax = plt.subplots(figsize=(4.5, 3.8))
image = ax.imshow(scores_rope, cmap="RdBu")
ax.set_xlabel("key position n")
ax.set_ylabel("query position m")
ax.set_title("rope(q)_m · rope(k)_n depends on m - n only")
fig.colorbar(image, ax=ax)
plt.show()

# %% [markdown]
# ### Attention with linear biases (ALiBi)
#
# ALiBi adds nothing to the embeddings. Each head `h` subtracts a penalty proportional to the
# distance from its scores, $\text{scores}_h + \text{bias}_h$ with
#
# $$\text{bias}[h, i, j] = -m_h\,|i - j|, \qquad m_h = 2^{-8(h+1)/H}$$
#
# for `H = num_heads` heads, `h` counting from 0, for any number of heads (odd ones too: the ALiBi
# paper's code uses another recipe when `H` is not a power of two; here this formula holds for
# every `H`). The slopes form a geometric sequence: head 0 has the steepest slope (it looks only
# at close neighbours), the last head ($m = 2^{-8}$) sees far.
#
# Example: with `num_heads=2` the slopes are `1/16` and `1/256`, and `alibi_bias(3, 2)[0]` is
# `-[[0, 1, 2], [1, 0, 1], [2, 1, 0]] / 16`.

# %%
def alibi_bias(n, num_heads):
    """ALiBi biases (num_heads, n, n): bias[h, i, j] = -m_h * |i - j| with m_h = 2**(-8 (h+1) / num_heads).

    >>> alibi_bias(3, 2)[0] * 16
    array([[ 0., -1., -2.],
           [-1.,  0., -1.],
           [-2., -1.,  0.]])
    """
    # BEGIN SOLUTION
    slopes = 2.0 ** (-8.0 * np.arange(1, num_heads + 1) / num_heads)
    # negate the integer distances, not the floats, so the diagonal is 0.0 rather than -0.0
    minus_distance = -np.abs(np.subtract.outer(np.arange(n), np.arange(n)))
    return slopes[:, None, None] * minus_distance
    # END SOLUTION


# %% tags=["demo"]
# With flat content scores (all zero), each head's weights come from the bias alone: a window
# around each token, narrow for head 0 and wide for the last head.
H, n_alibi, query = 4, 16, 8
bias = alibi_bias(n_alibi, H)
weights_alibi = softmax(bias)
fig, axes = plt.subplots(1, 3, figsize=(12, 3.4))
image = axes[0].imshow(bias[0], cmap="magma")
axes[0].set_title("bias of head 0: -|i - j| / 4")
axes[0].set_xlabel("key j")
axes[0].set_ylabel("query i")
fig.colorbar(image, ax=axes[0])
for h in range(H):
    label = f"head {h}, slope 2^-{8 * (h + 1) // H}"
    axes[1].plot(bias[h, query], marker=".", label=label)
    axes[2].plot(weights_alibi[h, query], marker=".", label=label)
axes[1].set_title(f"bias of query {query} against each key")
axes[2].set_title(f"weights of query {query}: softmax(0 + bias)")
for ax in axes[1:]:
    ax.set_xlabel("key j")
axes[2].legend(fontsize=8)
plt.tight_layout()
plt.show()
