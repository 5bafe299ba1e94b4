"""A feedback.md as a reader's Markdown viewer shows it: its headings, its paragraphs that name a
score, and what it renders as HTML or links (tests of what a student can put there)."""

from markdown_it import MarkdownIt

KIT_HEADINGS = {"Errors while running your submission", "What failed", "Notes"}


def tokens(text: str) -> list:
    """Every token of ``text`` parsed as CommonMark with HTML on (as most viewers render it), the
    inline ones too."""
    found = []
    for token in MarkdownIt("commonmark").parse(text):
        found.append(token)
        found += token.children or []
    return found


def _shown(found: list, opening: str) -> list[str]:
    """The text each block of the type ``opening`` opens shows, as a reader sees it."""
    return ["".join(c.content for c in found[i + 1].children) for i, t in enumerate(found) if t.type == opening]


def headings(found: list) -> list[str]:
    return _shown(found, "heading_open")


def score_lines(found: list) -> list[str]:
    return [line for line in _shown(found, "paragraph_open") if "Score" in line]


def rendered_markup(found: list) -> list:
    """What would render as HTML, a link or an image."""
    return [t for t in found if t.type in ("html_block", "html_inline", "link_open", "image")]


def quoted_text(found: list) -> str:
    return "\n".join(t.content for t in found if t.type in ("fence", "code_block", "code_inline"))
