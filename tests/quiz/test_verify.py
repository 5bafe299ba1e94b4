"""Questions about the sympy proofs behind the keys (attnlab.quiz.verify)."""

import pytest

from attnlab.quiz import verify


@pytest.mark.slow
def test_softmax_commutes_with_every_permutation():
    """Is softmax(P S P^T) = P softmax(S) P^T for all 30 permutations at n = 3, 4?"""
    assert verify.softmax_commutes_with_permutations().ok


@pytest.mark.slow
def test_self_attention_is_equivariant():
    """Is Z(P X) = P Z(X) with symbolic X and weights?"""
    assert verify.self_attention_is_equivariant().ok


def test_permutations_are_orthogonal():
    """Is P^T P = I for every permutation?"""
    assert verify.permutations_are_orthogonal().ok


def test_pe_breaks_equivariance():
    """Does adding PE give a counterexample to equivariance?"""
    assert verify.pe_breaks_equivariance().ok


def test_shift_and_rope_keys_are_proved(items):
    """Are the shift-block and rope-relative keys proved by sympy?"""
    assert verify.shift_is_a_rotation(items).ok
    assert verify.rope_is_relative(items).ok


def test_the_bank_is_sound(items):
    """Does every key grade right, every known wrong answer grade wrong, every required id exist?"""
    failed = [r for r in verify.bank_is_sound(items) if not r.ok]
    assert not failed


def test_a_wrong_key_is_caught(items):
    """Would a wrong key in the bank be caught by verify?"""
    from dataclasses import replace
    broken = replace(items["pe-dim0"], key="cos(pos)")
    assert not verify._item_sound(broken).ok
