"""How the feedback says a wrong array differs from the right one (the oracle's ``describe``): one
question per relation, each asked of a result that has it and of results that must not be told so."""

from __future__ import annotations

import numpy as np
import pytest

from attnlab import paths, testfiles

testfiles.load_dir(paths.tests_dir())  # puts the oracle package on the import path
from attnlab_oracle.describe import difference  # noqa: E402

RIGHT = np.random.default_rng(7).normal(size=(4, 6))
AXES = ("row", "column")


def _weights(shape, seed=8):
    e = np.exp(np.random.default_rng(seed).normal(size=shape))
    return e / e.sum(axis=-1, keepdims=True)


def test_is_the_right_result_transposed_said_so():
    assert difference(RIGHT.T, RIGHT, axes=AXES).kind == "transposed"
    square = RIGHT[:, :4]
    assert difference(square.T, square, axes=AXES).kind == "transposed"


def test_are_axes_in_another_order_said_so():
    right = np.random.default_rng(1).normal(size=(2, 3, 4))
    relation = difference(right.transpose(1, 0, 2), right)
    assert relation.kind == "axes" and "(1, 0, 2)" in relation.text


@pytest.mark.parametrize(
    ("got", "words"),
    [
        (RIGHT[::-1], "rows in reverse order"),
        (RIGHT[:, ::-1], "columns in reverse order"),
        (np.roll(RIGHT, 2, axis=1), "columns shifted by 2"),
        (RIGHT[:, [1, 0, 3, 2, 5, 4]], "each pair 2i, 2i+1 swapped"),
        (RIGHT[[2, 0, 3, 1]], "row i holds the right row [2, 0, 3, 1][i]"),
    ],
)
def test_is_a_permuted_axis_said_with_its_order(got, words):
    relation = difference(got, RIGHT, axes=AXES)
    assert relation.kind == "permuted" and words in relation.text, relation


def test_are_a_constant_factor_a_sign_and_an_offset_told_apart():
    assert difference(2.5 * RIGHT, RIGHT).text == "is 2.5 times the right result at every entry"
    assert difference(-RIGHT, RIGHT).kind == "sign"
    assert difference(RIGHT + 0.5, RIGHT).kind == "offset"


def test_is_a_result_of_zeros_never_called_a_scaled_copy():
    """0 everywhere is not "0 times the right result" (which hints at a misplaced scale)."""
    for got in (np.zeros_like(RIGHT), 1e-300 * RIGHT):
        said = difference(got, RIGHT)
        assert said.kind != "factor" and "times the right result" not in said.text, said.text


@pytest.mark.parametrize(
    ("part", "words"),
    [
        ((slice(None), slice(1, None, 2)), "right on the even columns and wrong on the odd columns"),
        ((slice(None), slice(0, None, 2)), "right on the odd columns and wrong on the even columns"),
        ((slice(0, 1),), "right on every other row and wrong on the first row"),
        ((slice(-1, None),), "wrong on the last row"),
        ((slice(1, None),), "right on the first row and wrong on every row but the first"),
    ],
)
def test_is_a_result_right_on_one_part_and_wrong_on_another_said_so(part, words):
    got = RIGHT.copy()
    got[part] += np.random.default_rng(2).normal(size=got[part].shape)
    relation = difference(got, RIGHT, axes=AXES)
    assert relation.kind == "region" and words in relation.text, relation


def test_is_a_wrong_triangle_of_square_weights_said_so():
    right = _weights((2, 5, 5))
    got = right.copy()
    upper = np.triu(np.ones((5, 5), dtype=bool), 1)
    got[:, upper] = 0.3
    relation = difference(got, right, axes=("head", "query", "key"))
    assert "wrong on the entries above the diagonal" in relation.text, relation


def test_does_a_region_the_test_names_come_first():
    right = _weights((4, 4))
    blocked = np.array([[False, True, False, True]] * 4)
    got = np.where(blocked, 0.1, right)
    relation = difference(got, right, axes=("query", "key"), regions=[("the blocked entries (mask False)", blocked)])
    assert "wrong on the blocked entries (mask False)" in relation.text, relation


def test_are_weights_normalised_along_the_wrong_axis_said_so():
    right = _weights((4, 5))
    e = right * np.arange(1, 5)[:, None]
    got = e / e.sum(axis=0, keepdims=True)
    relation = difference(got, right, axes=("query", "key"), sums_to_one=-1)
    assert relation.kind == "sums" and "along the query axis instead" in relation.text, relation


def test_are_unnormalised_weights_said_to_be_proportional():
    right = _weights((3, 4))
    got = right * np.array([[2.0], [3.0], [0.5]])
    relation = difference(got, right, axes=("query", "key"), sums_to_one=-1)
    assert "does not sum to 1 along the key axis" in relation.text and "proportional" in relation.text, relation


