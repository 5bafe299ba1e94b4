OK_FORMAT = False

import numpy as np
from otter.test_files import test_case

import attnlab_oracle as oracle

name = "is_permutation_invariant"
KIND = "invariant"


@test_case(points=1, hidden=False)
def test_sum_and_elementwise(is_permutation_invariant):
    X = np.arange(12.0).reshape(4, 3)
    # 0.1 + 0.2 + 0.3 and 0.3 + 0.1 + 0.2 differ in the last bit: a tolerance is needed
    Y = np.array([[0.1, 0.7], [0.2, 0.1], [0.3, 0.2]])
    weighted = lambda X: ((1 + 1e-4 * np.arange(len(X)))[:, None] * X).sum(axis=0)
    cases = [
        (np.sum, X, {}, True, "np.sum adds up every entry whatever the order of the rows"),
        (lambda X: X.sum(axis=0), Y, {}, True,
         "the column sums ignore the order of the rows (up to round-off, which must not count)"),
        (np.tanh, X, {}, False, "np.tanh(P X) = P np.tanh(X) moves rows"),
        (lambda X: X[0], X, {"perms": [[0, 2, 1, 3], [1, 0, 2, 3]]}, False,
         "every permutation in perms must pass, and [1, 0, 2, 3] changes the first row"),
        (lambda X: X + np.arange(len(X))[:, None], X, {}, False,
         "X + [0, 1, 2, 3] per row has the same sum for every order of the rows, but not the same rows"),
        (weighted, X, {"atol": 1.0}, True, "with atol=1, differences of a few thousandths count as equal"),
    ]
    for f, data, kwargs, expected, why in cases:
        answer = is_permutation_invariant(f, data, **kwargs)
        assert isinstance(answer, (bool, np.bool_)), (
            f"is_permutation_invariant should return a bool, got {type(answer).__name__}")
        assert answer == expected, f"is_permutation_invariant returned {answer}, expected {expected}: {why}"


def _X(n=5, d=4, seed=70):
    return np.random.default_rng(seed).normal(size=(n, d))


def _expect(checker, probe, X, expected, perms=None, **kwargs):
    return oracle.checkers.expect(KIND, checker, probe, X, expected, perms, **kwargs)


def _one_permutation_only(X):
    return oracle.checkers.one_permutation_only(X, KIND)


@test_case(points=1, hidden=True)
def test_invariant_functions(is_permutation_invariant):
    # 4 rows: a checker that tries every permutation stays quick on these heavier layers
    X = _X(n=4)
    probes = oracle.probes.attention_probes()
    _expect(is_permutation_invariant, oracle.probes.row_probes(4)["mean"], X, True)
    changed = _expect(is_permutation_invariant, probes["pooled self-attention"], X, True)
    # f may change the width: rows of 4 pooled to one of 3
    _expect(is_permutation_invariant, probes["pooled self-attention to width 3"], X, True)
    _expect(is_permutation_invariant, probes["pooled encoder"], X, True)
    # what the second question's call changed: asking it again only to see would make the same call
    oracle.assert_not_changed(changed, is_permutation_invariant, probes["pooled self-attention"].lent(X), X)


@test_case(points=1, hidden=True)
def test_functions_that_are_not_invariant(is_permutation_invariant):
    X = _X()
    probes, rows = oracle.probes.attention_probes(), oracle.probes.row_probes(5)
    # a checker that always says False must not earn this case
    _expect(is_permutation_invariant, rows["mean"], X, True)
    for probe in (probes["self-attention"], rows["affine"], probes["pooled self-attention + PE"], rows["roll"],
                  rows["rows through largest"], rows["total through largest"], rows["offsets 0,0,1,.."],
                  # unchanged by every roll and by the reversal: only other reorderings tell
                  rows["cyclic neighbour products"]):
        _expect(is_permutation_invariant, probe, X, False)


@test_case(points=1, hidden=True)
def test_given_permutations(is_permutation_invariant):
    X = _X()
    # (the lists are named: a call's arguments are shown to the student, a line of hidden code never is)
    cycles, swaps, first_swap = [[1, 2, 0, 3, 4], [4, 0, 1, 2, 3]], [[1, 0, 2, 3, 4], [0, 1, 3, 2, 4]], [[1, 0, 2, 3, 4]]
    _expect(is_permutation_invariant, oracle.probes.attention_probes()["pooled self-attention"], X, True, perms=cycles)
    _expect(is_permutation_invariant, oracle.probes.row_probes(5)["first two summed"], X, False, perms=swaps)
    # only the permutations given count: swapping the first two rows leaves their sum alone
    _expect(is_permutation_invariant, oracle.probes.row_probes(5)["first two summed, then weighted"], X, True,
            perms=first_swap)


@test_case(points=1, hidden=True)
def test_round_off_and_atol(is_permutation_invariant):
    X = np.array([[0.1, 0.7], [0.2, 0.1], [0.3, 0.2], [0.7, 0.3], [1e-3, 0.6]])
    rows = oracle.probes.row_probes(5)
    _expect(is_permutation_invariant, rows["mean"], X, True, perms=[[1, 2, 0, 3, 4], [2, 0, 1, 3, 4], [4, 3, 2, 1, 0]])
    _expect(is_permutation_invariant, rows["weighted sum 1e-4"], X, True, atol=1e-2)
    _expect(is_permutation_invariant, rows["centred weighted sum 1e-4"], X, True, atol=1e-2)
    _expect(is_permutation_invariant, rows["weighted sum 1e-4"], X, False)
    # the tolerance is per entry, atol + rtol*|b| (np.allclose's rule): outputs 200 wide, each entry
    # within atol, and outputs near 1e10, whose round-off alone is far above atol=1e-8
    perms = [[1, 2, 0, 3, 4], [4, 3, 2, 1, 0]]
    wide = np.random.default_rng(71).normal(size=(5, 200))
    _expect(is_permutation_invariant, rows["weighted sum 1e-4"], wide, True, perms=perms, atol=1e-2)
    large = 1e10 * np.random.default_rng(72).normal(size=(5, 40))
    _expect(is_permutation_invariant, rows["mean"], large, True, perms=perms)
    # every entry counts: one output entry in 500 depends on the order of the rows
    wider = np.random.default_rng(73).normal(size=(5, 500))
    _expect(is_permutation_invariant, rows["column sums and first entry"], wider, False, perms=perms)


@test_case(points=1, hidden=True)
def test_longer_sequences(is_permutation_invariant):
    # n = 7 has 5040 permutations: the default set must still move every row, including row 0
    X = _X(n=7)
    _expect(is_permutation_invariant, oracle.probes.attention_probes()["pooled self-attention"], X, True)
    for n in (5, 7):
        X, rows = _X(n=n), oracle.probes.row_probes(n)
        for probe in (rows["first row and rest sum"], rows["first two summed"], _one_permutation_only(X)):
            _expect(is_permutation_invariant, probe, X, False)
