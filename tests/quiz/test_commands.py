"""Questions about `attnlab quiz` (attnlab.quiz.commands)."""

import pytest
from click.testing import CliRunner

from attnlab.quiz.commands import quiz


@pytest.mark.parametrize("args, code", [
    (["check", "pe-dim0", "sin(pos)"], 0),
    (["check", "proof-kt", "P^T*K^T"], 1),
    (["check", "pe-dim0", "__import__('os').system('echo hi')"], 2),
    (["check", "pe-dim0", "9**9**9**9"], 2),
    (["check", "no-such-id", "1"], 2),
    (["check", "score-12", "21.97"], 0),
])
def test_check_exit_codes(args, code):
    """Does `quiz check` exit 0 right, 1 wrong, 2 unreadable, with feedback and no traceback?"""
    result = CliRunner().invoke(quiz, args)
    assert result.exit_code == code
    assert "Traceback" not in result.output and result.output.strip()
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit)


def test_list_shows_required_ids():
    """Does `quiz list` list the SPEC's ids?"""
    output = CliRunner().invoke(quiz, ["list"]).output
    assert "score-12" in output and "proof-a" in output


def test_interactive_quiz_stops_cleanly_without_stdin():
    """Does `attnlab quiz` with no input exit 0 instead of crashing?"""
    result = CliRunner().invoke(quiz, [], input="")
    assert result.exit_code == 0 and "Stopped" in result.output


def test_interactive_quiz_scores_a_right_answer():
    """Does a right first answer score its point?"""
    result = CliRunner().invoke(quiz, [], input="sin(pos)\n")
    assert "Right." in result.output and "Score: 1/" in result.output


@pytest.mark.slow
def test_verify_passes():
    """Does `quiz verify` prove everything and exit 0?"""
    result = CliRunner().invoke(quiz, ["verify"])
    assert result.exit_code == 0, result.output
