"""Functions whose permutation behaviour is known, handed to the students' checkers.

Every probe is a module-level numpy function, or a ``functools.partial`` of one with array
arguments. ``equivariant`` and ``invariant`` below say what a correct checker must answer for each.

A checker calls its probe once for X and once per reordering it tries (120 times for five rows).
``Probe.lent`` hands a pure probe over together with its outputs on the reorderings a checker is
expected to try (``known_answers``), so that a grading engine, which keeps the probe and its table
on its own side, answers exactly those calls from the table instead of computing them; under otter
it is just the probe.

Every tabled function answers in the same way (``Tabled``): two outputs per known input, and
``pick`` choosing one from the reorderings met so far. A pure probe's two are the same; the
function that remembers its calls (``checkers.OnePermutationOnly``) has different ones. So how
long a call takes tells a checker nothing about which kind of function it holds (a pure probe
answered from a table and a remembering one computed were 20 of 20 times apart, 37 against
92 microseconds).
"""

import functools
import itertools

import numpy as np


__all__ = [
    "self_attention_layer",
    "with_positional_encoding",
    "multi_head_layer",
    "encoder_layer",
    "reverse_rows",
    "roll_rows",
    "broadcast_mean",
    "affine",
    "unchanged_rows",
    "position_offsets",
    "scale_first_row",
    "mean_pool",
    "sum_first_two",
    "pair_then_weights",
    "negate_first_row",
    "column_max",
    "first_entry_offset",
    "column_sums_and_first_entry",
    "first_row_and_rest_sum",
    "weighted_row_sum",
    "centred_weighted_row_sum",
    "rows_through_largest",
    "total",
    "total_through_largest",
    "Probe",
    "KnownAnswers",
    "Met",
    "Tabled",
    "stacked",
    "reorderings",
    "attention_probes",
    "row_probes",
]


