"""Questions about equivalence (attnlab.quiz.equivalence)."""

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
