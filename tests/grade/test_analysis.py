"""The item analysis the instructor sees at the end of ``attnlab grade``."""

from collections import Counter

from rich.console import Console

from attnlab.grade.analysis import CaseStats, table


def shown(items, variants) -> str:
    console = Console(record=True, width=100)
    for part in table(items, variants):
        console.print(part)
    return console.export_text()


ITEMS = [CaseStats("softmax", "softmax - 1", False, 3, 4)]


def test_does_a_class_with_no_named_misconception_get_a_plain_line_rather_than_an_empty_table():
    text = shown(ITEMS, Counter())
    assert "No named misconception was seen" in text
    assert "looks like" not in text  # no table header without rows


def test_are_the_seen_misconceptions_listed_most_common_first():
    text = shown(ITEMS, Counter({("softmax", "over queries"): 1, ("rope", "clockwise"): 3}))
    assert "No named misconception" not in text
    assert text.index("clockwise") < text.index("over queries")
    assert "75% (3/4)" in text
