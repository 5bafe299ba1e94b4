OK_FORMAT = False

import numpy as np
from otter.test_files import test_case

import attnlab_oracle as oracle

name = "is_permutation_equivariant"
KIND = "equivariant"


@test_case(points=1, hidden=False)
def test_notebook_examples(is_permutation_equivariant):
    X = np.arange(6.0).reshape(3, 2)
    # 0.1 + 0.2 + 0.3 and 0.3 + 0.1 + 0.2 differ in the last bit: a tolerance is needed
    Y = np.array([[0.1, 0.7], [0.2, 0.1], [0.3, 0.2]])
    steps = lambda X: X + 1e-4 * np.arange(len(X))[:, None]
    cases = [
        (np.tanh, X, {}, True, "np.tanh acts on each row separately"),
        (lambda X: X @ np.ones((2, 3)), X, {}, True,
         "X @ W acts on each row separately, whatever the width of its rows (only rows are permuted)"),
        (lambda X: X - X.mean(axis=0), Y, {}, True,
         "X - X.mean(axis=0) moves each row with the input (up to round-off, which must not count)"),
        (lambda X: np.cumsum(X, axis=0), X, {}, False, "np.cumsum(X, axis=0) adds up the rows above each row"),
        (lambda X: X[::-1], X, {}, False, "X[::-1] reverses the rows, so the output does not move with the input"),
        (lambda X: np.cumsum(X, axis=0), X, {"perms": [[0, 1, 2], [2, 1, 0]]}, False,
         "every permutation in perms must pass, and [2, 1, 0] does not"),
        (steps, X, {"atol": 1e-2}, True, "with atol=1e-2, differences of 2e-4 count as equal"),
    ]
    for f, data, kwargs, expected, why in cases:
        answer = is_permutation_equivariant(f, data, **kwargs)
        assert isinstance(answer, (bool, np.bool_)), (
            f"is_permutation_equivariant should return a bool, got {type(answer).__name__}")
        assert answer == expected, f"is_permutation_equivariant returned {answer}, expected {expected}: {why}"


def _X(n=5, d=4, seed=50):
    return np.random.default_rng(seed).normal(size=(n, d))


def _expect(checker, probe, X, expected, perms=None, **kwargs):
    return oracle.checkers.expect(KIND, checker, probe, X, expected, perms, **kwargs)


def _one_permutation_only(X):
    return oracle.checkers.one_permutation_only(X, KIND)


@test_case(points=1, hidden=True)
def test_equivariant_layers(is_permutation_equivariant):
    # 4 rows: a checker that tries every permutation stays quick on these heavier layers
    probes, X = oracle.probes.attention_probes(), _X(n=4)
    changed = _expect(is_permutation_equivariant, probes["self-attention"], X, True)
    # f may change the number of columns: only the rows are permuted
    for key in ("multi-head", "encoder", "self-attention to width 3"):
        _expect(is_permutation_equivariant, probes[key], X, True)
    _expect(is_permutation_equivariant, oracle.probes.row_probes(4)["mean"], X, True)
    # what the first question's call changed: asking it again only to see would make the same call
    oracle.assert_not_changed(changed, is_permutation_equivariant, probes["self-attention"].lent(X), X)


@test_case(points=1, hidden=True)
def test_position_dependent_functions(is_permutation_equivariant):
    X = _X()
    rows = oracle.probes.row_probes(5)
    # a checker that always says False must not earn this case
    _expect(is_permutation_equivariant, rows["affine"], X, True)
    for probe in (oracle.probes.attention_probes()["self-attention + PE"], rows["reverse"], rows["roll"],
                  rows["rows through largest"], rows["first row scaled"], rows["total"]):
        _expect(is_permutation_equivariant, probe, X, False)


@test_case(points=1, hidden=True)
def test_one_permutation_is_not_enough(is_permutation_equivariant):
    rows, X = oracle.probes.row_probes(5), _X()
    _expect(is_permutation_equivariant, rows["mean"], X, True)
    for probe in (rows["offsets 0,0,1,.."], rows["palindromic offsets"], _one_permutation_only(X)):
        _expect(is_permutation_equivariant, probe, X, False)


@test_case(points=1, hidden=True)
def test_given_permutations(is_permutation_equivariant):
    X = _X()
    cycles = [[1, 2, 0, 3, 4], [0, 3, 1, 2, 4], [4, 0, 1, 2, 3]]
    _expect(is_permutation_equivariant, oracle.probes.attention_probes()["self-attention"], X, True, perms=cycles)
    # (the lists are named: a call's arguments are shown to the student, a line of hidden code never is)
    swaps, first_swap = [[1, 0, 2, 3, 4], [0, 1, 3, 2, 4]], [[1, 0, 2, 3, 4]]
    _expect(is_permutation_equivariant, oracle.probes.row_probes(5)["offsets 0,0,1,.."], X, False, perms=swaps)
    # only the permutations given count: rows 0 and 1 get the same offset, so swapping them is fine
    _expect(is_permutation_equivariant, oracle.probes.row_probes(5)["offsets 0,0,1,.."], X, True, perms=first_swap)


@test_case(points=1, hidden=True)
def test_round_off_and_atol(is_permutation_equivariant):
    X = np.array([[0.1, 0.7], [0.2, 0.1], [0.3, 0.2], [0.7, 0.3], [1e-3, 0.6]])
    perms = [[1, 2, 0, 3, 4], [2, 0, 1, 3, 4], [4, 3, 2, 1, 0]]
    rows = oracle.probes.row_probes(5)
    _expect(is_permutation_equivariant, rows["mean"], X, True, perms=perms)
    _expect(is_permutation_equivariant, rows["small offsets"], X, True, atol=1e-2)
    _expect(is_permutation_equivariant, rows["offsets 1e-3"], X, False)
    # the tolerance is per entry, atol + rtol*|b| (np.allclose's rule): outputs 200 wide, each entry
    # within atol, and outputs near 1e10, whose round-off alone is far above atol=1e-8
    wide = np.random.default_rng(51).normal(size=(5, 200))
    _expect(is_permutation_equivariant, rows["small offsets"], wide, True, perms=perms, atol=1e-2)
    large = 1e10 * np.random.default_rng(52).normal(size=(5, 40))
    _expect(is_permutation_equivariant, rows["mean"], large, True, perms=perms)
    # every entry counts: one output entry in 2500 does not move with its row
    wider = np.random.default_rng(53).normal(size=(5, 500))
    _expect(is_permutation_equivariant, rows["first entry offset"], wider, False, perms=perms)


@test_case(points=1, hidden=True)
def test_longer_sequences(is_permutation_equivariant):
    # n = 7 has 5040 permutations: the default set must still move every row, including row 0
    X = _X(n=7)
    rows = oracle.probes.row_probes(7)
    _expect(is_permutation_equivariant, oracle.probes.attention_probes()["self-attention"], X, True)
    for probe in (rows["first row offset"], rows["palindromic offsets"], _one_permutation_only(X)):
        _expect(is_permutation_equivariant, probe, X, False)
