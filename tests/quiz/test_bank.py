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


@pytest.mark.parametrize(
    "extra, field, line",
    [
        ("colour: red", "unknown field 'colour'", 8),
        ("decimals: 2", "'decimals' belongs to numeric", 8),
        ("tolerance: 0.05", "unknown field 'tolerance'", 8),
        ("holds: ANSWER = 1", "'holds' belongs to", 8),
    ],
)
def test_unknown_or_misplaced_fields_name_the_file_and_line(tmp_path, extra, field, line):
    """Is a field the item's type does not use refused, naming the file and the field's line?"""
    with pytest.raises(BankError, match=rf"1\.yaml, line {line}: .*{field}"):
        load(_bank(tmp_path, extra=extra))


def test_practice_is_true_or_false(tmp_path):
    """Is `practice: yes please` refused, and a missing `practice` read as graded?"""
    with pytest.raises(BankError, match="practice"):
        load(_bank(tmp_path, extra='practice: "yes please"'))
    assert load(_bank(tmp_path))["q-1"].practice is False


def test_student_copy_keeps_practice_keys_and_drops_graded_ones(tmp_path):
    """Does the student's copy hold every practice key and no graded key, known wrong answer,
    per-option reason, explanation, derivation, chain start or worked solution, yet still load?"""
    from attnlab.quiz.bank import student_copy

    full = load(default_folder())
    written = student_copy(bank_dir=default_folder(), out_dir=tmp_path / "student")
    assert sorted(p.name for p in written) == sorted(p.name for p in default_folder().glob("*.yaml"))
    text = "\n".join(p.read_text(encoding="utf-8") for p in written)
    copy = load(tmp_path / "student")
    assert list(copy) == list(full)
    for item in full.values():
        kept = copy[item.id]
        assert (kept.prompt, kept.type, kept.points) == (item.prompt, item.type, item.points)
        if item.practice:
            assert kept.key == item.key
            continue
        assert kept.key is None and not kept.feedback and not kept.option_feedback and not kept.rubric
        assert not (kept.explanation or kept.solution or kept.start or kept.holds or kept.needs or kept.not_in_answer)
        secrets = [
            item.solution,
            item.start,
            item.explanation,
            *(f.says for f in item.feedback),
            *item.option_feedback.values(),
            *item.rubric,
        ]
        assert not [s for s in secrets if s and s in text], item.id


def test_a_graded_item_in_the_student_copy_says_graded_by_your_instructor(tmp_path):
    """Does `quiz check` on a student copy say "graded by your instructor" (exit 0, not "right") for a
    graded item, still refuse an unreadable answer, and check a practice item as usual?"""
    from attnlab.quiz.bank import student_copy
    from attnlab.quiz.check import GRADED, RIGHT, UNREADABLE, check

    student_copy(bank_dir=default_folder(), out_dir=tmp_path)
    copy = load(tmp_path)
    graded = next(i for i in copy.values() if not i.practice and i.type == "proof")
    verdict = check(graded, "P A P^T")
    assert verdict.status == GRADED and "graded by your instructor" in verdict.message
    assert verdict.exit_code == 0 and "Right" not in verdict.message
    assert check(graded, "P A P^").status == UNREADABLE
    practice = next(i for i in copy.values() if i.practice and i.type == "symbolic")
    assert check(practice, str(practice.key)).status == RIGHT


@pytest.mark.parametrize(
    "old, new, says",
    [
        ("  permutation: P\n", "  permutation: P\n  permutations: P\n", "line 45: unknown field 'permutations'"),
        ("    args: [i]\n", "    args: [i]\n    body: x\n", "unknown field 'body'"),
        ("illustration:\n", "illustrations: {}\nillustration:\n", "unknown field 'illustrations'"),
    ],
)
def test_definitions_refuse_unknown_fields_with_the_line(tmp_path, old, new, says):
    """Is a misspelt field of definitions.yaml refused, naming the file and the line?"""
    import shutil

    from attnlab.quiz import definitions

    shutil.copytree(default_folder(), tmp_path / "quiz")
    path = tmp_path / "quiz" / "definitions.yaml"
    text = path.read_text()
    assert text.count(old) == 1
    path.write_text(text.replace(old, new))
    with pytest.raises(BankError, match=f"definitions.yaml, {says}" if says.startswith("line") else says):
        definitions.load(tmp_path / "quiz")


def test_does_a_practice_item_score_nothing_unless_the_bank_says_so(tmp_path):
    """A practice item's key ships to students: does it load with 0 points by default, and with its
    own points when settings.yaml sets practice_scores: true? Does a graded item keep its points?"""
    (tmp_path / "1.yaml").write_text(ITEM.format(id="drill", type="choice", extra="practice: true"))
    (tmp_path / "2.yaml").write_text(ITEM.format(id="exam", type="choice", extra=""))
    assert {i: item.points for i, item in load(tmp_path).items()} == {"drill": 0, "exam": 1}
    (tmp_path / "settings.yaml").write_text("practice_scores: true\n")
    assert {i: item.points for i, item in load(tmp_path).items()} == {"drill": 1, "exam": 1}


@pytest.mark.parametrize("text", ["practice_score: true\n", "practice_scores: 1\n", "- practice_scores\n"])
def test_is_a_misspelt_or_mistyped_bank_setting_refused(tmp_path, text):
    (tmp_path / "settings.yaml").write_text(text)
    with pytest.raises(BankError, match="settings.yaml"):
        load(_bank(tmp_path))
