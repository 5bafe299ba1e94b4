"""The oracle the hidden tests compare against, and the helpers through which they call student code."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from attnlab import paths, testfiles
from attnlab.grade import messages
from in_process import grade_env

testfiles.load_dir(paths.tests_dir())  # puts the oracle package on the import path
import attnlab_oracle as oracle  # noqa: E402


def _heads_by_reshaping(X, W_Q, W_K, W_V, W_O, num_heads, mask=None):
    """Multi-head attention written another way: reshape into (heads, n, width), einsum, logsumexp."""
    n = X.shape[0]
    Q, K, V = ((X @ W).reshape(n, num_heads, -1).transpose(1, 0, 2) for W in (W_Q, W_K, W_V))
    scores = np.einsum("hik,hjk->hij", Q, K) / np.sqrt(Q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    top = scores.max(axis=-1, keepdims=True)
    weights = np.exp(scores - top - np.log(np.exp(scores - top).sum(axis=-1, keepdims=True)))
    return np.einsum("hij,hjv->ihv", weights, V).reshape(n, -1) @ W_O


SHAPES = [  # (n, d_model, qk width, v width, d_out, heads)
    (5, 6, 4, 6, 3, 2),
    (4, 6, 6, 3, 2, 3),
    (3, 4, 8, 4, 5, 4),
    (4, 5, 2, 6, 3, 2),
    (3, 3, 3, 3, 3, 1),
]


@pytest.mark.parametrize("shape", SHAPES, ids=[str(s) for s in SHAPES])
def test_do_the_oracle_and_the_reference_agree_with_an_independent_multi_head_attention(shape, reference_env):
    n, d_model, width, v_width, d_out, heads = shape
    rng = np.random.default_rng(sum(shape))
    X, W_Q, W_K = rng.normal(size=(n, d_model)), rng.normal(size=(d_model, width)), rng.normal(size=(d_model, width))
    W_V, W_O = rng.normal(size=(d_model, v_width)), rng.normal(size=(v_width, d_out))
    for mask in (None, np.tril(np.ones((n, n), dtype=bool))):
        independent = _heads_by_reshaping(X, W_Q, W_K, W_V, W_O, heads, mask)
        assert np.allclose(oracle.multi_head_attention(X, W_Q, W_K, W_V, W_O, heads, mask), independent)
        assert np.allclose(reference_env["multi_head_attention"](X, W_Q, W_K, W_V, W_O, heads, mask=mask), independent)


def test_is_slicing_w_v_with_the_query_width_a_known_variant_that_differs_from_the_answer():
    rng = np.random.default_rng(1)
    X, W_Q, W_K, W_V = (rng.normal(size=s) for s in [(5, 6), (6, 4), (6, 4), (6, 6)])
    W_O = rng.normal(size=(4, 3))  # the width the wrong slicing produces
    variants = dict((name, out) for name, _, out in oracle.multi_head_attention_variants(X, W_Q, W_K, W_V, W_O, 2))
    assert "W_V sliced with W_Q's head width" in variants


def test_does_call_hand_over_copies_and_name_the_call_that_raised():
    def sinusoidal_pe(seq_len, d_model, base=10000.0):
        raise ValueError("d_model must be even; this looks like nothing: fine")

    with pytest.raises(AssertionError) as caught:
        oracle.call(sinusoidal_pe, 5, 7)
    text = str(caught.value)
    assert text.startswith("sinusoidal_pe(seq_len=5, d_model=7) raised ValueError: d_model must be even")
    assert messages.misconception(text) is None  # the student's own words cannot name a misconception

    def scale(X):
        X *= 2
        return X

    X = np.ones((2, 2))
    assert np.array_equal(oracle.call(scale, X), 2 * np.ones((2, 2))) and np.array_equal(X, np.ones((2, 2)))


def test_does_an_engine_failure_pass_through_call_unchanged():
    class StudentTimeout(Exception):
        pass

    def hangs(x):
        raise StudentTimeout("softmax(...) timed out after 10 s")

    with pytest.raises(StudentTimeout):
        oracle.call(hangs, 1)


def test_does_mutated_arguments_find_changes_in_process_and_through_a_proxy():
    def mutates(a, b, *, c):
        a += 1
        c[0] = 9
        return None

    a, b, c = np.zeros(3), np.zeros(3), [0, 1]
    assert oracle.mutated_arguments(mutates, a, b, c=c) == [0, "c"]
    assert np.array_equal(a, np.zeros(3)) and c == [0, 1]  # the test's own data never changes

    class Proxy:
        """What the grading engine hands to tests: calls cross to a sandbox, which reports changes."""

        mutated_arguments = None

        def __call__(self, *args, **kwargs):
            self.mutated_arguments = (1, "mask", 7, "nope")  # out-of-range entries are ignored
            return None

    assert oracle.mutated_arguments(Proxy(), np.zeros(2), np.zeros(2), mask=np.ones(2)) == [1, "mask"]


def test_does_the_oracle_spare_the_engines_proxy_its_copies_and_copy_for_anything_else():
    """The engine's proxy sends its arguments as plain data to the student's process, so they
    cannot change here: copying and comparing them on every call is wasted. Does the oracle hand
    the proxy the test's own objects, yet copies to a function that only looks like one?"""
    from attnlab.grade.session import StudentFunction

    class Seen:
        """Keeps what it was handed; changes it in place unless it is a proxy (whose calls change
        nothing here: the student's process reports what it changed on its side)."""

        def __init__(self, claim):
            self.copies_arguments, self.seen = claim, []
            self.mutated_arguments = ()

        def __call__(self, *args, **kwargs):
            self.seen += [*args, *kwargs.values()]
            if self.copies_arguments is not True:
                for a in self.seen:
                    a += 1

    x, y = np.zeros(2), np.zeros(3)
    proxy = Seen(StudentFunction.copies_arguments)
    assert oracle.call_noting_changes(proxy, x, y=y) == (None, [])
    assert proxy.seen[0] is x and proxy.seen[1] is y
    imitation = Seen("yes")
    assert oracle.call_noting_changes(imitation, x, y=y) == (None, [0, "y"])
    assert imitation.seen[0] is not x and not x.any() and not y.any()


