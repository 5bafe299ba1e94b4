OK_FORMAT = False

from functools import partial

import numpy as np
from otter.test_files import test_case

import attnlab_oracle as oracle

name = "causal_mask"
reference = oracle.causal_mask  # lent to the callers of causal_mask when the student's own fails


@test_case(points=1, hidden=False)
def test_shape_dtype_and_orientation(causal_mask):
    m = causal_mask(3)
    assert isinstance(m, np.ndarray), f"causal_mask should return a numpy array, got {type(m).__name__}"
    assert m.shape == (3, 3), f"causal_mask(3) has shape {m.shape}, expected (3, 3)"
    assert m.dtype == np.bool_, f"causal_mask should return a boolean array (True = may attend), got {m.dtype}"
    assert bool(m[0, 0]), "the first token may attend to itself"
    assert bool(m[2, 0]) and not bool(m[0, 2]), (
        "causal_mask(3)[2, 0] should be True (query 2 may see key 0, in its past) and [0, 2] False (the future)")


@test_case(points=2, hidden=True)
def test_values(causal_mask):
    # the largest first: on one or two tokens several mistakes give the same mask
    for n in (7, 5, 2, 1):
        m = oracle.call(causal_mask, n)
        got = oracle.assert_shape(m, (n, n), f"causal_mask({n})")
        kind = oracle.causal_mask_kind(m, n)
        if kind:
            raise AssertionError(f"causal_mask({n}) looks like {kind[0]}: {kind[1]}")
        assert np.asarray(m).dtype == np.bool_, f"causal_mask({n}) should be a boolean array, got {np.asarray(m).dtype}"
        oracle.assert_close(got, oracle.causal_mask(n), f"causal_mask({n})", partial(oracle.causal_mask_variants, n))