def test_are_rows_scaled_each_by_their_own_factor_said_so():
    got = RIGHT * np.array([[1.5], [2.0], [0.5], [3.0]])
    relation = difference(got, RIGHT, axes=AXES)
    assert relation.kind == "proportional" and "each row is the right row times a factor" in relation.text


def test_are_heads_scaled_each_by_their_own_factor_said_so_before_the_zeros_they_share():
    """A bias whose every head has the wrong slope is 0 on the diagonal like the right one: the
    factors per head say more than "right on the diagonal"."""
    distance = np.abs(np.subtract.outer(np.arange(4), np.arange(4)))
    right = -(2.0 ** -np.arange(1.0, 4.0))[:, None, None] * distance
    got = right * np.array([1.5, 2.0, 4.0])[:, None, None]
    relation = difference(got, right, axes=("head", "query", "key"))
    assert "each head is the right one times a factor of its own (1.5, 2, 4 for heads 0 to 2)" in relation.text
    # one factor for every head is a constant factor, said as such
    assert difference(2.0 * right, right, axes=("head", "query", "key")).kind == "factor"


def test_are_non_finite_values_located():
    got = RIGHT.copy()
    got[[0, 2]] = np.nan
    relation = difference(got, RIGHT, axes=AXES)
    assert relation.kind == "nonfinite" and "nan at 12 of 24 entries (rows 0, 2)" in relation.text, relation
    got = RIGHT.copy()
    got[:, 0] = np.inf
    assert "(the first column)" in difference(got, RIGHT, axes=AXES).text


@pytest.mark.parametrize(
    ("got", "words"),
    [
        (RIGHT[None], "the right values with an extra axis of length 1 at position 0"),
        (2 * RIGHT[None], ": values with an extra axis of length 1 at position 0"),
        (np.stack([RIGHT, RIGHT, RIGHT]), "repeated along an extra axis 0"),
        (RIGHT.reshape(6, 4), "the right values in the right order, reshaped"),
        (np.zeros((4, 5)), "has shape (4, 5), expected (4, 6)"),
    ],
)
def test_is_a_result_of_another_shape_related_to_the_right_one(got, words):
    assert words in difference(got, RIGHT, axes=AXES).text


def test_is_a_missing_head_axis_said_with_the_head_it_holds():
    right = np.stack([RIGHT, 2 * RIGHT, -RIGHT])
    relation = difference(right[1], right, axes=("head", "row", "column"))
    assert relation.kind == "missing axis" and "only index 1 of the head axis" in relation.text, relation


def test_does_an_unrelated_result_fall_back_to_where_it_differs():
    got = RIGHT + np.random.default_rng(3).normal(size=RIGHT.shape)
    relation = difference(got, RIGHT, axes=AXES)
    assert relation.kind == "" and "is wrong at 24 of 24 entries" in relation.text


def test_is_no_relation_claimed_that_does_not_hold():
    """A symmetric result is not called transposed, nor a result with one wrong entry permuted."""
    symmetric = RIGHT[:, :4] + RIGHT[:, :4].T
    got = symmetric + np.random.default_rng(4).normal(size=symmetric.shape)
    assert difference(got, symmetric).kind not in ("transposed", "permuted", "factor", "offset")
    got = RIGHT.copy()
    got[1, 2] += 1.0
    assert difference(got, RIGHT, axes=AXES).text.startswith("is wrong at 1 of 24 entries")


# ---- errors the submission raises: a plain sentence, and its own line


def test_does_a_numpy_error_get_a_plain_sentence_that_keeps_its_shapes():
    from attnlab_oracle import errors

    try:
        np.ones((2, 3)) + np.ones((4, 5))
    except ValueError as e:
        assert (
            errors.meaning(e) == "two arrays combined entry by entry have shapes that do not fit together: (2,3) (4,5)"
        )
    try:
        np.array([np.ones(2), np.ones(3)])
    except ValueError as e:
        assert "pieces of different shapes" in errors.meaning(e)
    try:
        np.ones((2, 3)) @ np.ones((2, 3))
    except ValueError as e:
        assert "inner sizes differ" in errors.meaning(e)
    assert errors.meaning(KeyError("w_q")) is None