def test_does_assert_close_name_a_variant_only_when_no_other_fits():
    expected, wrong = np.zeros(3), np.ones(3)
    with pytest.raises(AssertionError, match="looks like one:"):
        oracle.assert_close(wrong, expected, "f(x)", [("one", "why", wrong), ("two", "why", 2 * wrong)])
    with pytest.raises(AssertionError) as caught:
        oracle.assert_close(wrong, expected, "f(x)", [("one", "why", wrong), ("also one", "why", wrong)])
    message = str(caught.value)
    assert messages.misconception(message) is None and "plus 1 at every entry" in message
    with pytest.raises(AssertionError, match="looks like narrow:"):
        oracle.assert_close(np.ones((3, 2)), np.ones((3, 4)), "f(x)", [("narrow", "why", np.ones((3, 2)))])


@pytest.mark.parametrize("kind", ["equivariant", "invariant"])
def test_does_every_known_checker_mistake_answer_the_battery_its_own_way(kind):
    questions, simulated = oracle.checkers._battery(kind)
    seen = {}
    for name, runs in simulated.items():
        for answers in runs:
            key = tuple(answers)
            assert seen.setdefault(key, name) == name, (name, seen[key])


def _questions_of_the_hidden_tests(kind, test_files, reference_env, monkeypatch):
    """Every (probe, X, perms, kwargs) the checker's own tests ask, as the right checker is graded."""
    files = [tf for tf in test_files if tf.name == f"is_permutation_{kind}"]
    # the oracle those test files use: a grading run in this process (runner.load_tests) gives the
    # files it loads a fresh one, and the session's test files may have been loaded after one
    checkers = files[0].cases[0].func.__globals__["oracle"].checkers
    asked, answer = [], checkers._answer

    def recording(kind, checker, probe, X, perms, kwargs):
        if probe.pure:
            asked.append((probe, X, perms, kwargs))
        return answer(kind, checker, probe, X, perms, kwargs)

    monkeypatch.setattr(checkers, "_answer", recording)
    grade_env(reference_env, files)
    return asked


