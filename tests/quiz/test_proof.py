"""Questions about proof steps (attnlab.quiz.proof)."""

import pytest

from attnlab.quiz import proof
from attnlab.quiz.parse import Unreadable, parse


def p(text):
    return parse(text, proof.namespace())


def test_definitions_are_used_by_the_algebra():
    """Is `P*X*W_Q` equal to `P*Q` by sympy's algebra alone?"""
    assert proof.compare(p("P*X*W_Q"), p("P*Q")).how.startswith("equal by matrix algebra")


def test_softmax_property_is_checked_numerically():
    """Is softmax(P S P^T) = P A P^T accepted by evaluation on random permutations?"""
    result = proof.compare(p("softmax(P*S*P^T)"), p("P*A*P^T"))
    assert result.equal and "random" in result.how


def test_undefined_product_is_reported_with_shapes():
    """Is `Q*P` refused as an undefined product, naming the shapes?"""
    with pytest.raises(Unreadable, match="Q is n x d_k and P is n x n"):
        p("Q*P")


def test_chain_flags_the_first_wrong_step():
    """Does a chain with a commuted product fail at that step?"""
    verdicts = proof.check_chain([p("A*P*V"), p("P*Z")], start=p("P*A*V"))
    assert not verdicts[0].ok and "commute" in verdicts[0].reason


def test_random_world_satisfies_the_definitions():
    """Is the random permutation a real permutation that moves every row?"""
    w = proof.world(0)
    assert (w["P"].sum(axis=0) == 1).all() and (w["P"].diagonal() == 0).all()
