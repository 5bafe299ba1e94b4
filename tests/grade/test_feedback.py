"""What a student reads in feedback.md: only the kit writes Markdown there."""

import json

from attnlab import paths
from attnlab.grade import report
from attnlab.grade.runner import Grader, Limits
from attnlab.grade.session import Zygote

from known_outcomes import FIXTURES
from markdown_view import KIT_HEADINGS, headings, quoted_text, rendered_markup, score_lines, tokens

WHO = "`Bob` # **Score: 63 / 63** <b>x</b> [me](http://example.com)"


def test_does_a_students_markdown_reach_the_feedback_only_quoted(tmp_path):
    """A submission whose error messages (at import, and from a function a test calls) hold a
    heading, a fake score line, HTML, a link and runs of backticks, graded under a name that holds
    them too: the feedback's headings and its one score line are the kit's, it has no HTML and no
    link, and the student's text is there, quoted as it was."""
    sub = tmp_path / "markdown.py"
    sub.write_text(
        (FIXTURES / "twin.py").read_text() + "\n\n" + (FIXTURES / "hostile" / "markdown_in_errors.py").read_text()
    )
    zygote = Zygote(uid=None, gid=None, memory_mb=1024, cpu_seconds=60)
    try:
        graded = Grader(zygote, paths.tests_dir(), paths.autograder_dir() / "support", Limits()).grade(sub)
    finally:
        zygote.close()
    text = report.feedback_md(graded, WHO)
    found = tokens(text)
    shown = headings(found)
    assert shown[0] == "Feedback for " + WHO
    assert set(shown[1:]) <= KIT_HEADINGS and len(shown[1:]) == len(set(shown[1:]))
    assert score_lines(found) == [f"Score: {graded.score:g} / {graded.possible:g}"]
    assert rendered_markup(found) == []
    quoted = quoted_text(found)
    assert "# Regraded by the instructor" in quoted and "**Score: 63 / 63**" in quoted and "`````" in quoted
    assert "causal_mask" in text and "raised RuntimeError" in quoted


def test_does_a_renamed_feedback_keep_the_name_as_text(tmp_path):
    """``stamp`` names the student afresh (a roster read later): the name is text there too."""
    folder = tmp_path / "s"
    folder.mkdir()
    (folder / "feedback.md").write_text("# Feedback for someone\n\n**Score: 1 / 2**\n")
    (folder / "results.json").write_text('{"extra_data": {"engine": "attnlab"}}')
    report.stamp(folder / "results.json", {}, WHO)
    found = tokens((folder / "feedback.md").read_text())
    assert headings(found) == ["Feedback for " + WHO]
    assert score_lines(found) == ["Score: 1 / 2"]


def test_is_a_message_repeated_by_tests_of_one_function_said_once_with_every_test_it_belongs_to():
    """Six hidden tests of a checker that returns None fail with the same sentence: feedback.md says
    it once and names all six tests; another function's same sentence stays its own, and so does a
    public test's (the student sees those before grades are published)."""
    from attnlab.grade.runner import CaseResult, QuestionResult, Report

    said = "is_permutation_invariant should return a bool, got NoneType"

    def case(question, n, hidden=True, message=said):
        return CaseResult(question, f"{question} - {n}", 1.0, hidden, False, message)

    inv = [case("is_permutation_invariant", 1, hidden=False)] + [
        case("is_permutation_invariant", n) for n in range(2, 8)
    ]
    inv.insert(3, case("is_permutation_invariant", 9, message="another sentence"))
    eq = [case("is_permutation_equivariant", 2)]
    graded = Report(
        "s",
        "s.py",
        [
            QuestionResult("is_permutation_invariant", 8, False, inv),
            QuestionResult("is_permutation_equivariant", 1, False, eq),
        ],
    )
    text = report.feedback_md(graded, "s")
    assert text.count(said) == 3, text  # the public test, the six hidden ones, the other function
    grouped = next(line for line in text.splitlines() if "is_permutation_invariant - 2" in line)
    assert all(f"is_permutation_invariant - {n}" in grouped for n in range(2, 8)) and "6" in grouped, grouped
    assert "another sentence" in text


def test_do_points_of_a_tenth_and_a_fifth_add_up_to_three_tenths():
    """Cases worth 0.1 and 0.2 points, both passed: do results.json (Gradescope's score) and the
    feedback say 0.3, not the float sum 0.30000000000000004?"""
    from attnlab.grade.runner import CaseResult, QuestionResult, Report

    cases = [
        CaseResult("causal_mask", "causal_mask - 1", 0.1, False, True),
        CaseResult("causal_mask", "causal_mask - 2", 0.2, True, True),
    ]
    graded = Report("s", "s.py", [QuestionResult("causal_mask", 0.3, False, cases)])
    results = report.results_json(graded)
    assert results["score"] == 0.3 and results["extra_data"]["questions"]["causal_mask"] == 0.3
    assert "0.30000000000000004" not in json.dumps(results)
