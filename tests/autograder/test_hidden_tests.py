"""The hand-written test files, driven by pytest the way otter drives them."""

import re

import numpy as np
import pytest

from attnlab import paths, testfiles
from in_process import grade_env

ALL = [(tf.name, case) for tf in testfiles.load_dir(paths.tests_dir()) for case in tf.cases]


@pytest.mark.parametrize("question, case", ALL, ids=[c.name for _, c in ALL])
def test_does_the_reference_pass_every_case(question, case, reference_env):
    testfiles.call_case(case, reference_env)


@pytest.mark.parametrize("question, case", ALL, ids=[c.name for _, c in ALL])
def test_does_the_untouched_stub_fail_every_case(question, case, stub_env):
    with pytest.raises(Exception):  # noqa: B017 - a stub fails a case by whatever it raises first
        testfiles.call_case(case, stub_env)


def test_does_every_case_declare_its_points(test_files):
    import ast

    for tf in test_files:
        tree = ast.parse(tf.path.read_text())
        for node in tree.body:
            for dec in getattr(node, "decorator_list", []):
                if isinstance(dec, ast.Call) and getattr(dec.func, "id", "") == "test_case":
                    assert any(k.arg == "points" for k in dec.keywords), f"{tf.name}.{node.name}"
                    assert any(k.arg == "hidden" for k in dec.keywords), f"{tf.name}.{node.name}"


def test_does_every_question_have_public_and_hidden_cases(test_files):
    for tf in test_files:
        assert any(not c.hidden for c in tf.cases) and any(c.hidden for c in tf.cases), tf.name


def _score(test_files, env, question):
    return grade_env(env, [t for t in test_files if t.name == question])[question]


def _pe_bug(kind):
    def sinusoidal_pe(seq_len, d_model, base=10000.0):
        out = np.zeros((seq_len, d_model))
        for pos in range(seq_len):
            for j in range(d_model):
                i = j // 2
                exponent = {"i_over_d": i / d_model, "j_over_d": j / d_model}.get(kind, 2 * i / d_model)
                b = 10000.0 if kind == "base" else base
                p = pos + 1 if kind == "from_one" else pos
                angle = p / b**exponent
                even = (j % 2 == 0) != (kind == "swap")
                out[pos, j] = np.sin(angle) if even else np.cos(angle)
        if kind == "halves":
            out = np.concatenate([out[:, 0::2], out[:, 1::2]], axis=1)
        return out

    return sinusoidal_pe


@pytest.mark.parametrize(
    "kind, named",
    [
        ("halves", "concatenated [sin | cos] halves"),
        ("i_over_d", "exponent i/d_model"),
        ("j_over_d", "exponent j/d_model"),
        ("swap", "sin and cos swapped"),
        ("from_one", "positions counted from 1"),
        ("base", "base ignored"),
    ],
)
def test_does_a_known_pe_bug_lose_points_and_get_named(test_files, kind, named):
    score, possible, messages = _score(test_files, {"sinusoidal_pe": _pe_bug(kind)}, "sinusoidal_pe")
    assert score < possible
    assert any(f"looks like {named}" in m for m in messages), messages


def test_is_a_transposed_rotation_block_named(test_files, reference_env):
    def pe_shift_matrix(k, d_model, base=10000.0):
        return reference_env["pe_shift_matrix"](k, d_model, base).T

    score, possible, messages = _score(test_files, {"pe_shift_matrix": pe_shift_matrix}, "pe_shift_matrix")
    assert score < possible
    assert any("looks like the transposed rotation block" in m for m in messages), messages


def test_does_mutating_the_input_lose_points(test_files, reference_env):
    def add_positional_encoding(E, base=10000.0):
        E += reference_env["sinusoidal_pe"](*E.shape, base=base)
        return E.copy()

    score, possible, messages = _score(
        test_files, {"add_positional_encoding": add_positional_encoding}, "add_positional_encoding"
    )
    assert score < possible and any("changed its input" in m for m in messages)


