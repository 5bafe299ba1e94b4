"""Is a cause named only on evidence from the student's own results? A known mistake that coincides
with one case but not another, a result that depends on earlier calls, a hint drawn from the test's
shapes, a normalisation the result does not show, a checker that changes its input: none of these
may be told a cause it did not have."""

from __future__ import annotations

import re

import numpy as np
import pytest

from attnlab import paths, testfiles
from in_process import grade_env

testfiles.load_dir(paths.tests_dir())  # puts the oracle package on the import path
import attnlab_oracle as oracle  # noqa: E402
from attnlab_oracle import mistakes  # noqa: E402


def _failure(check):
    with pytest.raises(AssertionError) as raised:
        check()
    return str(raised.value)


# ---- A: a known mistake is named only when it explains every failing case checked against it


def _doubling(n):
    """A student's function, wrong everywhere: twice the ramp plus one at n = 3, a squared ramp
    elsewhere (a result that matches a known mistake on one input only)."""
    return 2.0 * np.arange(n) + 1.0 if n == 3 else np.arange(n) ** 2.0


def _variants(n):
    # "a ramp plus one" is what the student's function returns at n = 3, and at n = 3 only
    return [("a ramp plus one", "count from 0", 2.0 * np.arange(n) + 1.0)]


def _ramp_case(fn, n):
    """The message of the case ramp(n) for the student's ``fn``, checked against ``_variants``."""
    return _failure(lambda: oracle.assert_close(oracle.call(fn, n), np.arange(float(n)), f"ramp({n})", _variants(n)))


def test_is_a_variant_matching_one_case_but_not_an_earlier_one_not_named():
    fn = lambda n: _doubling(n)  # noqa: E731 - a fresh function object: a fresh submission
    fn.__name__ = "ramp"
    first = _ramp_case(fn, 5)
    assert "looks like" not in first
    second = _ramp_case(fn, 3)
    assert "looks like" not in second and "a ramp plus one" not in second, second


def test_is_a_variant_matching_every_failing_case_still_named():
    fn = lambda n: 2.0 * np.arange(n) + 1.0  # noqa: E731
    fn.__name__ = "ramp"
    for n in (5, 3):
        text = _ramp_case(fn, n)
        assert "looks like a ramp plus one:" in text, text


def test_does_a_variant_refuted_for_one_submission_stay_nameable_for_the_next():
    for _ in range(2):
        fn = lambda n: _doubling(n)  # noqa: E731
        fn.__name__ = "ramp"
        text = _ramp_case(fn, 3)
        assert "looks like a ramp plus one:" in text, text


def test_is_a_variant_ruled_out_by_the_other_half_of_a_pair_not_named_later():
    """A variant passed as None (its other result did not match) was checked against that case."""
    fn = lambda n: _doubling(n)  # noqa: E731
    fn.__name__ = "ramp"
    oracle.call(fn, 5)
    first = _failure(
        lambda: oracle.assert_close(fn(5), np.arange(5.0), "ramp(5)", [("a ramp plus one", "count from 0", None)])
    )
    assert "looks like" not in first
    assert "looks like" not in _ramp_case(fn, 3)


# ---- B: a result that depends on earlier calls is said so, with the calls that could matter


def _cached_table():
    table = {}

    def add_table(E, base=10000.0):
        key = (E.shape, base)
        if key not in table:
            table[key] = np.full(E.shape, base / 1000.0)
        out = table[key]
        out += E  # the cached table itself: every call with this key adds E once more
        return out

    return add_table


def test_is_a_result_that_changes_with_call_history_said_so_before_any_formula():
    fn = _cached_table()
    E = np.ones((3, 2))
    right = lambda b: E + b / 1000.0  # noqa: E731
    oracle.call(fn, E, base=50.0)  # an earlier test's call, in the same process
    # the third call returns table + 2E, which "E doubled" would also give on this input
    text = _failure(
        lambda: oracle.assert_close_in_turn(
            fn,
            [((E,), {"base": b}, right(b), [("E doubled", "add E once", 2 * E + b / 1000.0)]) for b in (10.0, 50.0)],
        )
    )
    assert "looks like" not in text and "depends on the calls made before it" in text, text
    # every earlier call of those shapes is listed, the one that filled the cache among them
    assert text.count("add_table(E (3, 2), base=50.0)") == 2 and "base=10.0" in text, text


