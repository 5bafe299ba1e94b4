OK_FORMAT = False

from functools import partial

import numpy as np
from otter.test_files import test_case

import attnlab_oracle as oracle

AXES = ("position", "column")  # what the feedback calls the result's axes
name = "add_positional_encoding"
reference = oracle.references.add_positional_encoding  # lent to the callers of add_positional_encoding when the student's own fails


def _embeddings(n, d, seed):
    return np.random.default_rng(seed).normal(size=(n, d))


@test_case(points=1, hidden=False)
def test_shape_and_dtype(add_positional_encoding):
    X = add_positional_encoding(np.zeros((4, 6)))
    assert isinstance(X, np.ndarray), f"add_positional_encoding should return a numpy array, got {type(X).__name__}"
    assert X.shape == (4, 6), f"add_positional_encoding on a (4, 6) input has shape {X.shape}"
    assert X.dtype == np.float64, f"add_positional_encoding should return float64, got {X.dtype}"
    assert np.allclose(X[1, :2], [np.sin(1.0), np.cos(1.0)]), (
        "add_positional_encoding(zeros) is the encoding itself: row 1 starts with [sin 1, cos 1]")


@test_case(points=1, hidden=True)
def test_values(add_positional_encoding):
    # 200 positions: more than a table of a fixed length (128, say) precomputed and sliced holds
    for n, d, seed in [(5, 8, 0), (9, 5, 1), (200, 6, 3)]:
        E = _embeddings(n, d, seed)
        oracle.assert_close(oracle.call(add_positional_encoding, E), E + oracle.pe(n, d),
                            f"add_positional_encoding on a ({n}, {d}) input", partial(oracle.add_pe_variants, E), axes=AXES,
                            relation=oracle.add_pe_reading(E))
    # whole-number embeddings as integers: the result is float64 all the same (no truncation)
    E = np.arange(12).reshape(3, 4)
    oracle.assert_close(oracle.call(add_positional_encoding, E), E + oracle.pe(3, 4),
                        "add_positional_encoding on an integer (3, 4) input", partial(oracle.add_pe_variants, E.astype(float)),
                        axes=AXES, relation=oracle.add_pe_reading(E))


@test_case(points=1, hidden=True)
def test_base_and_no_mutation(add_positional_encoding):
    E = _embeddings(6, 4, 2)
    got, changed = oracle.call_noting_changes(add_positional_encoding, E, base=50.0)
    oracle.assert_close(got, E + oracle.pe(6, 4, 50.0), "add_positional_encoding(E, base=50.0)",
                        partial(oracle.add_pe_variants, E, 50.0), axes=AXES, relation=oracle.add_pe_reading(E, 50.0))
    oracle.assert_not_changed(changed, add_positional_encoding, E, base=50.0)
    # the same sizes with the other base, after base=50: every call must use its own base
    oracle.assert_close_in_turn(add_positional_encoding, [((E,), {"base": b}, E + oracle.pe(6, 4, b),
                                                           partial(oracle.add_pe_variants, E, b)) for b in (10000.0, 50.0)],
                                axes=AXES, relation=oracle.add_pe_reading)
