"""Questions about the safe parser (attnlab.quiz.parse)."""

import string

import pytest
import sympy as sp
from hypothesis import HealthCheck, given, settings, strategies as st

from attnlab.quiz.parse import Namespace, Unreadable, normalise, parse
from attnlab.quiz import proof

x, y = sp.symbols("x y")
NS = Namespace(scalars={"x": x, "y": y})


def test_caret_is_power():
    """Is `x^2` read as a power, like `x**2`?"""
    assert parse("x^2", NS) == x**2 == parse("x**2", NS)


def test_caret_T_is_transpose_not_power():
    """Is `K^T` read as a transpose (and converted before `^` becomes `**`)?"""
    assert normalise("K^T*P^T") == "K.T*P.T"
    assert normalise("x^Tau") == "x**Tau"
    ns = proof.namespace()  # binds the proof's symbols (proof.M) to the active definitions first
    K, P = proof.M["K"], proof.M["P"]
    assert parse("K^T*P^T", ns) == K.T * P.T


def test_decimals_are_exact():
    """Is `0.5*x` the same expression as `x/2`?"""
    assert parse("0.5*x", NS) == parse("x/2", NS)


def test_nested_lists_are_matrices():
    """Is `[[1, x], [y, 2]].T` a transposed 2x2 matrix?"""
    assert parse("[[1, x], [y, 2]].T", NS) == sp.Matrix([[1, y], [x, 2]])


def test_matrix_symbols_do_not_commute():
    """Are `P*A` and `A*P` different for matrix symbols?"""
    ns = proof.namespace()
    assert parse("P*A", ns) != parse("A*P", ns)


@pytest.mark.parametrize("text", ["Q*P", "P*Q*P^T*P", "P^T*P*K^T*P^T", "P^T*K^T", "P*Q + P*Z", "Z*I"])
def test_an_ill_typed_matrix_expression_cannot_be_read(text):
    """Is a product or sum whose shapes do not fit refused, even where P^T P would cancel?"""
    with pytest.raises(Unreadable, match="not defined"):
        parse(text, proof.namespace())


@pytest.mark.parametrize(
    "text",
    [
        "__import__('os').system('true')",
        "().__class__.__bases__",
        "x.__class__",
        "open('f')",
        "lambda: 1",
        "[c for c in 'ab']",
        "x if y else 1",
        "'text'",
        "b'x'",
        "x; y",
        "x = 1",
        "9**9**9**9",
        "(2**100)**(2**100)",
        "10**10**5",
        "1e6000",
        "x**(10**6)",
        "((x+1)**50)**50",
        "x" * 2000,
        "(" * 300 + "x" + ")" * 300,
        "-" * 800 + "x",
        "sin(x, y)",
        "sin(x=1)",
        "foo(x)",
        "z",
        "True",
        "None",
        "1j",
        "x @@ y",
        "[[1, 2], [3]]",
        "[[[1]]]",
        "x < y",
        "{x: 1}",
        "...",
        "f'{x}'",
        "*x",
        "sin",
        "x.T",
        "[[1]] + 1",
    ],
)
def test_hostile_and_oversized_input_is_unreadable(text, nothing_executes):
    """Is every hostile, malformed or oversized answer refused with the kit's own error?"""
    with nothing_executes(), pytest.raises(Unreadable):
        parse(text, NS)


def test_a_megabyte_is_refused_quickly():
    """Is a megabyte of text refused before anything parses it?"""
    with pytest.raises(Unreadable, match="longer"):
        parse("x+" * 500_000 + "x", NS)


ALPHABET = string.ascii_letters + string.digits + "+-*/^().,[]_ ' \"@=<>!%&|~:;{}\\#"
TOKENS = [
    "x",
    "y",
    "sin(",
    "exp(",
    "log(",
    "sqrt(",
    "pi",
    "**",
    "^",
    "^T",
    ".T",
    "*",
    "/",
    "+",
    "-",
    "(",
    ")",
    "[",
    "]",
    ",",
    "9",
    "99",
    "0.5",
    "1e5",
    "__import__",
    "__class__",
    ".",
    "'",
    "lambda",
    "eval",
    "exec",
    "open",
    "os",
    "system",
    " ",
]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    text=st.one_of(
        st.text(alphabet=ALPHABET, max_size=60),
        st.lists(st.sampled_from(TOKENS), max_size=30).map("".join),
        st.text(max_size=40),
    )
)
def test_fuzz_only_the_kits_error_escapes(text, nothing_executes):
    """Does any text either parse to a sympy object or raise Unreadable, never running anything?"""
    try:
        with nothing_executes():
            result = parse(text, NS)
    except Unreadable:
        return
    assert isinstance(result, (sp.Basic, sp.MatrixBase))
