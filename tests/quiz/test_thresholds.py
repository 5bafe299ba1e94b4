"""Questions about classes of answers the third audit (issue 37) found misjudged: an answer equal to
the key up to some magnitude and different beyond it, and exact numbers of any length. Each class is
asked with answers of our own; every expectation is derived by hand in the comment beside it."""

import pytest
import sympy as sp

from attnlab.quiz.check import check
from attnlab.quiz.parse import Namespace, Unreadable, parse

R, W, MANUAL = "right", "wrong", "manual"
KEYS = {
    "pe-dim1": "cos(pos)",
    "wavelength": "2*pi*10000^(2*i/d_model)",
    "rope-relative": "(q1*k1 + q2*k2)*cos((n - m)*theta) + (q2*k1 - q1*k2)*sin((n - m)*theta)",
    "rel-rotation": "s*cos(k*w) + c*sin(k*w)",
}


def _ramp(x: str, at: str) -> str:
    """x - a + |x - a|: 0 for x <= a, 2 (x - a) > 0 beyond."""
    return f"({x} - {at} + sqrt(({x} - {at})^2))"


@pytest.mark.parametrize("at", ["10^4", "10^8", "10^30", "123456.5"])
@pytest.mark.parametrize(
    ("item_id", "x"),
    [
        ("pe-dim1", "pos"),  # pos any real >= 0: pos = 2a adds 2a
        ("wavelength", "i"),  # i any integer >= 0
        ("wavelength", "d_model"),  # d_model any even integer > 0
        ("rope-relative", "m"),
        ("rope-relative", "q1"),
        ("rel-rotation", "w"),  # w > 0
        ("rel-rotation", "k"),
    ],
)
def test_an_answer_that_differs_only_beyond_a_threshold_is_wrong(items, item_id, x, at):
    """Is key + (x - a + sqrt((x - a)^2)) wrong however large a is (it adds 2 (x - a) for x > a)?"""
    assert check(items[item_id], f"{KEYS[item_id]} + {_ramp(x, at)}").status == W


@pytest.mark.parametrize(
    ("item_id", "extra"),
    [
        ("rope-relative", "(q1 + 10^4 - sqrt((q1 + 10^4)^2))"),  # 2 (q1 + 10^4) < 0 for q1 < -10^4
        ("pe-dim1", "log((10^4 - pos)^2) - 2*log(10^4 - pos)"),  # -2 pi i for pos > 10^4
        ("pe-dim1", "sqrt((10^4 - pos)^3) - (10^4 - pos)*sqrt(10^4 - pos)"),  # 2 i |t|^(3/2), t = 10^4 - pos < 0
        ("wavelength", f"{_ramp('i', '10^4')}*{_ramp('d_model', '10^4')}"),  # both beyond 10^4 at once
        ("wavelength", _ramp("i + d_model", "10^4")),  # a threshold on a sum of symbols
        ("rel-rotation", _ramp("k*w", "10^4")),  # on a product
    ],
)
def test_other_thresholds_are_wrong(items, item_id, extra):
    """Is an extra term that is 0 only on one side of a threshold (below, at a branch point, in two
    symbols) found, so the answer is wrong?"""
    assert check(items[item_id], f"{KEYS[item_id]} + {extra}").status == W


@pytest.mark.parametrize(
    ("item_id", "extra"),
    [
        # (x - a + |x - a|)(x - a - |x - a|) = (x - a)^2 - |x - a|^2 = 0 everywhere
        ("rel-rotation", f"{_ramp('k', '10^4')}*(k - 10^4 - sqrt((k - 10^4)^2))"),
        ("rel-rotation", f"{_ramp('k*w', '10^4')}*(k*w - 10^4 - sqrt((k*w - 10^4)^2))"),
        # sin^2 + cos^2 - 1 = 0 on both sides of the threshold
        ("pe-dim1", f"{_ramp('pos', '10^4')}*(sin(pos)^2 + cos(pos)^2 - 1)"),
    ],
)
def test_a_term_zero_on_every_side_of_a_threshold_leaves_the_answer_right(items, item_id, extra):
    """Is an extra term built from |x - a| that is 0 on both sides still right?"""
    assert check(items[item_id], f"{KEYS[item_id]} + {extra}").status == R


def test_a_threshold_beyond_every_value_the_key_has_is_never_right(items):
    """log(pos + 1) - 100 changes sign at pos = e^100 - 1, where cos(pos) is beyond evaluation:
    the added 2 (log(pos + 1) - 100) > 0 there makes it wrong; the checker may not call it right."""
    answer = f"cos(pos) + {_ramp('log(pos + 1)', '100')}"
    assert check(items["pe-dim1"], answer).status in (W, MANUAL)


NS = Namespace(scalars={"x": sp.Symbol("x")})


@pytest.mark.parametrize(
    ("text", "exact"),
    [
        ("1e-500", sp.Rational(1, 10**500)),
        ("2.5e-1000", sp.Rational(25, 10**1001)),
        ("1E+700", sp.Integer(10**700)),
        ("1000000000000000000000000000001", sp.Integer(10**30 + 1)),
        ("9" * 200, sp.Integer(10**200 - 1)),
    ],
)
def test_numbers_of_any_length_are_read_exactly(text, exact):
    """Is a decimal of any exponent, and an integer of any length, read as the exact number it is?"""
    assert parse(text, NS) == exact


def test_a_number_longer_than_the_bound_is_refused_with_a_reason():
    """Is 1e-6000 (as 10**-6000) refused, saying it is too long, rather than read as 0?"""
    for text in ("1e-6000", "10**-6000"):
        with pytest.raises(Unreadable, match="large|digits"):
            parse(text, NS)


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        ("1e-500 - 10**-500", R),  # exactly 0
        ("1e-500", W),  # a nonzero offset, however small
        ("10^30 - 1000000000000000000000000000001", W),  # -1
        ("10^40 - 10000000000000000000000000000000000000000", R),  # 0
    ],
)
def test_exact_numbers_in_a_symbolic_answer_are_compared_exactly(items, extra, expected):
    """Are long integers and tiny decimals read and compared as the exact numbers they are?"""
    assert check(items["wavelength"], f"{KEYS['wavelength']} + {extra}").status == expected
