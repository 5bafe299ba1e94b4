"""Questions about verdicts (attnlab.quiz.check): held-out-style answers, each within a second."""

import time

import pytest

from attnlab.quiz.check import MANUAL, RIGHT, UNREADABLE, WRONG, check

R, W, U = RIGHT, WRONG, UNREADABLE
ANSWERS = [
    # equivalent forms
    ("pe-dim0", "sin(pos)", R),
    ("pe-dim0", "sin(pos/10000**(0/d_model))", R),
    ("pe-dim0", "sin(pos/10000^(2*0/d_model))", R),
    ("pe-dim0", "sin(pos + 2*pi)", R),
    ("pe-dim1", "cos(pos)", R),
    ("pe-dim1", "sin(pos + pi/2)", R),
    ("pe-dim1", "cos(-pos)", R),
    ("wavelength", "2*pi*10000**(2*i/d_model)", R),
    ("wavelength", "2*pi*10000^(2*i/d_model)", R),
    ("wavelength", "2*pi/(1/10000**(2*i/d_model))", R),
    ("wavelength", "2*pi*10**(8*i/d_model)", R),
    ("wavelength", "2*pi*exp(2*i*log(10000)/d_model)", R),
    ("wavelength", "pi*2*100**(4*i/d_model)", R),
    ("shift-block", "[[cos(k*w), sin(k*w)], [-sin(k*w), cos(k*w)]]", R),
    ("shift-block", "[[cos(w*k), sin(w*k)], [sin(-k*w), cos(-w*k)]]", R),
    ("shift-block", "[[cos(k*w), -sin(k*w)], [sin(k*w), cos(k*w)]]^T", R),
    ("proof-q", "P*Q", R),
    ("proof-q", "P*X*W_Q", R),
    ("proof-q", "(P*X)*W_Q", R),
    ("proof-kt", "K^T*P^T", R),
    ("proof-kt", "K.T*P.T", R),
    ("proof-kt", "(P*K)^T", W),
    ("proof-kt", "W_K^T*X^T*P^T", R),
    ("proof-a", "P*A*P^T", R),
    ("proof-a", "P*A*P.T", R),
    ("proof-z", "P*Z", R),
    ("proof-z", "(Z^T*P^T)^T", W),
    ("proof-z", "P*Z*I", U),
    ("score-12", "21.97", R),
    ("score-12", "4*4.12 + 1.5*3.66", R),
    ("weight-21", "0.00028", R),
    ("rel-rotation", "c*sin(k*w) + s*cos(k*w)", R),
    ("proof-chain", "(P*A*P^T)*(P*V) = P*A*(P^T*P)*V = P*A*V = P*Z", R),
    ("equivariance", "c, a", R),
    ("proof-order", "bdcea", R),
    ("proof-order", "abcde", W),
    # as students write them: a leading minus, products by a space or juxtaposition
    ("pe-dim0", "-sin(-pos)", R),
    ("proof-a", "P A P^T", R),
    ("proof-kt", "K^T P^T", R),
    ("wavelength", "2 pi 10000^(2i/d_model)", R),
    ("proof-q", "P X W_Q", R),
    ("pe-dim1", "cos(pos)(1)", R),
    ("score-12", "21.974", R),
    ("score-12", "21.965", R),
    ("proof-chain", "P*A*(P^T*P)*V = P*A*V = P*Z", R),
    ("shift-block", "[[cos(k w), sin(k w)], [-sin(k w), cos(k w)]]", R),
    ("pe-dim0", "2 pos", W),
    ("proof-q", "P X", W),
    ("proof-a", "PAP^T", R),
    ("rel-rotation", "s cos(kw) + c sin(kw)", R),
    ("rope-relative", "(q1k1 + q2k2)cos((n - m)theta) + (q2k1 - q1k2)sin((n - m)theta)", R),
    ("proof-z", "P*ZZ^T", W),
    ("pe-dim0", "posx", U),
    # crafted to fool sampling: constant offsets, terms that vanish where points are often drawn,
    # huge or tiny constants, scalars that a fixed world would fix
    ("pe-dim0", "sin(pos) + 10**-9", W),
    ("pe-dim0", "sin(pos) + 10^-40", W),
    ("pe-dim0", "sin(pos) + exp(pos - 1000)", W),
    ("pe-dim0", "sin(pos)*(1 + 10**-20)", W),
    ("pe-dim0", "sin(pos) + 10**-40*sin(pos)", W),
    ("pe-dim0", "sin(pos) + exp(-100)*cos(pos)", W),
    ("pe-dim0", "sin(pos) + sin(pos)*(d_model + 1000)**-20", W),
    ("pe-dim0", "sin(pos) + (d_model + 1000)**-20", W),
    ("pe-dim0", "sin(pos) + exp(pos - 20000)", W),
    ("pe-dim0", "sin(pos)*(1 + exp(-pos - 100))", W),
    ("pe-dim0", "sin(pos) + sin(pos)*(sin(pos)**2 + cos(pos)**2 - 1)", R),
    ("wavelength", "2*pi*10000**(2*i/d_model) + exp(-(i - 7)**2 - 200)", W),
    ("pe-dim0", "sin(pos) + pos*(pos-1)*(pos-2)*(pos-3)*10**-12", W),
    (
        "wavelength",
        "2*pi*10000**(2*i/d_model) + i*(i-1)*(i-2)*(i-3)*(i-4)*(i-5)*(i-6)*(i-7)*(i-8)*(i-9)*(i-10)*(i-11)*(i-12)",
        W,
    ),
    ("wavelength", "2*pi*10000**(2*i/d_model)*(1 + sin(pi*i))", R),
    # different at one value of the domain only (0^0 is 1), and a forbidden function written, then cancelled
    ("shift-block", "[[cos(k*w), sin(k*w)], [-sin(k*w), cos(k*w)*(1 + 0^(k^2))]]", W),
    ("shift-block", "[[cos(k*w), sin(k*w)], [-sin(k*w), cos(k*w)*(1 + 0^((k - 1)^2))]]", W),
    ("proof-a", "P*A*P^T + 0*softmax(S)", W),
    ("proof-a", "P*A*P^T + softmax(S) - softmax(S)", W),
    ("pe-dim0", "sin(pos + 2*pi*d_model)", R),
    ("pe-dim0", "exp(exp(exp(exp(5))))", U),
    ("score-12", "exp(exp(exp(exp(5))))", U),
    ("score-12", "1/0", W),
    ("proof-z", "P*Z*d_k/2", W),
    ("proof-q", "P*Q*d_k/2", W),
    ("proof-q", "P*Q*(1 + 10**-12)", W),
    ("proof-a", "P*A*P^T*sqrt(d_k)/sqrt(d_k)", R),
    ("proof-z", "P*Z*(1 + (d_k + 1000)**-20)", W),
    ("proof-z", "P*Z + (d_k + 1000)**-4*P*Z", W),
    ("proof-z", "P*Z + 10**-5*(d_k + 1000)**-2*P*Z", W),
    ("proof-q", "P*X*W_Q*d_k/d_k", R),
    ("proof-kt", "(d_k*P*K)^T/d_k", W),
    ("score-12", "22", W),
    ("score-12", "21.92", W),
    ("score-12", "22.02", W),
    ("score-12", "21.976", W),
    ("score-12", "21.97 + 10**-9", R),
    # unfinished chains
    ("proof-chain", "(P*A*P^T)*(P*V)", W),
    ("proof-chain", "(P*A*P^T)*(P*V) = P*A*V", W),
    ("proof-chain", "P*Z", W),
    ("proof-chain", "softmax(P*S*P^T)*(P*V) = P*Z", W),
    ("proof-chain", "P*A*P^T*P*V = P*P^T*P*Z = P*Z", W),
    ("proof-chain", "(P*A*P^T)*(P*V) = P*A*P^T*P*V = P*A*V", W),
    # look-alikes
    ("pe-dim0", "cos(pos)", W),
    ("pe-dim0", "sin(pos/10000)", W),
    ("pe-dim1", "sin(pos)", W),
    ("pe-dim1", "cos(pos/10000**(2/d_model))", W),
    ("wavelength", "2*pi/10000**(2*i/d_model)", W),
    ("wavelength", "10000**(2*i/d_model)", W),
    ("wavelength", "2*pi*10000**(i/d_model)", W),
    ("shift-block", "[[cos(k*w), -sin(k*w)], [sin(k*w), cos(k*w)]]", W),
    ("shift-block", "[cos(k*w), sin(k*w)]", W),
    ("proof-q", "Q*P", U),
    ("proof-q", "Q", W),
    ("proof-kt", "P^T*K^T", U),
    ("proof-kt", "K^T*P", W),
    ("proof-a", "A", W),
    ("proof-a", "P^T*A*P", W),
    ("proof-a", "softmax(P*S*P^T)", W),
    ("proof-z", "Z", W),
    ("proof-z", "Z*P", U),
    ("proof-z", "P*A*V", W),
    ("proof-z", "P*A*P^T*P*V", W),
    ("score-12", "12", W),
    ("score-12", "15.53", W),
    ("score-12", "21.9", W),
    ("weight-21", "0.00027", W),
    ("fast-pair", "b", W),
    ("equivariance", "b", W),
    ("equivariance", "a", W),
    ("proof-chain", "(P*A*P^T)*(P*V) = P*A*P^T*V*P = P*Z", U),
    # hostile, malformed and huge
    ("pe-dim0", "__import__('os')", U),
    ("pe-dim0", "().__class__", U),
    ("pe-dim0", "9**9**9**9", U),
    ("pe-dim0", "x" * 1_000_000, U),
    ("pe-dim0", "(" * 300 + "pos" + ")" * 300, U),
    ("pe-dim0", "sin(" * 60 + "pos" + ")" * 60, U),
    ("pe-dim0", "[" * 50 + "pos" + "]" * 50, U),
    ("pe-dim0", "sin(pos", U),
    ("pe-dim0", "x", U),
    ("pe-dim0", "pos.__dict__", U),
    ("proof-q", "globals()", U),
    ("fast-pair", "z", U),
    ("score-12", "pos", U),
    ("wavelength", "(i+1)**(10**9)", U),
    ("pe-dim0", "", U),
]


