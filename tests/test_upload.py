"""Which uploaded file Gradescope's entry points grade."""

import pytest

from attnlab.upload import find_submission


@pytest.mark.parametrize(
    "files, found",
    [
        (["quiz.ipynb", "notes.py", ".ipynb_checkpoints/quiz-checkpoint.ipynb"], "quiz.ipynb"),
        (["answers.py", "__init__.py"], "answers.py"),
        (["sub/pe_attention.py"], "pe_attention.py"),
    ],
)
def test_one_notebook_else_one_py_file_is_the_submission(tmp_path, files, found):
    """Is the submission the one notebook, or else the one .py besides __init__.py, as otter finds it?"""
    for name in files:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("{}")
    assert find_submission(tmp_path, expected="the notebook").name == found


@pytest.mark.parametrize(
    "files, says",
    [
        ([], "no notebook (.ipynb) or Python file (.py) was submitted; submit the notebook"),
        (
            ["a.ipynb", "b.ipynb", "c.py"],
            "more than one .ipynb file was submitted (a.ipynb, b.ipynb); submit only the notebook",
        ),
        (["a.py", "b.py"], "more than one .py file was submitted (a.py, b.py); submit only the notebook"),
    ],
)
def test_no_or_several_files_are_refused_saying_what_to_submit(tmp_path, files, says):
    """Does an empty upload, or two of a kind, raise a ValueError that says what to upload instead?"""
    for name in files:
        (tmp_path / name).write_text("{}")
    with pytest.raises(ValueError) as err:
        find_submission(tmp_path, expected="the notebook")
    assert str(err.value) == says