@pytest.mark.parametrize("kind", ["equivariant", "invariant"])
def test_does_every_simulated_checker_answer_together_what_it_answers_one_permutation_at_a_time(
    kind, test_files, reference_env, monkeypatch
):
    """``diagnose`` answers the battery (and a failing question) for every simulated checker at once:
    the answers must be ``_simulate``'s, the checker as written, on every question a test asks."""
    hidden = _questions_of_the_hidden_tests(kind, test_files, reference_env, monkeypatch)
    assert len(hidden) >= 15
    for probe, X, perms, kwargs in oracle.checkers._battery(kind)[0] + hidden:
        X = np.asarray(X, dtype=np.float64)
        together = oracle.checkers._Question(probe.f, X)
        for name, (_, knobs) in oracle.checkers.simulations(kind).items():
            for knob in knobs:
                knob = {k: v for k, v in knob.items() if k not in ("given_only", "reversal")}
                with np.errstate(all="ignore"):
                    alone = oracle.checkers._simulate(kind, probe.f, X, perms, **kwargs, **knob)
                    assert together.simulate(kind, perms, **kwargs, **knob) is alone, (probe, perms, kwargs, name)


@pytest.mark.parametrize("kind", ["equivariant", "invariant"])
def test_does_one_permutation_fool_a_checker_that_tries_one_but_not_the_reference(kind, reference_env):
    X = np.random.default_rng(3).normal(size=(5, 3))
    checker = reference_env[f"is_permutation_{kind}"]
    assert checker(oracle.checkers.OnePermutationOnly(X, kind), X) is False

    def tries_one(f, X, perms=None, atol=1e-8):
        p = [1, 2, 0, 3, 4]
        want = f(X) if kind == "invariant" else f(X)[p]
        return bool(np.allclose(f(X[p]), want, atol=atol))

    assert tries_one(oracle.checkers.OnePermutationOnly(X, kind), X) is True


def test_does_mutating_the_arguments_after_answering_change_no_score(test_files, reference_env):
    """A submission that changes its inputs after answering scores exactly what its honest twin does."""

    def unscaled(Q, K, V, mask=None):
        scores = np.asarray(Q) @ np.swapaxes(K, -1, -2)
        if mask is not None:
            scores = np.where(mask, scores, -np.inf)
        w = np.exp(scores - scores.max(axis=-1, keepdims=True))
        w = w / w.sum(axis=-1, keepdims=True)
        return w @ V, w

    def unscaled_then_scales_q(Q, K, V, mask=None):
        answer = unscaled(Q, K, V, mask)
        if isinstance(Q, np.ndarray) and Q.dtype == np.float64:
            Q *= np.sqrt(Q.shape[-1])
        return answer

    def uniform(x, axis=-1):
        x = np.asarray(x)
        return np.ones(x.shape) / x.shape[axis]

    def uniform_then_zeroes(x, axis=-1):
        answer = uniform(x, axis)
        if isinstance(x, np.ndarray) and x.dtype == np.float64:
            x[...] = 0.0
        return answer

    for name, honest, hostile in [
        ("scaled_dot_product_attention", unscaled, unscaled_then_scales_q),
        ("softmax", uniform, uniform_then_zeroes),
    ]:
        twin = grade_env({**reference_env, name: honest}, test_files)
        mutating = grade_env({**reference_env, name: hostile}, test_files)
        lost_to_mutation = sum(
            c.points for tf in test_files if tf.name == name for c in tf.cases if "unchanged" in c.func.__name__
        )
        assert {q: r[0] for q, r in mutating.items()} == {
            q: r[0] - (lost_to_mutation if q == name else 0) for q, r in twin.items()
        }


def test_do_public_and_hidden_tests_accept_a_list_for_a_pair_of_results(test_files, reference_env):
    env = dict(reference_env)
    for name in ("scaled_dot_product_attention", "self_attention"):
        env[name] = (lambda f: lambda *a, **k: list(f(*a, **k)))(reference_env[name])
    results = grade_env(env, test_files)
    assert all(r[0] == r[1] for r in results.values()), results


