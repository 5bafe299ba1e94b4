OK_FORMAT = False

import numpy as np
from otter.test_files import test_case

import attnlab_oracle as oracle

name = "is_permutation_invariant"


@test_case(points=1, hidden=False)
def test_sum_and_elementwise(is_permutation_invariant):
    X = np.arange(12.0).reshape(4, 3)
    answer = is_permutation_invariant(np.sum, X)
    assert isinstance(answer, (bool, np.bool_)), f"is_permutation_invariant should return a bool, got {type(answer).__name__}"
    assert answer, "np.sum adds up every entry whatever the order of the rows: it is permutation-invariant"
    assert not is_permutation_invariant(np.tanh, X), "np.tanh(P X) = P np.tanh(X) moves rows: it is not invariant"


def _X(n=5, d=4, seed=70):
    return np.random.default_rng(seed).normal(size=(n, d))


def _ask(checker, probe, X, perms=None):
    answer = checker(probe.f, X) if perms is None else checker(probe.f, X, perms=perms)
    if not isinstance(answer, (bool, np.bool_)):
        raise AssertionError(f"is_permutation_invariant should return a bool, got {type(answer).__name__}")
    return bool(answer)


def _show(perms):
    return None if perms is None else ", ".join(str(tuple(p)) for p in perms)


def _expect(checker, probe, X, expected, hint, perms=None):
    answer = _ask(checker, probe, X, perms)
    if answer != expected:
        given = "" if perms is None else f" with perms {_show(perms)}"
        raise AssertionError(f"is_permutation_invariant returned {answer} for {probe.what}{given}, which is "
                             f"{'' if expected else 'not '}permutation-invariant: {hint() if callable(hint) else hint}")


def _why_false(checker):
    """Name the likely mistake of a checker that rejected an invariant function."""
    try:
        if _ask(checker, oracle.probes.row_probes(5)["first two summed"], _X(), [[1, 0, 2, 3, 4]]):
            return ("looks like exact equality: permuting rows changes the order of floating-point sums, so "
                    "compare with a tolerance such as np.allclose(..., atol=atol)")
    except Exception:  # noqa: BLE001 - the diagnosis is a best guess
        pass
    return "compare f(P X) with f(X) itself, for each permutation P"


def _why_true(checker):
    """Name the likely mistake of a checker that accepted a function that is not invariant."""
    X = _X()
    if _ask(checker, oracle.probes.attention_probes()["self-attention + PE"], X):
        return "looks like checking only the identity: f(X) always equals f(X); permute the rows of X"
    if _ask(checker, oracle.probes.row_probes(5)["reverse"], X):
        return ("looks like comparing sorted rows or row multisets: invariance needs f(P X) to equal f(X) "
                "exactly as it is, in order")
    return ("looks like a check for equivariance: invariance asks f(P X) ≈ f(X), not f(P X) ≈ P f(X); "
            "self-attention moves its output rows with the input")


@test_case(points=1, hidden=True)
def test_invariant_functions(is_permutation_invariant):
    # 4 rows: a checker that tries every permutation stays quick on these heavier layers
    X = _X(n=4)
    probes = oracle.probes.attention_probes()
    for probe in (oracle.probes.row_probes(4)["mean"], probes["pooled self-attention"], probes["pooled encoder"]):
        X_before = X.copy()
        _expect(is_permutation_invariant, probe, X, True, lambda: _why_false(is_permutation_invariant))
        assert np.array_equal(X, X_before), "is_permutation_invariant changed X: permute a copy"


@test_case(points=1, hidden=True)
def test_functions_that_are_not_invariant(is_permutation_invariant):
    X = _X()
    probes = oracle.probes.attention_probes()
    # a checker that always says False must not earn this case
    _expect(is_permutation_invariant, oracle.probes.row_probes(5)["mean"], X, True,
            lambda: _why_false(is_permutation_invariant))
    for probe in (probes["self-attention"], oracle.probes.row_probes(5)["affine"],
                  probes["pooled self-attention + PE"], oracle.probes.row_probes(5)["roll"]):
        _expect(is_permutation_invariant, probe, X, False, lambda: _why_true(is_permutation_invariant))


@test_case(points=1, hidden=True)
def test_given_permutations(is_permutation_invariant):
    X = _X()
    _expect(is_permutation_invariant, oracle.probes.attention_probes()["pooled self-attention"], X, True,
            lambda: _why_false(is_permutation_invariant), perms=[[1, 2, 0, 3, 4], [4, 0, 1, 2, 3]])
    _expect(is_permutation_invariant, oracle.probes.row_probes(5)["first two summed"], X, False,
            "looks like any() instead of all(): swapping rows 2 and 3 changes the output, and every "
            "permutation in perms must pass", perms=[[1, 0, 2, 3, 4], [0, 1, 3, 2, 4]])


@test_case(points=1, hidden=True)
def test_round_off(is_permutation_invariant):
    X = np.array([[0.1, 0.7], [0.2, 0.1], [0.3, 0.2], [0.7, 0.3], [1e-3, 0.6]])
    _expect(is_permutation_invariant, oracle.probes.row_probes(5)["mean"], X, True,
            lambda: _why_false(is_permutation_invariant), perms=[[1, 2, 0, 3, 4], [2, 0, 1, 3, 4], [4, 3, 2, 1, 0]])


@test_case(points=1, hidden=True)
def test_longer_sequences(is_permutation_invariant):
    # n = 7 has 5040 permutations: the default set must still move every row, including row 0
    X = _X(n=7)
    _expect(is_permutation_invariant, oracle.probes.attention_probes()["pooled self-attention"], X, True,
            lambda: _why_false(is_permutation_invariant))
    _expect(is_permutation_invariant, oracle.probes.row_probes(7)["first row and rest sum"], X, False,
            "looks like too few default permutations: with perms=None, try permutations that move "
            "every row (e.g. every adjacent swap and a full cycle), not only the first few of "
            "itertools.permutations, which all keep row 0 in place")