def test_is_a_result_kept_from_an_earlier_call_still_named_as_such():
    kept = {}

    def table(n, base=1.0):
        kept.setdefault(n, np.full(n, base))
        return kept[n]

    text = _failure(
        lambda: oracle.assert_close_in_turn(table, [((3,), {"base": b}, np.full(3, b), []) for b in (1.0, 2.0)])
    )
    assert f"looks like {oracle.STALE_LABEL}:" in text, text


def test_is_a_wrong_result_that_history_does_not_change_shown_without_the_earlier_calls():
    def table(n, base=1.0):
        return np.full(n, 2 * base)  # wrong, but the same whatever was called before

    oracle.call(table, 3, base=7.0)  # an earlier call of the same shape, in the same process
    text = _failure(lambda: oracle.assert_close_in_turn(table, [((3,), {"base": 1.0}, np.full(3, 1.0), [])]))
    assert "called after" not in text and "base=7.0" not in text, text


# ---- B2: a public test explains a convention only when the result shows it was broken


def _public_message(test_files, question, fn):
    (case,) = [c for tf in test_files if tf.name == question for c in tf.cases if not c.hidden]
    return _failure(lambda: testfiles.call_case(case, {question: fn}))


def _softmax(shift):
    def softmax(x, axis=-1):
        e = np.exp(x - shift(x, axis))
        return e / e.sum(axis=axis, keepdims=True)

    return softmax


def test_is_overflow_mentioned_only_when_the_softmax_overflowed(test_files):
    with np.errstate(all="ignore"):  # one maximum for the whole array: the second row underflows, 0 / 0
        global_max = _public_message(test_files, "softmax", _softmax(lambda x, axis: np.max(x)))
        no_max = _public_message(test_files, "softmax", _softmax(lambda x, axis: 0.0))
    assert "overflow" not in global_max, global_max
    assert "overflows" in no_max, no_max


def test_is_what_axis_0_means_said_only_when_the_columns_do_not_sum_to_1(test_files):
    right = _softmax(lambda x, axis: x.max(axis=axis, keepdims=True))

    def column_sums_off(x, axis=-1):  # columns that sum to 1, but not the right weights
        return np.array([[0.5, 0.25], [0.5, 0.75]]) if axis == 0 else right(x, axis)

    last_axis = _public_message(test_files, "softmax", lambda x, axis=-1: right(x, -1))
    assert "with axis=0 each column sums to 1" in last_axis, last_axis
    text = _public_message(test_files, "softmax", column_sums_off)
    assert "each column sums to 1" not in text and "[[0.5, 0.25], [0.5, 0.75]]" in text, text


def _sdpa(mask_of):
    def scaled_dot_product_attention(Q, K, V, mask=None):
        s = Q @ K.T / np.sqrt(K.shape[1])
        if mask is not None:
            s = mask_of(s, np.asarray(mask))
        w = np.exp(s - s.max(axis=-1, keepdims=True))
        w = w / w.sum(axis=-1, keepdims=True)
        return w @ V, w

    return scaled_dot_product_attention


@pytest.mark.parametrize(
    ("mask_of", "told"),
    [
        (lambda s, m: s * m, ()),
        (lambda s, m: np.where(m, -1e9, s), ("True means may attend",)),
        (lambda s, m: np.where(m.T, s, -1e9), ("mask[i, j] is query i, key j",)),
    ],
)
def test_is_the_masks_meaning_explained_only_when_the_weights_read_it_otherwise(test_files, mask_of, told):
    text = _public_message(test_files, "scaled_dot_product_attention", _sdpa(mask_of))
    for words in ("True means may attend", "mask[i, j] is query i, key j"):
        assert (words in text) == (words in told), text


def _alibi(slope, distance):
    def alibi_bias(n, num_heads):
        i, j = np.indices((n, n))
        m = np.array([slope(h, num_heads) for h in range(num_heads)])
        return -m[:, None, None] * distance(i, j)[None]

    return alibi_bias


def test_is_the_slope_formula_explained_only_when_the_slopes_are_wrong(test_files):
    right = lambda h, H: 2.0 ** (-8.0 * (h + 1) / H)  # noqa: E731
    signed = _public_message(test_files, "alibi_bias", _alibi(right, lambda i, j: i - j))
    assert "m_h =" not in signed and "opposite sign" in signed, signed
    from_zero = _public_message(test_files, "alibi_bias", _alibi(lambda h, H: 2.0 ** (-8.0 * h / H), np.subtract))
    assert "m_h = 2**(-8 (h+1) / num_heads)" in from_zero, from_zero