def test_does_the_default_set_try_every_permutation_of_five_rows():
    assert sorted(oracle.probes.reorderings(5)) == [p for p in itertools.permutations(range(5)) if p != tuple(range(5))]


def test_does_the_default_set_for_seven_rows_move_row_zero_and_hold_only_permutations():
    perms = oracle.probes.reorderings(7)
    assert all(sorted(p) == list(range(7)) for p in perms)
    assert any(p[0] != 0 for p in perms) and len(set(perms)) == len(perms) and tuple(range(7)) not in perms


@pytest.mark.parametrize("kind", ["row", "attention"])
def test_are_the_answers_a_lent_probe_declares_its_outputs_on_those_inputs(kind):
    probes = oracle.probes.row_probes(5) if kind == "row" else oracle.probes.attention_probes()
    X = np.random.default_rng(7).normal(size=(5, 4))
    for probe in probes.values():
        lent = probe.lent(X)
        inputs, (first, later) = lent.known_answers()
        assert len(inputs) == len(first) == len(later) >= 1
        assert np.array_equal(inputs[0], X)
        for x, y, z in zip(inputs, first, later):
            assert np.array_equal(probe.f(x.copy()), y) and np.array_equal(y, z)
        assert np.array_equal(lent(X.copy()), probe.f(X.copy()))


@pytest.mark.parametrize("kind", ["equivariant", "invariant"])
@pytest.mark.parametrize("first", [1, 7, 60])
def test_does_a_probe_that_remembers_its_calls_declare_what_it_answers_whichever_call_came_first(kind, first):
    """The function lent with its table, as a pure one is: does the table, with ``pick``, answer
    every call of a checker exactly as calling the function would, whichever reordering the
    checker tries first and whatever it calls before and between?"""
    X = np.random.default_rng(7).normal(size=(5, 4))
    tabled, called = oracle.checkers.OnePermutationOnly(X, kind), oracle.checkers.OnePermutationOnly(X, kind)
    inputs, ways = tabled.known_answers()
    assert len(inputs) == 120 and np.array_equal(inputs[0], X)
    perms = [tuple(p) for p in itertools.permutations(range(5))]
    sequence = [0, perms[first], 0, perms[first], perms[3], perms[first], perms[119], perms[50]]
    for p in sequence:
        p = tuple(range(5)) if p == 0 else p
        i = next(k for k, x in enumerate(inputs) if np.array_equal(x, X[list(p)]))
        assert np.array_equal(ways[tabled.pick(i)][i], called(X[list(p)]))
    assert tabled.tried() == called.tried() == 4
    # the first reordering it met moves with the rows; the others do not
    assert not np.array_equal(ways[0][1], ways[1][1])


def test_is_an_oracle_value_computed_once_per_process_and_handed_out_as_a_fresh_copy():
    """Every submission's tests ask for the same expected values: a worker computes each once.
    Can one test's change to what it got reach a later test, or can inputs that differ only in
    their bytes (a dtype, a negative zero) share an entry?"""
    from attnlab_oracle.memo import memoised

    calls = []

    @memoised
    def variants(x, *, scale=1.0):
        calls.append(x.dtype.str)
        return [("a variant", "why", x * scale)]

    x = np.arange(3.0)
    first = variants(x)
    first[0][2][:] = 99.0
    assert np.array_equal(variants(x.copy())[0][2], x) and len(calls) == 1
    variants(x.astype(np.float32))
    variants(x, scale=-0.0)
    variants(x, scale=0.0)
    variants(x, scale=0.0)
    assert len(calls) == 4
    assert oracle.pe_variants.__wrapped__ is oracle.positional.pe_variants
    assert np.array_equal(oracle.pe(5, 4), oracle.positional.pe(5, 4))


