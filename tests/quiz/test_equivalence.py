"""Questions about equivalence (attnlab.quiz.equivalence)."""

import pytest
import sympy as sp
from hypothesis import given, settings, strategies as st

from attnlab.quiz.domains import make_symbol
from attnlab.quiz.equivalence import compare

i, d = make_symbol("i", "nonneg_int"), make_symbol("d_model", "even_pos_int")
x = make_symbol("x", "real")
DOMAINS = {"i": "nonneg_int", "d_model": "even_pos_int", "x": "real"}
atoms = st.sampled_from([i, d, x, sp.Integer(2), sp.Rational(1, 3), sp.pi])
exprs = st.recursive(
    atoms,
    lambda inner: st.one_of(
        st.tuples(inner, inner).map(lambda t: t[0] + t[1]),
        st.tuples(inner, inner).map(lambda t: t[0] * t[1]),
        inner.map(sp.sin),
        inner.map(sp.cos),
    ),
    max_leaves=6,
)


@settings(max_examples=60, deadline=None)
@given(exprs, exprs)
def test_equality_is_symmetric_and_reflexive(a, b):
    """Is every expression equal to itself, and does the order of comparison not matter?"""
    assert compare(a, a, domains=DOMAINS).equal
    assert compare(a, b, domains=DOMAINS).equal == compare(b, a, domains=DOMAINS).equal


@settings(max_examples=60, deadline=None)
@given(exprs)
def test_adding_one_is_noticed(a):
    """Is `a + 1` never taken for `a`?"""
    assert not compare(a + 1, a, domains=DOMAINS).equal


def test_domains_are_respected():
    """Is (-1)**(2*i) equal to 1 when i is an integer?"""
    assert compare((-1) ** (2 * i), sp.Integer(1), domains=DOMAINS).equal


def test_matrices_compare_by_shape_then_entries():
    """Are a 2x1 and a 2x2 matrix told apart by shape, and entries compared one by one?"""
    assert "2x2" in compare(sp.Matrix([1, 2]), sp.eye(2), domains={}).how
    assert compare(sp.Matrix([[sp.sin(x) ** 2 + sp.cos(x) ** 2]]), sp.Matrix([[1]]), domains=DOMAINS).equal


k, w = make_symbol("k", "int"), make_symbol("w", "positive")
pos = make_symbol("pos", "nonneg")
ROTATION = {"k": "int", "w": "positive", "pos": "nonneg"}


def test_an_answer_with_no_value_where_the_key_has_one_is_wrong():
    """tan(k w) cos(k w) is sin(k w) wherever it has a value, but has none where cos(k w) = 0
    (k = 1, w = pi/2 is allowed): is it wrong, though no sample point lands there?"""
    verdict = compare(sp.tan(k * w) * sp.cos(k * w), sp.sin(k * w), domains=ROTATION)
    assert not verdict.equal and "no value at" in verdict.how


def test_a_division_where_the_key_divides_too_is_right():
    """sin(k w)/cos(k w) has no value exactly where tan(k w) has none: is it right?"""
    assert compare(sp.sin(k * w) / sp.cos(k * w), sp.tan(k * w), domains=ROTATION).equal


def test_a_divisor_that_is_never_0_on_the_domain_costs_nothing():
    """Dividing by cos^2 + sin^2 (never 0), or by pos + 2 (0 only at pos = -2, outside pos >= 0):
    are both still right?"""
    assert compare(sp.sin(pos) / (sp.cos(pos) ** 2 + sp.sin(pos) ** 2), sp.sin(pos), domains=ROTATION).equal
    assert compare((pos * sp.sin(pos) + 2 * sp.sin(pos)) / (pos + 2), sp.sin(pos), domains=ROTATION).equal


def test_a_divisor_that_is_0_inside_the_domain_is_wrong():
    """(pos - 3) sin(pos) / (pos - 3) would be sin(pos) but for pos = 3, where it has no value: is
    it wrong? (written so that sympy does not cancel it on reading)"""
    answer = (pos * sp.sin(pos) - 3 * sp.sin(pos)) / (pos - 3)
    verdict = compare(answer, sp.sin(pos), domains=ROTATION)
    assert not verdict.equal and "pos = 3" in verdict.how


def test_is_the_log_of_a_large_number_the_ordinary_number_it_is():
    """exp's bound on its argument is not log's: is log(10^8) read as the number it is, and
    log(10000^d_model) (a power beyond any sample's size) as d_model*log(10000)?"""
    wavelength = 2 * sp.pi * sp.Integer(10000) ** (2 * i / d)
    assert compare(2 * sp.pi * sp.exp(i * sp.log(sp.Integer(10) ** 8) / d), wavelength, domains=DOMAINS).equal
    assert not compare(2 * sp.pi * sp.exp(i * sp.log(sp.Integer(10) ** 7) / d), wavelength, domains=DOMAINS).equal
    power = sp.log(sp.Integer(10000) ** d)
    assert compare(power / (d * sp.log(10000)), sp.Integer(1), domains=DOMAINS).equal
    assert not compare(power / (d * sp.log(1000)), sp.Integer(1), domains=DOMAINS).equal


# values of each domain where an expression may differ and nowhere near: 0 and the units, and the
# smallest value a domain bounded below has
SPECIAL = {
    "real": (0, 1, -1),
    "positive": (1,),
    "nonneg": (0, 1),
    "int": (0, 1, -1),
    "nonneg_int": (0, 1),
    "even_pos_int": (2,),
}


@pytest.mark.parametrize("domain", sorted(SPECIAL))
def test_does_a_difference_at_one_special_value_of_the_domain_alone_count(domain):
    """``0^((y - v)^2)`` is 1 at y = v and 0 everywhere else: an answer off by it differs from the key at
    one value only. Is that seen at each special value, whatever the random points are?"""
    y = make_symbol("y", domain)
    for v in SPECIAL[domain]:
        for seed in range(3):
            assert not compare(y + sp.Pow(0, (y - v) ** 2), y, domains={"y": domain}, seed=seed).equal, (domain, v)
