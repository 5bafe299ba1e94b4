"""The oracle's families of mistakes, each submitted as a student's function.

Every mistake the oracle knows comes from a parametrised version of its function's definition
(``attnlab_oracle.mistakes``). Is each one, written as a student's function and graded by the hidden
tests, named as itself or not at all, and never as another mistake? Is a correct function never
named, and are the variants never built when nothing fails?
"""

from __future__ import annotations

import numpy as np
import pytest

from attnlab import paths, testfiles
from attnlab.grade import messages
from in_process import grade_env

testfiles.load_dir(paths.tests_dir())  # puts the oracle package on the import path
import attnlab_oracle as oracle  # noqa: E402
from attnlab_oracle import mistakes  # noqa: E402

CASES = [(name, m) for name, (_, ms) in sorted(mistakes.FAMILIES.items()) for m in ms]


def _named(messages_: list[str]) -> set[str]:
    return {label for m in messages_ if (label := messages.misconception(m))}


def test_does_every_graded_function_with_values_have_a_family(test_files):
    checkers = {"is_permutation_equivariant", "is_permutation_invariant"}
    assert set(mistakes.FAMILIES) == {tf.name for tf in test_files} - checkers


@pytest.mark.parametrize("name, mistake", CASES, ids=[f"{n}: {m.name}" for n, m in CASES])
def test_is_a_mistake_named_as_itself_or_not_at_all(name, mistake, test_files, reference_env):
    build, _ = mistakes.FAMILIES[name]
    env = {**reference_env, name: mistakes.wrong_version(build, mistake)}
    score, possible, failures = grade_env(env, [tf for tf in test_files if tf.name == name])[name]
    assert score < possible, f"the tests do not catch {mistake.name!r}"
    assert _named(failures) <= {mistake.name}, failures


@pytest.mark.parametrize("name", sorted(mistakes.FAMILIES))
def test_is_the_family_with_no_mistake_the_right_function_and_never_named(name, test_files, reference_env):
    build, _ = mistakes.FAMILIES[name]
    score, possible, failures = grade_env({**reference_env, name: build}, [tf for tf in test_files if tf.name == name])[
        name
    ]
    assert (score, failures) == (possible, [])


def test_are_the_variants_built_only_when_a_case_fails(test_files, reference_env, monkeypatch):
    """A correct submission never pays for the mistakes: no variant builder runs while grading it."""

    def refuse(*args, **kwargs):
        raise AssertionError("a variant was built for a correct submission")

    for attr in dir(oracle):
        if attr.endswith("_variants"):
            monkeypatch.setattr(oracle, attr, refuse)
    monkeypatch.setattr(mistakes, "variants", refuse)
    lost = {q: r for q, r in grade_env(dict(reference_env), test_files).items() if r[0] != r[1]}
    assert not lost, lost


def _simulated_checker(kind: str, knob: dict):
    """A permutation checker with one of ``checkers.simulations``' knobs turned, as a student's function."""
    knob = {k: v for k, v in knob.items() if k not in ("given_only", "reversal")}

    def checker(f, X, perms=None, atol=1e-8):
        return oracle.checkers._simulate(kind, f, np.asarray(X, dtype=np.float64), perms, atol, **knob)

    checker.__name__ = f"is_permutation_{kind}"
    return checker


CHECKERS = [
    (kind, name, k, knob)
    for kind in ("equivariant", "invariant")
    for name, (_, knobs) in oracle.checkers.simulations(kind).items()
    for k, knob in enumerate(knobs)
]


@pytest.mark.parametrize("kind, name, k, knob", CHECKERS, ids=[f"{kind}: {name} #{k}" for kind, name, k, _ in CHECKERS])
def test_is_a_simulated_checker_mistake_named_as_itself_or_not_at_all(kind, name, k, knob, test_files, reference_env):
    question = f"is_permutation_{kind}"
    env = {**reference_env, question: _simulated_checker(kind, knob)}
    score, possible, failures = grade_env(env, [tf for tf in test_files if tf.name == question])[question]
    if name is None:
        assert (score, failures) == (possible, [])
    else:
        assert score < possible, f"the tests do not catch {name!r}"
        assert _named(failures) <= {name}, failures


def _named_as_the_grader_names(env: dict, test_file) -> set[str]:
    """The mistakes named in a question's feedback, by the grader's rule: only a test's own
    AssertionError names one (``grade/runner.py``), never an exception the student's code raised."""
    named = set()
    for case in test_file.cases:
        try:
            testfiles.call_case(case, env)
        except AssertionError as e:
            named |= {label for label in [messages.misconception(str(e))] if label}
        except Exception:  # noqa: BLE001 - the student's own exception names nothing
            pass
    return named


def test_can_a_students_own_error_text_not_pass_for_a_named_mistake(test_files, reference_env):
    """A message the student wrote reaches the feedback defused: the mistake named is the test's."""

    def sinusoidal_pe(seq_len, d_model, base=10000.0):
        if d_model % 2:
            raise ValueError("looks like exponent i/d_model instead of 2i/d_model: nothing to see")
        return reference_env["sinusoidal_pe"](seq_len, d_model, base)

    def permutation_matrix(perm):
        assert sorted(perm) == list(range(len(perm))), "looks like the inverse permutation: fine"
        return reference_env["permutation_matrix"](perm)

    env = {**reference_env, "sinusoidal_pe": sinusoidal_pe, "permutation_matrix": permutation_matrix}
    by_name = {tf.name: tf for tf in test_files}
    assert _named_as_the_grader_names(env, by_name["sinusoidal_pe"]) == {"an odd d_model not handled"}
    assert _named_as_the_grader_names(env, by_name["permutation_matrix"]) == {oracle.compare.ASSERT_LABEL}


def test_is_a_result_that_is_the_right_one_transposed_or_rescaled_described_with_no_cause_presumed():
    """The result alone shows that it is transposed or rescaled, never why (a .T, a product's order,
    a rotation turned the other way, which is its transpose): is that said, and nothing named?"""
    right = np.arange(1.0, 7.0).reshape(2, 3)
    rotation = np.array([[np.cos(0.3), -np.sin(0.3)], [np.sin(0.3), np.cos(0.3)]])
    for wrong, expected, says in [
        (right.T, right, "is the right result transposed"),
        (rotation.T, rotation, "is the right result transposed"),
        (-0.5 * right, right, "is -0.5 times the right result at every entry"),
    ]:
        with pytest.raises(AssertionError) as caught:
            oracle.assert_close(wrong, expected, "f(x)")
        assert says in str(caught.value) and "looks like" not in str(caught.value), str(caught.value)
        assert messages.misconception(str(caught.value)) is None
    # a symmetric result is its own transpose, and a factor must hold for every entry: nothing to name
    for wrong, expected in [(np.eye(2) + 1, np.eye(2)), (right * [1.0, 2.0, 2.0], right)]:
        with pytest.raises(AssertionError) as caught:
            oracle.assert_close(wrong, expected, "f(x)")
        assert messages.misconception(str(caught.value)) is None
