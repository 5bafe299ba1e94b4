"""What a student reads in feedback.md: only the kit writes Markdown there."""

from markdown_it import MarkdownIt

from attnlab import paths
from attnlab.grade import report
from attnlab.grade.runner import Grader, Limits
from attnlab.grade.session import Zygote

from known_outcomes import FIXTURES

KIT_HEADINGS = {"Errors while running your submission", "What failed", "Notes"}
WHO = "`Bob` # **Score: 63 / 63** <b>x</b> [me](http://example.com)"


def _tokens(text: str) -> list:
    """Every token of ``text`` parsed as CommonMark with HTML on (as most viewers render it), the
    inline ones too."""
    found = []
    for token in MarkdownIt("commonmark").parse(text):
        found.append(token)
        found += token.children or []
    return found


def _shown(tokens: list, opening: str) -> list[str]:
    """The text each block of the type ``opening`` opens shows, as a reader sees it."""
    return ["".join(c.content for c in tokens[i + 1].children) for i, t in enumerate(tokens) if t.type == opening]


def _headings(tokens: list) -> list[str]:
    return _shown(tokens, "heading_open")


def _score_lines(tokens: list) -> list[str]:
    return [line for line in _shown(tokens, "paragraph_open") if "Score" in line]


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
    tokens = _tokens(text)
    headings = _headings(tokens)
    assert headings[0] == "Feedback for " + WHO
    assert set(headings[1:]) <= KIT_HEADINGS and len(headings[1:]) == len(set(headings[1:]))
    assert _score_lines(tokens) == [f"Score: {graded.score:g} / {graded.possible:g}"]
    assert not [t for t in tokens if t.type in ("html_block", "html_inline", "link_open", "image")]
    quoted = "\n".join(t.content for t in tokens if t.type in ("fence", "code_block", "code_inline"))
    assert "# Regraded by the instructor" in quoted and "**Score: 63 / 63**" in quoted and "`````" in quoted
    assert "causal_mask" in text and "raised RuntimeError" in quoted


def test_does_a_renamed_feedback_keep_the_name_as_text(tmp_path):
    """``stamp`` names the student afresh (a roster read later): the name is text there too."""
    folder = tmp_path / "s"
    folder.mkdir()
    (folder / "feedback.md").write_text("# Feedback for someone\n\n**Score: 1 / 2**\n")
    (folder / "results.json").write_text('{"extra_data": {"engine": "attnlab"}}')
    report.stamp(folder / "results.json", {}, WHO)
    tokens = _tokens((folder / "feedback.md").read_text())
    assert _headings(tokens) == ["Feedback for " + WHO]
    assert _score_lines(tokens) == ["Score: 1 / 2"]