def test_does_the_memo_keep_no_more_than_its_budget_whatever_it_is_asked(monkeypatch):
    """A reference lent to a student's code is a memoised oracle function called on whatever the
    student passes it: what it keeps must stay within one budget for the whole process, newest
    kept, and an entry larger than the budget alone not kept at all."""
    from attnlab_oracle import memo

    monkeypatch.setattr(memo, "BUDGET", 1 << 20)
    calls = []

    @memo.memoised
    def double(x):
        calls.append(1)
        return x * 2

    for k in range(50):  # 160 kB each, 8 MB asked for in all
        double(np.full(20_000, float(k)))
    assert memo._held[0] <= memo.BUDGET
    asked = len(calls)
    assert np.array_equal(double(np.full(20_000, 49.0)), np.full(20_000, 98.0)) and len(calls) == asked
    double(np.full(20_000, 0.0))  # the oldest went first
    assert len(calls) == asked + 1
    big = np.zeros(200_000)  # 1.6 MB: over the budget alone
    double(big)
    double(big)
    assert len(calls) == asked + 3 and memo._held[0] <= memo.BUDGET


def test_is_a_raising_call_named_only_by_the_one_mistake_that_raises_the_same():
    rng = np.random.default_rng(0)
    X, W_Q, W_K, W_V, W_O = (
        rng.normal(size=(5, 6)),
        rng.normal(size=(6, 4)),
        rng.normal(size=(6, 4)),
        rng.normal(size=(6, 6)),
        rng.normal(size=(6, 3)),
    )
    build, family = oracle.mistakes.FAMILIES["multi_head_attention"]
    slip = next(m for m in family if m.knobs == {"v_width": "d_h"})
    with pytest.raises(ValueError) as raised:
        oracle.mistakes.wrong_version(build, slip)(X, W_Q, W_K, W_V, W_O, 2)
    raising = oracle.multi_head_attention_raising
    assert raising(raised.value, X, W_Q, W_K, W_V, W_O, 2) == (slip.name, slip.why)
    assert raising(ValueError("another message"), X, W_Q, W_K, W_V, W_O, 2) is None
    assert raising(TypeError(str(raised.value)), X, W_Q, W_K, W_V, W_O, 2) is None
    # two mistakes raise the family's own message here (W_Q too narrow for heads of d_v or d_model): neither is named
    assert raising(ValueError("the heads need more columns than W has"), X, W_Q, W_K, W_V, W_O, 2) is None
    with pytest.raises(AssertionError, match=f"looks like {slip.name}:"):
        oracle.call_refused(
            lambda e: raising(e, X, W_Q, W_K, W_V, W_O, 2),
            oracle.mistakes.wrong_version(build, slip),
            X,
            W_Q,
            W_K,
            W_V,
            W_O,
            2,
        )


def _six_arrays():
    rng = np.random.default_rng(3)
    return tuple(rng.normal(size=s) for s in ((5, 6), (6, 4), (6, 4), (6, 6), (6, 3))) + (2,)


def test_is_a_call_of_several_arrays_said_by_name_and_shape_in_a_short_line():
    """A hidden test's call of multi_head_attention names each argument and its shape, in a line a
    student can read at a glance (not "X=a (5, 6) array" six times over)."""
    from attnlab_oracle.compare import show_call

    def multi_head_attention(X, W_Q, W_K, W_V, W_O, num_heads, mask=None):
        return X

    shown = show_call(multi_head_attention, _six_arrays(), {"mask": np.ones((5, 5), dtype=bool)})
    for name, shape in (("X", "(5, 6)"), ("W_Q", "(6, 4)"), ("W_V", "(6, 6)"), ("W_O", "(6, 3)"), ("mask", "(5, 5)")):
        assert f"{name} {shape}" in shown, shown
    assert "num_heads=2" in shown and "boolean" in shown and len(shown) <= 120, shown


def test_is_a_public_tests_call_of_several_arrays_said_by_name_and_shape_in_a_short_line():
    """The same for the call a public test made in the sandbox (the engine's handle on the function)."""
    import inspect

    from attnlab.grade.session import StudentFunction

    names = ["X", "W_Q", "W_K", "W_V", "W_O", "num_heads"]
    params = [[n, int(inspect.Parameter.POSITIONAL_OR_KEYWORD), False, None] for n in names]
    fn = StudentFunction(None, "multi_head_attention", params, 1.0)  # type: ignore[arg-type]
    shown = fn._describe(_six_arrays(), {})
    assert "X (5, 6)" in shown and "W_O (6, 3)" in shown and "num_heads=2" in shown and len(shown) <= 100, shown
