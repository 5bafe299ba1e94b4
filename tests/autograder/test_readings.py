"""How the feedback reads a wrong sinusoidal or rope result as angles (the oracle's ``angles``) and a
result that ignores its input (``compare.same_whatever``): each question grades a student's function
with the mistake and asks what the message lets the student find, and whether a result without the
relation is ever told it has it."""

from __future__ import annotations

import re

import numpy as np
import pytest

from attnlab import paths, testfiles
from in_process import grade_env

testfiles.load_dir(paths.tests_dir())  # puts the oracle package on the import path
from attnlab_oracle import angles, positional  # noqa: E402


def _messages(test_files, env, question):
    score, possible, messages = grade_env(env, [t for t in test_files if t.name == question])[question]
    assert score < possible
    return messages


def _table(positions, d, base):
    """The encoding of the given positions (floats allowed), written as a student would."""
    out = np.zeros((len(positions), d))
    for m, pos in enumerate(positions):
        for j in range(d):
            angle = pos / base ** (2 * (j // 2) / d)
            out[m, j] = np.sin(angle) if j % 2 == 0 else np.cos(angle)
    return out


def test_is_a_table_at_wrongly_spaced_positions_told_which_positions_its_rows_hold(test_files):
    """Positions from np.linspace(0, seq_len, seq_len): row m is position m * n/(n - 1). The message
    must give those positions (7/6 apart for 7 rows), not only 'wrong on every position but the first'."""

    def sinusoidal_pe(seq_len, d_model, base=10000.0):
        return _table(np.linspace(0, seq_len, seq_len), d_model, base)

    messages = _messages(test_files, {"sinusoidal_pe": sinusoidal_pe}, "sinusoidal_pe")
    spaced = [m for m in messages if "sinusoidal_pe(7, 8)" in m]
    assert spaced and "1.167" in spaced[0] and "position" in spaced[0], messages
    assert not any("wrong on every position but the first" in m for m in messages), messages


def test_is_an_encoding_with_the_frequencies_of_another_width_told_that_width(test_files):
    """E + sinusoidal_pe(max(n, d), max(n, d))[:, :d]: for a (9, 5) input the rates are those of
    d_model = 9, the number of positions; the message must say so."""

    def add_positional_encoding(E, base=10000.0):
        n, d = np.shape(E)
        size = max(n, d)
        return np.asarray(E, dtype=np.float64) + _table(range(n), size, base)[:, :d]

    messages = _messages(test_files, {"add_positional_encoding": add_positional_encoding}, "add_positional_encoding")
    wide = [m for m in messages if "(9, 5) input" in m]
    assert wide and "d_model = 9" in wide[0] and "number of positions" in wide[0], messages


def test_is_a_rope_whose_pairs_turn_at_the_rates_of_another_width_told_that_width(test_files):
    """theta_i = base**(-2i/n) with n the number of rows: for a (6, 8) input, the rates of d = 6."""

    def rope(X, base=10000.0):
        X = np.asarray(X, dtype=np.float64)
        n, d = X.shape
        if d % 2:
            raise ValueError("odd d")
        out = X.copy()
        for m in range(n):
            for i in range(d // 2):
                a = m * base ** (-2 * i / n)
                x, y = X[m, 2 * i], X[m, 2 * i + 1]
                out[m, 2 * i], out[m, 2 * i + 1] = x * np.cos(a) - y * np.sin(a), x * np.sin(a) + y * np.cos(a)
        return out

    messages = _messages(test_files, {"rope": rope}, "rope")
    told = [m for m in messages if "(6, 8) input" in m]
    assert told and "d = 6" in told[0] and "number of rows" in told[0], messages


def test_is_a_permutation_matrix_that_ignores_perm_told_it_is_the_identity_for_every_perm(test_files):
    """A function that sorts perm in place before using it returns the identity whatever perm is: the
    message must say the identity, for every perm tried, not 'rows shifted by 1' (true of [1, 2, 0] only)."""

    def permutation_matrix(perm):
        p = np.asarray(perm)
        p.sort()
        return np.eye(p.size)[p]

    messages = _messages(test_files, {"permutation_matrix": permutation_matrix}, "permutation_matrix")
    assert any("identity" in m and "each of the 4 perms" in m for m in messages), messages
    assert not any("shifted" in m for m in messages), messages


@pytest.mark.parametrize("name", [m.name for m in positional.PE_MISTAKES])
def test_is_a_table_read_as_positions_or_rates_only_when_they_rebuild_it(name):
    """Every known wrong table: a reading, when one is given, rebuilds the whole table from the
    positions or rates it states; the right table gets none."""
    assert angles.pe_reading(7, 8)(positional.pe(7, 8)) is None
    wrong = dict((n, v) for n, _, v in positional.pe_variants(7, 8))[name]
    relation = angles.pe_reading(7, 8)(wrong)
    if relation is None:
        return
    if relation.kind == "positions":
        said = relation.text.split("positions ")[1].split(", not of")[0]
        positions = [float(p) for p in said.split(", ")]
        assert np.allclose(_table(positions, 8, 10000.0), wrong, atol=1e-4)
        return
    width = re.search(r"by base\*\*\(-2i/(\d+)\) per position", relation.text)
    assert relation.kind == "rates" and width, relation.text
    rates = 10000.0 ** (-2 * np.arange(4) / int(width.group(1)))
    angles_ = np.arange(7)[:, None] * rates
    rebuilt = np.stack([np.sin(angles_), np.cos(angles_)], axis=2).reshape(7, 8)
    assert np.allclose(rebuilt, wrong)


def _heads_last_softmax(X, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    """Multi-head attention with the scores laid out (query, key, head) and the softmax over the last
    axis: the heads', not the keys'."""
    n, d_h, d_v = len(X), W_Q.shape[1] // num_heads, W_V.shape[1] // num_heads
    q, k, v = ((X @ W).reshape(n, num_heads, -1) for W in (W_Q, W_K, W_V))
    scores = np.einsum("nhd,mhd->nmh", q, k) / np.sqrt(d_h)
    if mask is not None:
        scores = np.where(np.asarray(mask)[:, :, None], scores, -1e9)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    w = e / e.sum(axis=-1, keepdims=True)
    return np.einsum("nmh,mhv->nhv", w, v).reshape(n, num_heads * d_v) @ W_O


@pytest.mark.parametrize("num_heads, causal", [(2, False), (3, False), (2, True), (1, False)])
def test_is_a_multi_head_output_with_weights_normalised_across_the_heads_told_so(num_heads, causal):
    """The output carries no sums, but what weights summing to 1 across the heads give can be rebuilt:
    the message must say the weights sum to 1 across the heads (every weight 1 for one head), and
    the right output must get no reading at all."""
    from attnlab_oracle import multi_head_attention, normalised

    rng = np.random.default_rng(5)
    X, W_Q, W_K, W_V, W_O = (rng.normal(size=s) for s in ((4, 6), (6, 6), (6, 6), (6, 6), (6, 3)))
    mask = np.tril(np.ones((4, 4), dtype=bool)) if causal else None
    reading = normalised.mha_reading(X, W_Q, W_K, W_V, W_O, num_heads, mask)
    relation = reading(_heads_last_softmax(X, W_Q, W_K, W_V, W_O, num_heads, mask))
    words = "across the heads" if num_heads > 1 else "all equal to 1"
    assert relation is not None and words in relation.text, relation
    assert reading(multi_head_attention(X, W_Q, W_K, W_V, W_O, num_heads, mask)) is None
