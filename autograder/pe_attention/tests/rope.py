OK_FORMAT = False

from functools import partial

import numpy as np
from otter.test_files import test_case

import attnlab_oracle as oracle

AXES = ("position", "column")  # what the feedback calls the result's axes


def _got(a):
    """The submission's own values, rounded (never the expected ones): what the message shows."""
    return str(np.round(np.asarray(a, dtype=np.float64), 3).tolist())
name = "rope"
reference = oracle.references.rope  # lent to the callers of rope when the student's own fails


@test_case(points=1, hidden=False)
def test_shape_and_example(rope):
    X = np.arange(12.0).reshape(3, 4)
    R = rope(X)
    assert isinstance(R, np.ndarray), f"rope should return a numpy array, got {type(R).__name__}"
    assert R.shape == (3, 4), f"rope of a (3, 4) input has shape {R.shape}"
    assert R.dtype == np.float64, f"rope should return float64, got {R.dtype}"
    assert np.allclose(R[0], X[0]), "position 0 is rotated by angle 0, so row 0 is unchanged"
    R = np.asarray(rope(np.array([[1.0, 0.0, 1.0, 0.0], [1.0, 0.0, 1.0, 0.0]])))
    assert np.allclose(R[1], [np.cos(1.0), np.sin(1.0), np.cos(0.01), np.sin(0.01)]), (
        "rope of two rows [1, 0, 1, 0]: the second should be [cos 1, sin 1, cos 0.01, sin 0.01]: position 1 turns "
        "the pair (x_0, x_1) counter-clockwise by 1 radian and the pair (x_2, x_3) by 10000**(-2/4) = 0.01; "
        f"got {_got(R[1])}")


@test_case(points=1, hidden=True)
def test_values(rope):
    X = np.random.default_rng(80).normal(size=(6, 8))
    got, changed = oracle.call_noting_changes(rope, X)
    oracle.assert_close(got, oracle.rope(X), "rope of a (6, 8) input", partial(oracle.rope_variants, X), axes=AXES,
                        relation=oracle.rope_reading(X))
    oracle.assert_not_changed(changed, rope, X)
    # whole numbers as integers: turned as floats all the same (no truncation)
    X = np.arange(8).reshape(2, 4)
    oracle.assert_close(oracle.call(rope, X), oracle.rope(X.astype(float)), "rope of an integer (2, 4) input",
                        partial(oracle.rope_variants, X.astype(float)), axes=AXES, relation=oracle.rope_reading(X))
    # one process, two bases in both orders: every call must use its own base
    X = np.random.default_rng(81).normal(size=(5, 4))
    oracle.assert_close_in_turn(rope, [((X,), {"base": b}, oracle.rope(X, b), partial(oracle.rope_variants, X, b))
                                       for b in (100.0, 10000.0, 100.0)], axes=AXES, relation=oracle.rope_reading)


@test_case(points=1, hidden=True)
def test_odd_d_rejected(rope):
    oracle.assert_raises(ValueError, rope, np.ones((3, 5)), accepts=(np.ones((3, 4)),),
                         why="rope turns pairs of coordinates (2i, 2i+1), so an odd d leaves one without a partner",
                         returned=("an odd d accepted", "check d first and raise ValueError when it is odd"))


@test_case(points=1, hidden=True)
def test_scores_depend_on_offset_only(rope):
    rng = np.random.default_rng(82)
    q, k = rng.normal(size=6), rng.normal(size=6)
    Q = oracle.assert_shape(oracle.call(rope, np.tile(q, (7, 1))), (7, 6), "rope of 7 copies of one query")
    K = oracle.assert_shape(oracle.call(rope, np.tile(k, (7, 1))), (7, 6), "rope of 7 copies of one key")
    S = Q @ K.T
    for offset in (-3, 0, 2):
        diagonal = np.diagonal(S, offset)
        key = "m" if offset == 0 else f"m + {offset}" if offset > 0 else f"m - {-offset}"
        assert np.allclose(diagonal, diagonal[0], atol=1e-9), (
            f"with rope, the score of query position m and key position {key} must not depend on m "
            "(every pair is rotated by an angle proportional to the position)")
    assert np.allclose(np.linalg.norm(Q, axis=1), np.linalg.norm(q)), "rope rotates: it must keep every row's length"
