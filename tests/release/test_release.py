"""The student release generated from the solution: stubs, notebook, public tests."""

import ast

import pytest

from attnlab import paths, release
from attnlab.grade import source
from attnlab.release import giveaway, solution, student


@pytest.fixture(scope="module")
def fresh():
    return release.files()


def test_does_the_committed_release_match_a_fresh_build(fresh):
    """If this fails, run `attnlab release` and commit the result."""
    folder = paths.release_dir()
    committed = {
        p.relative_to(folder).as_posix(): p.read_text(encoding="utf-8")
        for p in folder.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }
    assert committed == fresh


def test_does_every_generated_file_name_its_source_and_command(fresh):
    for rel, text in fresh.items():
        assert "solutions/" in text or "autograder/" in text, rel
        assert release.COMMAND in text, rel


def test_is_every_solution_region_replaced_by_a_stub():
    code = "def f(x):\n    '''doc'''\n    # BEGIN SOLUTION\n    y = x + 1\n    return y\n    # END SOLUTION\n"
    stub = solution.strip_solutions(code)
    assert "x + 1" not in stub and "SOLUTION" not in stub
    assert "raise NotImplementedError" in stub and "'''doc'''" in stub


def test_is_an_unclosed_solution_region_an_error():
    with pytest.raises(ValueError, match="END SOLUTION"):
        solution.strip_solutions("def f():\n    # BEGIN SOLUTION\n    return 1\n")


def test_does_the_py_twin_keep_every_signature_and_docstring_but_no_solution_code(fresh):
    twin = ast.parse(fresh[f"{paths.ASSIGNMENT}.py"])
    ref = ast.parse(solution.reference_source(paths.solution_file()))
    stubs = {n.name: n for n in twin.body if isinstance(n, ast.FunctionDef)}
    for fn in (n for n in ref.body if isinstance(n, ast.FunctionDef)):
        assert fn.name in stubs
        assert ast.dump(fn.args) == ast.dump(stubs[fn.name].args)
        assert ast.get_docstring(fn) == ast.get_docstring(stubs[fn.name])
        body = stubs[fn.name].body
        if (paths.tests_dir() / f"{fn.name}.py").is_file():
            assert isinstance(body[-1], ast.Raise), f"{fn.name} should end in a stub"


def test_is_the_graded_notebook_the_same_code_as_its_py_twin(fresh, tmp_path):
    """Demo cells (plots, worked examples) are for the student's eyes: graded or checked, the
    notebook runs its .py twin's code and otter's grader cells only, so a demo costs neither points
    nor the half second importing pyplot takes."""
    notebook = tmp_path / f"{paths.ASSIGNMENT}.ipynb"
    notebook.write_text(fresh[notebook.name], encoding="utf-8")
    graded = [c for c in source.cells(notebook) if c != student.GRADER_INIT and not c.startswith("grader.check(")]
    twin = fresh[f"{paths.ASSIGNMENT}.py"]
    assert ast.dump(ast.parse("\n".join(graded))) == ast.dump(ast.parse(twin))


def test_is_every_function_without_a_test_given_whole(stub_env, reference_env):
    """A stub nothing grades would cost the student work for no point: such helpers come written."""
    graded = {p.stem for p in paths.tests_dir().glob("*.py")}
    helpers = [
        name
        for name, v in stub_env.items()
        if callable(v)
        and getattr(v, "__module__", None) is None
        and name not in graded
        and not name.startswith("_")
        and name in reference_env
    ]
    assert "default_permutations" in helpers
    for name in helpers:
        assert stub_env[name].__code__.co_code == reference_env[name].__code__.co_code, name
    assert stub_env["default_permutations"](3) == [(0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0)]


def test_do_the_stubs_raise_not_implemented(stub_env):
    with pytest.raises(NotImplementedError):
        stub_env["sinusoidal_pe"](3, 4)


def test_does_the_notebook_check_each_question_right_after_defining_it(fresh):
    import nbformat

    nb = nbformat.reads(fresh[f"{paths.ASSIGNMENT}.ipynb"], as_version=4)
    sources = [c.source for c in nb.cells if c.cell_type == "code"]
    assert "from otter import Notebook" in sources[0]
    for q in (p.stem for p in paths.tests_dir().glob("*.py")):
        defining = next(i for i, s in enumerate(sources) if f"def {q}(" in s)
        assert sources[defining + 1] == f'grader.check("{q}")'


def test_do_the_public_tests_hold_no_hidden_case_and_no_oracle(fresh):
    tests = {k: v for k, v in fresh.items() if k.startswith("tests/")}
    assert {k.split("/")[1] for k in tests} == {p.name for p in paths.tests_dir().glob("*.py")}
    for text in tests.values():
        assert "hidden=True" not in text and "attnlab_oracle" not in text


def test_does_the_readme_show_the_points_the_test_files_give():
    """If this fails, run `attnlab release` and commit the README."""
    readme = (paths.kit_root() / "README.md").read_text(encoding="utf-8")
    assert release.with_points_table(readme) == readme


def test_does_the_points_table_cover_every_graded_function_once(test_files):
    table = release.points_table()
    for tf in test_files:
        assert table.count(f"`{tf.name}`: {tf.points:g}") == 1, tf.name
    assert f"**{sum(tf.points for tf in test_files):g}**" in table


def _solution(*cells: str):
    """A solution notebook from percent-format cells (each starting with its ``# %%`` line)."""
    import jupytext

    return jupytext.reads("\n\n".join(cells), fmt="py:percent")


WHOLE = "# %%\ndef f(x):\n    '''doc'''\n    return x + 1\n"
STUBBED = "# %%\ndef f(x):\n    '''doc'''\n    # BEGIN SOLUTION\n    return x + 1\n    # END SOLUTION\n"
HELPER = "# %%\ndef _plus_one(x):\n    return x + 1\n"

# what a solution ships of the graded function f: what the release must refuse, and why
GIVEAWAYS = [
    ((WHOLE,), ["`f` has no solution region"]),
    ((STUBBED, '# %% tags=["demo"]\ndef f(x):\n    return x + 1\n'), ["`f` is defined in a demo cell"]),
    ((HELPER, "# %%\nf = _plus_one\n"), ["`f` is bound other than by a def"]),
    ((HELPER, "# %%\nf = lambda x: x + 1\n"), ["`f` is bound other than by a def"]),
    (("# %%\nif True:\n    def f(x):\n        return x + 1\n",), ["`f` has no solution region"]),
    ((STUBBED, WHOLE), ["`f` has no solution region"]),  # a second def replaces the stubbed one
    ((STUBBED,), []),
    # a solution region anywhere in its body is the instructor's choice of scaffolding
    (
        ("# %%\ndef f(x):\n    y = x\n    if y:\n        # BEGIN SOLUTION\n        y += 1\n        # END SOLUTION\n",),
        [],
    ),
    # helpers nothing grades come written (default_permutations), and a demo may use f
    ((HELPER, STUBBED, '# %% tags=["demo"]\n%matplotlib inline\nprint(f(1))\n'), []),
]


@pytest.mark.parametrize("cells, expected", GIVEAWAYS)
def test_does_the_release_find_every_way_a_graded_function_ships_whole(cells, expected):
    found = giveaway.given_away(_solution(*cells), graded={"f"})
    assert len(found) == len(expected) and all(found[i].startswith(e) for i, e in enumerate(expected)), found


def test_does_the_bundled_solution_give_no_graded_function_away(test_files):
    graded = {n for tf in test_files for n in {tf.name, *tf.needs()}}
    assert graded and giveaway.given_away(solution.read(paths.solution_file()), graded=graded) == []