@pytest.mark.parametrize("item_id, answer, expected", ANSWERS, ids=lambda v: str(v)[:30])
def test_held_out_answer_gets_its_verdict_within_a_second(items, item_id, answer, expected, nothing_executes):
    """Does each answer get the right verdict, within a second, with nothing executed?"""
    started = time.perf_counter()
    with nothing_executes():
        verdict = check(items[item_id], answer)
    assert time.perf_counter() - started < 1.0
    assert verdict.status == expected, verdict.message
    assert verdict.message


@pytest.mark.parametrize(
    "item_id, answer",
    [
        ("pe-dim0", "sin(pos) + exp(exp(exp(exp(5))))"),
        ("pe-dim0", "exp(exp(exp(exp(5))))"),
        ("wavelength", "10000**(10000**(2*i/d_model))"),
        ("proof-z", "P*Z*exp(exp(exp(exp(5))))"),
        ("proof-chain", "(P*A*P^T)*(P*V) = P*P*P*P*Z = P*Z"),
        ("score-12", "exp(exp(exp(exp(5))))"),
        ("rope-relative", "tan(q1)**(-99)*exp(theta**99)"),
    ],
)
def test_same_verdict_on_every_run_and_never_a_fault(items, item_id, answer):
    """Does an answer get the same verdict every time (no clock, no chance), never a checker fault?"""
    verdicts = {check(items[item_id], answer) for _ in range(3)}
    assert len(verdicts) == 1 and verdicts.pop().status in (R, W, U)