def _checker(kind, compare):
    """A permutation checker of ``kind`` that tries every permutation and answers by ``compare``."""
    import itertools

    def checker(f, X, perms=None, atol=1e-8):
        X = np.asarray(X, dtype=np.float64)
        fX = np.asarray(f(X.copy()), dtype=np.float64)
        for p in itertools.permutations(range(len(X))) if perms is None else perms:
            p = np.asarray(p)
            out, want = np.asarray(f(X[p]), dtype=np.float64), fX if kind == "invariant" else fX[p]
            if out.shape != want.shape or not compare(out, want, atol):
                return False
        return True

    checker.__name__ = f"is_permutation_{kind}"
    return checker


@pytest.mark.parametrize("kind", ["equivariant", "invariant"])
def test_does_a_checker_that_lets_most_entries_pass_lose_points(test_files, kind):
    """Every entry must be close: a rule that passes when 99% of them are is caught on outputs wide
    enough that one wrong entry is fewer than 1%."""
    mostly = _checker(kind, lambda a, b, atol: np.isclose(a, b, atol=atol, rtol=1e-9).mean() > 0.99)
    score, possible, messages = _score(test_files, {mostly.__name__: mostly}, mostly.__name__)
    assert score < possible, messages
    assert any(re.search(r"at [12] of (500|2500) entries", m) for m in messages), messages


def test_does_an_invariance_checker_that_refuses_another_width_lose_points(test_files):
    """f may change the width of the rows (SPEC): an invariant f with outputs narrower than X is
    invariant."""
    same_width = _checker("invariant", lambda a, b, atol: np.allclose(a, b, atol=atol, rtol=1e-9))

    def is_permutation_invariant(f, X, perms=None, atol=1e-8):
        fX = np.asarray(f(np.array(X, dtype=np.float64)))
        return (fX.ndim == 0 or fX.shape[-1] == np.shape(X)[-1]) and same_width(f, X, perms, atol)

    score, possible, messages = _score(
        test_files, {"is_permutation_invariant": is_permutation_invariant}, "is_permutation_invariant"
    )
    assert score < possible, messages
    assert any("width 3" in m for m in messages), messages


def test_is_a_checkers_wrong_answer_said_briefly_with_its_advice_once(test_files):
    """The case, the answer expected and given, one fact and the mistake: a few hundred characters
    at most, the advice on every row (each is a box of its own on Gradescope: none may say "as
    above"), in full on the first."""
    exact = _checker("invariant", lambda a, b, atol: np.array_equal(a, b))
    _, _, messages = _score(test_files, {exact.__name__: exact}, exact.__name__)
    named = [m for m in messages if "looks like exact equality:" in m]
    assert len(named) >= 2, messages
    assert all(len(m) <= 300 for m in messages), [len(m) for m in messages]
    assert "np.allclose" in named[0] and not any("as above" in m for m in messages), messages


def test_is_a_named_mistakes_advice_whole_on_its_first_row_and_on_every_row_its_own(test_files, reference_env):
    """Each row is a box of its own on Gradescope: every row naming the mistake carries its advice
    (the first in full, the others a part of it), and none points "as above"."""
    from attnlab_oracle import mistakes

    build, mistake = mistakes.mistake_of("self_attention", "K computed with W_Q")

    def self_attention(X, W_Q, W_K, W_V, mask=None):
        return build(X, W_Q, W_K, W_V, mask, **mistake.knobs)

    _, _, messages = _score(test_files, {**reference_env, "self_attention": self_attention}, "self_attention")
    named = [m for m in messages if "looks like K computed with W_Q:" in m]
    assert len(named) >= 2, messages
    assert named[0].endswith(mistake.why), named
    advice = [m.split("looks like K computed with W_Q: ", 1)[1] for m in named]
    assert all(a and a in mistake.why for a in advice), named
    assert not any("as above" in m for m in messages), messages


# the functions whose tests check, with the call whose result they check, that it left an input alone
CHECKED_INPUT = {
    "add_positional_encoding": "E",
    "is_permutation_equivariant": "X",
    "is_permutation_invariant": "X",
    "rope": "X",
    "scaled_dot_product_attention": "Q",
    "self_attention": "X",
}