# ---- C: no hint from the test's shapes alone


def test_is_an_error_in_the_output_projection_not_pointed_at_the_value_slice(test_files, reference_env):
    """W_V wider than W_Q, and the student's W_O rows sliced with the query head width: the line that
    raised speaks; nothing sends the student to the W_V columns, which are right."""
    mha_ref = reference_env["multi_head_attention"]
    sdpa = reference_env["scaled_dot_product_attention"]

    def multi_head_attention(X, W_Q, W_K, W_V, W_O, num_heads, mask=None):
        d_h, d_v = W_Q.shape[1] // num_heads, W_V.shape[1] // num_heads
        out = 0.0
        for h in range(num_heads):
            q, k = X @ W_Q[:, h * d_h : (h + 1) * d_h], X @ W_K[:, h * d_h : (h + 1) * d_h]
            z, _ = sdpa(q, k, X @ W_V[:, h * d_v : (h + 1) * d_v], mask=mask)
            out = out + z @ W_O[h * d_h : (h + 1) * d_h]
        return out

    assert mha_ref is not multi_head_attention
    tf = [t for t in test_files if t.name == "multi_head_attention"]
    score, possible, failures = grade_env({**reference_env, "multi_head_attention": multi_head_attention}, tf)[
        "multi_head_attention"
    ]
    assert score < possible
    assert not any("W_V columns" in f for f in failures), failures


# ---- D: a normalisation is named only when the result shows it


def _softmax_global_max(x, axis=-1):
    x = np.asarray(x, dtype=np.float64)
    e = np.exp(x - np.max(x))
    total = e.sum(axis=axis, keepdims=True)
    total[total == 0] = 1.0
    return e / total


# the known softmax mistakes whose names say the slices are not normalised one by one
UNNORMALISED = [
    "softmax over the whole array",
    "a sum over every entry",
    "a division by the maximum instead of the sum",
]


@pytest.mark.parametrize("name", UNNORMALISED)
def test_is_a_softmax_that_normalises_each_row_never_said_to_normalise_otherwise(name):
    x = np.array([[9000.0, 8999.0, 8997.0], [1.0, 3.0, 2.0], [-5000.0, -5002.0, -4999.0]])
    got = oracle.call(_softmax_global_max, x)
    text = _failure(
        lambda: oracle.assert_close(got, oracle.softmax(x), "softmax", oracle.softmax_variants(x), sums_to_one=-1)
    )
    assert name not in text and "normalised differently" not in text, text


def test_does_every_softmax_mistake_that_claims_other_normalisation_check_it():
    claims = [m.name for m in mistakes.FAMILIES["softmax"][1] if m.claims == mistakes.UNNORMALISED]
    assert sorted(claims) == sorted(UNNORMALISED)


def test_is_a_softmax_over_the_whole_array_still_named():
    x = np.array([[1.0, 2.0, 0.5], [0.3, -1.0, 2.0]])
    e = np.exp(x - x.max())
    text = _failure(
        lambda: oracle.assert_close(
            e / e.sum(), oracle.softmax(x), "softmax", oracle.softmax_variants(x), sums_to_one=-1
        )
    )
    assert "softmax over the whole array" in text, text


# ---- E: a checker that changes the caller's X in place is told so


@pytest.mark.parametrize("kind", ["equivariant", "invariant"])
def test_is_a_checker_that_permutes_x_in_place_told_it_changed_its_input(kind, test_files, reference_env):
    reference = reference_env[f"is_permutation_{kind}"]

    def checker(f, X, perms=None, atol=1e-8):
        X = np.asarray(X)
        fX = np.asarray(f(X.copy()))
        for p in perms if perms is not None else [tuple(np.roll(np.arange(len(X)), 1))]:
            X[:] = X[list(p)]  # the caller's X, reordered in place: the permutations compound
            want = fX if kind == "invariant" else fX[list(p)]
            out = np.asarray(f(X))
            if out.shape != want.shape or not np.allclose(out, want, atol=atol):
                return False
        return True

    checker.__name__ = f"is_permutation_{kind}"
    assert reference is not checker
    tf = [t for t in test_files if t.name == f"is_permutation_{kind}"]
    _, _, failures = grade_env({**reference_env, f"is_permutation_{kind}": checker}, tf)[f"is_permutation_{kind}"]
    # a wrong answer given while it reordered the caller's X says so, as any function that changes
    # its input is told (not only the case that checks inputs after a right answer)
    assert any(
        re.search(r"returned (True|False), expected (True|False), and changed its input X in place", f)
        for f in failures
    ), failures