@pytest.mark.parametrize(
    "item_id, answer, typed, never",
    [
        ("proof-q", "Q*Q*P", "Q Q", "Q**2"),
        ("pe-dim0", "pos^2^", "pos^2^", "pos**2"),
        ("pe-dim0", "sin(pos) + pos.bar", ".bar", "**"),
        ("proof-chain", "(P*A*P^T)*(P*V) = P*P*Z", "P*P*Z", "P**2"),
        ("proof-chain", "(P*A*P^T)*(P*V) = A*P*V = P*Z", "A*P*V", "**"),
        ("pe-dim0", "2 pos + ", "2 pos +", "2*pos"),
    ],
)
def test_messages_quote_what_the_student_typed(items, item_id, answer, typed, never):
    """Does feedback quote the student's own text (never `P**2` for `P*P`, never `2*pos` for `2 pos`)?"""
    message = check(items[item_id], answer).message
    assert never not in message and typed in message, message


def test_a_checker_fault_is_its_own_verdict(items, monkeypatch):
    """Is a bug inside the checker reported as a fault (exit code 3), not as a wrong answer?"""
    from attnlab.quiz.kinds import expression

    def broken(*args, **kwargs):
        raise KeyError("a bug")

    monkeypatch.setattr(expression, "compare", broken)
    verdict = check(items["pe-dim0"], "sin(pos)")
    assert verdict.status == "fault" and verdict.exit_code == 3 and "instructor" in verdict.message