@pytest.mark.parametrize("question, argument", sorted(CHECKED_INPUT.items()))
def test_does_changing_an_input_after_answering_right_fail_the_case_that_checks_it(
    question, argument, test_files, reference_env
):
    """The check reads what the call whose result a case checks changed, with no second call to see:
    a right answer given by a function that then changes its input in place still fails that case
    (a public case that calls the function directly may fail too, on its own input)."""
    import functools
    import inspect

    honest = reference_env[question]

    @functools.wraps(honest)
    def changes_its_input(*args, **kwargs):
        answer = honest(*args, **kwargs)
        inspect.signature(honest).bind(*args, **kwargs).arguments[argument].flat[0] += 1.0
        return answer

    _, _, messages = _score(test_files, {question: changes_its_input}, question)
    said = [m for m in messages if "in place" in m]
    assert said, messages
    assert all(f"changed its input {argument} in place: it looks like an in-place update of" in m for m in said)


def test_do_failure_messages_never_print_an_expected_array(test_files):
    _, _, messages = _score(test_files, {"sinusoidal_pe": lambda n, d, base=1e4: np.ones((n, d))}, "sinusoidal_pe")
    assert messages and all(len(m) < 300 and "[[" not in m for m in messages)


def test_does_a_submission_of_right_shaped_zeros_earn_no_hidden_point(test_files):
    """Zeros (and constant False) of the right shape pass shape checks, never a hidden case."""
    from pathlib import Path

    from in_process import grade_file

    zeros = Path(__file__).parent.parent / "fixtures" / "zeros_of_the_right_shape.py"
    results = grade_file(zeros, test_files)
    hidden_points = sum(c.points for tf in test_files for c in tf.cases if c.hidden)
    earned = sum(score for score, _, _ in results.values())
    public_points = sum(c.points for tf in test_files for c in tf.cases if not c.hidden)
    assert earned <= public_points < hidden_points
    for tf in test_files:
        score, possible, _ = results[tf.name]
        assert score <= sum(c.points for c in tf.cases if not c.hidden), tf.name


@pytest.mark.parametrize(
    "question, stub",
    [
        ("rope", lambda X, base=10000.0: _refuse()),
        ("pe_shift_matrix", lambda k, d_model, base=10000.0: _refuse()),
        ("permutation_matrix", lambda perm: _refuse()),
    ],
)
def test_does_a_function_that_raises_for_everything_earn_no_point_for_rejecting_bad_input(test_files, question, stub):
    """The SPEC's ValueError for bad input is earned by rejecting it, not by raising whatever comes."""
    score, _, _ = _score(test_files, {question: stub}, question)
    assert score == 0


def _refuse():
    raise ValueError("not implemented")


def test_does_a_plural_subject_never_take_a_singular_verb(test_files):
    """Messages start with what was checked: "the weights of ..." or "rows 1, 2 of ..." followed by
    "is wrong" would read as broken English to the student."""
    from pathlib import Path

    import re

    from in_process import grade_file

    zeros = Path(__file__).parent.parent / "fixtures" / "zeros_of_the_right_shape.py"
    messages = [m for _, _, said in grade_file(zeros, test_files).values() for m in said]
    plural = [m for m in messages if re.match(r"(the weights\b|rows \d)", m)]
    assert not [m for m in plural if re.search(r"\) (is|has|does|looks like) ", m)], plural


def test_is_a_negative_key_offset_written_as_a_subtraction(test_files):
    """A rope that adds the position instead of rotating fails at the first offset checked, -3."""
    (case,) = [
        c
        for tf in test_files
        if tf.name == "rope"
        for c in tf.cases
        if c.func.__name__ == "test_scores_depend_on_offset_only"
    ]
    with pytest.raises(AssertionError) as raised:
        testfiles.call_case(case, {"rope": lambda X, base=10000.0: X + np.arange(len(X))[:, None]})
    assert "key position m - 3 " in str(raised.value) and "+ -" not in str(raised.value), raised.value


def test_is_a_checker_that_ignores_perms_told_the_outputs_were_equal(test_files):
    """A checker that tries its own permutations instead of those given says False where f is
    invariant under the given ones: the facts say the outputs were equal, not "differ by at most 0"."""
    own = _checker("invariant", lambda a, b, atol: np.allclose(a, b, atol=atol, rtol=1e-9))

    def is_permutation_invariant(f, X, perms=None, atol=1e-8):
        return own(f, X, None, atol)

    score, possible, messages = _score(
        test_files, {"is_permutation_invariant": is_permutation_invariant}, "is_permutation_invariant"
    )
    assert score < possible, messages
    assert any("f(P X) equals f(X) exactly for every permutation in perms" in m for m in messages), messages
    assert not any("at most 0 " in m for m in messages), messages
