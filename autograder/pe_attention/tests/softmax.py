OK_FORMAT = False

import numpy as np
from otter.test_files import test_case

import attnlab_oracle as oracle

name = "softmax"


@test_case(points=1, hidden=False)
def test_shape_and_uniform(softmax):
    w = softmax(np.zeros((2, 3)))
    assert isinstance(w, np.ndarray), f"softmax should return a numpy array, got {type(w).__name__}"
    assert w.shape == (2, 3), f"softmax of a (2, 3) array has shape {w.shape}"
    assert w.dtype == np.float64, f"softmax should return float64, got {w.dtype}"
    assert np.allclose(w, 1 / 3), "equal scores must get equal weights: softmax(zeros((2, 3))) is 1/3 everywhere"


@test_case(points=1, hidden=True)
def test_values_and_axis(softmax):
    rng = np.random.default_rng(10)
    x = rng.normal(scale=2.0, size=(3, 4))
    oracle.assert_close(softmax(x), oracle.softmax(x), "softmax of a (3, 4) array (default axis=-1)",
                        oracle.softmax_variants(x))
    t = rng.normal(size=(2, 3, 4))
    for axis in (0, 1, -1):
        oracle.assert_close(softmax(t, axis=axis), oracle.softmax(t, axis),
                            f"softmax of a (2, 3, 4) array with axis={axis}", oracle.softmax_variants(t, axis))
    x = np.array([[0.5, -np.inf, 1.5], [-np.inf, 2.0, -np.inf]])
    oracle.assert_close(softmax(x), oracle.softmax(x), "softmax of rows holding -inf (which must get weight 0)")


@test_case(points=1, hidden=True)
def test_large_scores(softmax):
    x = np.array([[1000.0, 1001.0, 999.0, 1002.5], [1001.5, 998.0, 1000.0, 999.5]])
    got = oracle.as_array(softmax(x), "softmax of scores near 1000")
    if not np.all(np.isfinite(got)):
        raise AssertionError("softmax of scores near 1000 gives nan or inf: looks like no "
                             "max-subtraction: exp(1000) overflows; subtract each row's maximum before exp")
    oracle.assert_close(got, oracle.softmax(x), "softmax of scores near 1000")


@test_case(points=1, hidden=True)
def test_row_maximum(softmax):
    x = np.array([[9000.0, 8999.0, 8997.0], [1.0, 3.0, 2.0], [-5000.0, -5002.0, -4999.0]])
    got = oracle.as_array(softmax(x), "softmax of rows whose maxima are 9000, 3 and -4999")
    bad = [i for i in range(3) if not np.all(np.isfinite(got[i]))]
    if bad and 0 not in bad:
        raise AssertionError("softmax of rows whose maxima are 9000, 3 and -4999 gives nan in the rows with "
                             "the smaller maxima: looks like a global instead of a row maximum: subtracting "
                             "the largest entry of the whole array underflows every exp of the other rows")
    if bad:
        raise AssertionError("softmax of rows whose maxima are 9000, 3 and -4999 gives nan or inf: "
                             "subtract each row's own maximum before exp")
    oracle.assert_close(got, oracle.softmax(x), "softmax of rows whose maxima are 9000, 3 and -4999")


@test_case(points=1, hidden=True)
def test_input_unchanged(softmax):
    x = np.random.default_rng(11).normal(size=(3, 5))
    before = x.copy()
    softmax(x)
    softmax(x, axis=0)
    assert np.array_equal(x, before), "softmax changed its input array: compute into a new array"


@test_case(points=1, hidden=True)
def test_integer_input(softmax):
    x = np.array([[1, 2, 3], [3, 1, 0]])
    got = oracle.as_array(softmax(x), "softmax of an integer array")
    oracle.assert_close(got, oracle.softmax(x), "softmax of a (2, 3) integer array "
                        "(weights are fractions: convert to float before filling an output array)",
                        [("an integer output array", "np.empty_like(x) or zeros_like(x) of an integer input "
                          "is an integer array: make the output float64",
                          np.trunc(oracle.softmax(x)))])
