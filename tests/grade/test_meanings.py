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
