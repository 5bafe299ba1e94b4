"""Reading a wrong multi-head output as attention whose weights were normalised along another axis.

A head's weights must sum to 1 over the keys, for each query. Multi-head attention returns only its
output, which carries no sums; but the output the same scores give with the weights normalised over
the queries, over the heads, or not at all (every weight 1, which is what a softmax over an axis of
length 1 gives) can be rebuilt, and a result that is one of those is said so: "the weights sum to 1
across the heads, not across the keys". Each relation is checked on every entry of the output.
"""

import math

import numpy as np

from .describe import Relation

__all__ = ["mha_reading"]


def _scores(X, W_Q, W_K, num_heads, mask):
    """(heads, queries, keys) scores of the contiguous heads, scaled by sqrt(d_h), -inf where blocked."""
    width = W_Q.shape[1] // num_heads  # a head's query and key columns
    out = []
    for h in range(num_heads):
        cols = slice(h * width, (h + 1) * width)
        out.append((X @ W_Q[:, cols]) @ (X @ W_K[:, cols]).T / math.sqrt(width))
    scores = np.stack(out)
    if mask is not None:
        scores = np.where(np.asarray(mask, dtype=bool), scores, -np.inf)
    return scores


def _normalised(scores, axis):
    e = np.exp(scores - np.max(scores, axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _output(weights, X, W_V, W_O, num_heads):
    width = W_V.shape[1] // num_heads  # a head's value columns
    heads = [weights[h] @ (X @ W_V[:, h * width : (h + 1) * width]) for h in range(num_heads)]
    return np.concatenate(heads, axis=1) @ W_O


def mha_reading(X, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    """For a result meant to be ``multi_head_attention(...)`` of these arguments: a function of the
    student's output giving the relation that holds (weights normalised along another axis), or None."""
    X, W_Q, W_K, W_V, W_O = (np.asarray(a, dtype=np.float64) for a in (X, W_Q, W_K, W_V, W_O))

    def relation(got):
        got = np.asarray(got, dtype=np.float64)
        with np.errstate(all="ignore"):
            try:
                scores = _scores(X, W_Q, W_K, num_heads, mask)
            except ValueError:  # shapes that do not work out: nothing to rebuild
                return None
            ones = np.where(np.isfinite(scores), 1.0, 0.0)
            readings = [
                (ones, "weights all equal to 1 give (each head's output is the plain sum of its value rows)"),
                (_normalised(scores, 1), "weights that sum to 1 across the queries (for each key) give"),
                (np.exp(scores), "weights exp(score), not normalised at all, give"),
            ]
            if num_heads > 1:
                # a (query, key) blocked in every head has no weight to share across the heads: 0
                # (what a softmax that gives an all-blocked slice 0 returns) or an equal share each
                # (a large finite fill); either way the others sum to 1 across the heads
                across = "weights that sum to 1 across the heads (for each query and key) give"
                blocked = ~np.isfinite(scores)
                readings[:0] = [
                    (np.where(blocked, 0.0, _normalised(scores, 0)), across),
                    (_normalised(np.where(blocked, 0.0, scores), 0), across),
                ]
            for weights, words in readings:
                built = _output(weights, X, W_V, W_O, num_heads)
                if (
                    built.shape == got.shape
                    and np.isfinite(built).all()
                    and np.allclose(built, got, rtol=1e-6, atol=1e-8)
                ):
                    return Relation(
                        "normalised",
                        f"is the output that {words}, where each query's weights must sum to 1 across the keys",
                    )
        return None

    return relation
