"""Questions about loading the bank (attnlab.quiz.bank)."""

import pytest

from attnlab.quiz.bank import BankError, default_folder, load

ITEM = """
- id: {id}
  type: {type}
  prompt: "Which?"
  points: 1
  key: a
  options: {{a: yes, b: no}}
  {extra}
"""


def _bank(tmp_path, **fields):
    values = {"id": "q-1", "type": "choice", "extra": "", **fields}
    (tmp_path / "1.yaml").write_text(ITEM.format(**values))
    return tmp_path


def test_simplest_is_refused_on_a_choice_item(tmp_path):
    """Is `simplest` on an item that has no form to simplify an instructor's error?"""
    with pytest.raises(BankError, match="simplest"):
        load(_bank(tmp_path, extra='simplest: "x"'))


@pytest.mark.parametrize("bad", ["'q 1'", "'1q'", "class"])
def test_an_id_must_name_a_notebook_variable(tmp_path, bad):
    """Is an id that cannot become a Python variable (`-` read as `_`) refused?"""
    with pytest.raises(BankError, match="notebook variable"):
        load(_bank(tmp_path, id=bad))


def test_variable_is_the_id_with_underscores(tmp_path):
    """Is the notebook variable of `q-1` named `q_1`?"""
    assert load(_bank(tmp_path))["q-1"].variable == "q_1"


def test_kit_bank_is_the_default_outside_the_autograder():
    """Inside attnlab (no shipped copy next to the package), is the kit's quiz/ the default?"""
    assert default_folder().name == "quiz" and (default_folder() / "2_permutation_proof.yaml").is_file()


def _parts(option: str) -> list[str]:
    """An option such as "(sin(pos), cos(pos))" as its whole text and its top-level parts."""
    text = option.strip()
    inner = text[1:-1] if text.startswith("(") and text.endswith(")") else text
    parts, depth, start = [], 0, 0
    for n, char in enumerate(inner):
        depth += {"(": 1, "[": 1, ")": -1, "]": -1}.get(char, 0)
        if char == "," and depth == 0:
            parts.append(inner[start:n])
            start = n + 1
    return [text, *parts, inner[start:]]


def test_no_option_gives_away_a_typed_answer(items):
    """Does no choice option or order step, or any part of one, check right for a symbolic or matrix item?"""
    from attnlab.quiz.check import RIGHT, check

    typed = [i for i in items.values() if i.type in ("symbolic", "matrix")]
    for item in items.values():
        for label, option in item.options.items():
            for part in _parts(option):
                for other in typed:
                    assert check(other, part).status != RIGHT, (item.id, label, other.id)