def _softmax(S):
    e = np.exp(S - S.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def self_attention_layer(X, W_Q, W_K, W_V):
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    return _softmax(Q @ K.T / np.sqrt(K.shape[1])) @ V


def _sinusoidal(n, d):
    angles = np.arange(n)[:, None] / 10000.0 ** (2 * (np.arange(d) // 2) / d)
    return np.where(np.arange(d) % 2 == 0, np.sin(angles), np.cos(angles))


def with_positional_encoding(X, W_Q, W_K, W_V):
    """Self-attention on X + PE: no longer equivariant."""
    return self_attention_layer(X + _sinusoidal(*X.shape), W_Q, W_K, W_V)


def multi_head_layer(X, W_Q, W_K, W_V, W_O, num_heads):
    d_h, d_v = W_Q.shape[1] // num_heads, W_V.shape[1] // num_heads
    heads = [
        self_attention_layer(
            X, W_Q[:, h * d_h : (h + 1) * d_h], W_K[:, h * d_h : (h + 1) * d_h], W_V[:, h * d_v : (h + 1) * d_v]
        )
        for h in range(num_heads)
    ]
    return np.concatenate(heads, axis=1) @ W_O


def _layer_norm(X):
    return (X - X.mean(axis=1, keepdims=True)) / np.sqrt(X.var(axis=1, keepdims=True) + 1e-5)


def encoder_layer(X, W_Q, W_K, W_V, W_O, W_1, W_2, num_heads):
    """Post-norm transformer encoder layer (attention, ReLU feed-forward, residuals), no PE."""
    H = _layer_norm(X + multi_head_layer(X, W_Q, W_K, W_V, W_O, num_heads))
    return _layer_norm(H + np.maximum(H @ W_1, 0.0) @ W_2)


def reverse_rows(X):
    return np.array(X[::-1], dtype=np.float64)


def roll_rows(X):
    return np.roll(np.asarray(X, dtype=np.float64), 1, axis=0)


def broadcast_mean(X):
    """Every row replaced by the mean row, summed in row order: equal under a permutation only up
    to round-off."""
    total = np.zeros(X.shape[1])
    for row in X:
        total = total + row
    return np.tile(total / X.shape[0], (X.shape[0], 1))


def affine(X):
    """Row-wise and exact: f(P X) equals P f(X) bit for bit."""
    return 2.0 * np.asarray(X, dtype=np.float64) + 1.0


def unchanged_rows(X):
    return np.array(X, dtype=np.float64)


def position_offsets(X, offsets):
    """Adds offsets[i] to row i: equivariant only under permutations that keep equal offsets."""
    return X + np.asarray(offsets, dtype=np.float64)[:, None]


def large_rows_offsets(X, offsets):
    """100 + X[i] + offsets[i]: rows far from 0, where a tolerance taken relative to the values (atol
    * |b|) is a hundred times atol, and one that ignores atol is tighter than it."""
    return position_offsets(X + 100.0, offsets)


def scale_first_row(X, factor):
    """Row 0 scaled by ``factor``: moved rows come out up to that factor apart, far beyond round-off."""
    out = np.array(X, dtype=np.float64)
    out[0] = factor * out[0]
    return out


def mean_pool(X, f):
    return f(X).mean(axis=0)


def first_row_and_rest_sum(X):
    """Row 0, then the sum of the other rows: invariant only under permutations that fix row 0."""
    X = np.asarray(X, dtype=np.float64)
    return np.concatenate([X[0], X[1:].sum(axis=0)])


def weighted_row_sum(X, step):
    """Row k weighted by 1 + step * k: invariant only to within about step * |X|."""
    X = np.asarray(X, dtype=np.float64)
    return ((1.0 + step * np.arange(X.shape[0]))[:, None] * X).sum(axis=0)


def centred_weighted_row_sum(X, step):
    """``weighted_row_sum`` of the rows minus their mean: near 0, so that only an absolute tolerance
    can absorb its order-dependence (a relative one is scaled by the near-zero result)."""
    X = np.asarray(X, dtype=np.float64)
    return weighted_row_sum(X - X.mean(axis=0), step)


def rows_through_largest(X):
    """The rows up to the one with the largest first entry: the output's shape depends on the order."""
    X = np.asarray(X, dtype=np.float64)
    return X[: int(np.argmax(X[:, 0])) + 1].copy()


def total(X):
    """The sum of every entry: a number, with no rows that could move with the input's (so not
    equivariant: an output of another shape; invariant)."""
    return np.array(np.sum(np.asarray(X, dtype=np.float64)))  # an array of shape (): lent with a table


def total_through_largest(X):
    """The total of X once per row up to the one with the largest first entry: outputs of one shape
    are equal, but the shape changes when the rows move."""
    X = np.asarray(X, dtype=np.float64)
    return np.full(int(np.argmax(X[:, 0])) + 1, X.sum())


def negate_first_row(X):
    """Row 0 negated: moved rows change the output's entries and rows but not its norm."""
    out = np.array(X, dtype=np.float64)
    out[0] = -out[0]
    return out


def column_max(X):
    """Invariant bit for bit: a maximum, unlike a sum, does not depend on the order of its terms."""
    return np.asarray(X, dtype=np.float64).max(axis=0)


def first_entry_offset(X):
    """X with 1 added to its very first entry: on a wide X, one entry in hundreds moves wrongly when
    row 0 moves (a rule that lets most entries pass says equivariant)."""
    out = np.array(X, dtype=np.float64)
    out[0, 0] += 1.0
    return out


def column_sums_and_first_entry(X):
    """The column sums with X[0, 0] added to the first: one entry of the output depends on which row
    comes first (a rule that lets most entries pass says invariant)."""
    X = np.asarray(X, dtype=np.float64)
    out = X.sum(axis=0)
    out[0] += X[0, 0]
    return out


def cyclic_neighbour_products(X):
    """The sum over k of X[k] * X[k + 1], the last row taken with the first: one row as wide as X's,
    unchanged by rolling or reversing the rows, changed by most other reorderings when n >= 4."""
    X = np.asarray(X, dtype=np.float64)
    return (X * np.roll(X, -1, axis=0)).sum(axis=0)


def sum_first_two(X):
    """Invariant under swapping rows 0 and 1 only."""
    return np.concatenate([X[0] + X[1], X[2:].ravel()])


def pair_then_weights(X):
    """X[0] + X[1] + 2 X[2] + 3 X[3] + ...: one row as wide as X's, invariant under swapping rows 0
    and 1 only (so that a question about the permutations given says nothing about width)."""
    weights = np.concatenate([[1.0], np.arange(1.0, len(X))])
    return weights @ X


def reorderings(n):
    """The reorderings a correct checker tries by default: every one for n <= 5; else every
    adjacent swap and 3-cycle, the reversal and the rolls by one either way."""
    identity = list(range(n))
    if n <= 5:
        return [p for p in itertools.permutations(identity) if list(p) != identity]
    swaps = [tuple(identity[:i] + [i + 1, i] + identity[i + 2 :]) for i in range(n - 1)]
    cycles = [tuple(identity[:i] + [i + 1, i + 2, i] + identity[i + 3 :]) for i in range(n - 2)]
    turns = [tuple(identity[::-1]), tuple(identity[1:] + identity[:1]), tuple(identity[-1:] + identity[:-1])]
    return swaps + cycles + turns


class Met:
    """The reorderings of X (as tuples sigma, X[sigma]) that a checker has called a function on:
    every one (``seen``), and the first other than X itself (``first``)."""

    def __init__(self, n):
        self.identity, self.first, self.seen = tuple(range(n)), None, set()

    def meet(self, sigma):
        """Note a call on X[sigma]: whether sigma is X itself or the first other reordering met."""
        self.seen.add(sigma)
        if self.first is None and sigma != self.identity:
            self.first = sigma
        return sigma == self.identity or sigma == self.first


class Tabled:
    """A function lent with its outputs on the reorderings of X it is expected to meet.
    ``known_answers()`` gives (inputs, (outputs_a, outputs_b)), stacked, for the inputs whose
    outputs share one shape; ``pick(i)`` says which of the two answers the call on ``inputs[i]``
    now (0 for a, 1 for b), noting the call. Subclasses give ``_answers_of()``: (inputs, outputs_a,
    outputs_b, sigmas), lists in step, X itself first; or ``_table()``, those stacked."""

    def __init__(self, n):
        self.met, self._answers, self._sigmas = Met(n), None, ()

    def known_answers(self):
        if self._answers is None:
            self._answers, self._sigmas = self._table()
        return self._answers or None

    def pick(self, i):
        return 0 if self.met.meet(self._sigmas[i]) else 1

    def _table(self):
        return stacked(*self._answers_of())


def stacked(inputs, a, b, sigmas):
    """``Tabled``'s table from ``_answers_of()``: ((inputs, (outputs_a, outputs_b)), sigmas), stacked
    and read-only, for the inputs whose outputs share one shape; ((), ()) when none do."""
    kept = [
        (x, y, z, sigma)
        for x, y, z, sigma in zip(inputs, a, b, sigmas)
        if type(y) is np.ndarray and type(z) is np.ndarray and (y.shape, y.dtype) == (z.shape, z.dtype)
    ]
    kept = [row for row in kept if (row[1].shape, row[1].dtype) == (kept[0][1].shape, kept[0][1].dtype)]
    if not kept:
        return (), ()
    inputs, a, b, sigmas = zip(*kept)
    arrays = [np.stack(inputs), np.stack(a)]
    arrays.append(arrays[1] if all(y is z for y, z in zip(a, b)) else np.stack(b))
    for array in arrays:
        array.flags.writeable = False
    return (arrays[0], (arrays[1], arrays[2])), tuple(sigmas)


class KnownAnswers(Tabled):
    """A pure function of one array, and the reorderings of X it is expected to meet (X first):
    calling it calls the function; both of its outputs on an input are the function's."""

    def __init__(self, f, X, order):
        super().__init__(len(X))
        self.f, self.X, self.order = f, X, [tuple(range(len(X)))] + [tuple(p) for p in order]
        # the row counts of calls on inputs with another number of rows than X's, which no
        # reordering of X has: evidence about the checker (``checkers``, which empties it per question)
        self.other_rows = set()

    def __call__(self, *args, **kwargs):
        try:
            rows = np.shape(args[0])[0] if args and np.ndim(args[0]) else None
        except (ValueError, TypeError):  # a ragged list: no row count to speak of
            rows = None
        if rows is not None and rows != len(self.X) and len(self.other_rows) < 8:
            self.other_rows.add(int(rows))
        return self.f(*args, **kwargs)

    def _answers_of(self):
        inputs, outputs, sigmas = [], [], []
        for sigma in self.order:
            x = self.X[list(sigma)]
            try:
                y = self.f(x.copy())
            except Exception:  # noqa: BLE001 - a call that raises is left to make its round trip
                continue
            inputs.append(x)
            outputs.append(y)
            sigmas.append(sigma)
        return inputs, outputs, outputs, sigmas


class Probe:
    """A function with the answers a correct checker gives for it. ``pure``: its output depends on
    its input alone (not so for a function that remembers what it was called on)."""

    def __init__(self, what, f, equivariant, invariant, pure=True):
        self.what, self.f, self.equivariant, self.invariant, self.pure = what, f, equivariant, invariant, pure
        self._lent = {}

    def lent(self, X, perms=None):
        """The function to hand to a checker asked about X (and ``perms``, or the default ones)."""
        if not self.pure:
            return self.f
        X = np.asarray(X)
        key = (X.dtype.str, X.shape, X.tobytes(), None if perms is None else tuple(map(tuple, perms)))
        if key not in self._lent:
            order = reorderings(len(X)) if perms is None else perms
            if len(self._lent) >= 32:
                self._lent.clear()
            self._lent[key] = KnownAnswers(self.f, X.copy(), order)
        return self._lent[key]

    def __repr__(self):
        return f"Probe({self.what!r})"


def attention_probes(d_model=4, seed=0):
    """Attention-based probes on inputs of width ``d_model``, with non-symmetric random weights."""
    return dict(_attention_probes(d_model, seed))


def row_probes(n):
    """Probes that move or mix whole rows, for inputs with ``n`` rows."""
    return dict(_row_probes(n))


# made once per process: probes are pure, and each keeps the answers it has worked out
@functools.lru_cache(maxsize=None)
def _attention_probes(d_model, seed):
    rng = np.random.default_rng(seed)
    W_Q, W_K, W_V = (rng.normal(size=(d_model, 4)) for _ in range(3))
    W_O = rng.normal(size=(4, d_model))
    W_1, W_2 = rng.normal(size=(d_model, 6)), rng.normal(size=(6, d_model))
    # drawn last, so the weights above stay as they were: values narrower than the input
    W_V3 = rng.normal(size=(d_model, 3))
    sa = functools.partial(self_attention_layer, W_Q=W_Q, W_K=W_K, W_V=W_V)
    narrow = functools.partial(self_attention_layer, W_Q=W_Q, W_K=W_K, W_V=W_V3)
    sa_pe = functools.partial(with_positional_encoding, W_Q=W_Q, W_K=W_K, W_V=W_V)
    mha = functools.partial(multi_head_layer, W_Q=W_Q, W_K=W_K, W_V=W_V, W_O=W_O, num_heads=2)
    enc = functools.partial(encoder_layer, W_Q=W_Q, W_K=W_K, W_V=W_V, W_O=W_O, W_1=W_1, W_2=W_2, num_heads=2)
    return {
        "self-attention": Probe("self-attention without positional encoding", sa, True, False),
        "self-attention to width 3": Probe(
            "self-attention without positional encoding whose values are 3 wide", narrow, True, False
        ),
        "self-attention + PE": Probe("self-attention with positional encoding added", sa_pe, False, False),
        "multi-head": Probe("multi-head attention without positional encoding", mha, True, False),
        "encoder": Probe("a transformer encoder layer without positional encoding", enc, True, False),
        "pooled self-attention": Probe(
            "mean-pooled self-attention without positional encoding", functools.partial(mean_pool, f=sa), False, True
        ),
        "pooled encoder": Probe(
            "a mean-pooled encoder layer without positional encoding", functools.partial(mean_pool, f=enc), False, True
        ),
        "pooled self-attention to width 3": Probe(
            "mean-pooled self-attention without positional encoding whose values are 3 wide",
            functools.partial(mean_pool, f=narrow),
            False,
            True,
        ),
        "pooled self-attention + PE": Probe(
            "mean-pooled self-attention with positional encoding", functools.partial(mean_pool, f=sa_pe), False, False
        ),
    }


@functools.lru_cache(maxsize=None)
def _row_probes(n):
    first_two_equal = [0.0, 0.0] + [float(k) for k in range(1, n - 1)]
    palindrome = [float(min(k, n - 1 - k)) for k in range(n)]
    return {
        "reverse": Probe("row reversal X[::-1]", reverse_rows, False, False),
        "roll": Probe("rolling the rows by one", roll_rows, False, False),
        "mean": Probe("the broadcast mean row", broadcast_mean, True, True),
        "affine": Probe("2 X + 1 (row by row)", affine, True, False),
        "offsets 0,0,1,..": Probe(
            "adding a different offset to each row but the first two",
            functools.partial(position_offsets, offsets=first_two_equal),
            False,
            False,
        ),
        "palindromic offsets": Probe(
            "adding offsets that read the same backwards to the rows",
            functools.partial(position_offsets, offsets=palindrome),
            False,
            False,
        ),
        "small offsets": Probe(
            "adding offsets of at most 1e-4 * (n - 1) to the rows",
            functools.partial(position_offsets, offsets=[1e-4 * k for k in range(n)]),
            False,
            False,
        ),
        "large rows, offsets 1e-3": Probe(
            "adding 100 and offsets of 1e-3 * k to row k",
            functools.partial(large_rows_offsets, offsets=[1e-3 * k for k in range(n)]),
            False,
            False,
        ),
        "first two summed": Probe("X[0] + X[1] followed by the other rows", sum_first_two, False, False),
        "cyclic neighbour products": Probe(
            "the sum of each row times the next, the last times the first", cyclic_neighbour_products, False, False
        ),
        "first two summed, then weighted": Probe(
            "X[0] + X[1] + 2 X[2] + 3 X[3] + ..., one row as wide as X's", pair_then_weights, False, False
        ),
        "first row scaled": Probe(
            "scaling the first row by 1.3",
            functools.partial(scale_first_row, factor=1.3),
            False,
            False,
        ),
        "first row offset": Probe(
            "adding 1 to the first row only",
            functools.partial(position_offsets, offsets=[1.0] + [0.0] * (n - 1)),
            False,
            False,
        ),
        "first row and rest sum": Probe(
            "row 0 followed by the sum of the other rows", first_row_and_rest_sum, False, False
        ),
        "offsets 0,0,10,..": Probe(
            "adding offsets 0, 0, 10, 20, ... to the rows",
            functools.partial(position_offsets, offsets=[0.0, 0.0] + [10.0 * k for k in range(1, n - 1)]),
            False,
            False,
        ),
        "offsets 1e-3": Probe(
            "adding offsets of 1e-3 * k to row k",
            functools.partial(position_offsets, offsets=[1e-3 * k for k in range(n)]),
            False,
            False,
        ),
        "weighted sum 1e-4": Probe(
            "the sum of the rows weighted by 1 + 1e-4 * k", functools.partial(weighted_row_sum, step=1e-4), False, False
        ),
        "centred weighted sum 1e-4": Probe(
            "the sum of the centred rows weighted by 1 + 1e-4 * k (near 0)",
            functools.partial(centred_weighted_row_sum, step=1e-4),
            False,
            False,
        ),
        "rows through largest": Probe(
            "the rows up to the one with the largest first entry",
            rows_through_largest,
            False,
            False,
        ),
        "total through largest": Probe(
            "the total of X, once per row up to the one with the largest first entry",
            total_through_largest,
            False,
            False,
        ),
        "identity": Probe("the identity f(X) = X", unchanged_rows, True, False),
        "total": Probe("the sum of every entry of X (a number, not rows)", total, False, True),
        "first row negated": Probe("X with its first row negated", negate_first_row, False, False),
        "column maximum": Probe("the largest entry of each column", column_max, False, True),
        "first entry offset": Probe(
            "adding 1 to the first entry of the first row only", first_entry_offset, False, False
        ),
        "column sums and first entry": Probe(
            "the column sums with X[0, 0] added to the first of them", column_sums_and_first_entry, False, False
        ),
    }