def test_is_the_line_that_raised_found_in_the_submissions_own_file(tmp_path):
    """In the same process (otter, the kit's tests) the line comes from the call's traceback: the
    deepest frame in the file the function was defined in, not numpy's."""
    import importlib.util

    from attnlab_oracle import compare

    path = tmp_path / "submission.py"
    path.write_text(
        "import numpy as np\n\ndef heads():\n    parts = [np.ones(2), np.ones(3)]\n    return np.array(parts)\n"
    )
    spec = importlib.util.spec_from_file_location("submission", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with pytest.raises(AssertionError) as raised:
        compare.call(module.heads)
    assert "It raised at your line 5: return np.array(parts)" in str(raised.value)


def test_are_exact_zeros_on_a_whole_part_said_so():
    """Weights blocked above the diagonal though no mask was asked for: the zeros are the relation."""
    right = _weights((4, 4))
    got = np.tril(right)
    got /= got.sum(axis=-1, keepdims=True)
    relation = difference(got, right, axes=("query", "key"), sums_to_one=-1)
    assert relation.text == "is exactly 0 on the entries above the diagonal, where the right result is not"


def test_is_a_long_axis_still_described_at_its_ends():
    right = np.random.default_rng(5).normal(size=(500, 3))
    got = right.copy()
    got[-1] += 1.0
    assert "wrong on the last row" in difference(got, right, axes=AXES).text


def test_is_float32_blamed_only_when_every_entry_is_a_float32_number():
    """A tiny difference is reported as still counting; float32 is named only on its evidence."""
    got = RIGHT * (1 + 1e-5)
    text = difference(got, RIGHT, axes=AXES).text
    assert "a difference this small still counts" in text and "float32" not in text
    noise = 1 + 1e-5 * np.random.default_rng(6).normal(size=RIGHT.shape)
    got = (RIGHT * noise).astype(np.float32).astype(np.float64)
    assert "every entry is a float32 number" in difference(got, RIGHT, axes=AXES).text


def test_is_a_result_non_finite_everywhere_said_so_in_the_students_terms():
    got = np.full((3, 4), np.nan)
    assert difference(got, _weights((3, 4)), axes=("query", "key")).text == "has nan at every entry"
    got = _weights((3, 4))
    got[[0, 2]] = np.inf
    assert "(queries 0, 2)" in difference(got, _weights((3, 4)), axes=("query", "key")).text


# ---- axes without a name of their own: said by number, in phrases that still read as English


def _wrong_on(part):
    got = RIGHT.copy()
    got[part] += np.random.default_rng(2).normal(size=got[part].shape)
    return got


def _normalised_along_the_other_axis():
    right = _weights((4, 5))
    e = right * np.arange(1, 5)[:, None]
    return e / e.sum(axis=0, keepdims=True), right


def _nan_rows():
    got = RIGHT.copy()
    got[[0, 2]] = np.nan
    return got


@pytest.mark.parametrize(
    ("got", "right", "sums_to_one", "words"),
    [
        (*_normalised_along_the_other_axis(), -1, "does not sum to 1 along axis 1 (sums"),
        (*_normalised_along_the_other_axis(), -1, "it sums to 1 along axis 0 instead"),
        (_wrong_on((slice(None), slice(1, None, 2))), RIGHT, None, "right on the even entries of axis 1 and wrong "),
        (_wrong_on((slice(None), slice(0, None, 2))), RIGHT, None, "wrong on the even entries of axis 1 (0, 2, ...)"),
        (_wrong_on((slice(1, None),)), RIGHT, None, "wrong on every entry of axis 0 but the first"),
        (_wrong_on((slice(1, None),)), RIGHT, None, "right on the first entry of axis 0 and"),
        (_wrong_on((slice(2, 3),)), RIGHT, None, "right on every other entry of axis 0 and wrong on entry 2 of axis 0"),
        (RIGHT[::-1], RIGHT, None, "has the right entries of axis 0 in reverse order"),
        (np.roll(RIGHT, 2, axis=1), RIGHT, None, "shifted by 2: entry i holds the right entry i - 2"),
        (RIGHT[[2, 0, 3, 1]], RIGHT, None, "in another order: entry i holds the right entry [2, 0, 3, 1][i]"),
        (_nan_rows(), RIGHT, None, "nan at 12 of 24 entries (entries 0, 2 of axis 0)"),
        (RIGHT * np.array([[1.5], [2.0], [0.5], [3.0]]), RIGHT, None, "each vector along axis 1 is the right one"),
        (RIGHT, np.stack([2 * RIGHT, RIGHT]), None, "only index 1 of axis 0, with that axis (0) missing"),
    ],
)
def test_does_an_unnamed_axis_read_naturally(got, right, sums_to_one, words):
    text = difference(got, right, sums_to_one=sums_to_one).text
    assert words in text, text
    for garbled in ("axis 0 axis", "axis 1 axis", "the axis", "every axis", "odd axis", "even axis", "axis 0 i "):
        assert garbled not in text, text


def test_do_weights_that_all_sum_to_the_same_wrong_total_say_it_once():
    """Rows of 0 where weights should be read "sums to 0", not "sums from 0 to 0"."""
    right = _weights((3, 4))
    text = difference(np.zeros_like(right), right, axes=("query", "key"), sums_to_one=-1).text
    assert "(sums to 0)" in text and "from 0 to 0" not in text, text
