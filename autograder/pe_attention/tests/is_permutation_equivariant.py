OK_FORMAT = False

import numpy as np
from otter.test_files import test_case

import attnlab_oracle as oracle

name = "is_permutation_equivariant"


@test_case(points=1, hidden=False)
def test_elementwise_function(is_permutation_equivariant):
    X = np.arange(12.0).reshape(4, 3) / 10
    answer = is_permutation_equivariant(np.tanh, X)
    assert isinstance(answer, (bool, np.bool_)), f"is_permutation_equivariant should return a bool, got {type(answer).__name__}"
    assert answer, "np.tanh acts on each row separately, so it is permutation-equivariant"


def _X(n=5, d=4, seed=50):
    return np.random.default_rng(seed).normal(size=(n, d))


def _ask(checker, probe, X, perms=None, **kwargs):
    answer = checker(probe.f, X, **kwargs) if perms is None else checker(probe.f, X, perms=perms, **kwargs)
    if not isinstance(answer, (bool, np.bool_)):
        raise AssertionError(f"is_permutation_equivariant should return a bool, got {type(answer).__name__}")
    return bool(answer)


EXACT = ("looks like exact equality: permuting rows changes the order of floating-point sums, so compare "
         "with a tolerance such as np.allclose(..., atol=atol)")


def _why_false(checker, otherwise=EXACT):
    """Name the likely mistake of a checker that rejected an equivariant function."""
    affine, X = oracle.probes.row_probes(5)["affine"], _X()
    try:
        if not _ask(checker, affine, X, [[1, 0, 2, 3, 4]]):
            return ("looks like a check for invariance: equivariance asks f(P X) ≈ P f(X), "
                    "not f(P X) ≈ f(X)")
        if not _ask(checker, affine, X, [[1, 2, 0, 3, 4]]):
            return ("looks like the inverse permutation: P X has row X[p[i]] at position i, so compare "
                    "f(X[p]) with f(X)[p]; a 3-cycle is not its own inverse")
    except Exception:  # noqa: BLE001 - the diagnosis is a best guess
        return "check how you apply each permutation"
    return otherwise


def _why_true(checker):
    """Name the likely mistake of a checker that accepted a function that is not equivariant."""
    rows, X = oracle.probes.row_probes(5), _X()
    if _ask(checker, rows["offsets 0,0,1,.."], X, [[1, 0, 2, 3, 4], [0, 1, 3, 2, 4]]):
        return ("looks like any() instead of all(): every permutation must pass, not just one of them")
    if _ask(checker, oracle.probes.attention_probes()["self-attention + PE"], X):
        return "looks like checking only the identity: f(X) always equals f(X); permute the rows of X"
    if _ask(checker, rows["reverse"], X):
        return ("looks like comparing sorted rows or row multisets: both outputs hold the same rows, but "
                "f(P X) must equal P f(X) row for row, in order")
    return ("looks like checking only one swap: a function can commute with one transposition and still "
            "not be equivariant; try enough permutations (for instance a swap and a cycle generate them all)")


def _show(perms):
    return None if perms is None else ", ".join(str(tuple(p)) for p in perms)


def _expect(checker, probe, X, expected, hint, perms=None, **kwargs):
    answer = _ask(checker, probe, X, perms, **kwargs)
    if answer != expected:
        given = "".join(f" with {k} {v}" for k, v in [("perms", _show(perms))] + list(kwargs.items()) if v is not None)
        verdict = "counts as" if expected else "is not"
        raise AssertionError(f"is_permutation_equivariant returned {answer} for {probe.what}{given}, which "
                             f"{verdict} permutation-equivariant: {hint() if callable(hint) else hint}")


@test_case(points=1, hidden=True)
def test_equivariant_layers(is_permutation_equivariant):
    # 4 rows: a checker that tries every permutation stays quick on these heavier layers
    probes, X = oracle.probes.attention_probes(), _X(n=4)
    for key in ("self-attention", "multi-head", "encoder"):
        X_before = X.copy()
        _expect(is_permutation_equivariant, probes[key], X, True, lambda: _why_false(is_permutation_equivariant))
        assert np.array_equal(X, X_before), "is_permutation_equivariant changed X: permute a copy"
    _expect(is_permutation_equivariant, oracle.probes.row_probes(4)["mean"], X, True,
            lambda: _why_false(is_permutation_equivariant))


@test_case(points=1, hidden=True)
def test_position_dependent_functions(is_permutation_equivariant):
    X = _X()
    rows = oracle.probes.row_probes(5)
    # a checker that always says False must not earn this case
    _expect(is_permutation_equivariant, rows["affine"], X, True, lambda: _why_false(is_permutation_equivariant))
    for probe in (oracle.probes.attention_probes()["self-attention + PE"], rows["reverse"], rows["roll"]):
        _expect(is_permutation_equivariant, probe, X, False, lambda: _why_true(is_permutation_equivariant))


@test_case(points=1, hidden=True)
def test_one_permutation_is_not_enough(is_permutation_equivariant):
    rows, X = oracle.probes.row_probes(5), _X()
    _expect(is_permutation_equivariant, rows["mean"], X, True, lambda: _why_false(is_permutation_equivariant))
    for key in ("offsets 0,0,1,..", "palindromic offsets"):
        _expect(is_permutation_equivariant, rows[key], X, False, lambda: _why_true(is_permutation_equivariant))


@test_case(points=1, hidden=True)
def test_given_permutations(is_permutation_equivariant):
    X = _X()
    cycles = [[1, 2, 0, 3, 4], [0, 3, 1, 2, 4], [4, 0, 1, 2, 3]]
    _expect(is_permutation_equivariant, oracle.probes.attention_probes()["self-attention"], X, True,
            lambda: _why_false(is_permutation_equivariant), perms=cycles)
    _expect(is_permutation_equivariant, oracle.probes.row_probes(5)["offsets 0,0,1,.."], X, False,
            "looks like any() instead of all(): the second permutation moves rows with different offsets, "
            "and every permutation in perms must pass", perms=[[1, 0, 2, 3, 4], [0, 1, 3, 2, 4]])


@test_case(points=1, hidden=True)
def test_round_off_and_atol(is_permutation_equivariant):
    X = np.array([[0.1, 0.7], [0.2, 0.1], [0.3, 0.2], [0.7, 0.3], [1e-3, 0.6]])
    perms = [[1, 2, 0, 3, 4], [2, 0, 1, 3, 4], [4, 3, 2, 1, 0]]
    _expect(is_permutation_equivariant, oracle.probes.row_probes(5)["mean"], X, True,
            lambda: _why_false(is_permutation_equivariant), perms=perms)
    nudged = oracle.probes.row_probes(5)["small offsets"]
    _expect(is_permutation_equivariant, nudged, X, True,
            lambda: _why_false(is_permutation_equivariant, "with atol=1e-2, differences of 4e-4 count as equal: "
                               "pass atol on to your comparison"), atol=1e-2)


@test_case(points=1, hidden=True)
def test_longer_sequences(is_permutation_equivariant):
    # n = 7 has 5040 permutations: the default set must still move every row, including row 0
    X = _X(n=7)
    rows = oracle.probes.row_probes(7)
    _expect(is_permutation_equivariant, oracle.probes.attention_probes()["self-attention"], X, True,
            lambda: _why_false(is_permutation_equivariant))
    for key in ("first row offset", "palindromic offsets"):
        _expect(is_permutation_equivariant, rows[key], X, False,
                "looks like too few default permutations: with perms=None, try permutations that move "
                "every row (e.g. every adjacent swap and a full cycle), not only the first few of "
                "itertools.permutations, which all keep row 0 in place")
