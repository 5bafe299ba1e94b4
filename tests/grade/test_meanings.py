"""Questions about the plain sentences for a submission's errors (attnlab.grade.meanings)."""

import numpy as np
import pytest

from attnlab.grade.meanings import meaning, public_name
from attnlab.grade.session import student_exception


def _raised(action) -> BaseException:
    with pytest.raises(Exception) as info:
        action()
    return info.value


def test_is_a_store_of_the_wrong_shape_said_with_both_shapes():
    """`pe[:, 0::2] = values` of the wrong width: said as a store, with both shapes, not numpy's words."""
    out = np.zeros((3, 3))
    said = meaning(_raised(lambda: out.__setitem__((slice(None), slice(None)), np.ones((3, 2)))))
    assert said is not None and "(3,2)" in said and "(3,3)" in said and "broadcast" not in said


def test_is_an_in_place_float_update_of_an_integer_array_said_so():
    """`E += floats` on an integer E: said with both dtypes, not numpy's casting rule."""
    E = np.zeros(3, dtype=np.int64)

    def update():
        nonlocal E
        E += np.full(3, 0.5)

    said = meaning(_raised(update))
    assert said is not None and "float64" in said and "int64" in said and "same_kind" not in said


def test_is_an_error_named_by_a_class_a_student_can_look_up():
    """numpy's private classes and the engine's stand-in are shown by the nearest public base; a
    student's own class keeps its name."""
    E = np.zeros(3, dtype=np.int64)
    assert not public_name(_raised(lambda: np.add(E, 0.5, out=E))).startswith("_")
    crossed = student_exception("_UFuncOutputCastingError", "TypeError", "cannot cast")
    assert public_name(crossed) == "TypeError"
    assert public_name(student_exception("NotMyFault", "Exception", "no")) == "NotMyFault"


def test_is_a_mask_of_the_wrong_size_said_with_both_sizes():
    """`scores[~mask] = -inf` with an (n, m) mask on a (b, n, m) array: the mask's size and the
    array's, not numpy's words about a boolean axis."""
    said = meaning(_raised(lambda: np.zeros((2, 3, 5))[np.ones((3, 5), dtype=bool)]))
    assert said is not None and "3" in said and "2" in said and "corresponding boolean axis" not in said


def test_is_an_einsum_given_too_many_axes_said_plainly():
    """`np.einsum("nd,md->nm", Q, K)` on batched Q and K: says the array has more axes than the
    subscripts name, not numpy's 'ellipsis provided to broadcast'."""
    said = meaning(_raised(lambda: np.einsum("nd,md->nm", np.ones((2, 3, 4)), np.ones((2, 5, 4)))))
    assert said is not None and "axes" in said and "ellipsis provided" not in said


def test_is_len_of_a_single_number_said_plainly():
    """`len(np.array(3.0))`: a number has no length, said without numpy's 'unsized object'."""
    said = meaning(_raised(lambda: len(np.array(3.0))))
    assert said is not None and "number" in said and "unsized" not in said