def test_is_an_error_raised_on_every_input_not_blamed_on_one_inputs_special_case():
    """A function that raises the same error on an even width and on an odd one is not told that an
    odd width is not handled: the odd width is not what makes it raise."""

    def table(n, d):
        return np.ones((n, d)) + np.ones((n, d + 1))  # broadcasting fails at every width

    odd = {ValueError: ("an odd d_model not handled", "an odd d_model works")}
    first = _failure(lambda: oracle.call(table, 4, 6))
    assert "raised ValueError" in first
    second = _failure(lambda: oracle.call_refused(odd, table, 4, 7))
    assert "odd d_model not handled" not in second and "raised ValueError" in second, second


# ---- D: a known mistake is named only when the student's function gives its results on other inputs too


def alibi_bias(n, num_heads):
    """Slopes 2**(-(8 // num_heads) (h+1)): on 3 heads what "divided by num_heads + 1" gives, on 5 or 6 not."""
    h = np.arange(num_heads)
    distance = np.abs(np.subtract.outer(np.arange(n), np.arange(n)))
    return -(2.0 ** (-(8 // num_heads) * (h + 1.0)))[:, None, None] * distance[None]


def test_is_a_mistake_that_agrees_on_the_tested_head_count_only_left_unnamed(test_files, reference_env):
    tf = [t for t in test_files if t.name == "alibi_bias"]
    _, _, failures = grade_env({**reference_env, "alibi_bias": alibi_bias}, tf)["alibi_bias"]
    assert failures and not any("looks like" in f for f in failures), failures


def test_is_a_mistake_that_agrees_on_the_failing_case_but_not_elsewhere_left_unnamed():
    """The same rule for any family: the version of "slopes divided by num_heads + 1" matches the
    student's result on alibi_bias(4, 3), and the student's function is asked on other head counts
    before the name is given."""
    fn = lambda n, num_heads: alibi_bias(n, num_heads)  # noqa: E731 - a fresh submission
    fn.__name__ = "alibi_bias"
    text = _failure(
        lambda: oracle.assert_close(
            oracle.call(fn, 4, 3), oracle.alibi_bias(4, 3), "alibi_bias(4, 3)", oracle.alibi_variants(4, 3)
        )
    )
    assert "num_heads + 1" not in text and "looks like" not in text, text


def test_is_a_mistake_that_holds_on_every_other_input_still_named():
    build, mistake = mistakes.mistake_of("alibi_bias", "slopes divided by num_heads + 1")
    fn = lambda n, num_heads: build(n, num_heads, **mistake.knobs)  # noqa: E731
    fn.__name__ = "alibi_bias"
    text = _failure(
        lambda: oracle.assert_close(
            oracle.call(fn, 4, 3), oracle.alibi_bias(4, 3), "alibi_bias(4, 3)", oracle.alibi_variants(4, 3)
        )
    )
    assert "looks like slopes divided by num_heads + 1:" in text, text


@pytest.mark.parametrize("name", sorted(mistakes.FAMILIES))
def test_does_every_family_have_other_inputs_its_right_version_accepts(name):
    build, _ = mistakes.FAMILIES[name]
    inputs = mistakes.ELSEWHERE[name]()
    assert len(inputs) >= 3
    for args, kwargs in inputs:
        build(*args, **kwargs)


def test_is_a_wrong_result_in_an_integer_array_said_to_be_one():
    """np.empty_like of an integer E holds E + PE truncated: the dtype is the fact to say."""
    E = np.arange(12).reshape(3, 4)
    right = E + oracle.pe(3, 4)
    text = _failure(lambda: oracle.assert_close(right.astype(E.dtype), right, "add_positional_encoding"))
    assert "int64 array, where float64 is promised" in text, text
    # a float result that is wrong says nothing of the dtype
    assert "promised" not in _failure(lambda: oracle.assert_close(right + 1.0, right, "add_positional_encoding"))
