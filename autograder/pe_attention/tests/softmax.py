OK_FORMAT = False

from functools import partial

import numpy as np
from otter.test_files import test_case

import attnlab_oracle as oracle



def _got(a):
    """The submission's own values, rounded (never the expected ones): what the message shows."""
    return str(np.round(np.asarray(a, dtype=np.float64), 3).tolist())
name = "softmax"
reference = oracle.softmax  # lent to the callers of softmax when the student's own fails


@test_case(points=1, hidden=False)
def test_shape_and_examples(softmax):
    w = softmax(np.zeros((2, 3)))
    assert isinstance(w, np.ndarray), f"softmax should return a numpy array, got {type(w).__name__}"
    assert w.shape == (2, 3), f"softmax of a (2, 3) array has shape {w.shape}"
    assert w.dtype == np.float64, f"softmax should return float64, got {w.dtype}"
    assert np.allclose(w, 1 / 3), "equal scores must get equal weights: softmax(zeros((2, 3))) is 1/3 everywhere"
    got = np.asarray(softmax(np.array([[0.0, np.log(3.0)], [5.0, -np.inf]])))
    assert np.allclose(got, [[0.25, 0.75], [1.0, 0.0]]), (
        "softmax of the rows [0, log 3] and [5, -inf] should be [0.25, 0.75] and [1, 0]: each row sums to 1 and "
        f"-inf gets 0; got {_got(got)}")
    got = np.asarray(softmax(np.array([[1000.0, 1000.0 + np.log(3.0)], [0.0, np.log(3.0)]])))
    # only the row at 1000 can overflow: nan in the other one is 0 / 0 from exps that underflowed
    overflowed = got.ndim == 2 and not np.isfinite(got[0]).all()
    assert np.allclose(got, [[0.25, 0.75], [0.25, 0.75]]), (
        "softmax of the rows [1000, 1000 + log 3] and [0, log 3] should be [0.25, 0.75] twice; "
        f"got {_got(got)}" + (": exp(1000) overflows, and softmax(x) = softmax(x - c) for any c per row, so "
                              "subtracting each row's own maximum keeps every exp in range" if overflowed else ""))
    # not symmetric: a softmax along the rows gives other weights here than one down the columns
    got = np.asarray(softmax(np.array([[0.0, np.log(3.0)], [np.log(3.0), np.log(3.0)]]), axis=0))
    # what axis=0 means is said only to a result whose columns do not sum to 1
    columns = got.shape == (2, 2) and np.allclose(got.sum(axis=0), 1.0)
    assert np.allclose(got, [[0.25, 0.5], [0.75, 0.5]]), (
        "softmax of the rows [0, log 3] and [log 3, log 3] with axis=0 should give rows [0.25, 0.5] and "
        f"[0.75, 0.5]; got {_got(got)}" + ("" if columns else ": with axis=0 each column sums to 1"))


@test_case(points=1, hidden=True)
def test_values_and_axis(softmax):
    rng = np.random.default_rng(10)
    x = rng.normal(scale=2.0, size=(3, 4))
    t = rng.normal(size=(2, 3, 4))
    oracle.assert_close(oracle.call(softmax, x), oracle.softmax(x), "softmax of a (3, 4) array (default axis=-1)",
                        partial(oracle.softmax_variants, x), sums_to_one=-1)
    for axis in (0, 1, -1):
        oracle.assert_close(oracle.call(softmax, t, axis=axis), oracle.softmax(t, axis),
                            f"softmax of a (2, 3, 4) array with axis={axis}", partial(oracle.softmax_variants, t, axis),
                            sums_to_one=axis)
    x = np.array([[0.5, -np.inf, 1.5], [-np.inf, 2.0, -np.inf]])
    oracle.assert_close(oracle.call(softmax, x), oracle.softmax(x),
                        "softmax of rows holding -inf (which must get weight 0)", partial(oracle.softmax_variants, x), sums_to_one=-1)
    # a row that is all -inf has nothing to attend to: 0s there (the reference) or nan, as the notebook
    # leaves it; an error is let pass too. Any weight on a -inf entry is neither, and a caller that
    # masks a whole row (attention) would hand it on
    x = np.array([[-np.inf, -np.inf, -np.inf], [0.0, np.log(3.0), -np.inf]])
    try:
        got = oracle.call(softmax, x)
    except AssertionError:  # the student's code raised (the engine's own errors are not AssertionErrors)
        got = None
    if isinstance(got, np.ndarray) and got.shape == (2, 3) and got.dtype.kind == "f":
        assert np.all((got[0] == 0.0) | np.isnan(got[0])), (
            "softmax of the rows [-inf, -inf, -inf] and [0, log 3, -inf]: every entry of the first row is -inf, "
            f"so each must get weight 0 (or nan, for a row with nothing to attend to); got {_got(got[0])} there")


@test_case(points=1, hidden=True)
def test_large_scores(softmax):
    x = np.array([[1000.0, 1001.0, 999.0, 1002.5], [1001.5, 998.0, 1000.0, 999.5]])
    oracle.assert_close(oracle.call(softmax, x), oracle.softmax(x), "softmax of scores near 1000",
                        partial(oracle.softmax_variants, x), sums_to_one=-1)


@test_case(points=1, hidden=True)
def test_row_maximum(softmax):
    x = np.array([[9000.0, 8999.0, 8997.0], [1.0, 3.0, 2.0], [-5000.0, -5002.0, -4999.0]])
    oracle.assert_close(oracle.call(softmax, x), oracle.softmax(x), "softmax of rows whose maxima are 9000, 3 and -4999",
                        partial(oracle.softmax_variants, x), sums_to_one=-1)
    # the promise is inputs of size 1e4 anywhere, so also rows that span the whole range: only the
    # row's own maximum keeps every exp in range (not its mean, minimum or first entry)
    x = np.array([[1e4, -1e4, 0.0, 5e3], [-1e4, 0.0, 1e4, -5e3], [0.0, -1e4, 3.0, 1e4]])
    oracle.assert_close(oracle.call(softmax, x), oracle.softmax(x), "softmax of rows spanning -1e4 to 1e4",
                        partial(oracle.softmax_variants, x), sums_to_one=-1)


@test_case(points=1, hidden=True)
def test_input_unchanged(softmax):
    x = np.random.default_rng(11).normal(size=(3, 5))
    oracle.assert_unchanged(softmax, x)
    oracle.assert_unchanged(softmax, x, axis=0)
    # where an implementation might patch its input: the -inf entries
    oracle.assert_unchanged(softmax, np.array([[0.5, -np.inf, 1.5], [-np.inf, 2.0, 0.0]]))


@test_case(points=1, hidden=True)
def test_integer_input(softmax):
    x = np.array([[1, 2, 3], [3, 1, 0]])
    expected = oracle.softmax(x)
    oracle.assert_close(oracle.call(softmax, x), expected, "softmax of a (2, 3) integer array "
                        "(weights are fractions: convert to float before filling an output array)",
                        lambda: oracle.softmax_variants(x) + [
                            ("an integer output array", "np.empty_like(x) or zeros_like(x) of an integer input "
                             "is an integer array: make the output float64", np.trunc(expected))])