def test_wrong_transpose_is_explained(items):
    """Is `P^T K^T` for (K')^T refused as a product that is not defined, naming the shapes?"""
    verdict = check(items["proof-kt"], "P^T*K^T")
    assert verdict.status == UNREADABLE and "P^T is n x n and K^T is d_k x n" in verdict.message


def test_known_wrong_answer_gets_its_feedback(items):
    """Does an answer equivalent to a known wrong one get that one's feedback?"""
    assert "10000^0 = 1" in check(items["pe-dim0"], "sin(pos/10**4)").message


def test_free_response_shows_the_rubric(items):
    """Is a free-response answer sent to a human with the rubric?"""
    verdict = check(items["sa-q5"], "anything")
    assert verdict.status == "manual" and "fastest" in verdict.message


@pytest.mark.parametrize(
    "answer, hint",
    [
        ("P*A*V", "use Z = A V"),
        ("P*A*P^T*P*V", "use P^T P = I and Z = A V"),
        ("P*softmax(S)*V", "A = softmax(S)"),
    ],
)
def test_equal_but_longer_answer_is_not_the_simplest_form(items, answer, hint):
    """Is an answer equal to Z' but longer than `P*Z` wrong, told which identity shortens it?"""
    verdict = check(items["proof-z"], answer)
    assert verdict.status == WRONG and verdict.exit_code == 1
    assert verdict.message.startswith("That equals Z', but it is not in its simplest form")
    assert hint in verdict.message


def test_longer_equal_answer_is_right_where_the_simplest_form_is_not_asked(items):
    """Is `P*X*W_Q` still right for proof-q, whose prompt does not ask for the simplest form?"""
    assert not items["proof-q"].simplest
    assert check(items["proof-q"], "P*X*W_Q").status == RIGHT


def test_simplest_is_set_exactly_where_the_prompt_asks_for_it(items):
    """Does every item whose prompt says "simplest" carry `simplest`, and only those?"""
    asked = {i.id for i in items.values() if "simplest" in i.prompt.lower()}
    assert asked == {i.id for i in items.values() if i.simplest} == {"proof-z"}


def test_size_counts_factors_and_operations():
    """Is `P*A*V` longer than `P*Z`, and a transposed symbol longer than the symbol?"""
    from attnlab.quiz import proof
    from attnlab.quiz.check import size
    from attnlab.quiz.parse import parse

    ns = proof.namespace()
    assert size(parse("P*A*V", ns)) > size(parse("P*Z", ns)) > size(parse("Z", ns))
    assert size(parse("P^T", ns)) > size(parse("P", ns))


def test_an_answer_the_checker_cannot_settle_says_why(items):
    """sin(pos) + |g| - g with g = pos + sin(pos) + 5 is sin(pos) (g > 0 for pos >= 0), but where g
    changes sign sympy cannot solve: is it left to a human, with that reason rather than a
    budget that ran out?"""
    verdict = check(items["pe-dim0"], "sin(pos) + sqrt((pos + sin(pos) + 5)^2) - (pos + sin(pos) + 5)")
    assert verdict.status == MANUAL
    assert "region" in verdict.message and "budget" not in verdict.message
